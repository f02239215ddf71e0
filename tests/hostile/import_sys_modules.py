# expect: the transformation script may not import 'sys'
# line: 1
import sys
os = sys.modules["os"]
