# expect: the transformation script may not import 'urllib.request'
# line: 1
import urllib.request
urllib.request.urlopen("http://example.com")
