# expect: the transformation script may not use the name '__import__'
# line: 1
__import__("os").system("touch " + TARGET)
