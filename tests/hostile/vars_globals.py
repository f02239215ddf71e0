# expect: the transformation script may not use 'globals' (not available in the sandbox)
# line: 1
g = globals()
