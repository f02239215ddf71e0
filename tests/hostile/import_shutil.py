# expect: the transformation script may not import 'shutil'
# line: 2
k = 1
import shutil
shutil.rmtree(EXISTING)
