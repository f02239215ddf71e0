"""Queries about the loops of a kernel: what may run in parallel and how.

Pure functions of a kernel (nothing is transformed), which the automatic
recipe (:func:`~f2loopy.transform.auto.plan_auto`) and transformation
scripts ask (a script sees them under the names it uses today, through the
query namespace :mod:`f2loopy.query`):

* :func:`loop_dependences` (which loops carry a dependence, decided by the
  dependence analysis of :mod:`f2loopy.analysis.dependences`) and
  :func:`parallel_loops`;
* :func:`grid_axes`, :func:`outermost_loops`, :func:`has_choice_of_second_axis`,
  :func:`reused_tiles` and :func:`accumulated_arrays`: how parallel loops map
  to the grid, which tiles are worth local memory, which array elements a
  private variable can hold;
* :func:`time_loops` and :func:`launch_summary`: loops to run on the host,
  and what a kernel split at global barriers does.

The exact rules are in :mod:`f2loopy.transform.auto`'s docstring.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pymbolic.primitives as p

from f2loopy.analysis.accesses import Access, AccessAnalysis, instruction_accesses
from f2loopy.analysis.dependences import carried_by, dependence_instances
from f2loopy.analysis.private import Privatisation, privatizable
from f2loopy.diagnostics import TransformError
from f2loopy.ir.domains import iname_to_domain_index
from f2loopy.ir.expressions import index_tuple, variables_read
from f2loopy.ir.isl_tools import dim_type, param_names
from f2loopy.ir.kernel import ArrayArg, Assignment, BarrierInstruction, Kernel, Temporary
from f2loopy.ir.layout import axes_fastest_first
from f2loopy.ir.tags import SequentialTag


@dataclass(frozen=True)
class LoopVerdict:
    """What :func:`loop_dependences` found about one loop.

    :attr iname: the loop.
    :attr parallel: True if its iterations can run on different work-items.
    :attr reason: why not (empty when *parallel*), e.g. ``"carries a
        dependence on 'c' (lines 14 and 14)"``.
    """

    iname: str
    parallel: bool
    reason: str = ""


# {{{ which loops carry a dependence

def _line(kernel: Kernel, insn_id: str) -> str:
    span = kernel.insn(insn_id).span
    return str(span.line) if span is not None else "?"


def _rectangular(kernel: Kernel, x: str) -> bool:
    """The bounds of *x* depend on kernel parameters only."""
    dom = kernel.domains[iname_to_domain_index(kernel)[x]]
    inames = set(kernel.all_inames())
    return not any(n in inames or n in kernel.temporaries for n in param_names(dom))


def loop_dependences(kernel: Kernel, *, facts: LoopFacts | None = None
                     ) -> dict[str, LoopVerdict]:
    """For every loop of *kernel* (in kernel order), whether its iterations
    may run in parallel; see the module docstring for the exact rule.

    :arg facts: the kernel's :class:`LoopFacts`, if the caller has them."""
    facts = facts or LoopFacts(kernel)
    out = {}
    for x in kernel.all_inames():
        reason = facts.shape_reason(x)
        if not reason:
            carried = facts.carried(x, first_only=True)
            reason = carried[0][1] if carried else ""
        out[x] = LoopVerdict(x, not reason, reason)
    return out


