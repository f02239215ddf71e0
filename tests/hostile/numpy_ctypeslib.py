# expect: the transformation script may not import 'numpy.ctypeslib'
# line: 1
import numpy.ctypeslib
