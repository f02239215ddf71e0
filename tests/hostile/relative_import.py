# expect: the transformation script may not import '..pipeline'
# line: 1
from ..pipeline import write_outputs
