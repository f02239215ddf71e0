# expect: the transformation script may not use the name '__builtins__'
# line: 1
__builtins__["len"] = None
