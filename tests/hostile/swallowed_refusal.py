# expect: the transformation script may not access '__dict__'
# line: 3
import loopy as lp
try:
    getattr(lp, "__dict__")
except BaseException:
    pass
k, = parse_fortran(SOURCE, FILENAME)
RESULT = k
