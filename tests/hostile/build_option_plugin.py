# expect: set_options: the OpenCL build option '-Xclang' is not allowed
# line: 2
k, = parse_fortran(SOURCE, FILENAME)
RESULT = set_options(k, build_options="-Xclang -load -Xclang /tmp/evil.so")
