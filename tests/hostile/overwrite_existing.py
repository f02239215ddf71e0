# expect: the transformation script may not use 'open'
# line: 2
name = EXISTING
f = open(name, "a")
