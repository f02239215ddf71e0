# expect: the transformation script used more than 1 s of CPU time (the sandbox limit)
# line: 2
k = 0
while True: k += 1
