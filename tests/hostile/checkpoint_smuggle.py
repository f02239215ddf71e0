# expect: set_options: the OpenCL build option '-I/etc' is not allowed
# line: 2
k, = parse_fortran(SOURCE, FILENAME)
checkpoint("sneaky", set_options(k, build_options=["-I/etc"]))
RESULT = k
