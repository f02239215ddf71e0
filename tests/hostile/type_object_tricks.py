# expect: the transformation script may not use 'type' (not available in the sandbox)
# line: 2
k = 1
t = type(k)
