# expect: the transformation script may not import 'ctypes'
# line: 1
import ctypes
ctypes.CDLL(None).system(b"id")
