# expect: the transformation script may not import 'os'
# line: 1
from os import remove
remove(EXISTING)
