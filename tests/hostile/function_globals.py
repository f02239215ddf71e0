# expect: the transformation script may not access '__globals__'
# line: 1
g = split_iname.__globals__
