# expect: the transformation script ran out of memory (the sandbox allows 256 MiB)
# line: 1
x = [0] * 10 ** 10
