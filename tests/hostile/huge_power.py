# expect: the transformation script used more than 1 s of CPU time (the sandbox limit)
# line: 1
x = 10 ** 10 ** 10
