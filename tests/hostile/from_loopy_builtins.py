# expect: the transformation script may not access '__builtins__'
# line: 1
from loopy import __builtins__
