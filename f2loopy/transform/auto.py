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

Before the grid plans, where every parallel loop lies inside them, the
**reduction** plan: loop nests that only reduce into scalars (``s = s +
...``, several accumulators, ``max``/``min``, an extreme with its location;
:func:`~f2loopy.analysis.reductions.reduction_nests`) run in parallel in
work-groups of *group_size* work-items, whose partials a second launch of
one group combines
(:func:`~f2loopy.transform.parallel_reduction.parallel_reduction`): the
innermost reduction loop in chunks of *group_size* on ``l.0``, the chunks
round-robin over ``g.0`` and, in a nest of two or more reduction loops, the
next loop out round-robin over ``g.1`` (*reduction_groups*: by default 8 x
128 groups, a count independent of the device that fills a large GPU while
each work-item accumulates many elements in registers; fewer along an axis
whose loop has fewer chunks or trips whatever the sizes).  In one group (one
launch) where that leaves one group, or where several groups are refused.
Other reductions and loops carrying dependences stay sequential loops
inside each work-item.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import islpy as isl

from f2loopy.analysis.loops import (
    LoopFacts, accumulated_arrays, grid_axes, loop_dependences, outermost_loops, reused_tiles)
from f2loopy.analysis.reductions import ReductionNest, reduction_nests
from f2loopy.diagnostics import F2LoopyError, TransformError
from f2loopy.ir.kernel import Kernel
from f2loopy.transform.buffer import buffer_array
from f2loopy.transform.iname import split_iname, tag_inames
from f2loopy.transform.parallel_reduction import parallel_reduction
from f2loopy.transform.precompute import add_prefetch
from f2loopy.transform.util import for_each_kernel, unique_name

#: the reduction plan's work-groups: along the chunks of the innermost
#: reduction loop (``g.0``) and the next loop out (``g.1``)
REDUCTION_GROUPS = (8, 128)

