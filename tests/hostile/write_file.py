# expect: the transformation script may not use 'open'
# line: 1
open(TARGET, "w").write("pwned")