class LoopFacts:
    """The accesses of a kernel, grouped for asking which variables each loop
    carries a dependence on (:func:`loop_dependences`, and the reductions of
    :mod:`f2loopy.analysis.reductions`)."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.analysis = AccessAnalysis(kernel)
        self.private = Privatisation(kernel)
        self.by_var: dict[str, list[Access]] = {}
        # variable -> the loops around its writes (a loop that holds none of
        # them carries no dependence on it)
        self.write_loops: dict[str, set] = {}
        for insn in kernel.instructions:
            for acc in instruction_accesses(kernel, insn):
                self.by_var.setdefault(acc.name, []).append(acc)
                if acc.is_write:
                    self.write_loops.setdefault(acc.name, set()).update(insn.within_inames)

    def shape_reason(self, x: str) -> str:
        """Why loop *x* cannot run in parallel whatever it accesses (it
        stops early, its bounds are not rectangular); empty if none."""
        if x in self.kernel.loop_exits:
            return "stops early (exit, do while, return or a sequential loop)"
        if not _rectangular(self.kernel, x):
            return "has bounds that depend on other loops or on computed values"
        return ""

    def carried(self, x: str, *, first_only: bool = False) -> list[tuple[str, str]]:
        """``(variable, reason)`` for each variable (in name order) that
        loop *x* carries a dependence on; with *first_only*, the first."""
        kernel, insns = self.kernel, self.kernel.id_to_insn
        out = []
        for name in sorted(self.by_var):
            if x not in self.write_loops.get(name, ()):
                continue
            accs = [a for a in self.by_var[name] if x in insns[a.insn_id].within_inames]
            if not any(a.is_write for a in accs):
                continue
            why = self.private.why_not(x, name, self.by_var[name]) \
                if name in kernel.temporaries else "-"
            if not why:
                continue
            for a, b, pairs in dependence_instances(self.analysis, accs, skip_non_affine=True):
                if carried_by(pairs, x).is_empty():
                    continue
                if privatizable(kernel, name):
                    reason = f"carries a dependence on '{name}': {why}"
                else:
                    reason = (f"carries a dependence on '{name}' (lines "
                              f"{_line(kernel, a.insn_id)} and "
                              f"{_line(kernel, b.insn_id)})")
                out.append((name, reason))
                break
            if out and first_only:
                break
        return out


def parallel_loops(kernel: Kernel) -> tuple[str, ...]:
    """The loops of *kernel* (in kernel order) that carry no dependence and
    are not mapped to the grid yet."""
    return tuple(x for x, v in loop_dependences(kernel).items()
                 if v.parallel and not kernel.iname_tag(x).hardware)

# }}}


# {{{ how parallel loops map to the grid

def _subscript_ranks(kernel: Kernel) -> dict[str, list[int]]:
    """iname -> for each array access it appears in, the rank (0: fastest
    varying) of the first subscript that uses it."""
    out: dict[str, list[int]] = {}
    for insn in kernel.instructions:
        for acc in instruction_accesses(kernel, insn, with_domain_params=False):
            if acc.index is None:
                continue
            var = kernel.variable(acc.name)
            if not isinstance(var, (ArrayArg, Temporary)) or var.ndim != len(acc.index):
                continue
            seen: set = set()
            for rank, axis in enumerate(axes_fastest_first(var)):
                for name in variables_read(acc.index[axis]) - seen:
                    out.setdefault(name, []).append(rank)
                    seen.add(name)
    return out


def grid_axes(kernel: Kernel, candidates: Sequence[str], *, max_axes: int = 2,
              second: str = "inner") -> dict[str, int]:
    """iname -> grid axis for the loops *candidates*: in the statements that
    run in them, the loop indexing the fastest-varying subscripts goes to axis
    0, and (at most *max_axes*) with *second* ``"inner"`` the loop indexing
    the next-fastest subscripts to axis 1 (a GPU's choice: each work-item then
    marches through the remaining loops), with ``"outer"`` the outermost
    remaining loop (a CPU's: each work-item runs whole inner rows, which
    caches serve well).  A loop gets one axis for the whole kernel, and no
    statement gets two loops on one axis."""
    if second not in ("inner", "outer"):
        raise TransformError(f"auto: the second grid axis is 'inner' or 'outer', not "
                             f"{second!r}")
    ranks = _subscript_ranks(kernel)
    order = list(kernel.all_inames())

    def key(x):
        r = ranks.get(x, [])
        # most accesses with x in the fastest subscript, then the second...;
        # ties: the inner loop of the source
        return tuple(-r.count(k) for k in range(4)) + (-order.index(x),)

    def ordered(inames):
        out = sorted(inames, key=key)
        if second == "outer" and len(out) > 2:
            out = out[:1] + sorted(out[1:], key=order.index)
        return out

    axes: dict[str, int] = {}
    cands = set(candidates)
    for insn in kernel.instructions:
        mine = ordered(x for x in insn.within_inames if x in cands)
        used = {axes[x] for x in insn.within_inames if x in axes}
        for x in mine:
            if x in axes:
                continue
            free = [a for a in range(max_axes) if a not in used]
            if not free:
                break
            axes[x] = free[0]
            used.add(free[0])
    # an iname on an axis shared with another iname of the same statement
    # (possible when statements disagree) is dropped
    for insn in kernel.instructions:
        seen: dict[int, str] = {}
        for x in ordered(x for x in insn.within_inames if x in axes):
            if axes[x] in seen:
                del axes[x]
            else:
                seen[axes[x]] = x
    return {x: axes[x] for x in order if x in axes}


def outermost_loops(kernel: Kernel, candidates: Sequence[str]) -> dict[str, int]:
    """iname -> 0 for the outermost of the loops *candidates* around each
    statement (the ``outer`` plan: one work-group per iteration of that
    loop, which runs the loops inside it as they are, as OpenMP's ``parallel
    do`` on the outer loop would)."""
    order = list(kernel.all_inames())
    cands = set(candidates)
    chosen: dict[str, int] = {}
    for insn in kernel.instructions:
        mine = sorted((x for x in insn.within_inames if x in cands), key=order.index)
        if mine and not any(x in chosen for x in mine):
            chosen[mine[0]] = 0
    return {x: 0 for x in order if x in chosen}


def has_choice_of_second_axis(kernel: Kernel, candidates: Sequence[str]) -> bool:
    """Whether some statement runs in more than two of the loops *candidates*
    (so :func:`grid_axes`'s *second* changes the mapping)."""
    cands = set(candidates)
    return any(len(cands & set(insn.within_inames)) > 2 for insn in kernel.instructions)


def reused_tiles(kernel: Kernel, axes: dict[str, int]) -> list[tuple[str, str, tuple]]:
    """``(array, sequential loop, subscript inames)`` for each read-only array
    read as ``a(x, k)`` (subscripts that are bare loop indices) in a statement
    inside two parallel loops and a sequential loop ``k``, where the
    subscripts leave out one of the parallel loops: the work-items of a
    group along that loop all read the same tile, which is worth staging in
    local memory."""
    written = set(kernel.written_variables())
    out = []
    seen = set()
    for insn in kernel.instructions:
        par = [x for x in insn.within_inames if x in axes]
        if len(par) != 2:
            continue
        seq = [x for x in insn.within_inames if x not in axes
               and not kernel.iname_tag(x).hardware and _rectangular(kernel, x)
               and x not in kernel.loop_exits]
        for acc in instruction_accesses(kernel, insn, with_domain_params=False):
            if acc.is_write or acc.index is None or acc.name in written \
                    or not isinstance(kernel.variable(acc.name), ArrayArg):
                continue
            if not all(isinstance(e, p.Variable) for e in acc.index):
                continue
            names = tuple(e.name for e in acc.index)
            if len(set(names)) != len(names):
                continue
            ks = [x for x in names if x in seq]
            ps = [x for x in names if x in par]
            if len(ks) != 1 or len(ps) != 1 or len(names) != 2:
                continue
            if (acc.name, names) not in seen:
                seen.add((acc.name, names))
                out.append((acc.name, ks[0], names))
    return out


def accumulated_arrays(kernel: Kernel) -> list[str]:
    """Arrays (arguments) that a statement writes inside a sequential loop its
    subscripts do not use, e.g. ``c(i, j) = c(i, j) + a(i, k) * b(k, j)``
    inside ``k``: every iteration of ``k`` reads and writes the same
    element, which a private variable can hold instead."""
    out = []
    for insn in kernel.instructions:
        if not isinstance(insn, Assignment):
            continue
        a = insn.assignee
        if not isinstance(a, p.Subscript) \
                or not isinstance(kernel.variable(insn.assignee_name), ArrayArg):
            continue
        used = set().union(*(variables_read(e) for e in index_tuple(a)))
        if any(x not in used and not kernel.iname_tag(x).hardware
               for x in insn.within_inames) and insn.assignee_name not in out:
            out.append(insn.assignee_name)
    return sorted(out)

# }}}


# {{{ launches

def time_loops(kernel: Kernel) -> tuple[str, ...]:
    """The outermost loops of *kernel* that carry a dependence (so cannot run
    in parallel) but hold loops that can: candidates to run on the host, one
    launch (or a few) per iteration.  Loops that stop early, whose bounds
    depend on other loops or on computed values, or that no instruction
    runs directly inside of (nested in another loop) are not."""
    verdicts = loop_dependences(kernel)
    where = iname_to_domain_index(kernel)
    inames = kernel.all_inames()
    out = []
    for x, v in verdicts.items():
        if v.parallel or x in kernel.loop_exits or \
                not isinstance(kernel.iname_tag(x), SequentialTag):
            continue
        dom = kernel.domains[where[x]]
        if any(p in inames or p in kernel.temporaries for p in param_names(dom)):
            continue
        if len(dom.get_var_names(dim_type.set)) != 1:
            continue
        inside = [i for i in kernel.instructions if x in i.within_inames]
        if not inside or any(inames.index(x) != min(inames.index(y) for y in i.within_inames)
                             for i in inside):
            continue
        held = {y for i in inside for y in i.within_inames} - {x}
        if any(verdicts[y].parallel and not kernel.iname_tag(y).hardware for y in held):
            out.append(x)
    return tuple(out)


def launch_summary(kernel: Kernel) -> str:
    """``"; 2 global barriers, host loop t"``-style text for a kernel split
    at global barriers (empty for one launch)."""
    barriers = [i for i in kernel.instructions
                if isinstance(i, BarrierInstruction) and i.scope == "global"]
    if not barriers:
        return ""
    host = sorted({x for b in barriers for x in b.within_inames})
    n = len(barriers)
    text = f"; {n} global barrier{'s' if n > 1 else ''}"
    if host:
        text += f", host loop{'s' if len(host) > 1 else ''} {', '.join(host)}"
    return text

# }}}
