# expect: the transformation script may not access 'save'
# line: 2
import numpy as np
np.save(TARGET, np.zeros(3))
