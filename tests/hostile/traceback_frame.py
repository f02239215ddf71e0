# expect: the transformation script may not access '__traceback__'
# line: 4
try:
    1 / 0
except ZeroDivisionError as e:
    tb = e.__traceback__