#: names of the plans, best first (see :func:`plan_auto`)
PLANS = ("grid+local", "grid", "grid-1d", "reduction", "one-group", "outer", "sequential")


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
    :attr reductions: for the ``reduction`` plan, what each parallel
        reduction computes (``"vol (sum)"``, ``"dt (min, located: jl, kl)"``).
    """

    kernel: Kernel
    plan: str
    tags: dict = field(default_factory=dict)
    prefetched: tuple = ()
    notes: tuple = ()
    parallel: tuple = ()
    registers: tuple = ()
    reductions: tuple = ()

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
        if self.reductions:
            text += f"; parallel reduction of {', '.join(self.reductions)}"
        return text


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
              plans: Sequence[str] = PLANS,
              reduction_groups: int | tuple[int, int] = REDUCTION_GROUPS) -> AutoOutcome:
    """Parallelise *kernel* automatically (see the module docstring).

    :arg tile: work-group size along grid axis 0 and axis 1 (one number for
        both, or a pair); also the length of the tiles of a reused sequential
        loop (axis 0's).
    :arg prefetch: whether the first plan stages reused tiles in local memory.
    :arg registers: whether arrays accumulated across a sequential loop
        (:func:`accumulated_arrays`) are kept in private variables during the
        loop (:func:`~f2loopy.transform.buffer.buffer_array`); an array for
        which that is refused or fails *verify* stays as it is.
    :arg group_size: work-group size of the ``one-group`` and ``reduction`` plans.
    :arg second_axis: which loop goes to grid axis 1 where a statement has
        more than two parallel loops: ``"inner"`` or ``"outer"`` (see
        :func:`grid_axes`).
    :arg verify: called with each candidate kernel; a candidate for which it
        raises an :class:`~f2loopy.diagnostics.F2LoopyError` (e.g.
        ``generate_code`` finding a race between loop nests) is skipped.
        Without it the first plan that the transformations accept is taken.
    :arg plans: the plans to try, in order (a subset of :data:`PLANS`).
    :arg reduction_groups: the ``reduction`` plan's work-groups at most: a
        pair ``(g0, g1)``, *g0* along the chunks of a nest's innermost
        reduction loop and *g1* along the next loop out (a nest of one loop:
        ``g0 * g1`` along the chunks); where a loop has fewer chunks or trips
        whatever the sizes, that axis gets as many groups and the other the
        rest of ``g0 * g1``.  An integer: that many along the chunks only
        (``group_size`` of them: the plan before the pair).
    :returns: an :class:`AutoOutcome`; the kernel is unchanged (plan
        ``sequential``) when no plan works.
    """
    _check_options(plans, tile, group_size, prefetch, registers, reduction_groups)
    facts = LoopFacts(kernel)
    verdicts = loop_dependences(kernel, facts=facts)
    candidates = [x for x, v in verdicts.items() if v.parallel
                  and not kernel.iname_tag(x).hardware]
    notes: list[str] = []
    nests = reduction_nests(kernel, facts) if "reduction" in plans else []
    if any(not n.reason for n in nests):
        # (only where no other loop could use the grid: the nests are the work)
        outcome = _reduction_plan(kernel, nests, candidates, group_size, verify, plans, notes,
                                  reduction_groups)
        if outcome is not None:
            return outcome
    if candidates:
        axes2 = grid_axes(kernel, candidates, max_axes=2, second=second_axis)
        axes1 = {x: a for x, a in axes2.items() if a == 0}
        tiles = reused_tiles(kernel, axes2) if prefetch else []
        for plan in plans:
            if plan == "sequential":
                break
            if plan == "grid+local" and not tiles or plan == "reduction":
                continue
            axes = axes1 if plan in ("grid-1d", "one-group") else axes2
            if plan == "outer":
                axes = outermost_loops(kernel, candidates)
            if not axes or (plan == "grid-1d" and axes1 == axes2):
                continue
            outcome = _grid_plan(kernel, plan, axes, tiles, tile=tile, group_size=group_size,
                                 registers=registers, verify=verify, nests=nests,
                                 reduction_groups=reduction_groups, notes=notes,
                                 candidates=candidates)
            if outcome is not None:
                return outcome
    for x, v in verdicts.items():
        if not v.parallel:
            notes.append(f"loop '{x}' {v.reason}")
    for n in nests:
        if n.reason:
            notes.append(f"loop nest '{n.outer}' is no parallel reduction: {n.reason}")
    return AutoOutcome(kernel, "sequential", {}, (), tuple(notes), tuple(candidates))


def _check_options(plans, tile, group_size, prefetch, registers, reduction_groups) -> None:
    """Refuse :func:`plan_auto`'s options that are not what it documents."""
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
    _reduction_group_counts(reduction_groups)


def _grid_plan(kernel: Kernel, plan: str, axes: dict, tiles: list, *, tile, group_size: int,
               registers: bool, verify, nests: list, reduction_groups, notes: list,
               candidates: list) -> AutoOutcome | None:
    """*kernel* with the loops *axes* (loop -> grid axis) mapped as *plan*
    (``grid``, ``grid-1d``, ``grid+local``, ``one-group`` or ``outer``)
    says, then accumulated arrays in registers and reduction nests beside
    the grid; None (and a note) where a transformation or *verify* refuses
    the plan."""
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
        return None
    held: tuple = ()
    if registers and plan != "one-group":
        out, held = _accumulate_in_registers(out, verify)
    size = group_size if plan == "one-group" else None
    tags = {x: (f"l.{a}" if plan == "one-group" else "g.0" if plan == "outer"
                else f"g.{a}/l.{a}")
            + (f" (one group of {size})" if size else "")
            for x, a in axes.items()}
    what: tuple = ()
    if plan.startswith("grid") and any(not n.reason for n in nests):
        out, more, what = _reductions_beside(out, nests, group_size, reduction_groups,
                                             verify, notes)
        tags.update(more)
    return AutoOutcome(out, plan, tags, fetched, tuple(notes), tuple(candidates), held, what)


def _reduction_plan(kernel: Kernel, nests: list[ReductionNest], candidates: list[str],
                    group_size: int, verify, plans: Sequence[str], notes: list[str],
                    reduction_groups: int | tuple[int, int] = REDUCTION_GROUPS
                    ) -> AutoOutcome | None:
    """The ``reduction`` plan: every reduction nest in parallel in one
    work-group (:func:`parallel_reduction`), when the kernel's other loops
    could not run in parallel anyway and the grid plans before it in *plans*
    have nothing to map; None otherwise (a note says why where it was
    tried)."""
    ok = [n for n in nests if not n.reason]
    inside = {n.outer: {i.id for i in kernel.instructions if n.outer in i.within_inames}
              for n in ok}
    for x in candidates:
        mine = {i.id for i in kernel.instructions if x in i.within_inames}
        if not any(mine <= ids for ids in inside.values()):
            return None
    # many groups (combined by a second launch), fewer along a loop of
    # fewer chunks or trips whatever the sizes; one group where several are
    # refused
    counts: dict[str, int | tuple[int, int]] = {
        n.outer: _groups_of(kernel, n, group_size, reduction_groups) for n in ok}
    out = kernel
    for attempt in ("groups", "one"):
        if attempt == "one":
            if all(c == 1 for c in counts.values()):
                return None
            counts = dict.fromkeys(counts, 1)
        try:
            out = kernel
            for n in ok:
                out = parallel_reduction(out, n, lanes=group_size, groups=counts[n.outer])
            if verify is not None:
                verify(out)
            break
        except F2LoopyError as exc:
            notes.append(f"plan reduction refused"
                         f"{' over several groups' if attempt == 'groups' else ''}: "
                         f"{_first_line(exc)}")
            if attempt == "one" or all(c == 1 for c in counts.values()):
                return None
    tags, what = _describe(ok, counts, group_size)
    for n in nests:
        if n.reason:
            notes.append(f"loop nest '{n.outer}' is no parallel reduction: {n.reason}")
    return AutoOutcome(out, "reduction", tags, (), tuple(notes), tuple(candidates),
                       reductions=what)


def _describe(ok: list[ReductionNest], counts: dict, group_size: int
              ) -> tuple[dict[str, str], tuple[str, ...]]:
    """The tags and the reductions (:class:`AutoOutcome`'s) of the nests *ok*
    run over *counts* groups."""
    tags: dict[str, str] = {}
    for n in ok:
        c = counts[n.outer]
        if isinstance(c, tuple):
            tags[n.loops[-2]] = f"g.1 ({c[1]} groups)"
            tags[n.loops[-1]] = f"g.0/l.0 ({c[0]} groups of {group_size}; {c[0] * c[1]}, " \
                "then one)"
        else:
            tags[n.loops[-1]] = (f"g.0/l.0 ({c} groups of {group_size}, then one)" if c > 1
                                 else f"l.0 (one group of {group_size})")
    what = []
    for n in ok:
        for a in n.accumulators:
            located = [w for w, _ in a.locations]
            what.append(f"{a.name} ({a.op}" + (f", located: {', '.join(located)}"
                                              if located else "") + ")")
    return tags, tuple(what)


def _reductions_beside(kernel: Kernel, nests: list[ReductionNest], group_size: int,
                       reduction_groups, verify, notes: list[str]):
    """*kernel* (a grid plan's) with the reduction nests that the grid left
    sequential run as parallel reductions over several groups, each in
    launches of its own (a nest after a mapped loop starts one; one that a
    mapped loop follows, or one refused, stays sequential): the kernel, the
    tags and the reductions (:func:`_describe`); *kernel* and nothing where
    *verify* refuses the result (a note says why)."""
    out = kernel
    done: list[ReductionNest] = []
    counts: dict = {}
    for n in nests:
        if n.reason or any(kernel.iname_tag(y).hardware for y in n.loops):
            continue
        c = _groups_of(kernel, n, group_size, reduction_groups)
        if c == 1:
            # (one group alone would serialise the launch it shares)
            continue
        try:
            out = parallel_reduction(out, n, lanes=group_size, groups=c)
        except F2LoopyError as exc:
            notes.append(f"loop nest '{n.outer}' stays sequential beside the grid: "
                         f"{_first_line(exc)}")
            continue
        done.append(n)
        counts[n.outer] = c
    if not done:
        return kernel, {}, ()
    try:
        if verify is not None:
            verify(out)
    except F2LoopyError as exc:
        notes.append(f"reductions beside the grid refused: {_first_line(exc)}")
        return kernel, {}, ()
    tags, what = _describe(done, counts, group_size)
    return out, tags, what


def _reduction_group_counts(groups) -> tuple[int, int]:
    """*groups* (the ``reduction_groups`` option) as a validated pair."""
    def count(x) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 65536
    if count(groups):
        return groups, 0
    if isinstance(groups, tuple) and len(groups) == 2 and all(count(x) for x in groups) \
            and groups[0] * groups[1] <= 65536:
        return groups
    raise TransformError(f"auto: reduction_groups is a number of groups or a pair of them "
                         f"(at most 65536 in all), not {groups!r}")


def _groups_of(kernel: Kernel, nest: ReductionNest, lanes: int,
               groups: int | tuple[int, int]) -> int | tuple[int, int]:
    """The work-groups of *nest* (the ``groups`` argument of
    :func:`parallel_reduction`) under the ``reduction_groups`` option
    *groups*: along the chunks of *lanes* of its innermost reduction loop
    at most as many as it has whatever the sizes, the rest of the budget to
    the next loop out (at most its trips)."""
    g0, g1 = _reduction_group_counts(groups)
    trips = _most_trips(kernel, nest.loops[-1])
    chunks = None if trips is None else max(1, -(-trips // lanes))
    if not g1 or len(nest.loops) < 2:
        # (an integer: along the chunks only, as many as asked where the
        # loop has more than one group's trips)
        count = (g0 if not g1 else g0 * g1) if chunks is None or chunks > 1 else 1
        if g1 and chunks is not None:
            count = min(count, chunks)
        return count
    rows = _most_trips(kernel, nest.loops[-2])
    budget = g0 * g1
    a = g0 if chunks is None else min(g0, chunks)
    b = budget // a if rows is None else min(budget // a, max(rows, 1))
    a = budget // b if chunks is None else min(budget // b, chunks)
    if b == 1:
        return a
    return (a, b)


def _most_trips(kernel: Kernel, iname: str) -> int | None:
    """The most times loop *iname* runs whatever the sizes and the enclosing
    loops' indices, or None where that is not bounded."""
    dom = kernel.domains[kernel.iname_domain_index[iname]]
    names = dom.get_var_names(isl.dim_type.set)
    k = names.index(iname)
    dom = dom.project_out(isl.dim_type.set, k + 1, len(names) - k - 1)
    dom = dom.project_out(isl.dim_type.set, 0, k)
    dom = dom.project_out(isl.dim_type.param, 0, dom.dim(isl.dim_type.param))
    if dom.is_empty():
        return 0
    if not dom.is_bounded():
        return None
    return int((dom.lexmax().sample_point().get_coordinate_val(isl.dim_type.set, 0)
                - dom.lexmin().sample_point().get_coordinate_val(isl.dim_type.set, 0)
                ).to_python()) + 1


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
