# expect: the transformation script may not import 'pathlib'
# line: 1
import pathlib
pathlib.Path(TARGET).write_text("x")
