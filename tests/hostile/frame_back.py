# expect: the transformation script may not access 'f_back'
# line: 3
def f(frame):
    while frame:
        frame = frame.f_back
