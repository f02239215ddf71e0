# expect: the transformation script may not call '.format' here
# line: 1
fmt = getattr("{0.__class__}", "format")
