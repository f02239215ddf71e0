# expect: the transformation script may not assign or delete attributes ('.split_iname')
# line: 2
import loopy as lp
lp.split_iname = None
