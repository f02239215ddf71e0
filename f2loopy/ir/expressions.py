"""Expression helpers over pymbolic: collecting accesses, substituting, renaming.

All rewriting mappers return the very same object when nothing changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pymbolic.primitives as p
from pymbolic.mapper import IdentityMapper, WalkMapper
from pymbolic.mapper.stringifier import PREC_NONE, StringifyMapper

from f2loopy.ir.frozen import identity_memo


@p.expr_dataclass()
class Reduction(p.ExpressionNode):
    """``operation`` over ``inames`` of ``expr`` (operation: sum, product, max, min).

    The value of the reduction is the combination of ``expr`` over all values
    of the reduction inames (which must not be in the instruction's loops).
    """

    operation: str
    inames: tuple[str, ...]
    expr: p.ExpressionNode

    def make_stringifier(self, originating_stringifier=None):
        return NodeStringifier()


@p.expr_dataclass()
class RuleArgument(p.ExpressionNode):
    """Placeholder for argument number *index* inside a substitution rule body."""

    index: int

    def make_stringifier(self, originating_stringifier=None):
        return NodeStringifier()


class NodeStringifier(StringifyMapper):
    """pymbolic's stringifier taught the two f2loopy nodes.  pymbolic hands a
    node it cannot print to the node's own :meth:`make_stringifier`, so
    ``str()`` of any expression holding a reduction or a rule argument works
    (a script's ``print(insn.expression)`` of ``a[i] + sum(j, ...)``) without
    changing pymbolic's classes."""

    def map_reduction(self, expr, enclosing_prec, *args, **kwargs):
        inames = expr.inames[0] if len(expr.inames) == 1 else f"({', '.join(expr.inames)})"
        return f"{expr.operation}({inames}, {self.rec(expr.expr, PREC_NONE)})"

    def map_rule_argument(self, expr, enclosing_prec, *args, **kwargs):
        return f"<arg{expr.index}>"


def _index_tuple(sub: p.Subscript) -> tuple:
    idx = sub.index
    return idx if isinstance(idx, tuple) else (idx,)


def index_tuple(sub: p.Subscript) -> tuple:
    """The subscript's indices as a tuple (pymbolic stores 1-D indices bare)."""
    return _index_tuple(sub)


class _Visitor(WalkMapper):
    """Walk mapper that also knows the f2loopy-specific nodes."""

    def map_reduction(self, expr, *args, **kwargs):
        if not self.visit(expr, *args, **kwargs):
            return
        self.rec(expr.expr, *args, **kwargs)
        self.post_visit(expr, *args, **kwargs)

    def map_rule_argument(self, expr, *args, **kwargs):
        self.visit(expr, *args, **kwargs)
        self.post_visit(expr, *args, **kwargs)

    def map_constant(self, expr, *args, **kwargs):
        self.visit(expr, *args, **kwargs)
        self.post_visit(expr, *args, **kwargs)


class _AccessCollector(_Visitor):
    def __init__(self):
        self.accesses: list[tuple[str, tuple | None]] = []
        self.calls: set[str] = set()

    def map_variable(self, expr, *args, **kwargs):
        self.accesses.append((expr.name, None))

    def map_subscript(self, expr, *args, **kwargs):
        self.accesses.append((expr.aggregate.name, _index_tuple(expr)))
        for i in _index_tuple(expr):
            self.rec(i)

    def map_call(self, expr, *args, **kwargs):
        self.calls.add(expr.function.name)
        for par in expr.parameters:
            self.rec(par)


def accesses(expr) -> list[tuple[str, tuple | None]]:
    """Every variable use in *expr* as ``(name, indices)``; indices is None
    for a bare name.  Function names of calls are not included."""
    return list(_cached_accesses(expr))


@identity_memo(maxsize=131072)
def _cached_accesses(expr) -> tuple:
    c = _AccessCollector()
    c(expr)
    return tuple(c.accesses)


def variables_read(*exprs) -> set[str]:
    """Names of all variables (and arrays) that *exprs* read."""
    out: set[str] = set()
    for e in exprs:
        out.update(name for name, _ in accesses(e))
    return out


@identity_memo(maxsize=65536)
def called_functions(expr) -> frozenset:
    """Names of the functions (and substitution rules) *expr* calls."""
    c = _AccessCollector()
    c(expr)
    return frozenset(c.calls)


class Rewriter(IdentityMapper):
    """Identity mapper that knows the f2loopy-specific nodes."""

    def map_reduction(self, expr, *args, **kwargs):
        new = self.rec(expr.expr, *args, **kwargs)
        return expr if new is expr.expr else Reduction(expr.operation, expr.inames, new)

    def map_rule_argument(self, expr, *args, **kwargs):
        return expr

    def map_constant(self, expr, *args, **kwargs):
        return expr


class _Substitutor(Rewriter):
    def __init__(self, func: Callable[[str], object | None]):
        self.func = func

    def map_variable(self, expr, *args, **kwargs):
        new = self.func(expr.name)
        return expr if new is None else new

    def map_subscript(self, expr, *args, **kwargs):
        idx = tuple(self.rec(i) for i in _index_tuple(expr))
        agg = expr.aggregate
        new_agg = self.func(agg.name)
        if new_agg is not None and not isinstance(new_agg, p.Variable):
            raise ValueError(f"cannot substitute array name {agg.name!r} by an expression")
        new_agg = agg if new_agg is None else new_agg
        if new_agg is agg and all(a is b for a, b in zip(idx, _index_tuple(expr), strict=True)):
            return expr
        return p.Subscript(new_agg, idx if len(idx) != 1 else idx[0])

    def map_call(self, expr, *args, **kwargs):
        pars = tuple(self.rec(a) for a in expr.parameters)
        if all(a is b for a, b in zip(pars, expr.parameters, strict=True)):
            return expr
        return p.Call(expr.function, pars)

    def map_reduction(self, expr, *args, **kwargs):
        inner = _Substitutor(lambda n: None if n in expr.inames else self.func(n))
        new = inner.rec(expr.expr)
        return expr if new is expr.expr else Reduction(expr.operation, expr.inames, new)


def substitute(expr, mapping: Mapping[str, object] | Callable[[str], object | None]):
    """Replace variables by expressions.

    *mapping* maps names to expressions (or is a function returning None for
    names to keep).  Array names in subscripts may only be replaced by other
    names; function names of calls are never replaced.
    """
    func = mapping.get if isinstance(mapping, Mapping) else mapping
    return _Substitutor(func)(expr)


def rename(expr, mapping: Mapping[str, str]):
    """Rename variables and arrays (not functions) by *mapping*."""
    if not mapping:
        return expr
    return substitute(expr, lambda n: p.Variable(mapping[n]) if n in mapping else None)


class _SubscriptMapper(Rewriter):
    def __init__(self, func):
        self.func = func

    def map_subscript(self, expr, *args, **kwargs):
        idx = tuple(self.rec(i) for i in _index_tuple(expr))
        if not all(a is b for a, b in zip(idx, _index_tuple(expr), strict=True)):
            expr = p.Subscript(expr.aggregate, idx if len(idx) != 1 else idx[0])
        new = self.func(expr)
        return expr if new is None else new

    def map_call(self, expr, *args, **kwargs):
        pars = tuple(self.rec(a) for a in expr.parameters)
        if all(a is b for a, b in zip(pars, expr.parameters, strict=True)):
            return expr
        return p.Call(expr.function, pars)


def map_subscripts(expr, func: Callable[[p.Subscript], object | None]):
    """Rewrite every subscript (innermost first) with *func* (None: keep)."""
    return _SubscriptMapper(func)(expr)


def is_constant(expr) -> bool:
    return isinstance(expr, (int, float, complex, np.number, np.bool_, bool))


def make_subscript(name: str, indices) -> p.Variable | p.Subscript:
    indices = tuple(indices)
    if not indices:
        return p.Variable(name)
    return p.Subscript(p.Variable(name), indices if len(indices) != 1 else indices[0])


def var(name: str) -> p.Variable:
    return p.Variable(name)


class _CallRenamer(Rewriter):
    def __init__(self, mapping):
        self.mapping = mapping

    def map_call(self, expr, *args, **kwargs):
        pars = tuple(self.rec(a) for a in expr.parameters)
        fn = expr.function
        new_fn = p.Variable(self.mapping[fn.name]) if fn.name in self.mapping else fn
        if new_fn is fn and all(a is b for a, b in zip(pars, expr.parameters, strict=True)):
            return expr
        return p.Call(new_fn, pars)


def rename_functions(expr, mapping: Mapping[str, str]):
    """Rename called functions (e.g. substitution rules) by *mapping*."""
    if not mapping:
        return expr
    return _CallRenamer(mapping)(expr)
