# expect: the transformation script may not access '__class__'
# line: 2
match 1:
    case int(__class__=c):
        pass
