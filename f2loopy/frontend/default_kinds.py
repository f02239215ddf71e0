"""The default REAL kind of one translation: gfortran's ``-fdefault-real-8``.

gfortran reads ``real``, ``complex``, real literals without a kind (``0.95``),
implicitly typed names (a-h, o-z) and the results of the intrinsics that
return a default real (``real(i)``, ``float``, ``sngl``, ``amax1``, ``cmplx``
without a kind...) as kind 4, or as kind 8 under ``-fdefault-real-8``.  With
``-fdefault-double-8`` as well, ``double precision`` and ``1d0`` stay kind 8;
without it gfortran makes them kind 16, a type OpenCL does not have, so
f2loopy takes ``-fdefault-real-8`` only together with ``-fdefault-double-8``
(:func:`f2loopy.kind_flags.check_kind_flags`).  Explicit kinds (``real(4)``, ``real*4``,
``1.0_4``, ``real32``, ``c_float``) are not changed, as in gfortran.

The kind is set for the extent of one translation (:func:`default_real_kind`,
entered by :func:`~f2loopy.frontend.translate_source`); everything the
frontend reads meanwhile (the modules of ``-I`` folders too) sees it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

import numpy as np

from f2loopy.ir.types import COMPLEX64, COMPLEX128, FLOAT32, FLOAT64
from f2loopy.kind_flags import checked_real_kind

_REAL_KIND: ContextVar[int] = ContextVar("f2loopy_default_real_kind", default=4)

@contextlib.contextmanager
def default_real_kind(real_kind: int) -> Iterator[None]:
    """Read default REAL as kind *real_kind* (4 or 8) inside the block."""
    token = _REAL_KIND.set(checked_real_kind(real_kind))
    try:
        yield
    finally:
        _REAL_KIND.reset(token)


def current_real_kind() -> int:
    """The default REAL kind in force (4 unless under ``-fdefault-real-8``)."""
    return _REAL_KIND.get()


def default_real() -> np.dtype:
    """The dtype of default REAL (and of real literals without a kind)."""
    return FLOAT64 if _REAL_KIND.get() == 8 else FLOAT32


def default_complex() -> np.dtype:
    """The dtype of default COMPLEX."""
    return COMPLEX128 if _REAL_KIND.get() == 8 else COMPLEX64
