# expect: the transformation script may not use 'breakpoint' (not available in the sandbox)
# line: 1
breakpoint()
