"""Turning accumulation loops written in Fortran into reductions.

``do k = 1, n; s = s + a(k)*b(k); end do`` becomes the single instruction
``s = s + sum(k, a(k)*b(k))`` outside the loop over ``k``.  A reduction is
computed sequentially, or, when its iname is tagged ``l.N``, as a tree
reduction in local memory by the work-items of a group (see
:mod:`f2loopy.codegen.reductions`).
"""

from __future__ import annotations

import pymbolic.primitives as p

from f2loopy.analysis.reductions import split_update
from f2loopy.diagnostics import TransformError
from f2loopy.ir.expressions import Reduction, Rewriter, index_tuple, variables_read
from f2loopy.ir.kernel import Assignment, Kernel
from f2loopy.transform.match import find_instructions
from f2loopy.transform.util import (
    NameNotFoundError, MatchSpec, Names, for_each_kernel, parse_iname_list, resolve_iname)

@for_each_kernel
def accumulation_to_reduction(kernel: Kernel, within: MatchSpec, *,
                              inames: Names | None = None) -> Kernel:
    """Rewrite accumulations ``v = v + e`` (also ``*``, ``max(v, e)``,
    ``min(v, e)``) selected by *within* into ``v = v + sum(k, e)``.  Other
    instructions that *within* selects (``"writes:v"`` also matches the
    ``v = 0`` before the loop) are left alone; at least one must be an
    accumulation.

    :arg inames: the loop(s) to reduce over; by default the loops in which
        the instruction is the only statement and that its assignee's
        subscripts do not use.

    The contribution must not read ``v``.  An ``if`` inside the loop that
    depends on the reduction iname becomes part of the contribution (masked
    elements contribute the neutral element).  Summation order changes
    (that is the point), so floating-point results may differ in rounding.
    """
    selected = find_instructions(kernel, within)
    if not selected:
        raise NameNotFoundError(f"accumulation_to_reduction: no instruction matches {within!r}")
    updates = [(i, split_update(i, kernel)) for i in selected if isinstance(i, Assignment)]
    updates = [(i, split) for i, split in updates if split is not None]
    if not updates:
        insn = selected[0]
        if not isinstance(insn, Assignment):
            raise TransformError(f"accumulation_to_reduction: '{insn.id}' is not an assignment")
        raise TransformError(f"accumulation_to_reduction: instruction '{insn.id}' is not an "
                             f"accumulation of the form {insn.assignee_name} = "
                             f"{insn.assignee_name} + ... (or *, max, min)", insn.span)
    new = {}
    removed: set[str] = set()
    # what else matches (``writes:s`` also selects ``s = 0``) stays as it is,
    # or becomes the start of the reduction
    for insn, (op, contrib) in updates:
        vname = insn.assignee_name
        if vname in variables_read(contrib):
            raise TransformError(f"accumulation_to_reduction: the contribution in '{insn.id}' "
                                 f"reads '{vname}' itself", insn.span)
        red_inames = _reduction_inames(kernel, insn, inames)
        keep_preds: list = []
        mask: list = []
        for pred in insn.predicates:
            (mask if variables_read(pred) & set(red_inames) else keep_preds).append(pred)
        if mask:
            if op not in ("sum", "product"):
                raise TransformError(f"accumulation_to_reduction: '{insn.id}' is a {op} "
                                     "accumulation under a condition on the loop; only sums "
                                     "and products can be masked", insn.span)
            cond = mask[0] if len(mask) == 1 else p.LogicalAnd(tuple(mask))
            contrib = p.If(cond, contrib, 0 if op == "sum" else 1)
        red = Reduction(op, tuple(red_inames), contrib)
        outer_loops = insn.within_inames - set(red_inames)
        init = _foldable_init(kernel, insn, outer_loops, keep_preds)
        start = insn.assignee if init is None else init.expression
        if init is not None and _is_neutral(op, start):
            value = red
        elif op in ("sum", "product"):
            value = (p.Sum if op == "sum" else p.Product)((start, red))
        else:
            value = p.Call(p.Variable(op), (start, red))
        deps = insn.depends_on
        if init is not None:
            removed.add(init.id)
            deps = (deps - {init.id}) | init.depends_on
        new[insn.id] = insn.copy(expression=value, predicates=tuple(keep_preds),
                                 within_inames=outer_loops, depends_on=deps)
    insns = []
    for i in kernel.instructions:
        if i.id in removed:
            continue
        i = new.get(i.id, i)
        if i.depends_on & removed:
            i = i.copy(depends_on=i.depends_on - removed)
        insns.append(i)
    return kernel.copy(instructions=tuple(insns))


def _is_neutral(op, value) -> bool:
    import numpy as np
    if not isinstance(value, (int, float, np.number)) or isinstance(value, (bool, np.bool_)):
        return False
    return (op == "sum" and value == 0) or (op == "product" and value == 1)


def _foldable_init(kernel, insn, within, preds):
    """The instruction initialising the accumulator right before the loop
    (``s = 0``), if nothing else reads that value before the accumulation: it
    becomes the start of the reduction instead of a separate statement."""
    candidates = [kernel.insn(d) for d in insn.depends_on]
    candidates = [c for c in candidates if isinstance(c, Assignment)
                  and c.assignee == insn.assignee and c.within_inames == within
                  and tuple(c.predicates) == tuple(preds)
                  and insn.assignee_name not in variables_read(c.expression)]
    if len(candidates) != 1:
        return None
    init = candidates[0]
    # an instruction that waits for the accumulation too (``s(i) = acc``
    # after the loop) reads the accumulated value, whatever the start was
    users = [i.id for i in kernel.instructions if init.id in i.depends_on
             and i.id != insn.id and insn.id not in i.depends_on]
    return None if users else init


