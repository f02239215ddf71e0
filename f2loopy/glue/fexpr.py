"""Printing what the Fortran glue computes on the host, as Fortran text.

Integer expressions (array sizes, numbers of work-groups) are evaluated in
64-bit integers; each integer scalar argument ``n`` the expressions use is
copied into the local ``f2l_n`` (``integer(c_int64_t)``) first, and literals
carry the kind ``c_int64_t`` (Fortran's ``max``, ``modulo``... want one kind).
Fortran's integer ``/`` truncates, as the IR's :class:`pymbolic.primitives.Quotient`
does.  Also: literals of every argument type and free-form line wrapping.
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p

from f2loopy.escape import fortran_string

LOCAL_PREFIX = "f2l_"

#: numpy dtype name -> (Fortran type, bytes per element on the device)
FORTRAN_TYPES = {
    "int8": ("integer(c_int8_t)", 1),
    "int16": ("integer(c_int16_t)", 2),
    "int32": ("integer(c_int32_t)", 4),
    "int64": ("integer(c_int64_t)", 8),
    "float32": ("real(c_float)", 4),
    "float64": ("real(c_double)", 8),
    "complex64": ("complex(c_float_complex)", 8),
    "complex128": ("complex(c_double_complex)", 16),
    "bool": ("logical", 4),     # an OpenCL int on the device
}

_KIND = {"int8": "c_int8_t", "int16": "c_int16_t", "int32": "c_int32_t", "int64": "c_int64_t",
         "float32": "c_float", "float64": "c_double", "complex64": "c_float",
         "complex128": "c_double"}


class HostExpressionError(ValueError):
    """An expression the glue cannot evaluate on the host."""


def local_int(name: str) -> str:
    """The 64-bit local copy of integer argument *name*."""
    return LOCAL_PREFIX + name


def _int_literal(value: int) -> str:
    return f"{value}_c_int64_t" if value >= 0 else f"(-{-value}_c_int64_t)"


def f_int_expr(expr, used: set | None = None, *, plain: bool = False) -> str:
    """Fortran text of the integer expression *expr* (64-bit).  Names of the
    variables it reads are added to *used*.  *plain*: as a person writes it
    (the arguments' own names, default-kind literals), for messages."""
    used = used if used is not None else set()

    def rec(e, top=False) -> str:
        if isinstance(e, (bool, np.bool_)):
            raise HostExpressionError(f"logical value {e} in an integer expression")
        if isinstance(e, (int, np.integer)):
            if plain:
                return str(int(e)) if e >= 0 or top else f"({int(e)})"
            return _int_literal(int(e))
        if isinstance(e, p.Variable):
            used.add(e.name)
            return e.name if plain else local_int(e.name)
        if isinstance(e, p.Sum):
            out = rec(e.children[0])
            for c in e.children[1:]:
                neg = _negated(c)
                out += f" - {rec(neg)}" if neg is not None else f" + {rec(c)}"
            return out if top else f"({out})"
        if isinstance(e, p.Product):
            neg = _negated(e)
            if neg is not None:
                return f"(-{rec(neg)})"
            out = " * ".join(rec(c) for c in e.children)
            return out if top else f"({out})"
        if isinstance(e, p.Quotient):
            out = f"{rec(e.numerator)} / {rec(e.denominator)}"
            return out if top else f"({out})"
        if isinstance(e, p.FloorDiv):
            return f"f2l_floordiv({rec(e.numerator)}, {rec(e.denominator)})"
        if isinstance(e, p.Remainder):
            return f"modulo({rec(e.numerator)}, {rec(e.denominator)})"
        if isinstance(e, p.Power):
            return f"({rec(e.base)} ** {rec(e.exponent)})"
        if isinstance(e, p.Call) and isinstance(e.function, p.Variable):
            name = e.function.name
            args = [rec(a) for a in e.parameters]
            if name in ("min", "max") and args:
                return args[0] if len(args) == 1 else f"{name}({', '.join(args)})"
            if name in ("int8", "int16", "int32", "int64") and len(args) == 1:
                return args[0]
            if name == "mod" and len(args) == 2:
                return f"mod({args[0]}, {args[1]})"
            if name == "modulo" and len(args) == 2:
                return f"modulo({args[0]}, {args[1]})"
            if name == "abs" and len(args) == 1:
                return f"abs({args[0]})"
        if isinstance(e, p.If):
            return f"merge({rec(e.then)}, {rec(e.else_)}, {f_bool_expr(e.condition, used)})"
        raise HostExpressionError(f"cannot compute {e} on the host")

    return rec(expr, top=True)


def _negated(e):
    """``x`` if *e* is ``-1 * x`` (or a negative constant times x), else None."""
    if isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_)) and e < 0:
        return -int(e)
    if isinstance(e, p.Product) and e.children:
        first = e.children[0]
        if isinstance(first, (int, np.integer)) and not isinstance(first, (bool, np.bool_)) \
                and first < 0:
            rest = e.children[1:]
            if first == -1:
                return rest[0] if len(rest) == 1 else p.Product(rest)
            return p.Product((-int(first),) + tuple(rest))
    return None


