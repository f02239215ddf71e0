# expect: the transformation script may not use 'object' (not available in the sandbox)
# line: 1
o = object()
