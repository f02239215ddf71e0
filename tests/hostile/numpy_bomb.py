# expect: the transformation script ran out of memory (the sandbox allows 256 MiB)
# line: 1
a = np.ones((100000, 100000))
