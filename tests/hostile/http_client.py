# expect: the transformation script may not import 'http.client'
# line: 1
from http.client import HTTPConnection
