"""Run the translated saxpy kernel and check it against numpy.

Usage (after `f2loopy translate samples/saxpy.f90`):  python3 samples/saxpy_demo.py
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import saxpy_cl  # noqa: E402  (generated next to saxpy.f90)

n = 1_000_000
rng = np.random.default_rng(0)
a = np.float32(2.5)
x = rng.standard_normal(n, dtype=np.float32)
y = rng.standard_normal(n, dtype=np.float32)
expected = a * x + y

saxpy_cl.saxpy(n, a, x, y)          # same arguments as the Fortran subroutine
err = float(np.max(np.abs(y - expected)))
print(f"saxpy on OpenCL, n = {n}: max |error| vs numpy = {err:.2e}")
sys.exit(0 if err == 0.0 else 1)
