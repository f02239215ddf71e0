"""Automatic parallelisation: choose the parallel loops of a kernel without a script.

The choice is made in three steps, each exact or verified:

1. **Which loops carry a dependence** (:func:`loop_dependences`): loop ``x``
   carries one when two instances of instructions inside ``x``, in different
   iterations of ``x``, touch the same element of a variable and one of them
   writes it (decided with isl on the affine subscripts; a subscript that is
   not affine counts as a conflict).  A temporary that every iteration of ``x``
   writes before it reads it (a scalar accumulator such as ``s = 0; do k; s =
   s + ...``) is private to the iteration and carries nothing.  Loops that stop
   early (``exit``, ``do while``) and loops whose bounds depend on other loops
   or on computed values (triangular loops) are never made parallel.
2. **How parallel loops map to the grid** (:func:`plan_auto`): the loop
   whose index appears in the fastest-varying subscript (Fortran's first) of
   the most accesses goes to axis 0, so that neighbouring work-items touch
   neighbouring memory; a second parallel loop of the same statements goes to
   axis 1.  Each is split into work-groups of the tile size along its axis
   (``g.N`` outer, ``l.N`` inner).  A sequential loop inside both (the ``k`` of
   a matrix product) whose tiles of read-only arrays are used by several
   work-items of a group is split in tiles too, and those tiles are fetched to
   local memory once per tile (:func:`~f2loopy.transform.precompute.add_prefetch`).
   An array element that a statement accumulates across a sequential loop
   (``c(i, j) = c(i, j) + ...`` over ``k``) is held in a private variable
   during the loop and stored once (:func:`~f2loopy.transform.buffer.buffer_array`).
3. **Checked plans, best first**: the 2-D plan with local memory, without it,
   one axis only, then one work-group whose work-items share each parallel
   loop (all phases of the kernel then synchronise with barriers, which suits
   time-stepping loops around several loop nests), then the ``outer`` plan
   (one work-group of one work-item per iteration of the outermost parallel
   loop, the rest sequential inside it: a CPU's way, chosen by asking for
   it), then the kernel unchanged.
   Interactions between loop nests (a nest that reads what another wrote in
   other work-groups) are what *verify* checks: with
   :func:`~f2loopy.codegen.generate_code` as *verify*, the first plan whose
   code passes the exact race checks is taken.

Reductions (``s = s + ...``) and loops carrying dependences stay sequential
loops inside each work-item.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import islpy as isl
import pymbolic.primitives as p

from f2loopy.analysis.accesses import Access, AccessAnalysis, instruction_accesses
from f2loopy.analysis.private import Privatisation, privatizable
from f2loopy.diagnostics import F2LoopyError, TransformError
from f2loopy.ir.domains import iname_to_domain_index
from f2loopy.ir.expressions import index_tuple, variables_read
from f2loopy.ir.isl_tools import lazy_affs, param_names
from f2loopy.ir.kernel import ArrayArg, Assignment, Kernel, Temporary
from f2loopy.ir.layout import axes_fastest_first
from f2loopy.transform.buffer import buffer_array
from f2loopy.transform.iname import split_iname, tag_inames
from f2loopy.transform.precompute import add_prefetch
from f2loopy.transform.util import for_each_kernel, unique_name

#: names of the plans, best first (see :func:`plan_auto`)
PLANS = ("grid+local", "grid", "grid-1d", "one-group", "outer", "sequential")


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


@dataclass(frozen=True)
class AutoOutcome:
    """The result of :func:`plan_auto`.

    :attr kernel: the transformed kernel (the input when *plan* is
        ``"sequential"``).
    :attr plan: the name of the plan taken (one of :data:`PLANS`).
    :attr tags: iname -> tag of the loops the plan made parallel (before
        splitting, e.g. ``{"i": "g.0/l.0", "j": "g.1/l.1"}``).
    :attr prefetched: the arrays fetched to local memory.
    :attr registers: the arrays whose elements are accumulated in a private
        variable across a sequential loop (``c(i, j) = c(i, j) + ...`` over
        ``k``) and stored once.
    :attr notes: one line per plan that was refused and why, and for a
        sequential kernel why each loop stays sequential.
    :attr parallel: the loops that carry no dependence (whether or not a
        plan could use them).
    """

    kernel: Kernel
    plan: str
    tags: dict = field(default_factory=dict)
    prefetched: tuple = ()
    notes: tuple = ()
    parallel: tuple = ()
    registers: tuple = ()

    def summary(self) -> str:
        """One line: ``auto: kernel 'gemm': plan grid+local, i -> g.0/l.0, ...``."""
        name = self.kernel.name
        if self.plan == "sequential" and not self.parallel:
            return f"auto: kernel '{name}' stays sequential (no loop can run in parallel)"
        if self.plan == "sequential":
            return (f"auto: kernel '{name}' stays sequential (loops {', '.join(self.parallel)} "
                    "can run in parallel, but no plan that uses them was taken)")
        tags = ", ".join(f"{i} -> {t}" for i, t in self.tags.items())
        text = f"auto: kernel '{name}': plan {self.plan}, {tags}"
        if self.prefetched:
            text += f"; local memory for {', '.join(self.prefetched)}"
        if self.registers:
            text += f"; registers for {', '.join(self.registers)}"
        return text


# {{{ step 1: dependences

def _line(kernel: Kernel, insn_id: str) -> str:
    span = kernel.insn(insn_id).span
    return str(span.line) if span is not None else "?"


def _differs_on(s: isl.Set, x: str) -> isl.Set:
    affs = lazy_affs(s.get_space())
    a, b = affs[x + "__a"], affs[x + "__b"]
    return s & (a.lt_set(b) | a.gt_set(b))


def _rectangular(kernel: Kernel, x: str) -> bool:
    """The bounds of *x* depend on kernel parameters only."""
    dom = kernel.domains[iname_to_domain_index(kernel)[x]]
    inames = set(kernel.all_inames())
    return not any(n in inames or n in kernel.temporaries for n in param_names(dom))


def loop_dependences(kernel: Kernel) -> dict[str, LoopVerdict]:
    """For every loop of *kernel* (in kernel order), whether its iterations
    may run in parallel; see the module docstring for the exact rule."""
    analysis = AccessAnalysis(kernel)
    private = Privatisation(kernel)
    by_var: dict[str, list[Access]] = {}
    for insn in kernel.instructions:
        for acc in instruction_accesses(kernel, insn):
            by_var.setdefault(acc.name, []).append(acc)
    insns = kernel.id_to_insn
    out = {}
    for x in kernel.all_inames():
        if x in kernel.loop_exits:
            out[x] = LoopVerdict(x, False, "stops early (exit, do while, return or a "
                                 "sequential loop)")
            continue
        if not _rectangular(kernel, x):
            out[x] = LoopVerdict(x, False, "has bounds that depend on other loops or on "
                                 "computed values")
            continue
        reason = ""
        for name in sorted(by_var):
            accs = [a for a in by_var[name] if x in insns[a.insn_id].within_inames]
            if not any(a.is_write for a in accs):
                continue
            why = private.why_not(x, name, by_var[name]) \
                if name in kernel.temporaries else "-"
            if not why:
                continue
            for k, a in enumerate(accs):
                for b in accs[k:]:
                    if not (a.is_write or b.is_write):
                        continue
                    s = analysis.conflict_set(a, b, skip_non_affine=True)
                    if _differs_on(s, x).is_empty():
                        continue
                    if privatizable(kernel, name):
                        reason = f"carries a dependence on '{name}': {why}"
                    else:
                        reason = (f"carries a dependence on '{name}' (lines "
                                  f"{_line(kernel, a.insn_id)} and "
                                  f"{_line(kernel, b.insn_id)})")
                    break
                if reason:
                    break
            if reason:
                break
        out[x] = LoopVerdict(x, not reason, reason)
    return out


def parallel_loops(kernel: Kernel) -> tuple[str, ...]:
    """The loops of *kernel* (in kernel order) that carry no dependence and
    are not mapped to the grid yet."""
    return tuple(x for x, v in loop_dependences(kernel).items()
                 if v.parallel and not kernel.iname_tag(x).hardware)

# }}}


# {{{ step 2: the grid mapping

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

# }}}


# {{{ step 3: plans

def _tile_for(tile, axis: int) -> int:
    if isinstance(tile, int):
        return tile
    return int(tile[min(axis, len(tile) - 1)])


def _split(kernel: Kernel, x: str, size: int, **tags) -> tuple[Kernel, str]:
    """*kernel* with loop *x* split (``x_outer``, ``x_inner``, made unique),
    and the name of the inner loop."""
    outer = unique_name(kernel, f"{x}_outer")
    inner = unique_name(kernel, f"{x}_inner", extra_taken=(outer,))
    return split_iname(kernel, x, size, outer_iname=outer, inner_iname=inner, **tags), inner


def _apply_grid(kernel: Kernel, axes: dict[str, int], tile, *, groups: bool
                ) -> tuple[Kernel, dict[str, str]]:
    """The loops of *axes* split and tagged; also loop -> its inner loop."""
    inner = {}
    for x, axis in axes.items():
        if groups:
            kernel, inner[x] = _split(kernel, x, _tile_for(tile, axis),
                                      outer_tag=f"g.{axis}", inner_tag=f"l.{axis}")
        else:
            kernel, inner[x] = _split(kernel, x, _tile_for(tile, axis), inner_tag=f"l.{axis}")
    return kernel, inner


def _apply_prefetch(kernel: Kernel, tiles, tile, inner_names: dict[str, str]
                    ) -> tuple[Kernel, tuple]:
    split_done: dict[str, str] = {}
    fetched = []
    for name, k, subs in tiles:
        if k not in split_done:
            kernel, split_done[k] = _split(kernel, k, _tile_for(tile, 0), slabs=(0, 1))
        sweep = [split_done[k] if x == k else inner_names[x] for x in subs]
        kernel = add_prefetch(kernel, name, sweep, default_tag="l.auto")
        fetched.append(name)
    return kernel, tuple(fetched)


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


def _accumulate_in_registers(kernel: Kernel, verify) -> tuple[Kernel, tuple]:
    done = []
    for name in accumulated_arrays(kernel):
        # every access, else the statements that write it (reads elsewhere,
        # e.g. in a later loop nest, keep reading the array)
        for within in (None, f"writes:{name}"):
            try:
                out = buffer_array(kernel, name, [], within=within)
                if verify is not None:
                    verify(out)
            except F2LoopyError:
                continue
            kernel = out
            done.append(name)
            break
    return kernel, tuple(done)


def plan_auto(kernel: Kernel, *, tile: int | Sequence[int] = (32, 8),
              prefetch: bool = True, registers: bool = True, group_size: int = 128,
              second_axis: str = "inner",
              verify: Callable[[Kernel], object] | None = None,
              plans: Sequence[str] = PLANS) -> AutoOutcome:
    """Parallelise *kernel* automatically (see the module docstring).

    :arg tile: work-group size along grid axis 0 and axis 1 (one number for
        both, or a pair); also the length of the tiles of a reused sequential
        loop (axis 0's).
    :arg prefetch: whether the first plan stages reused tiles in local memory.
    :arg registers: whether arrays accumulated across a sequential loop
        (:func:`accumulated_arrays`) are kept in private variables during the
        loop (:func:`~f2loopy.transform.buffer.buffer_array`); an array for
        which that is refused or fails *verify* stays as it is.
    :arg group_size: work-group size of the ``one-group`` plan.
    :arg second_axis: which loop goes to grid axis 1 where a statement has
        more than two parallel loops: ``"inner"`` or ``"outer"`` (see
        :func:`grid_axes`).
    :arg verify: called with each candidate kernel; a candidate for which it
        raises an :class:`~f2loopy.diagnostics.F2LoopyError` (e.g.
        ``generate_code`` finding a race between loop nests) is skipped.
        Without it the first plan that the transformations accept is taken.
    :arg plans: the plans to try, in order (a subset of :data:`PLANS`).
    :returns: an :class:`AutoOutcome`; the kernel is unchanged (plan
        ``sequential``) when no plan works.
    """
    unknown = [name for name in plans if name not in PLANS]
    if unknown:
        raise TransformError(f"auto: unknown plan '{unknown[0]}' (plans: {', '.join(PLANS)})")
    for t in ([tile] if isinstance(tile, int) else list(tile)) + [group_size]:
        if not isinstance(t, int) or isinstance(t, bool) or not 1 <= t <= 1024:
            raise TransformError(f"auto: tile and group sizes are integers from 1 to 1024, "
                                 f"not {t!r}")
    for flag, value in (("prefetch", prefetch), ("registers", registers)):
        if not isinstance(value, bool):
            raise TransformError(f"auto: {flag} is True or False, not {value!r}")
    verdicts = loop_dependences(kernel)
    candidates = [x for x, v in verdicts.items() if v.parallel
                  and not kernel.iname_tag(x).hardware]
    notes: list[str] = []
    if candidates:
        axes2 = grid_axes(kernel, candidates, max_axes=2, second=second_axis)
        axes1 = {x: a for x, a in axes2.items() if a == 0}
        tiles = reused_tiles(kernel, axes2) if prefetch else []
        for plan in plans:
            if plan == "sequential":
                break
            if plan == "grid+local" and not tiles:
                continue
            axes = axes1 if plan in ("grid-1d", "one-group") else axes2
            if plan == "outer":
                axes = outermost_loops(kernel, candidates)
            if not axes or (plan == "grid-1d" and axes1 == axes2):
                continue
            try:
                if plan == "one-group":
                    out, inner = _apply_grid(kernel, axes, group_size, groups=False)
                elif plan == "outer":
                    out = tag_inames(kernel, {x: "g.0" for x in axes})
                else:
                    out, inner = _apply_grid(kernel, axes, tile, groups=True)
                fetched: tuple = ()
                if plan == "grid+local":
                    out, fetched = _apply_prefetch(out, tiles, tile, inner)
                if verify is not None:
                    verify(out)
            except F2LoopyError as exc:
                notes.append(f"plan {plan} refused: {_first_line(exc)}")
                continue
            held: tuple = ()
            if registers and plan != "one-group":
                out, held = _accumulate_in_registers(out, verify)
            size = group_size if plan == "one-group" else None
            tags = {x: (f"l.{a}" if plan == "one-group" else "g.0" if plan == "outer"
                        else f"g.{a}/l.{a}")
                    + (f" (one group of {size})" if size else "")
                    for x, a in axes.items()}
            return AutoOutcome(out, plan, tags, fetched, tuple(notes), tuple(candidates), held)
    for x, v in verdicts.items():
        if not v.parallel:
            notes.append(f"loop '{x}' {v.reason}")
    return AutoOutcome(kernel, "sequential", {}, (), tuple(notes), tuple(candidates))


@for_each_kernel
def auto_parallelize(kernel: Kernel, *, tile: int | Sequence[int] = (32, 8),
                     prefetch: bool = True, registers: bool = True, group_size: int = 128,
                     second_axis: str = "inner",
                     verify: Callable[[Kernel], object] | None = None) -> Kernel:
    """The kernel of :func:`plan_auto` (same options; also each kernel of a
    translation unit)."""
    return plan_auto(kernel, tile=tile, prefetch=prefetch, registers=registers,
                     group_size=group_size, second_axis=second_axis, verify=verify).kernel


def _first_line(exc: Exception) -> str:
    text = str(getattr(exc, "message", None) or exc)
    return text.splitlines()[0] if text else type(exc).__name__

# }}}
