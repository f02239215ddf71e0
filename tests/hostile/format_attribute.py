# expect: the transformation script may not call '.format' here
# line: 1
leak = "{0.__class__.__mro__}".format(1)
