# expect: the transformation script may not access 'system'
# line: 2
import loopy as lp
lp.match.fnmatch.os.system("touch " + TARGET)
