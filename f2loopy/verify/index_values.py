"""Value ranges of integer input arrays whose elements reach a subscript
through ``max``/``min`` and guards (ocean codes' bottom index: ``ks =
max(kbot(i,j), kbot(i+1,j)); if (ks > 0) then; k = ks; d(i,j,k+1) ...;
dzw(max(1,k-1))``), for the input planner of :mod:`f2loopy.verify.inputs`.

The elements of one array that the subscript combines only through
``max``/``min`` are one value *v* (a maximum or minimum of values in a
range lies in it); isl gives the values of *v* for which every instance of
the access stays in bounds where its guards hold.  The range drawn is the
one that keeps the unguarded access in bounds, widened by one value on a
side where the guard alone keeps it in bounds (a land point's 0 beside the
levels 1..nz-1), so that the guarded statement is both run and skipped."""

from __future__ import annotations

import dataclasses

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.ir.expressions import accesses, substitute
from f2loopy.ir.folding import NotConstant, evaluate_constant
from f2loopy.ir.isl_tools import (
    NonAffineError, dim_type, pwaff_from_expr, set_from_condition)
from f2loopy.verify.input_plan import ValueRange

#: the name the combined elements take in the isl sets (no Fortran name has
#: a leading underscore)
VALUE = "_f2l_value"


def combined_term(expr, arrays: set):
    """The one subterm of *expr* through which it reads elements of the
    arrays *arrays*: a subscript of one of them, or ``max``/``min`` of such
    subscripts of the same array (nested), as ``(array, term)``; None where
    *expr* reads them otherwise or through several different terms."""
    found: list = []

    def source(e):
        if isinstance(e, p.Subscript) and getattr(e.aggregate, "name", None) in arrays:
            return e.aggregate.name
        if isinstance(e, p.Call) and getattr(e.function, "name", None) in ("max", "min") \
                and e.parameters:
            names = {source(a) for a in e.parameters}
            if len(names) == 1 and None not in names:
                return names.pop()
        return None

    def walk(e):
        name = source(e)
        if name is not None:
            found.append((name, e))
            return
        if isinstance(e, p.Subscript):
            walk(e.index)
        elif isinstance(e, tuple):
            for x in e:
                walk(x)
        elif isinstance(e, p.ExpressionNode):
            for child in getattr(e, "children", ()) or ():
                walk(child)
            for child in getattr(e, "parameters", ()) or ():
                walk(child)
            for attr in ("left", "right", "numerator", "denominator", "base", "exponent"):
                child = getattr(e, attr, None)
                if child is not None:
                    walk(child)
    walk(expr)
    if not found or any(f != found[0] for f in found):
        return None
    if {n for n, _ in accesses(expr)} & arrays - {found[0][0]}:
        return None
    return found[0]


def _replaced(expr, term):
    v = p.Variable(VALUE)

    def rec(e):
        if e == term:
            return v
        if isinstance(e, p.Sum):
            return p.Sum(tuple(rec(c) for c in e.children))
        if isinstance(e, p.Product):
            return p.Product(tuple(rec(c) for c in e.children))
        if isinstance(e, p.Call):
            return p.Call(e.function, tuple(rec(c) for c in e.parameters))
        if isinstance(e, p.Comparison):
            return p.Comparison(rec(e.left), e.operator, rec(e.right))
        if isinstance(e, (p.FloorDiv, p.Quotient, p.Remainder)):
            return type(e)(rec(e.numerator), rec(e.denominator))
        return e
    return rec(expr)


