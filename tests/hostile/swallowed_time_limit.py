# expect: the transformation script used more than 1 s of CPU time (the sandbox limit) and was stopped
# line: begin
x = 0
while True:
    try:
        while True:
            x += 1
    except BaseException:
        pass
