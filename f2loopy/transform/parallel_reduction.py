"""Running a reduction nest (:mod:`f2loopy.analysis.reductions`) in parallel
in one work-group, or in many with a second launch.

The innermost reduction loop is split over the *lanes* work-items of the
group (``l.0``); each work-item runs its share of the nest in the loops'
order and keeps its own partial value of every accumulator in a private
variable; after the nest the group combines the partials with a tree in
local memory (:mod:`f2loopy.codegen.reductions`) and work-item 0 stores::

    part = 0                              (every work-item)
    do k; do j_outer; j_inner = lane      (the nest as written, s -> part)
      part = part + e
    s = s + sum(lane, part)               (tree, then work-item 0)

An extreme with its location (``if (e < s) then; s = e; jloc = j; ...``)
keeps in each work-item its first extreme and the indices where it occurs
(the strict comparison, or an equal value at an earlier place, compared
lexicographically, so the first is kept whatever order the work-item's
loops run in); the group then finds the extreme ``m``, then,
loop by loop from the outermost, the smallest index among the work-items
that hold ``m`` (the first occurrence in the loops' order), and work-item 0
stores ``m`` and the locations where ``m < s`` (``m > s`` for a maximum),
as the sequential loop would: the result is exactly the sequential one.
Sums and products are reassociated (results within rounding).

With *groups* above one, the chunks of the split loop go round-robin to
that many work-groups (``g.0``); with a pair ``(g0, g1)`` the chunks go to
*g0* groups along ``g.0`` and the iterations of the nest's next reduction
loop out (the rows ``k`` of a ``do k; do j`` nest) round-robin to *g1*
groups along ``g.1``, so that a two-dimensional nest fills ``g0 * g1``
groups whatever the length of its rows.  Each group combines its
work-items as above but stores the result (an extreme: its value and first
location) to a global scratch array of one element per group; after a
global barrier (a launch of its own) one group combines the groups'
partials the same way and stores as above, so the first occurrence is kept
across groups too: with at most *lanes* groups, one work-item per partial;
with more, each of the *lanes* work-items first combines the partials
``lane, lane + lanes, ...`` in a loop (an extreme: the first of equal
values by location), then the tree.  A nest after a mapped loop, or reading
a non-private value stored before it in its launch, gets a global barrier
before it.
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p

from f2loopy.analysis.reductions import Accumulator, ReductionNest, split_update
from f2loopy.diagnostics import TransformError
from f2loopy.ir.expressions import Reduction, substitute
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import lazy_affs, make_space
from f2loopy.ir.kernel import AddressSpace, Assignment, BarrierInstruction, Kernel, Temporary
from f2loopy.ir.types import reduction_neutral
from f2loopy.ir.tags import GroupAxisTag, LocalAxisTag
from f2loopy.transform.iname import reduction_inames, split_iname
from f2loopy.transform.util import unique_name

class _Builder:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.taken: list[str] = []
        self.temps = dict(kernel.temporaries)
        self.domains = list(kernel.domains)
        self.tags = dict(kernel.iname_tags)

    def name(self, base: str) -> str:
        out = unique_name(self.kernel, base, extra_taken=self.taken)
        self.taken.append(out)
        return out

    def private(self, base: str, dtype) -> p.Variable:
        n = self.name(base)
        self.temps[n] = Temporary(name=n, dtype=np.dtype(dtype),
                                  address_space=AddressSpace.PRIVATE)
        return p.Variable(n)

    def lane_iname(self, base: str, first: int, last: int, group: bool = False,
                   axis: int = 0, loop: bool = False) -> str:
        """A new iname from *first* to *last*: ``l.axis``, ``g.axis`` with
        *group*, a sequential loop with *loop*."""
        n = self.name(base)
        affs = lazy_affs(make_space([n], []))
        self.domains.append(affs[n].ge_set(affs[0] + first) & affs[n].le_set(affs[0] + last))
        if not loop:
            self.tags[n] = GroupAxisTag(axis) if group else LocalAxisTag(axis)
        return n

    def scratch(self, base: str, dtype, groups: int) -> str:
        """A global array of one element per group."""
        n = self.name(base)
        self.temps[n] = Temporary(name=n, dtype=np.dtype(dtype), shape=(groups,), lower_bounds=(0,),
                                  address_space=AddressSpace.GLOBAL)
        return n



class _Groups:
    """The groups of the first launch (their indices, where each stores its
    partial) and how the combining group of the second reads the partials:
    with at most *lanes* groups one work-item per partial (``lane_groups``),
    with more ``ceil(groups / lanes)`` rounds of one loop (``groups_round``)
    over the partials ``lane_groups + lanes * round``, which combine each
    work-item's partials into private variables before the trees."""

    def __init__(self, b: _Builder, g0: int, g1: int, lanes: int):
        self.total = g0 * g1
        group = b.lane_iname("group", 0, g0 - 1, group=True)
        rows = b.lane_iname("group_rows", 0, g1 - 1, group=True, axis=1) if g1 > 1 else ""
        self.group = group
        #: the group's work-item 0 (stores the group's extreme and location)
        self.first = b.lane_iname("lane_group_first", 0, 0)
        #: the inames of a group's store and its index in the scratch arrays
        self.within = frozenset({group, rows} - {""})
        self.slot: object = p.Variable(group) if not rows else p.Sum((
            p.Variable(group), p.Product((g0, p.Variable(rows)))))
        width = min(lanes, self.total)
        self.lane = b.lane_iname("lane_groups", 0, width - 1)
        self.rounds = -(-self.total // width)
        self.round = b.lane_iname("groups_round", 0, self.rounds - 1, loop=True) \
            if self.rounds > 1 else ""
        self.index: object = p.Variable(self.lane) if not self.round else p.Sum((
            p.Variable(self.lane), p.Product((width, p.Variable(self.round)))))
        self.ragged = self.rounds * width > self.total

    def at(self, scratch: str):
        """The partial of *scratch* a combining work-item reads (in its
        round)."""
        return p.Subscript(p.Variable(scratch), self.index)

    def guard(self) -> tuple:
        """The predicates of a round's statements: none, or (where the last
        round reaches past the last group) that the partial exists."""
        return (p.Comparison(self.index, "<", self.total),) if self.ragged else ()


#: the most work-groups whose partials one group combines
MAX_GROUPS = 65536


def parallel_reduction(kernel: Kernel, nest: ReductionNest, *, lanes: int,
                       groups: int | tuple[int, int] = 1) -> Kernel:
    """*kernel* with the reduction nest *nest* (from
    :func:`~f2loopy.analysis.reductions.reduction_nests`) run by the
    *lanes* work-items of one work-group, or of several (see the module
    docstring).

    :arg lanes: work-items of a group (1 to 1024); the nest's innermost
        reduction loop is split into chunks of *lanes* on ``l.0``.
    :arg groups: work-groups: an integer from 1 to 65536 (:data:`MAX_GROUPS`),
        or a pair ``(g0, g1)`` of positive integers whose product is at most
        that, for a nest of at least two reduction loops.  With more than one
        group the chunks go round-robin to *groups* (*g0*) groups on ``g.0``
        and, with a pair, the next reduction loop out round-robin to *g1*
        groups on ``g.1``; each group stores its partials (an extreme: its
        value and first location) to global scratch arrays of one element per
        group, and after a global barrier (a launch of its own) one group of
        ``min(lanes, groups)`` work-items combines them, looping over
        ``groups / lanes`` partials each where there are more groups than
        lanes.
    :raises TransformError: if *nest* has a reason not to run in parallel,
        is not outermost, or an iname of it is already tagged.
    """
    if nest.reason:
        raise TransformError(f"parallel_reduction: loop '{nest.outer}': {nest.reason}")
    if not isinstance(lanes, int) or isinstance(lanes, bool) or not 1 <= lanes <= 1024:
        raise TransformError(f"parallel_reduction: lanes is an integer from 1 to 1024, "
                             f"not {lanes!r}")
    g0, g1 = _group_counts(groups, nest)
    inside = _nest_statements(kernel, nest, g0 * g1)
    nest_ids = {i.id for i in inside}
    b = _Builder(kernel)
    lane = b.lane_iname("lane", 0, lanes - 1)
    # work-item 0, which stores an extreme and its location
    first = b.lane_iname("lane_first", 0, 0) if any(
        a.condition is not None and a.name not in kernel.temporaries
        for a in nest.accumulators) else ""
    # (several groups: the group's index and its work-item 0 in the first
    # launch; the combining group's work-items in the second)
    gs = _Groups(b, g0, g1, lanes) if g0 * g1 > 1 else None
    phase1: list[Assignment] = []
    inits: list[Assignment | BarrierInstruction] = []
    finals: list[Assignment | BarrierInstruction] = []
    # (the combining work-items' rounds, all in one loop before the trees)
    rounds: list[Assignment] = []
    replaced: dict[str, list[Assignment]] = {}
    removed: set[str] = set()
    span = inside[0].span
    for acc in nest.accumulators:
        dtype = kernel.variable(acc.name).dtype
        part = b.private(f"{acc.name}_part", dtype)
        init = Assignment(id=b.name(f"{part.name}_init"), assignee=part,
                          expression=reduction_neutral(acc.op, dtype),
                          within_inames=frozenset({lane}), span=span)
        inits.append(init)
        if acc.condition is None:
            _partial_sums(kernel, acc, part, init, replaced)
            _sum_combine(b, acc, dtype, part, lane, gs, span, phase1, rounds, finals)
            continue
        _extreme(kernel, b, acc, nest, part, init, inits, finals, replaced, removed,
                 lane, first, span, gs, phase1, rounds)
    # the partials start where the nest starts: after what it waits for (a
    # global barrier before it included)
    before = frozenset().union(*(i.depends_on for i in inside)) - nest_ids
    start = next(k for k, i in enumerate(kernel.instructions) if i.id == inside[0].id)
    pre = _barrier_before(kernel, b, nest, inside, start) if gs is not None else None
    if pre is not None:
        before |= {pre.id}
        inits.insert(0, pre)
    inits = [i.copy(depends_on=i.depends_on | before) if i is not pre else i for i in inits]
    written_parts = {n.id for group in replaced.values() for n in group}
    outside_deps: set = set()
    for i in inside:
        if i.id in replaced or i.id in removed:
            # (``kldt = y_min`` before the nest comes before its final store)
            outside_deps |= i.depends_on - nest_ids
    finals = _ordered_finals(b, gs, phase1, rounds, finals, written_parts, outside_deps,
                             span)
    post = _barrier_after(kernel, b, nest_ids, finals) if gs is not None else None
    if post is not None:
        finals.append(post)
    out = _spliced(kernel, nest_ids, inits, finals, replaced, removed, pre, post)
    kernel = kernel.copy(instructions=tuple(out), temporaries=FrozenMap(b.temps),
                         domains=tuple(b.domains), iname_tags=FrozenMap(b.tags))
    return _split_over_lanes(kernel, b, nest, lanes, g0, g1)


def _nest_statements(kernel: Kernel, nest: ReductionNest, total: int) -> list:
    """The statements inside *nest*, in order, after checking that no loop
    around them (and, with one group, none elsewhere on another axis) is
    mapped to the hardware."""
    inside = [i for i in kernel.instructions if nest.outer in i.within_inames]
    # one work-group of one axis must run the whole kernel: a loop on another
    # axis elsewhere would run the nest more than once
    around = set().union(*(i.within_inames for i in inside))
    # (several groups: loops mapped before or after the nest are fine, the
    # nest then starts a launch of its own, and the combining launch ends
    # with a global barrier where mapped loops follow)
    nest_ids = {i.id for i in inside}
    earlier = set().union(*(i.within_inames for i in kernel.instructions
                            if i.id not in nest_ids)) if total > 1 else set()
    tagged = sorted(y for y in kernel.hardware_inames()
                    if y in around or (kernel.iname_tag(y) != LocalAxisTag(0)
                                       and y not in earlier))
    if tagged:
        raise TransformError(f"parallel_reduction: loop '{tagged[0]}' is already mapped to "
                             f"{kernel.iname_tag(tagged[0])}; the reduction runs in one "
                             "work-group over l.0")
    return inside


def _sum_combine(b: _Builder, acc: Accumulator, dtype, part, lane: str, gs: _Groups | None,
                 span, phase1: list, rounds: list, finals: list) -> None:
    """Append to *phase1*, *rounds* and *finals* the statements that combine
    the work-items' partial values *part* of the sum or product *acc*: the
    tree over *lane* (with several groups: each group's tree stored to a
    scratch slot, then the combining group's rounds and tree over the
    slots) and the update of the accumulator."""
    red = Reduction(acc.op, (lane,), part)
    if gs is not None:
        scr = b.scratch(f"{acc.name}_groups", dtype, gs.total)
        phase1.append(Assignment(id=b.name(f"{scr}_store"), assignee=p.Subscript(
            p.Variable(scr), gs.slot), expression=red,
            within_inames=gs.within, span=span))
        # (loaded into a private variable in the second launch's
        # work-items, whose loop the launch then holds; with rounds,
        # combined there from the work-item's partials)
        part2 = b.private(f"{acc.name}_group_part", dtype)
        if gs.round:
            rounds.append(Assignment(
                id=b.name(f"{part2.name}_init"), assignee=part2,
                expression=reduction_neutral(acc.op, dtype),
                within_inames=frozenset({gs.lane}), span=span))
            rounds.append(Assignment(
                id=b.name(f"{part2.name}_round"), assignee=part2,
                expression=_combine(acc.op, part2, gs.at(scr)),
                within_inames=frozenset({gs.lane, gs.round}), predicates=gs.guard(),
                span=span))
        else:
            finals.append(Assignment(id=b.name(f"{part2.name}_load"), assignee=part2,
                                     expression=gs.at(scr),
                                     within_inames=frozenset({gs.lane}), span=span))
        red = Reduction(acc.op, (gs.lane,), part2)
    v = p.Variable(acc.name)
    finals.append(Assignment(id=b.name(f"{acc.name}_combine"), assignee=v,
                             expression=_combine(acc.op, v, red), span=span))


def _ordered_finals(b: _Builder, gs: _Groups | None, phase1: list, rounds: list,
                    finals: list, written_parts: set, outside_deps: set, span) -> list:
    """The statements after the nest in order, each depending on the ones
    before it and on the partial updates *written_parts* (the ones in the
    second launch also on *outside_deps*): with several groups the groups'
    stores (*phase1*), a global barrier, then the combining group's
    starting values, its one loop of *rounds*, and *finals*."""
    # (the starting values, then the one loop of rounds)
    finals = [*(i for i in rounds if gs is not None and gs.round not in i.within_inames),
              *(i for i in rounds if gs is not None and gs.round in i.within_inames),
              *finals]
    if gs is not None:
        # the groups' partials, then the second launch combines them
        phase1 = [f.copy(depends_on=f.depends_on | written_parts
                         | {g.id for g in phase1[:k]}) for k, f in enumerate(phase1)]
        barrier = BarrierInstruction(id=b.name("groups_gbarrier"), scope="global",
                                     depends_on=frozenset(f.id for f in phase1), span=span)
        finals = [*phase1, barrier, *(f.copy(depends_on=f.depends_on | {barrier.id})
                                      for f in finals)]
    return [f.copy(depends_on=f.depends_on | written_parts | outside_deps
                     | {g.id for g in finals[:k]})
            for k, f in enumerate(finals)]


def _spliced(kernel: Kernel, nest_ids: set, inits: list, finals: list, replaced: dict,
             removed: set, pre, post) -> list:
    """The kernel's statements with *inits* before the nest, the nest's
    updates *replaced* by their partial forms (*removed* ones dropped),
    *finals* after it, and the dependences on the dropped statements (and
    on the barriers *pre*/*post*) moved to what replaces them."""
    gone = set(replaced) | removed
    final_ids = frozenset(f.id for f in finals)
    first = next(i.id for i in kernel.instructions if i.id in nest_ids)
    last_inside = max(k for k, i in enumerate(kernel.instructions) if i.id in nest_ids)
    out: list = []
    for k, insn in enumerate(kernel.instructions):
        if insn.id == first:
            out.extend(inits)
        if insn.id in replaced:
            out.extend(replaced[insn.id])
        elif insn.id not in removed:
            deps = insn.depends_on
            if pre is not None and insn.id in nest_ids:
                deps = deps | {pre.id}
            if post is not None and k > last_inside:
                deps = deps | {post.id}
            if deps & gone:
                if insn.id in nest_ids:
                    deps = (deps - gone) | frozenset(
                        n.id for d in deps & gone for n in replaced.get(d, ()))
                else:
                    deps = (deps - gone) | final_ids
            out.append(insn.copy(depends_on=deps) if deps != insn.depends_on else insn)
        if k == last_inside:
            out.extend(finals)
    return out


def _split_over_lanes(kernel: Kernel, b: _Builder, nest: ReductionNest, lanes: int,
                      g0: int, g1: int) -> Kernel:
    """*kernel* with the nest's innermost reduction loop split into chunks
    of *lanes* on ``l.0`` (after the rewriting: the split rewrites its
    index in the statements inside it), the chunks round-robin to *g0*
    groups on ``g.0`` and the next loop out to *g1* groups on ``g.1``."""
    lane_loop = nest.loops[-1]
    outer = b.name(f"{lane_loop}_outer")
    inner = b.name(f"{lane_loop}_inner")
    kernel = split_iname(kernel, lane_loop, lanes, outer_iname=outer, inner_iname=inner,
                         inner_tag="l.0")
    if g0 * g1 == 1:
        return kernel
    # chunk c of the loop to group c mod g0 (neighbouring chunks in
    # neighbouring groups: the loads stay coalesced)
    kernel = split_iname(kernel, outer, g0, outer_iname=b.name(f"{outer}_outer"),
                         inner_iname=b.name(f"{lane_loop}_group"), inner_tag="g.0")
    if g1 == 1:
        return kernel
    # iteration r of the next loop out to row r mod g1 of the groups
    rows = nest.loops[-2]
    return split_iname(kernel, rows, g1, outer_iname=b.name(f"{rows}_outer"),
                       inner_iname=b.name(f"{rows}_group"), inner_tag="g.1")


def _barrier_after(kernel: Kernel, b: _Builder, nest_ids: set, finals: list):
    """A global barrier after the combining statements *finals* where a
    mapped loop follows the nest before a global barrier (it would share
    the combining group's launch), else None."""
    last = max(k for k, i in enumerate(kernel.instructions) if i.id in nest_ids)
    hardware = kernel.hardware_inames()
    for insn in kernel.instructions[last + 1:]:
        if isinstance(insn, BarrierInstruction) and insn.scope == "global":
            return None
        if insn.within_inames & hardware:
            return BarrierInstruction(id=b.name("groups_gbarrier"), scope="global",
                                      depends_on=frozenset(f.id for f in finals),
                                      span=finals[-1].span)
    return None


def _group_counts(groups, nest: ReductionNest) -> tuple[int, int]:
    """``(g0, g1)`` from *groups* (an integer: ``(groups, 1)``), validated."""
    def count(x) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= MAX_GROUPS
    pair = (isinstance(groups, tuple) and len(groups) == 2
            and all(count(x) for x in groups) and groups[0] * groups[1] <= MAX_GROUPS)
    if not count(groups) and not pair:
        raise TransformError(f"parallel_reduction: groups is an integer from 1 to "
                             f"{MAX_GROUPS} or a pair of them whose product is at most "
                             f"that, not {groups!r}")
    if not pair:
        return groups, 1
    if groups[1] > 1 and len(nest.loops) < 2:
        raise TransformError(f"parallel_reduction: groups {groups!r}: the nest of loop "
                             f"'{nest.outer}' has one reduction loop, so no second axis "
                             "of groups")
    return groups


def _barrier_before(kernel: Kernel, b: _Builder, nest: ReductionNest, inside, start: int):
    """A global barrier before the nest (at *start*) where what runs before
    it in its launch must not share the groups' launch: a mapped loop (its
    groups would rerun it), or a store the nest reads that is no private
    variable (other groups could read it before it is written); None where
    nothing does."""
    # (the accumulators and their locations: read by the second launch only)
    reads = set().union(*(i.read_dependency_names() for i in inside)) - {
        w for a in nest.accumulators for w in (a.name, *(x for x, _ in a.locations))}
    segment = []
    for insn in reversed(kernel.instructions[:start]):
        if isinstance(insn, BarrierInstruction) and insn.scope == "global":
            break
        segment.append(insn)
    hardware = kernel.hardware_inames()
    for insn in segment:
        shared = [w for w in insn.assignee_var_names() if w in reads and not (
            w in kernel.temporaries and kernel.temporaries[w].address_space
            in (AddressSpace.PRIVATE, None) and not kernel.temporaries[w].shape)]
        # (a reduction over the work-items runs in them too)
        if (insn.within_inames | reduction_inames(insn)) & hardware or shared:
            return BarrierInstruction(id=b.name("groups_gbarrier"), scope="global",
                                      depends_on=frozenset(i.id for i in segment),
                                      span=inside[0].span)
    return None


def _partial_sums(kernel, acc: Accumulator, part, init, replaced) -> None:
    v = acc.name
    for uid in acc.updates:
        insn = kernel.insn(uid)
        assert split_update(insn, kernel) is not None
        replaced[uid] = [insn.copy(assignee=part,
                                   expression=substitute(insn.expression, {v: part}),
                                   depends_on=insn.depends_on | {init.id})]


def _extreme(kernel, b: _Builder, acc: Accumulator, nest: ReductionNest, part, init, inits,
             finals, replaced, removed, lane, first, span, gs: _Groups | None,
             phase1, rounds) -> None:
    v = acc.name
    index_dtype = np.dtype(kernel.options.index_dtype)
    cond_insn = kernel.insn(acc.condition)
    update = kernel.insn(acc.updates[0])
    index_parts = []
    if acc.locations:
        for y in nest.loops:
            k = b.private(f"{y}_{v}_part", index_dtype)
            index_parts.append(k)
            inits.append(Assignment(id=b.name(f"{k.name}_init"), assignee=k,
                                    expression=reduction_neutral("min", index_dtype),
                                    within_inames=frozenset({lane}), span=span))
    if cond_insn.id == update.id:
        replaced[update.id] = [update.copy(
            assignee=part, predicates=tuple(substitute(c, {v: part})
                                            for c in update.predicates),
            depends_on=update.depends_on | {init.id})]
    else:
        cond = substitute(cond_insn.expression, {v: part})
        if index_parts:
            # an equal value at an earlier place wins too, so that the first
            # place is kept whatever order the work-item's loops run in
            cond = p.LogicalOr((cond, p.LogicalAnd((
                p.Comparison(acc.value, "==", part),
                _earlier([(p.Variable(y), k) for y, k in
                          zip(nest.loops, index_parts, strict=True)])))))
        replaced[cond_insn.id] = [cond_insn.copy(
            expression=cond, depends_on=cond_insn.depends_on | {init.id})]
        replaced[update.id] = [update.copy(assignee=part,
                                           depends_on=update.depends_on | {init.id})]
        locs = [kernel.insn(i) for _, i in acc.locations]
        replaced[locs[0].id] = [
            Assignment(id=b.name(f"{k.name}_store"), assignee=k, expression=p.Variable(y),
                       within_inames=locs[0].within_inames, predicates=locs[0].predicates,
                       depends_on=locs[0].depends_on | {init.id}, span=locs[0].span,
                       tags=locs[0].tags)
            for y, k in zip(nest.loops, index_parts, strict=True)]
        removed.update(i.id for i in locs[1:])
    if gs is None:
        finals.extend(_extreme_combine(kernel, b, acc, nest, part, index_parts, (lane,),
                                       first, span))
        return
    # each group's extreme and its first location to the scratch arrays,
    # then one group combines them as above
    ms, found = _extreme_tree(kernel, b, acc, nest, part, index_parts, (lane,), span,
                              gs.within)
    phase1.extend(ms)
    within = gs.within | {gs.first}
    dtype = kernel.variable(v).dtype
    scr = b.scratch(f"{v}_groups", dtype, gs.total)
    phase1.append(Assignment(id=b.name(f"{scr}_store"), assignee=p.Subscript(
        p.Variable(scr), gs.slot), expression=ms[0].assignee, within_inames=within,
        span=span))
    part2 = b.private(f"{v}_group_part", dtype)
    loads = [] if gs.round else [
        Assignment(id=b.name(f"{part2.name}_load"), assignee=part2, expression=gs.at(scr),
                   within_inames=frozenset({gs.lane}), span=span)]
    index2, located = [], []
    for (y, r), k in zip(found, index_parts, strict=True):
        ys = b.scratch(f"{y}_{v}_groups", index_dtype, gs.total)
        phase1.append(Assignment(id=b.name(f"{ys}_store"), assignee=p.Subscript(
            p.Variable(ys), gs.slot), expression=r, within_inames=within, span=span))
        k2 = b.private(f"{k.name}_group", index_dtype)
        index2.append(k2)
        located.append(ys)
        if not gs.round:
            loads.append(Assignment(id=b.name(f"{k2.name}_load"), assignee=k2,
                                    expression=gs.at(ys), within_inames=frozenset({gs.lane}),
                                    span=span))
    if gs.round:
        # each combining work-item's first extreme over its partials: a
        # better value, or an equal one at an earlier place (the partials'
        # places are not in the loops' order)
        rounds.extend(_extreme_rounds(b, acc, dtype, index_dtype, gs, scr, part2, located,
                                      index2, span))
    finals.extend(loads)
    finals.extend(_extreme_combine(kernel, b, acc, nest, part2, index2, (gs.lane,), first,
                                   span))


def _extreme_tree(kernel, b: _Builder, acc: Accumulator, nest: ReductionNest, part,
                  index_parts, lanes, span, within=frozenset()):
    """The group's extreme of *part* over the inames *lanes* (its
    work-items') and, loop by loop, the first location where it occurs
    (*index_parts*, one per loop): the assignments (the extreme's first)
    and ``(loop, variable)`` per location."""
    def reduce(op: str, e) -> Reduction:
        return Reduction(op, lanes, e)

    v = acc.name
    index_dtype = np.dtype(kernel.options.index_dtype)
    m = b.private(f"{v}_extreme", kernel.variable(v).dtype)
    out = [Assignment(id=b.name(f"{m.name}_tree"), assignee=m,
                      expression=reduce(acc.op, part), within_inames=within,
                      span=span)]
    # the first occurrence: loop by loop, the smallest index among the
    # work-items that hold the extreme where it first occurs
    holds: list = [p.Comparison(part, "==", m)]
    found = []
    big = reduction_neutral("min", index_dtype)
    for y, k in zip(nest.loops, index_parts, strict=False):
        r = b.private(f"{y}_{v}_first", index_dtype)
        cond = holds[0] if len(holds) == 1 else p.LogicalAnd(tuple(holds))
        out.append(Assignment(id=b.name(f"{r.name}_tree"), assignee=r,
                              expression=reduce("min", p.If(cond, k, big)),
                              within_inames=within, span=span))
        holds.append(p.Comparison(k, "==", r))
        found.append((y, r))
    return out, found


def _extreme_combine(kernel, b: _Builder, acc: Accumulator, nest: ReductionNest, part,
                     index_parts, lanes, first, span) -> list:
    """The extreme of *part* over *lanes* and its first location, stored
    where the extreme is better than the accumulator's value before."""
    v = acc.name
    update = kernel.insn(acc.updates[0])
    finals, found = _extreme_tree(kernel, b, acc, nest, part, index_parts, lanes, span)
    m = finals[0].assignee
    # an argument is stored by work-item 0 (the others neither read nor
    # write it), a local variable by every work-item (each holds a copy)
    local = v in kernel.temporaries
    stray = [w for w, _ in acc.locations if (w in kernel.temporaries) != local]
    if stray:
        raise TransformError(f"parallel_reduction: the location '{stray[0]}' of '{v}' is "
                             f"{'an argument' if local else 'a local variable'} and '{v}' "
                             "is not")
    where = frozenset() if local else frozenset({first})
    better = b.private(f"{v}_better", np.bool_)
    finals.append(Assignment(id=b.name(f"{better.name}_test"), assignee=better,
                             expression=p.Comparison(m, "<" if acc.op == "min" else ">",
                                                     p.Variable(v)),
                             within_inames=where, span=span))
    at = {y: r for y, r in found}
    for w, lid in acc.locations:
        loc = kernel.insn(lid)
        finals.append(Assignment(id=b.name(f"{w}_located"), assignee=loc.assignee,
                                 expression=substitute(loc.expression, at),
                                 within_inames=where, predicates=(better,), span=loc.span))
    finals.append(Assignment(id=b.name(f"{v}_store"), assignee=p.Variable(v), expression=m,
                             within_inames=where, predicates=(better,), span=update.span))


    return finals


def _extreme_rounds(b: _Builder, acc: Accumulator, dtype, index_dtype, gs: _Groups, scr: str,
                    part2, located: list[str], index2: list, span) -> list[Assignment]:
    """The statements of the combining work-items' rounds for an extreme:
    its value *part2* and places *index2* (from the scratch arrays *scr*
    and *located*) start neutral, then take a partial that is better, or
    equal at an earlier place."""
    out = [Assignment(id=b.name(f"{part2.name}_init"), assignee=part2,
                      expression=reduction_neutral(acc.op, dtype),
                      within_inames=frozenset({gs.lane}), span=span)]
    big = reduction_neutral("min", index_dtype)
    out.extend(Assignment(id=b.name(f"{k2.name}_init"), assignee=k2, expression=big,
                          within_inames=frozenset({gs.lane}), span=span) for k2 in index2)
    value = gs.at(scr)
    cond = p.Comparison(value, "<" if acc.op == "min" else ">", part2)
    if index2:
        cond = p.LogicalOr((cond, p.LogicalAnd((p.Comparison(value, "==", part2), _earlier(
            [(gs.at(ys), k2) for ys, k2 in zip(located, index2, strict=True)])))))
    if gs.ragged:
        # (a round past the last group takes nothing, and reads nothing)
        cond = p.LogicalAnd((*gs.guard(), cond))
    take = b.private(f"{acc.name}_group_take", np.bool_)
    within = frozenset({gs.lane, gs.round})
    out.append(Assignment(id=b.name(f"{take.name}_test"), assignee=take, expression=cond,
                          within_inames=within, span=span))
    for w, e in ((part2, value), *((k2, gs.at(ys)) for ys, k2 in zip(located, index2,
                                                                         strict=True))):
        out.append(Assignment(id=b.name(f"{w.name}_take"), assignee=w, expression=e,
                              within_inames=within, predicates=(take,), span=span))
    return out


def _combine(op: str, a, b):
    """*a* combined with *b* under the reduction operation *op*."""
    if op == "sum":
        return p.Sum((a, b))
    if op == "product":
        return p.Product((a, b))
    return p.Call(p.Variable(op), (a, b))


def _earlier(pairs):
    """``(a1, a2, ...) < (b1, b2, ...)`` lexicographically for *pairs* ``(a, b)``."""
    (a, b), rest = pairs[0], pairs[1:]
    less = p.Comparison(a, "<", b)
    if not rest:
        return less
    return p.LogicalOr((less, p.LogicalAnd((p.Comparison(a, "==", b), _earlier(rest)))))
