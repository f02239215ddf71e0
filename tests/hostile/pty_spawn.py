# expect: the transformation script may not import 'pty'
# line: 1
import pty
pty.spawn("/bin/sh")
