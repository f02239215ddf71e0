# expect: the transformation script may not call '.format' here
# line: 2
fmt = "{0.__cl" + "ass__}"
leak = fmt.format(1)
