"""``f2loopy bench``: measuring generated kernels.

* :mod:`~f2loopy.bench.run`: times every checkpoint of a file's script on an
  OpenCL device and checks its results (``f2loopy bench``).
* :mod:`~f2loopy.bench.statistics`: exact static counts of a kernel's
  floating-point operations and global memory traffic.
* :mod:`~f2loopy.bench.plot`: a PNG of a report (matplotlib).

This package sits above the pipeline: nothing below it imports it.
"""