_REL = {"==": "==", "!=": "/=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def f_bool_expr(expr, used: set | None = None) -> str:
    """Fortran text of a condition on integer expressions."""
    used = used if used is not None else set()
    if expr is True or expr is False:
        return ".true." if expr else ".false."
    if isinstance(expr, p.Comparison):
        return (f"({f_int_expr(expr.left, used)} {_REL[expr.operator]} "
                f"{f_int_expr(expr.right, used)})")
    if isinstance(expr, p.LogicalAnd):
        return "(" + " .and. ".join(f_bool_expr(c, used) for c in expr.children) + ")"
    if isinstance(expr, p.LogicalOr):
        return "(" + " .or. ".join(f_bool_expr(c, used) for c in expr.children) + ")"
    if isinstance(expr, p.LogicalNot):
        return f"(.not. {f_bool_expr(expr.child, used)})"
    raise HostExpressionError(f"cannot compute {expr} on the host")


def f_literal(value, dtype) -> str:
    """A Fortran literal of *value* in the exact kind of *dtype* (shortest text
    that reads back as the same value)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return ".true." if bool(value) else ".false."
    if dt.kind in "iu":
        return f"{int(value)}_{_KIND[dt.name]}" if int(value) >= 0 else \
            f"(-{-int(value)}_{_KIND[dt.name]})"
    if dt.kind == "f":
        return _real_literal(value, dt)
    if dt.kind == "c":
        rdt = np.dtype(np.float32 if dt == np.complex64 else np.float64)
        c = complex(value)
        return f"({_real_literal(c.real, rdt)}, {_real_literal(c.imag, rdt)})"
    raise HostExpressionError(f"no Fortran literal for {value!r} of type {dt}")


def _real_literal(value, dt) -> str:
    v = dt.type(value)
    if not np.isfinite(v):
        raise HostExpressionError(f"no Fortran literal for {value!r}")
    text = np.format_float_scientific(v, unique=True, trim="0")
    mantissa, exp = text.split("e")
    if "." not in mantissa:
        mantissa += ".0"
    elif mantissa.endswith("."):
        mantissa += "0"
    lit = f"{mantissa.lstrip('-')}e{int(exp)}_{_KIND[dt.name]}"
    return f"(-{lit})" if mantissa.startswith("-") else lit


def f_string(text: str) -> str:
    """A Fortran character literal showing *text* (see
    :func:`f2loopy.escape.fortran_string`)."""
    return fortran_string(text)


def wrap(line: str, width: int = 100) -> list[str]:
    """Split a free-form statement into continuation lines of at most about
    *width* characters.  Every continuation line starts with ``&`` so that a
    break may fall anywhere, even inside a character literal; breaks are put
    after a blank or a comma where possible."""
    if len(line) <= width or line.lstrip().startswith("!"):
        return [line]
    indent = " " * (len(line) - len(line.lstrip()) + 4)
    out = []
    rest = line
    first = True
    while len(rest) > width - (0 if first else len(indent) + 1):
        limit = width - 2 - (0 if first else len(indent) + 1)
        cut = max(rest.rfind(" ", limit // 2, limit), rest.rfind(",", limit // 2, limit))
        cut = cut + 1 if cut > 0 else limit
        out.append(("" if first else indent + "&") + rest[:cut] + "&")
        rest = rest[cut:]
        first = False
    out.append(indent + "&" + rest)
    return out
