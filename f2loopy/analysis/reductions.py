"""Reductions into scalars across a loop nest: which nests could run in
parallel as a reduction, and why the others cannot.

A loop nest (an outermost loop and the loops inside it) is a *reduction
nest* when the only dependences its reduction loops carry are on scalar
accumulators that the nest touches in one of these forms and nowhere else:

* ``s = s + e`` (also ``s - e``, ``*``, ``max(s, e)``, ``min(s, e)``), the
  contribution ``e`` not reading ``s``, under any condition that does not
  read ``s``; several statements may update ``s``, all with the same
  operation;
* ``if (e < s) s = e`` (``e > s``: a maximum), the condition held in a
  logical variable when the ``if`` also sets the location of the extreme::

      c = e < s
      if (c) s = e
      if (c) jloc = j        (any expression of the reduction loops' indices)

  Strict comparison keeps the first extreme in the loops' order, which a
  parallel version reproduces exactly (``<=`` keeps the last one: refused).

The reduction loops are the loops around every update; each must carry no
dependence other than these and be a plain counted loop.  The
transformation is :func:`f2loopy.transform.parallel_reduction.parallel_reduction`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymbolic.primitives as p

from f2loopy.analysis.loops import LoopFacts
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.kernel import Assignment, Kernel, ScalarArg, Temporary
from f2loopy.ir.types import kernel_type_inferrer, type_name


@dataclass(frozen=True)
class Accumulator:
    """One scalar reduced over a :class:`ReductionNest`.

    :attr name: the scalar.
    :attr op: ``"sum"``, ``"product"``, ``"max"`` or ``"min"``.
    :attr updates: ids of the statements that update it.
    :attr condition: for an extreme kept by ``if (e < s)`` (or ``>``): the id
        of the statement that computes the condition into a logical
        variable, or the id of the update itself when the condition is its
        own predicate; None for the other forms.
    :attr value: the compared value ``e`` of such an extreme.
    :attr locations: ``(variable, id)`` of the statements that record where
        the extreme occurs (under the same condition).
    """

    name: str
    op: str
    updates: tuple[str, ...]
    condition: str | None = None
    value: object = None
    locations: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ReductionNest:
    """A loop nest whose loops carry only reductions into scalars.

    :attr outer: the outermost loop of the nest.
    :attr loops: the reduction loops (around every update), kernel order.
    :attr accumulators: what is reduced.
    :attr reason: why the nest cannot run as a parallel reduction (empty if
        it can).
    """

    outer: str
    loops: tuple[str, ...] = ()
    accumulators: tuple[Accumulator, ...] = ()
    reason: str = ""


def split_update(insn: Assignment, kernel: Kernel):
    """``(operation, contribution)`` if *insn* is ``v = v op e`` (``op`` one
    of ``+ * max min``; the contribution is what is combined with ``v``),
    else None.

    A numeric conversion around the update (the frontend writes one where
    the kinds differ) is looked through only where combining in another
    order gives the same result up to rounding: to a floating type from a
    floating one (rounding), to an integer type from an integer one for
    ``+`` and ``*`` (wrap-around arithmetic modulo the width) and for
    ``max``/``min`` when it does not narrow.  ``s = s + a`` with an integer
    ``s`` and a real ``a`` truncates at every step (``int(-5 + 0.7)`` is
    ``-4``, not ``-5 + int(0.7)``): no reduction.
    """
    return _split(insn.assignee, insn.expression, kernel)


def _split(v, e, kernel: Kernel):
    if isinstance(e, (p.Sum, p.Product)):
        rest = [c for c in e.children if c != v]
        if len(rest) == len(e.children) - 1 and rest:
            op = "sum" if isinstance(e, p.Sum) else "product"
            contrib = rest[0] if len(rest) == 1 else type(e)(tuple(rest))
            return op, contrib
    if isinstance(e, p.Call) and isinstance(e.function, p.Variable) \
            and e.function.name in ("max", "min") and len(e.parameters) >= 2:
        rest = [c for c in e.parameters if c != v]
        if len(rest) == len(e.parameters) - 1:
            contrib = rest[0] if len(rest) == 1 else p.Call(e.function, tuple(rest))
            return e.function.name, contrib
    # a numeric conversion around the update, as the frontend writes for mixed kinds
    if isinstance(e, p.Call) and isinstance(e.function, p.Variable) \
            and len(e.parameters) == 1 and e.function.name.startswith(
            ("float", "int", "complex")):
        split = _split(v, e.parameters[0], kernel)
        if split is not None and exact_conversion(kernel, e, e.parameters[0], split[0]):
            return split
    return None


def exact_conversion(kernel: Kernel, converted, inner, op: str) -> bool:
    """Whether converting the update *inner* (``s op e``) to the type of
    *converted* at every step gives what converting once gives, whatever
    the order of the steps (see :func:`split_update`)."""
    infer = kernel_type_inferrer(kernel)
    try:
        to, frm = np.dtype(infer(converted)), np.dtype(infer(inner))
    except Exception:      # noqa: BLE001 - a type the inferrer does not know
        return False
    if to.kind in "fc":
        return frm.kind in "fc"
    if to.kind in "iu" and frm.kind in "iu":
        return op in ("sum", "product") or to.itemsize >= frm.itemsize
    return False


def _converted_each_step(insn: Assignment, kernel: Kernel) -> str | None:
    """Why update *insn* is no reduction when a conversion around it is what
    :func:`split_update` refuses, else None."""
    e = insn.expression
    if not (isinstance(e, p.Call) and isinstance(e.function, p.Variable)
            and len(e.parameters) == 1
            and _split(insn.assignee, e.parameters[0], kernel) is not None):
        return None
    infer = kernel_type_inferrer(kernel)
    return (f"line {_line(insn)} converts every update of '{insn.assignee_name}' from "
            f"{type_name(infer(e.parameters[0]))} to {type_name(infer(e))}: in another "
            "order the result differs")


def _line(insn) -> str:
    return str(insn.span.line) if insn.span is not None else "?"


def _is_scalar(kernel: Kernel, name: str) -> bool:
    var = kernel.variable(name) if kernel.has_variable(name) else None
    if isinstance(var, ScalarArg):
        return True
    return isinstance(var, Temporary) and not var.shape


def _extreme(cond, name: str):
    """``(op, value)`` if *cond* is ``e < name`` / ``name > e`` (min) or
    ``e > name`` / ``name < e`` (max), else None; ``"last"`` as op for the
    non-strict comparisons (they keep the last extreme)."""
    if not isinstance(cond, p.Comparison):
        return None
    v = p.Variable(name)
    left, op, right = cond.left, cond.operator, cond.right
    if right == v and left != v:
        e, flipped = left, op
    elif left == v and right != v:
        e, flipped = right, {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
    else:
        return None
    if name in variables_read(e):
        return None
    if flipped in ("<=", ">="):
        return "last", e
    if flipped == "<":
        return "min", e
    if flipped == ">":
        return "max", e
    return None


def _updates_a_scalar(kernel: Kernel, insn) -> bool:
    """Whether *insn* writes a scalar that it also reads (an update, or an
    extreme's comparison): a nest without one reduces nothing."""
    if not isinstance(insn, Assignment) or isinstance(insn.assignee, p.Subscript):
        return False
    name = insn.assignee_name
    if name in variables_read(insn.expression, *insn.predicates):
        return _is_scalar(kernel, name)
    c = insn.predicates[0] if len(insn.predicates) == 1 else None
    # ``if (c) s = e`` with ``c = e < s`` computed before
    return isinstance(c, p.Variable) and _is_scalar(kernel, name)


def reduction_nests(kernel: Kernel, facts: LoopFacts | None = None) -> list[ReductionNest]:
    """The nests of *kernel* whose outermost loop carries a dependence only
    on scalars (see the module docstring), each with its accumulators, or
    with the reason it cannot run as a parallel reduction."""
    facts = facts or LoopFacts(kernel)
    inames = kernel.all_inames()
    out = []
    for x in inames:
        inside = [i for i in kernel.instructions if x in i.within_inames]
        if not inside or facts.shape_reason(x) or any(
                inames.index(x) != min(inames.index(y) for y in i.within_inames)
                for i in inside):
            continue
        if not any(_updates_a_scalar(kernel, i) for i in inside):
            continue
        carried = facts.carried(x)
        if not carried or not all(_is_scalar(kernel, n) for n, _ in carried):
            continue
        out.append(_nest(kernel, facts, x, inside, {n for n, _ in carried}))
    return out


def _nest(kernel: Kernel, facts: LoopFacts, x: str, inside: list, names: set) -> ReductionNest:
    def refuse(why: str) -> ReductionNest:
        return ReductionNest(x, reason=why)

    touching = {n: [i for i in inside if n in i.dependency_names()] for n in names}
    accs: list[Accumulator] = []
    taken: set = set()
    # the extremes with a location first: their location variables are theirs
    for name in sorted(names):
        conds = [i for i in touching[name] if isinstance(i, Assignment)
                 and i.assignee_name != name and not i.predicates
                 and _extreme(i.expression, name) is not None]
        own = [i for i in touching[name] if isinstance(i, Assignment)
               and i.assignee_name == name and len(i.predicates) == 1
               and _extreme(i.predicates[0], name) is not None]
        if len(conds) == 1 and _is_scalar(kernel, conds[0].assignee_name) \
                and conds[0].assignee_name in kernel.temporaries:
            acc = _with_location(kernel, inside, name, conds[0], touching)
        elif own and len(touching[name]) == 1:
            acc = _with_location(kernel, inside, name, own[0], touching)
        else:
            continue
        if isinstance(acc, str):
            return refuse(acc)
        accs.append(acc)
        taken |= {name} | {w for w, _ in acc.locations}
    for name in sorted(names - taken):
        ops = []
        for insn in touching[name]:
            split = split_update(insn, kernel) if isinstance(insn, Assignment) \
                and insn.assignee_name == name else None
            if split is None and isinstance(insn, Assignment) and insn.assignee_name == name:
                why = _converted_each_step(insn, kernel)
                if why:
                    return refuse(why)
            if split is None or name in variables_read(split[1], *insn.predicates):
                return refuse(f"'{name}' is read elsewhere in the nest (line {_line(insn)})")
            ops.append(split[0])
        if len(set(ops)) != 1:
            return refuse(f"'{name}' is updated with different operations (lines "
                          f"{', '.join(_line(i) for i in touching[name])})")
        accs.append(Accumulator(name, ops[0], tuple(i.id for i in touching[name])))
    ids = {u for a in accs for u in (*a.updates, *(i for _, i in a.locations),
                                     *([a.condition] if a.condition else []))}
    common = frozenset.intersection(*(kernel.insn(i).within_inames for i in ids))
    loops = tuple(y for y in kernel.all_inames() if y in common)
    for a in accs:
        for w, i in a.locations:
            loc = kernel.insn(i)
            assert isinstance(loc, Assignment)
            if variables_read(loc.expression) & (set(kernel.all_inames()) - set(loops)):
                return refuse(f"line {_line(loc)} records an index of a loop inside the "
                              "reduction loops")
    mine = {a.name for a in accs} | {w for a in accs for w, _ in a.locations}
    for y in loops:
        why = facts.shape_reason(y)
        if why:
            return refuse(f"loop '{y}' {why}")
        other = [r for n, r in facts.carried(y) if n not in mine]
        if other:
            return refuse(f"loop '{y}' also {other[0]}")
    return ReductionNest(x, loops, tuple(accs))


def _with_location(kernel: Kernel, inside: list, name: str, cond_insn, touching):
    """The :class:`Accumulator` of an extreme kept by a strict comparison
    (*cond_insn* computes the condition, or is the update itself), or the
    reason it is not one."""
    own = cond_insn.assignee_name == name
    cond = cond_insn.predicates[0] if own else cond_insn.expression
    op, value = _extreme(cond, name)
    if op == "last":
        return (f"the comparison on line {_line(cond_insn)} keeps the last of equal values of "
                f"'{name}' (use < or >)")
    if kernel_type_inferrer(kernel)(value) != kernel.variable(name).dtype:
        # (a conversion on the store: the kept values are not the compared ones)
        return (f"line {_line(cond_insn)} compares '{name}' with a value of another type")
    if own:
        update, locs = cond_insn, []
        if value != update.expression:
            return f"line {_line(update)} stores in '{name}' another value than it compares"
        return Accumulator(name, op, (update.id,), update.id, value)
    c = p.Variable(cond_insn.assignee_name)
    users = [i for i in inside if c.name in i.dependency_names() and i.id != cond_insn.id]
    # outside the nest, the condition's last value must not be read: a
    # reader there needs a value it sets itself, earlier in its own loops
    order = {i.id: k for k, i in enumerate(kernel.instructions)}
    for r in kernel.instructions:
        if r in inside or c.name not in r.read_dependency_names():
            continue
        if not any(isinstance(w, Assignment) and w.assignee_name == c.name
                   and not w.predicates and w not in inside and order[w.id] < order[r.id]
                   and w.within_inames and w.within_inames <= r.within_inames
                   for w in kernel.instructions):
            return f"'{c.name}' is read after the nest (line {_line(r)})"
    updates = [i for i in users if isinstance(i, Assignment) and i.assignee_name == name]
    locs = [i for i in users if i not in updates]
    if len(updates) != 1 or updates[0].predicates != (c,) \
            or updates[0].expression != value:
        return (f"the condition on line {_line(cond_insn)} does not guard one store of the "
                f"compared value in '{name}'")
    written = set().union(*(i.assignee_names() for i in inside))
    for i in locs:
        if not isinstance(i, Assignment) or i.predicates != (c,) \
                or c.name in variables_read(i.expression):
            return f"'{c.name}' is used elsewhere (line {_line(i)})"
        w = i.assignee_name
        if not _is_scalar(kernel, w) or any(j is not i for j in inside
                                            if w in j.dependency_names()):
            return f"'{w}' is used elsewhere in the nest (line {_line(i)})"
        if variables_read(i.expression) & written:
            return (f"line {_line(i)} records a value computed in the nest, not a function of "
                    "the loop indices")
    others = [i for i in touching[name] if i.id not in (cond_insn.id, updates[0].id)]
    if others:
        return f"'{name}' is read elsewhere in the nest (line {_line(others[0])})"
    return Accumulator(name, op, (updates[0].id,), cond_insn.id, value,
                       tuple((i.assignee_names()[0], i.id) for i in locs))