def _reduction_inames(kernel, insn, inames):
    if inames is not None:
        names = [resolve_iname(kernel, i) for i in parse_iname_list(inames)]
        missing = [n for n in names if n not in insn.within_inames]
        if missing:
            raise TransformError(f"accumulation_to_reduction: instruction '{insn.id}' is not "
                                 f"inside loop(s) {', '.join(missing)}", insn.span)
    else:
        used_by_assignee = set()
        if isinstance(insn.assignee, p.Subscript):
            used_by_assignee = variables_read(*index_tuple(insn.assignee))
        names = []
        for k in insn.within_inames:
            if k in used_by_assignee or kernel.iname_tag(k).hardware and \
                    not str(kernel.iname_tag(k)).startswith("l."):
                continue
            others = [i for i in kernel.instructions if i.id != insn.id and k in i.within_inames]
            if not others:
                names.append(k)
        if not names:
            raise TransformError(f"accumulation_to_reduction: no loop around '{insn.id}' "
                                 "contains only this accumulation; pass inames=", insn.span)
        order = list(kernel.all_inames())
        names.sort(key=order.index)
    if isinstance(insn.assignee, p.Subscript):
        used = variables_read(*index_tuple(insn.assignee))
        clash = set(names) & used
        if clash:
            raise TransformError(f"accumulation_to_reduction: '{insn.id}' writes a different "
                                 f"element in each iteration of {', '.join(sorted(clash))}",
                                 insn.span)
    # other statements may share the reduction loops only if reordering them
    # against this accumulation cannot change anything: they neither touch
    # the accumulator nor write what the contribution reads
    vname = insn.assignee_name
    reads = variables_read(*insn.read_expressions()) - {vname}
    for k in names:
        for other in kernel.instructions:
            if other.id == insn.id or k not in other.within_inames:
                continue
            touched = set(other.assignee_names()) | variables_read(*other.read_expressions())
            clashing = sorted(({vname} & touched) | (set(other.assignee_names()) & reads))
            if clashing:
                raise TransformError(
                    f"accumulation_to_reduction: loop '{k}' also contains '{other.id}', which "
                    f"{'writes' if set(clashing) <= set(other.assignee_names()) else 'uses'} "
                    f"{', '.join(repr(c) for c in clashing)}; the reduction would reorder them",
                    insn.span, (("the other statement", other.span),))
    return names



@for_each_kernel
def make_reduction_inames_unique(kernel: Kernel, inames: Names | None = None,
                                 within: MatchSpec = None) -> Kernel:
    """Give each reduction its own copy of every iname it runs over that a
    loop or an earlier reduction (in instruction order) already uses, so that
    the reductions can be transformed one by one (split, tag, ...).

    :arg inames: only these reduction inames (default: all).
    :arg within: only the reductions in the instructions this selects.

    A copy has the bounds of the original, its tag and the name
    ``<iname>_<k>`` (first free k).  An iname that other loops' bounds
    depend on is not copied.
    """
    from f2loopy.ir.domains import iname_to_domain_index
    from f2loopy.ir.frozen import FrozenMap
    from f2loopy.ir.isl_tools import dim_type
    from f2loopy.transform.iname import _copied_domain, reduction_inames
    from f2loopy.transform.match import parse_match
    from f2loopy.transform.rules import map_instruction_expressions
    from f2loopy.transform.util import unique_name
    only = None if inames is None else {resolve_iname(kernel, i)
                                        for i in parse_iname_list(inames)}
    match = parse_match(within)
    where = iname_to_domain_index(kernel)
    domains, tags = list(kernel.domains), dict(kernel.iname_tags)
    created: list = []

    def fresh(old):
        new = unique_name(kernel, old, created)
        created.append(new)
        domains.append(_copied_domain(kernel.domains[where[old]], old, new))
        if old in tags:
            tags[new] = tags[old]
        return new

    fixed = {n for n in reduction_inames_of(kernel)
             if any(d.find_dim_by_name(dim_type.param, n) >= 0 for d in kernel.domains)}
    renamer = _UniqueReductions(set().union(*(i.within_inames for i in kernel.instructions)),
                                only, fixed, fresh)
    insns = []
    for insn in kernel.instructions:
        if match.match(kernel, insn):
            insn = map_instruction_expressions(insn, renamer)
        else:
            renamer.seen.update(reduction_inames(insn))
        insns.append(insn)
    if not created:
        return kernel
    return kernel.copy(domains=tuple(domains), instructions=tuple(insns),
                       iname_tags=FrozenMap(tags))


def reduction_inames_of(kernel: Kernel) -> set:
    from f2loopy.transform.iname import reduction_inames
    return set().union(*(reduction_inames(i) for i in kernel.instructions))


class _UniqueReductions(Rewriter):
    """Renames, in each reduction met, the inames already *seen*."""

    def __init__(self, seen, only, fixed, fresh):
        self.seen, self.only, self.fixed, self.fresh = seen, only, fixed, fresh

    def map_reduction(self, expr, *args, **kwargs):
        from f2loopy.ir.expressions import substitute
        renames = {n: self.fresh(n) for n in expr.inames
                   if n in self.seen and n not in self.fixed
                   and (self.only is None or n in self.only)}
        self.seen.update(expr.inames)
        self.seen.update(renames.values())
        body = substitute(expr.expr, {o: p.Variable(n) for o, n in renames.items()}) \
            if renames else expr.expr
        body = self.rec(body, *args, **kwargs)
        if not renames and body is expr.expr:
            return expr
        return Reduction(expr.operation, tuple(renames.get(n, n) for n in expr.inames), body)
