"""Accesses the input planner can bound only once the sizes are drawn: an
array passed to a procedure that declares it with other extents is seen
there by sequence association (its elements in column-major order), so
the inlined subscripts are ``modulo(offset, n1)`` and ``offset / n1`` with
the extents as divisors, which isl takes only when they are numbers.

:func:`first_overrun` puts the drawn sizes in and asks isl whether such an
access leaves its array.  The original's bounds checking cannot see it (the
procedure checks against its own declaration), and the generated kernel
would read and write past the buffer: the planner says which access does
(:class:`~f2loopy.verify.inputs.InputError`), instead of running either."""

from __future__ import annotations

import dataclasses

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.ir.expressions import accesses, substitute
from f2loopy.ir.isl_tools import NonAffineError, pwaff_from_expr


def _with_values(expr, ints: dict):
    if expr is None:
        return None
    return substitute(expr, {n: np.int64(v) for n, v in ints.items()})


def _maybe_not_affine(expr) -> bool:
    """Whether *expr* divides, takes a remainder or multiplies two names
    (cheap, syntactic: isl decides)."""
    found = False

    def walk(e):
        nonlocal found
        if found or not isinstance(e, p.ExpressionNode):
            return
        if isinstance(e, (p.FloorDiv, p.Quotient, p.Remainder)) or (
                isinstance(e, p.Call) and getattr(e.function, "name", "") in ("mod", "modulo")):
            found = True
            return
        if isinstance(e, p.Product) and sum(
                1 for c in e.children if isinstance(c, p.ExpressionNode)) > 1:
            found = True
            return
        for attr in ("children", "parameters", "index"):
            sub = getattr(e, attr, None)
            for c in sub if isinstance(sub, tuple) else (() if sub is None else (sub,)):
                walk(c)
        for attr in ("numerator", "denominator", "base", "exponent"):
            walk(getattr(e, attr, None))
    walk(expr)
    return found


def first_overrun(planner, ints: dict, shapes: dict):
    """The first access of *planner* (a :class:`~f2loopy.verify.inputs.
    _Planner`) whose subscript isl can bound only with the sizes *ints*
    put in, and that leaves its array for them; None if there is none."""
    seen = set()
    for acc in planner.accesses:
        if acc.extent is None and acc.array not in shapes:
            continue
        dd = planner.dd_inames[acc.kernel.name]
        used = {n for n, _ in accesses(acc.index)}
        if used & dd or used - set(ints) - set(acc.insn.within_inames):
            continue          # (data: the index ranges' business)
        if not _maybe_not_affine(acc.index):
            continue
        key = (acc.kernel.name, acc.index, acc.lb, acc.extent,
               frozenset(acc.insn.within_inames), acc.predicates)
        if key in seen:
            continue
        seen.add(key)
        inames = [i for i in acc.insn.within_inames if i not in dd]
        try:
            dom = planner._domain(acc, inames)
            pwaff_from_expr(acc.index, dom.get_space())
            continue          # (affine with the sizes free: the sizes were chosen for it)
        except NonAffineError:
            pass
        except isl.Error:
            continue
        fixed = dataclasses.replace(acc, index=_with_values(acc.index, ints),
                                    lb=_with_values(acc.lb, ints),
                                    extent=_with_values(acc.extent, ints))
        ext = shapes[acc.array][acc.axis] if acc.extent is None else None
        try:
            dom = planner._fixed(dom, ints)
            bad = planner._oob(fixed, dom, extent_value=ext)
        except (NonAffineError, isl.Error):
            continue
        if bad is not None and not bad.is_empty():
            return acc
    return None
