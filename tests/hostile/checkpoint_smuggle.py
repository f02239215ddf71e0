# expect: the transformation script may not set the OpenCL build option '-I/etc'
# line: begin
k, = parse_fortran(SOURCE, FILENAME)
checkpoint("sneaky", set_options(k, build_options=["-I/etc"]))
RESULT = k
