# expect: the transformation script may not use 'compile' (not available in the sandbox)
# line: 1
code = compile("x = 1", "f", "exec")
