# expect: the transformation script may not use 'open' (not available in the sandbox)
# line: 1
data = open("/etc/passwd").read()
