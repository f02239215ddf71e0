# expect: the transformation script may not import 'multiprocessing'
# line: 1
import multiprocessing
multiprocessing.Pool(4)