def value_range(planner, acc, arrays: set, ints: dict, extent=None):
    """``(array, ValueRange)`` for the elements of *arrays* that the access
    *acc* of *planner* (a :class:`~f2loopy.verify.inputs._Planner`) reads
    through :func:`combined_term`, with the sizes *ints* fixed and the
    access's extent *extent* where its declaration gives none; None where
    isl cannot tell (the caller asks the user)."""
    got = combined_term(acc.index, arrays)
    if got is None:
        return None
    name, term = got
    index = _replaced(acc.index, term)
    guards = []
    for pred in acc.predicates:
        seen = {n for n, _ in accesses(pred)} & arrays
        if not seen:
            guards.append(pred)
        elif combined_term(pred, arrays) == got:
            guards.append(_replaced(pred, term))
    inames = [i for i in acc.insn.within_inames if i not in planner.dd_inames[acc.kernel.name]]
    try:
        base = planner._domain(dataclasses.replace(acc, predicates=()), inames)
        base = base.insert_dims(dim_type.param, base.dim(dim_type.param), 1)
        base = base.set_dim_name(dim_type.param, base.dim(dim_type.param) - 1, VALUE)
        base = planner._fixed(base, ints)
        guarded = base
        for g in guards:
            try:
                guarded = guarded & set_from_condition(g, guarded.get_space())
            except Exception:  # noqa: BLE001 - not affine: that guard is not used
                continue
        moved = dataclasses.replace(acc, index=index)
        strict_bad = planner._oob(moved, base, extent_value=extent)
        guarded_bad = planner._oob(moved, guarded, extent_value=extent)
    except (NonAffineError, isl.Error):
        return None
    if strict_bad is None or guarded_bad is None:
        return None
    strict = _values(strict_bad).complement()
    allowed = _values(guarded_bad).complement()
    if strict.is_empty() or strict.coalesce().n_basic_set() != 1:     # (not an interval)
        return None
    lo_v, hi_v = strict.dim_min_val(0), strict.dim_max_val(0)
    # (a side the access does not bound stays open: another access bounds it,
    # or the planner's default range does)
    lo = int(lo_v.to_python()) if lo_v.is_int() else -np.inf
    hi = int(hi_v.to_python()) if hi_v.is_int() else np.inf
    if lo > -np.inf and _contains(allowed, lo - 1):
        lo -= 1
    if hi < np.inf and _contains(allowed, hi + 1):
        hi += 1
    return name, ValueRange(lo, hi, why=f"subscript {acc.array_text}"
                            + (f" ({acc.insn.span})" if acc.insn.span else ""))


def _values(bad: isl.Set) -> isl.Set:
    """The values of :data:`VALUE` for which some instance of *bad* exists,
    as a one-dimensional set."""
    s = bad.params()
    pos = s.find_dim_by_name(dim_type.param, VALUE)
    s = s.project_out(dim_type.param, pos + 1, s.dim(dim_type.param) - pos - 1)
    s = s.project_out(dim_type.param, 0, pos)
    return isl.Set.from_params(s).move_dims(dim_type.set, 0, dim_type.param, 0, 1)


def _contains(s: isl.Set, value: float) -> bool:
    point = isl.Set.read_from_str(s.get_ctx(), f"{{ [{int(value)}] }}")
    return not (s & point).is_empty()


def _bound_role(dom: isl.Set, j: str, t: str) -> str:
    """'lower' if *t* bounds *j* from below in *dom*, 'upper' if from above."""
    sp = dom.get_space()
    try:
        jv = pwaff_from_expr(p.Variable(j), sp)
        tv = pwaff_from_expr(p.Variable(t), sp)
    except NonAffineError:
        return "both"
    below = (dom & jv.lt_set(tv)).is_empty()
    above = (dom & jv.gt_set(tv)).is_empty()
    if below and not above:
        return "lower"
    if above and not below:
        return "upper"
    return "both"


def _indirect(expr, ints):
    """``(array, offset)`` if *expr* is ``array(...) + offset`` (offset an
    integer expression of the known scalars *ints*), else ``(None, 0)``."""
    e = expr
    while isinstance(e, p.Call) and getattr(e.function, "name", "") in ("int32", "int64") \
            and len(e.parameters) == 1:
        e = e.parameters[0]
    if isinstance(e, p.Subscript):
        return e.aggregate.name, 0
    if isinstance(e, p.Sum):
        subs = [c for c in e.children if isinstance(c, p.Subscript)]
        rest = [c for c in e.children if not isinstance(c, p.Subscript)]
        if len(subs) == 1:
            subst = {n: np.int64(v) for n, v in ints.items()}
            try:
                offset = sum(int(evaluate_constant(substitute(c, subst))) for c in rest)
            except (NotConstant, TypeError, ValueError, ZeroDivisionError, OverflowError):
                return None, 0
            return subs[0].aggregate.name, offset
    return None, 0




__all__ = ["VALUE", "combined_term", "value_range"]
