"""Verification: does the generated code compute what the Fortran computes?

* :mod:`~f2loopy.verify.fortran`: the original subroutines built by gfortran,
  called through ctypes.
* :mod:`~f2loopy.verify.compare`: per-dtype tolerances (relative, absolute, ulp).
* :mod:`~f2loopy.verify.inputs`: inputs that fit the declarations (sizes within
  the assumptions, subscripts and index arrays in bounds).
* :mod:`~f2loopy.verify.check`: ``f2loopy check`` (every kernel and checkpoint
  against the original, a fused kernel against the subroutines in sequence).

The fuzzers that use these pieces live in :mod:`f2loopy.fuzz`.
"""
