"""Parsing expressions written in transformation scripts (loopy syntax:
``a[i, j]`` subscripts) and matching expression templates."""

from __future__ import annotations

import pymbolic.primitives as p
from pymbolic import parse as _pymbolic_parse

from f2loopy.diagnostics import TransformError


def parse_expression(text: str):
    """Parse ``"a[i]*b[i] + 2"`` into an IR expression."""
    try:
        return _pymbolic_parse(text)
    except Exception as exc:  # pymbolic raises various errors on bad input
        raise TransformError(f"cannot parse expression {text!r}: {exc}") from None


def match_template(template, expr, params):
    """Bindings ``{param: expr}`` making *template* equal to *expr*, or None."""
    binding: dict = {}

    def m(t, e):
        if isinstance(t, p.Variable) and t.name in params:
            if t.name in binding:
                return binding[t.name] == e
            binding[t.name] = e
            return True
        if type(t) is not type(e):
            if isinstance(t, (int, float)) and isinstance(e, (int, float)) or \
                    _is_num(t) and _is_num(e):
                return t == e
            return False
        if isinstance(t, p.Variable):
            return t.name == e.name
        if isinstance(t, p.Subscript):
            ti = t.index if isinstance(t.index, tuple) else (t.index,)
            ei = e.index if isinstance(e.index, tuple) else (e.index,)
            return t.aggregate.name == e.aggregate.name and len(ti) == len(ei) and \
                all(m(a, b) for a, b in zip(ti, ei, strict=True))
        if isinstance(t, (p.Sum, p.Product, p.LogicalAnd, p.LogicalOr)):
            return len(t.children) == len(e.children) and \
                all(m(a, b) for a, b in zip(t.children, e.children, strict=True))
        if isinstance(t, (p.Quotient, p.FloorDiv, p.Remainder)):
            return m(t.numerator, e.numerator) and m(t.denominator, e.denominator)
        if isinstance(t, p.Power):
            return m(t.base, e.base) and m(t.exponent, e.exponent)
        if isinstance(t, p.Call):
            return t.function.name == e.function.name and \
                len(t.parameters) == len(e.parameters) and \
                all(m(a, b) for a, b in zip(t.parameters, e.parameters, strict=True))
        if isinstance(t, p.Comparison):
            return t.operator == e.operator and m(t.left, e.left) and m(t.right, e.right)
        return t == e

    return binding if m(template, expr) else None


def _is_num(x) -> bool:
    import numpy as np
    return isinstance(x, (int, float, np.number)) and not isinstance(x, (bool, np.bool_))
