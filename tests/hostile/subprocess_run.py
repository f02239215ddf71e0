# expect: the transformation script may not import 'subprocess'
# line: 1
import subprocess
subprocess.run(["touch", TARGET])
