"""Which gfortran kind options f2loopy takes, without importing numpy (the
command line reads it at start): ``-fdefault-real-8`` together with
``-fdefault-double-8`` select default REAL kind 8
(:mod:`f2loopy.frontend.default_kinds`); the other options that change kinds
are refused with why, never ignored."""

from __future__ import annotations

from collections.abc import Iterable

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

#: every kind option f2loopy knows (taken or refused)
KIND_FLAGS = frozenset({"-fdefault-real-8", "-fdefault-double-8", *REFUSED_KIND_FLAGS})

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
