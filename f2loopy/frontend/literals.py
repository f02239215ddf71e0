"""Values of Fortran literal constants as numpy scalars of their kind, and
the negation of a converted expression that keeps a literal's kind."""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p

from f2loopy.frontend.default_kinds import default_real


def real_literal(text: str, kind: int | None) -> np.generic:
    """Value of a Fortran real literal: ``1.5`` (default kind), ``1.5d0``
    (double), ``1.5_8`` / ``1.5e0_dp`` (explicit kind)."""
    t = text.lower()
    is_double = "d" in t
    value = t.replace("d", "e")
    if kind is None:
        dtype = np.float64 if is_double else default_real().type
    elif is_double:
        raise ValueError("a 'd' exponent cannot have a kind")
    elif kind in (4, 8):
        dtype = np.float32 if kind == 4 else np.float64
    else:
        raise ValueError(f"real kind {kind} is not supported")
    with np.errstate(over="ignore"):
        result = dtype(value)
    if not np.isfinite(result):
        raise ValueError(f"real constant {text} overflows its kind")
    return result


def int_literal(text: str, kind: int | None) -> np.generic:
    value = int(text)
    if kind in (None, 4):
        if not -2**31 <= value < 2**31:
            if kind is None and -2**63 <= value < 2**63:
                return np.int64(value)
            raise ValueError(f"integer literal {text} does not fit in kind 4" if kind else
                             f"integer literal {text} does not fit in 64 bits")
        return np.int32(value)
    if kind in (1, 2, 8):
        bits = 8 * kind
        if not -2**(bits - 1) <= value < 2**(bits - 1):
            raise ValueError(f"integer literal {text} does not fit in kind {kind}")
        return np.dtype(f"int{bits}").type(value)
    raise ValueError(f"integer kind {kind} is not supported")


def negate(expr):
    if isinstance(expr, np.generic) and not isinstance(expr, np.bool_):
        return expr.dtype.type(-expr)  # type: ignore[operator]
    if isinstance(expr, int):
        return -expr
    return p.Product((-1, expr))
