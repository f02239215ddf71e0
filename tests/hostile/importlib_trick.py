# expect: the transformation script may not import 'importlib'
# line: 1
import importlib
importlib.import_module("os").system("id")
