# expect: AttributeError: module 'loopy.match' has no attribute 'fnmatch'
# line: 2
import loopy as lp
shell = lp.match.fnmatch.os
