# expect: apply_recipe: no recipe named '/etc/passwd'
# line: 2
k, = parse_fortran(SOURCE, FILENAME)
RESULT = apply_recipe("/etc/passwd", k)
