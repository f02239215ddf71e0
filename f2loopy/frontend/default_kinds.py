"""The default REAL kind of one translation: gfortran's ``-fdefault-real-8``.

gfortran reads ``real``, ``complex``, real literals without a kind (``0.95``),
implicitly typed names (a-h, o-z) and the results of the intrinsics that
return a default real (``real(i)``, ``float``, ``sngl``, ``amax1``, ``cmplx``
without a kind...) as kind 4, or as kind 8 under ``-fdefault-real-8``.  With
``-fdefault-double-8`` as well, ``double precision`` and ``1d0`` stay kind 8;
without it gfortran makes them kind 16, a type OpenCL does not have, so
f2loopy takes ``-fdefault-real-8`` only together with ``-fdefault-double-8``
(:func:`check_kind_flags`).  Explicit kinds (``real(4)``, ``real*4``,
``1.0_4``, ``real32``, ``c_float``) are not changed, as in gfortran.

The kind is set for the extent of one translation (:func:`default_real_kind`,
entered by :func:`~f2loopy.frontend.translate_source`); everything the
frontend reads meanwhile (the modules of ``-I`` folders too) sees it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from contextvars import ContextVar

import numpy as np

from f2loopy.ir.types import COMPLEX64, COMPLEX128, FLOAT32, FLOAT64

_REAL_KIND: ContextVar[int] = ContextVar("f2loopy_default_real_kind", default=4)

#: gfortran options that change default or explicit kinds, which f2loopy
#: refuses (with why); ``-fdefault-real-8`` and ``-fdefault-double-8`` are taken
REFUSED_KIND_FLAGS = {
    "-fdefault-integer-8": "default INTEGER of kind 8 is not supported (kernels, loop "
                           "bounds and sizes use 32-bit integers); declare integer(8) "
                           "where 64 bits are needed",
    "-fdefault-real-10": "REAL of kind 10 has no OpenCL type",
    "-fdefault-real-16": "REAL of kind 16 has no OpenCL type",
    "-finteger-4-integer-8": "promoting INTEGER(4) to kind 8 is not supported",
    "-freal-4-real-8": "promoting REAL(4) to kind 8 is not supported; "
                       "-fdefault-real-8 -fdefault-double-8 promote default REAL",
    "-freal-4-real-10": "REAL of kind 10 has no OpenCL type",
    "-freal-4-real-16": "REAL of kind 16 has no OpenCL type",
    "-freal-8-real-4": "demoting REAL(8) to kind 4 is not supported",
    "-freal-8-real-10": "REAL of kind 10 has no OpenCL type",
    "-freal-8-real-16": "REAL of kind 16 has no OpenCL type",
}

#: why ``-fdefault-real-8`` alone is refused
REAL8_NEEDS_DOUBLE8 = ("-fdefault-real-8 without -fdefault-double-8 makes DOUBLE PRECISION "
                       "and 1d0 constants REAL(16) in gfortran, which OpenCL has no type "
                       "for; add -fdefault-double-8 (as projects built with "
                       "-fdefault-real-8 usually do)")


def check_kind_flags(flags: Iterable[str]) -> int:
    """The default REAL kind that gfortran *flags* select (4 or 8).

    :raises ValueError: with the reason, for a flag of :data:`REFUSED_KIND_FLAGS`
        or ``-fdefault-real-8`` without ``-fdefault-double-8``."""
    flags = list(flags)
    for flag in flags:
        if flag in REFUSED_KIND_FLAGS:
            raise ValueError(f"{flag}: {REFUSED_KIND_FLAGS[flag]}")
    if "-fdefault-real-8" in flags:
        if "-fdefault-double-8" not in flags:
            raise ValueError(REAL8_NEEDS_DOUBLE8)
        return 8
    return 4     # (-fdefault-double-8 alone changes nothing, as in gfortran)


def kind_flags(real_kind: int) -> list[str]:
    """The gfortran options for default REAL kind *real_kind* (4: none)."""
    return ["-fdefault-real-8", "-fdefault-double-8"] if real_kind == 8 else []


def checked_real_kind(real_kind) -> int:
    """*real_kind* if it is 4 or 8.

    :raises ValueError: otherwise."""
    if isinstance(real_kind, bool) or real_kind not in (4, 8):
        raise ValueError(f"the default real kind must be 4 or 8, not {real_kind!r}")
    return int(real_kind)


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
