# expect: the transformation script may not use 'eval' (not available in the sandbox)
# line: 1
eval("1 + 1")
