# expect: the transformation script ran out of memory (the sandbox allows 256 MiB)
# line: 3
chunks = []
while True:
    chunks.append(bytes(10 ** 7))
