# expect: the transformation script may not access '__globals__'
# line: 2
name = "__glo" + "bals__"
g = getattr(split_iname, name)
