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
# the device may fuse a * x + y into one multiply-add, rounded once where numpy
# rounds the product first: they then differ by up to a unit in the last place
# of the product (and of the sum)
bound = np.spacing(np.abs(a * x)) + np.spacing(np.abs(expected))
within = bool(np.all(np.abs(y - expected) <= bound))
print(f"saxpy on OpenCL, n = {n}: max |error| vs numpy = {err:.2e}"
      + ("" if within else " (more than the rounding of a multiply-add explains)"))
sys.exit(0 if within else 1)
