# expect: the transformation script may not set the OpenCL build option '-Xclang'
# line: begin
k, = parse_fortran(SOURCE, FILENAME)
RESULT = set_options(k, build_options="-Xclang -load -Xclang /tmp/evil.so")
