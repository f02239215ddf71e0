# expect: the transformation script may not import 'os'
# line: 1
import os
while True:
    os.fork()
