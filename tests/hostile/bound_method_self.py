# expect: the transformation script may not access '__self__'
# line: 2
k, = parse_fortran(SOURCE, FILENAME)
owner = k.copy.__self__
