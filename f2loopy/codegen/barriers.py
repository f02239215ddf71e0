"""Race checks and barrier placement for parallel kernels.

For every variable, the accesses of every pair of instructions (and of each
instruction with itself) are examined exactly with isl (see
:mod:`f2loopy.schedule.races`):

* global memory touched by two different work-groups, one access a write:
  a race no barrier can fix -> :class:`RaceError` naming both Fortran lines;
* global or local memory touched by two work-items of the same group: a
  barrier must separate the two accesses; it is placed automatically, as late
  as possible, shared between requirements; two work-items executing the very
  same statement instance-for-instance on the same element is a race;
* a private temporary (or local memory across groups) whose value flows from
  one work-item to another in the kernel's sequential order: privatising it
  would change results -> :class:`RaceError`.

``no_sync_with`` on an instruction (see :func:`add_nosync`) waives the check
for the named instruction pairs.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from contextlib import contextmanager

import islpy as isl
from dataclasses import dataclass

from f2loopy.analysis.accesses import instruction_accesses
from f2loopy.analysis.private import Privatisation
from f2loopy.schedule.races import RaceAnalysis, same_iteration_inames
from f2loopy.diagnostics import CodegenError, RaceError
from f2loopy.codegen.preprocess import address_spaces
from f2loopy.ir.domains import iname_to_domain_index
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import dim_type, lazy_affs
from f2loopy.ir.kernel import (
    AddressSpace, ArrayArg, BarrierInstruction, Kernel, ScalarArg)
from f2loopy.schedule.linearize import BarrierNode, InsnNode, LoopNode, linearize


@dataclass
class _Requirement:
    """A barrier must stand at one of the gaps *allowed* in the body of the
    loop nest *level* (gap k is just before child k; ``None`` as an upper end
    means the end of the body)."""

    a: str
    b: str
    var: str
    scope: str                    # "local" or "global" (which fences)
    level: tuple                  # path of the loop body (tuple of loop inames)
    allowed: tuple                # ((lo, hi), ...) inclusive gap ranges
    carried: bool = False

    def satisfied_by(self, gap: int, end: int) -> bool:
        return any(lo <= gap <= (end if hi is None else hi) for lo, hi in self.allowed)


class FlowsChecked(Exception):
    """Raised by :func:`check_and_insert_barriers` in the ``"only"`` mode of
    :func:`flow_check`: the value-flow check of the kernel passed (nothing
    after it ran)."""


#: how :func:`check_and_insert_barriers` runs the value-flow check of private
#: and local storage (``_check_flows``, most of the analysis' time): see
#: :func:`flow_check`; ``passed``: the last call got past the point where
#: that check stands
_FLOWS = {"mode": "inline", "passed": False}


@contextmanager
def flow_check(mode: str) -> Iterator[None]:
    """Run the value-flow check in the block as *mode* says: ``"inline"``
    (where it stands, the default), ``"skip"`` (another process checks it:
    :mod:`f2loopy.directives.child_codegen` runs the two at once) or
    ``"only"`` (the checks before it that place barriers are skipped, and
    :class:`FlowsChecked` is raised where it passed: the rest of the code
    generation is the other process's)."""
    if mode not in ("inline", "skip", "only"):
        raise ValueError(f"unknown flow-check mode {mode!r}")
    saved = dict(_FLOWS)
    _FLOWS.update(mode=mode, passed=False)
    try:
        yield
    finally:
        _FLOWS.clear()
        _FLOWS.update(saved)


def flow_check_passed() -> bool:
    """Whether the last :func:`check_and_insert_barriers` of a ``"skip"``
    block got past the place of the value-flow check (an error raised after
    it would come after that check's own error in the inline order)."""
    return bool(_FLOWS["passed"])


def storage_class(kernel: Kernel, name: str, spaces: dict) -> str:
    """``"global"``, ``"local"`` or ``"private"``."""
    try:
        var = kernel.variable(name)
    except KeyError:
        return "private"
    if isinstance(var, (ArrayArg, ScalarArg)):
        return "global"
    space = spaces.get(name, AddressSpace.PRIVATE)
    return {AddressSpace.GLOBAL: "global", AddressSpace.LOCAL: "local"}.get(space, "private")


def _storage_key(kernel, name) -> str:
    """Aliased temporaries share one storage: they are checked as one."""
    t = kernel.temporaries.get(name)
    return t.base_storage if t is not None and t.base_storage else name


def _nosync(kernel, a_id, b_id, scope) -> bool:
    for x, y in ((a_id, b_id), (b_id, a_id)):
        insn = kernel.insn(x)
        for pattern, s in insn.no_sync_with:
            if s in (scope, "any") and fnmatch.fnmatchcase(y, pattern):
                return True
    return False


def check_and_insert_barriers(kernel: Kernel, grid, schedule, spaces: dict | None = None):
    """Return *schedule* with the barriers parallel execution needs; raise
    :class:`RaceError` where no barrier can make it correct."""
    mode = _FLOWS["mode"]
    _FLOWS["passed"] = False
    if not grid.inames or not kernel.options.check_races:
        _FLOWS["passed"] = True
        if mode == "only":
            raise FlowsChecked
        return schedule
    spaces = spaces if spaces is not None else address_spaces(kernel)
    ra = RaceAnalysis(kernel, grid)
    by_var: dict = {}
    for insn in kernel.instructions:
        for acc in instruction_accesses(kernel, insn, with_domain_params=False):
            by_var.setdefault(_storage_key(kernel, acc.name), []).append(acc)

    paths = _paths(schedule)
    known = _Known(_body_lengths(schedule))
    injective: dict = {}
    requirements = []
    private_vars: set = set()
    local_vars: set = set()
    for name in sorted(by_var):
        accs = by_var[name]
        cls = storage_class(kernel, accs[0].name, spaces)
        if cls == "private":
            private_vars.update(acc.name for acc in accs)
            continue
        if cls == "local":
            local_vars.update(acc.name for acc in accs)
        if mode == "only":
            continue        # (the barriers are the other process's)
        if _one_work_item_per_element(kernel, ra, accs, injective):
            continue        # no element is shared: no race, no barrier
        pairs = [(a, b) for k, a in enumerate(accs) for b in accs[k:]
                 if a.is_write or b.is_write]
        # closest pairs first: their barriers often serve the farther ones,
        # whose exact analysis can then be skipped (see _Known)
        pairs.sort(key=lambda ab: _distance(paths, ab[0].insn_id, ab[1].insn_id))
        for a, b in pairs:
            found = _shared_pair(kernel, ra, paths, cls, a, b, known)
            known.add(found)
            requirements += found
    if (private_vars or local_vars) and mode != "skip":
        _check_flows(kernel, ra, private_vars, local_vars, by_var, schedule)
    _FLOWS["passed"] = True
    if mode == "only":
        raise FlowsChecked
    return _place(kernel, schedule, requirements)


def _insn_desc(insn) -> str:
    return f"'{insn.id}'" + (f" (line {insn.span.line})" if insn.span else "")


def _distinct_constants(a, b) -> bool:
    from f2loopy.analysis.accesses import distinct_constants
    return a.index is not None and b.index is not None and \
        distinct_constants(a.index, b.index)


def _same_work_item_only(ra: RaceAnalysis, ia, ib, a, b) -> bool:
    """Cheap sufficient test: identical subscripts in which every hardware
    iname of the two instructions stands alone in some position, with both
    instructions on the same iname of every grid axis: then equal elements
    mean equal work-items (the common case, e.g. ``rhsq(i,j,k,c,e)``)."""
    if a.index is None or b.index is None or a.index != b.index:
        return False
    sa, sb = ra.space(ia), ra.space(ib)
    for ax in ra.axes:
        x = sa.axis_iname.get(ax)
        if x is None or x != sb.axis_iname.get(ax):
            return False
        if not any(_alone(ix, x, ra.hw) for ix in a.index):
            return False
    return True


def _one_work_item_per_element(kernel, ra: RaceAnalysis, accs, cache: dict) -> bool:
    """Cheap sufficient test that no two work-items touch one element of a
    variable, for all its accesses at once (one test per variable instead of
    one per pair of accesses: race checks linear in the statements of a
    column kernel): some subscript position holds the same expression in
    every access, that expression reads hardware inames only (and kernel
    parameters), every access runs on exactly those inames, the same on each
    grid axis, and the expression takes distinct values for distinct values
    of them (``ZT(JL_inner + 128*JL_outer, JK)`` with ``JL_inner < 128``,
    checked with isl once per expression in *cache*).  Equal elements then
    mean equal work-items, whose accesses run in program order."""
    if not accs or any(a.index is None for a in accs):
        return False
    # one variable (storage shared by several names is addressed in other
    # layouts: equal subscripts need not mean equal elements)
    if len({a.name for a in accs}) != 1 or getattr(
            kernel.temporaries.get(accs[0].name), "base_storage", None):
        return False
    n = len(accs[0].index)
    if any(len(a.index) != n for a in accs):
        return False
    mapping = None
    for a in accs:
        m = tuple(sorted(ra.space(kernel.insn(a.insn_id)).axis_iname.items()))
        if mapping is None:
            mapping = m
        elif m != mapping:
            return False
    hw = {x for _, x in mapping or () if x is not None}
    if not hw or any(x is None for _, x in mapping or ()):
        return False
    params = set(kernel.arg_dict) - set(kernel.temporaries) - kernel.written_variables()
    for k in range(n):
        expr = accs[0].index[k]
        if any(a.index[k] != expr for a in accs[1:]):
            continue
        names = variables_read(expr)
        if names & hw != hw or not names <= hw | params:
            continue
        key = (expr, tuple(sorted(hw)))
        if key not in cache:
            cache[key] = _injective(kernel, expr, sorted(hw))
        if cache[key]:
            return True
    return False


def _injective(kernel, expr, inames) -> bool:
    """Whether *expr* of *inames* (over their domain) takes distinct values
    for distinct values of *inames*."""
    from f2loopy.ir.domains import combined_domain
    from f2loopy.ir.expressions import rename
    from f2loopy.ir.isl_tools import NonAffineError, align_params, pwaff_from_expr
    from f2loopy.schedule.races import _product
    try:
        dom = combined_domain(kernel, inames)
        sides = []
        for suffix in ("__a", "__b"):
            d = dom
            for k, x in enumerate(inames):
                d = d.set_dim_name(dim_type.set, k, x + suffix)
            sides.append(d)
        both = _product(*sides)
        space = both.get_space()
        ea = pwaff_from_expr(rename(expr, {x: x + "__a" for x in inames}), space)
        eb = pwaff_from_expr(rename(expr, {x: x + "__b" for x in inames}), space)
        both, ea, eb = align_params(both, ea, eb)
        affs = lazy_affs(both.get_space())
        differ = None
        for x in inames:
            d = affs[x + "__a"].lt_set(affs[x + "__b"]) | affs[x + "__a"].gt_set(affs[x + "__b"])
            differ = d if differ is None else differ | d
        return (both & ea.eq_set(eb) & differ).is_empty()
    except (NonAffineError, isl.Error):
        return False


def _alone(expr, iname, hw) -> bool:
    from f2loopy.ir.folding import _NotPolynomial, _poly
    try:
        poly = _poly(expr)
    except _NotPolynomial:
        return False
    if poly.get(((iname, None),)) not in (1, -1) and \
            not any(len(m) == 1 and m[0][0] == iname and c in (1, -1) for m, c in poly.items()):
        return False
    for mono in poly:
        names = {n for n, _ in mono}
        if len(mono) > 1 and iname in names:
            return False
        if names & set(hw) - {iname}:
            return False
    return True


def _shared_pair(kernel, ra: RaceAnalysis, paths, cls, a, b, known=None):
    ia, ib = kernel.insn(a.insn_id), kernel.insn(b.insn_id)
    scope = "global" if cls == "global" else "local"
    # (subscripts compare elements of one variable only: names sharing a
    # storage (alias_temporaries) lay it out differently)
    if a.name == b.name and (_distinct_constants(a, b) or _same_work_item_only(ra, ia, ib, a, b)):
        return []
    if known is not None and cls == "local" and ia.id != ib.id and all(
            known.implies(c) for c in _candidates(paths, ia, ib, var=a.name, scope=scope)):
        # for two different statements on local memory the analysis can only
        # ask for barriers, and every barrier it could ask for is already due
        return []
    pairs, exact = ra.pair_set(a, b)
    if pairs.is_empty():
        return []
    var = a.name
    if cls == "global" and ra.group_axes:
        cross = ra.differs(pairs, ra.group_axes)
        if not cross.is_empty() and not _nosync(kernel, ia.id, ib.id, "global"):
            inames = sorted(set(ra.hw_inames_on(ia, ra.group_axes))
                            | set(ra.hw_inames_on(ib, ra.group_axes)))
            tags = ", ".join(f"'{i}' ({kernel.iname_tag(i)})" for i in inames) or \
                "the work-group axes"
            how = "" if exact else " (its subscripts are data-dependent, so f2loopy cannot " \
                "prove they differ; mark the instructions nosync if they never collide)"
            how += _shared_temporary_hint(kernel, var)
            if ia.id == ib.id:
                if a.is_write and b.is_write:
                    msg = (f"write race on '{var}': instruction {_insn_desc(ia)} writes the "
                           f"same element from different work-groups along {tags}{how}")
                else:
                    msg = (f"parallel inames {tags} carry a dependence on '{var}': instruction "
                           f"{_insn_desc(ia)} reads elements that its instances in other "
                           f"work-groups write{how}")
                raise RaceError(msg, ia.span)
            msg = (f"parallel inames {tags} carry a dependence on '{var}': instructions "
                   f"{_insn_desc(ia)} and {_insn_desc(ib)} access the same element from "
                   f"different work-groups{how}")
            raise RaceError(msg, ia.span, (("the other access", ib.span),))
    within = ra.equal(pairs, ra.group_axes) if ra.group_axes else pairs
    if not ra.local_axes:
        return []
    diff = ra.differs(within, ra.local_axes)
    if diff.is_empty() or _nosync(kernel, ia.id, ib.id, scope):
        return []
    return _requirements(kernel, ra, paths, ia, ib, diff, var, scope, known)


def _shared_temporary_hint(kernel, var: str) -> str:
    """Why a temporary of a launch of a split kernel is shared by all
    work-items, and the cure: global barriers put a temporary in global
    memory when a launch reads it before a write of that launch surely
    happened (:func:`f2loopy.codegen.phases._crossing_temporaries`)."""
    import re
    t = kernel.temporaries.get(var)
    if (t is None or t.address_space != AddressSpace.GLOBAL
            or not re.fullmatch(r".+_phase[0-9]+", kernel.name)):
        return ""
    return (f"; '{var}' is shared by every work-item of every launch because a global "
            f"barrier made it carry a value from one launch to the next: some launch reads "
            f"'{var}' where no write of that launch surely comes first (writes under "
            f"conditions count where if/else branches together cover every case). If each "
            f"loop nest sets '{var}' before using it, give the "
            f"nests variables of their own (rename '{var}' in one of them) or assign it "
            "unconditionally at the start of each nest")


def _common_loops(paths, ia_id, ib_id):
    pa, pb = paths[ia_id], paths[ib_id]
    common = []
    # the common prefix of two paths of any depths
    for (pos_a, loop_a), (pos_b, loop_b) in zip(pa, pb, strict=False):
        if pos_a != pos_b or loop_a is None or loop_a != loop_b:
            break
        common.append(loop_a)
    return common


def _distance(paths, ia_id, ib_id) -> int:
    """How far apart two statements are in their innermost common loop body."""
    depth = len(_common_loops(paths, ia_id, ib_id))
    return abs(paths[ia_id][depth][0] - paths[ib_id][depth][0])


def _candidates(paths, ia, ib, *, var, scope):
    """Every barrier requirement the pair could give rise to (which of them
    it does, isl decides): ``(requirement, m)``, *m* the number of common
    loops whose iterations the pair shares (``None``: same iteration of all)."""
    pa, pb = paths[ia.id], paths[ib.id]
    common = _common_loops(paths, ia.id, ib.id)
    # (requirement, (common loops, the loop, direction) or None)
    out: list[tuple[_Requirement, tuple[int, object, int] | None]] = []
    for m, loop in enumerate(common):
        pos_a, pos_b = pa[m + 1][0], pb[m + 1][0]
        for first, second, direction in ((pos_a, pos_b, 0), (pos_b, pos_a, 1)):
            out.append((_Requirement(ia.id, ib.id, var, scope, tuple(common[:m + 1]),
                                     ((first + 1, None), (0, second)), carried=True),
                        (m, loop, direction)))
    p, q = pa[len(common)][0], pb[len(common)][0]
    if p > q:
        p, q = q, p
    out.append((_Requirement(ia.id, ib.id, var, scope, tuple(common), ((p + 1, q),)), None))
    return out


class _Known:
    """Barrier requirements found so far, by loop body: a new one is implied
    by a known one whose allowed gaps are a subset of its own (any barrier
    that serves the known one serves it)."""

    def __init__(self, lengths):
        self.lengths = lengths
        self.by_level: dict = {}

    def gaps(self, r) -> frozenset:
        end = self.lengths.get(r.level, 0)
        out: set = set()
        for lo, hi in r.allowed:
            out.update(range(lo, (end if hi is None else hi) + 1))
        return frozenset(out)

    def add(self, reqs):
        for r in reqs:
            self.by_level.setdefault(r.level, []).append(self.gaps(r))

    def implies(self, candidate) -> bool:
        r = candidate[0] if isinstance(candidate, tuple) else candidate
        mine = self.gaps(r)
        return any(g <= mine for g in self.by_level.get(r.level, ()))


def _body_lengths(schedule) -> dict:
    """Loop body path (tuple of inames) -> number of nodes in it."""
    out = {(): len(schedule)}

    def walk(nodes, level):
        for node in nodes:
            if isinstance(node, LoopNode):
                out[level + (node.iname,)] = len(node.body)
                walk(node.body, level + (node.iname,))
    walk(schedule, ())
    return out


def _requirements(kernel, ra, paths, ia, ib, pairs, var, scope, known=None):
    common = _common_loops(paths, ia.id, ib.id)
    out = []
    for req, where in _candidates(paths, ia, ib, var=var, scope=scope):
        if where is None:
            continue
        if known is not None and ia.id != ib.id and known.implies(req):
            continue
        m, loop, direction = where
        # pairs in different iterations of `loop`: the access of the earlier
        # iteration must be followed by a barrier before the later one runs
        base = ra.equal(pairs, common[:m])
        first, second = ("__a", "__b") if direction == 0 else ("__b", "__a")
        if not _before(base, loop, first, second).is_empty():
            out.append(req)
    same = ra.equal(pairs, common)
    if not same.is_empty():
        replicated = [ax for ax in ra.local_axes if ra.space(ia).axis_iname.get(ax) is None]
        if ia.id == ib.id and replicated and (
                not _differs_only_on(ra, same, replicated) is False):
            loops = sorted(h.iname for h in ra.grid.inames
                           if f"{h.kind}{h.axis}" in replicated)
            raise RaceError(f"instruction {_insn_desc(ia)} is outside the parallel loop(s) "
                            f"{', '.join(loops)}, so every work-item of a group runs it and "
                            f"they all access '{var}' at once; move it into those loops or "
                            "keep the loops sequential", ia.span)
        if ia.id == ib.id:
            raise RaceError(f"race on '{var}': instances of instruction {_insn_desc(ia)} in "
                            "different work-items of a group access the same element at the "
                            "same time, one of them writing (a barrier cannot order a "
                            "statement with itself)", ia.span)
        out.append(_candidates(paths, ia, ib, var=var, scope=scope)[-1][0])
    return out


def _differs_only_on(ra, s, axes) -> bool:
    """Whether the pairs of *s* that differ in local ids differ on *axes*."""
    return not ra.differs(s, axes).is_empty()


def _before(s, iname, first, second):
    """Pairs of *s* where the *first* side runs an earlier iteration of *iname*."""
    affs = lazy_affs(s.get_space())
    return s & affs[iname + first].lt_set(affs[iname + second])


def _covered_reads(reference, var, readers, writers) -> bool:
    """Every read of private *var* is preceded, in the same iteration of all
    its loops, by an unconditional write: values never cross iterations
    (*readers*, *writers*: variable -> its reading, writing instructions)."""
    ref_paths = reference
    writers = writers.get(var, [])
    if any(w.predicates or hasattr(getattr(w, "assignee", None), "aggregate")
           for w in writers):
        return False
    for insn in readers.get(var, ()):
        ok = False
        for w in writers:
            if w.id == insn.id or set(w.within_inames) != set(insn.within_inames):
                continue
            pw, pr = ref_paths.get(w.id), ref_paths.get(insn.id)
            if pw is None or pr is None or len(pw) != len(pr):
                continue
            if pw[:-1] == pr[:-1] and pw[-1][0] < pr[-1][0]:
                ok = True
                break
        if not ok:
            return False
    return True


def _private_to_their_loops(kernel, ref_paths, private_vars, by_var) -> set:
    """The variables of *private_vars* that are private to every parallel
    loop they are written in (:mod:`f2loopy.analysis.private`: each read sees
    a value of its own iteration, and no value leaves the loop), so no value
    crosses work-items.  That analysis reads the instruction order as the
    program's: the instructions are put in the reference order first."""
    if not private_vars or set(ref_paths) != {i.id for i in kernel.instructions}:
        return set()
    order = sorted(ref_paths, key=lambda i: tuple(k for k, _ in ref_paths[i]))
    by_id = kernel.id_to_insn
    kernel = kernel.copy(instructions=tuple(by_id[i] for i in order))
    hardware = kernel.hardware_inames()
    analysis = Privatisation(kernel)
    insns = kernel.id_to_insn
    out = set()
    for v in sorted(private_vars):
        accs = by_var.get(v, [])
        loops = {x for a in accs if a.is_write for x in insns[a.insn_id].within_inames
                 if x in hardware}
        if all(not analysis.why_not(x, v, accs) for x in sorted(loops)):
            out.add(v)
    return out


def _private_per_lane(kernel, paths, private_vars, by_var) -> set:
    """The variables of *private_vars* whose every read sees a value the
    same work-item wrote before it, each work-item running the instructions
    in the order of the schedule *paths* (the kernel's own: where no
    sequential reference order exists, this is what the kernel means;
    :meth:`~f2loopy.analysis.private.Privatisation.why_not_per_lane`)."""
    if not private_vars or set(paths) != {i.id for i in kernel.instructions}:
        return set()
    order = sorted(paths, key=lambda i: tuple(k for k, _ in paths[i]))
    by_id = kernel.id_to_insn
    kernel = kernel.copy(instructions=tuple(by_id[i] for i in order))
    analysis = Privatisation(kernel, lanes=kernel.hardware_inames())
    return {v for v in sorted(private_vars)
            if not analysis.why_not_per_lane(v, by_var.get(v, []))}


def _check_flows(kernel, ra: RaceAnalysis, private_vars, local_vars, by_var, schedule):
    private_vars = set(private_vars) - set(kernel.options.per_work_item)
    if not private_vars and not local_vars:
        return
    # the reference order: the kernel run sequentially with every iname a
    # loop.  When no such order exists (parallel loops reused by several
    # phases, e.g. after precompute), each work-item's own run is checked.
    per_lane = False
    try:
        reference = linearize(kernel.copy(iname_tags=FrozenMap()),
                              max_steps=20 * (len(kernel.instructions) + 10))
    except CodegenError:
        reference, per_lane = schedule, True
    ref_paths = _paths(reference)
    # reading and writing instructions of each private variable, in kernel order
    position = {insn.id: k for k, insn in enumerate(kernel.instructions)}
    readers: dict = {}
    for name in private_vars:
        readers[name] = [kernel.insn(i) for i in sorted(
            {acc.insn_id for acc in by_var.get(name, ()) if not acc.is_write},
            key=position.__getitem__)]
    writers: dict = {}
    for insn in kernel.instructions:
        for name in insn.assignee_names():
            if name in private_vars and insn not in writers.setdefault(name, []):
                writers[name].append(insn)
    private_vars = {v for v in private_vars
                    if not _covered_reads(ref_paths, v, readers, writers)}
    private_vars -= _private_to_their_loops(kernel, ref_paths, private_vars, by_var)
    if per_lane:
        private_vars -= _private_per_lane(kernel, ref_paths, private_vars, by_var)
    if not private_vars and not local_vars:
        return
    if per_lane:
        # private values: each work-item runs alone; local memory: each group
        # runs alone, its work-items in lock-step (barriers are checked apart)
        flows = ra.value_flows(private_vars, reference, per_lane=True) if private_vars else []
        if local_vars:
            flows += ra.value_flows(local_vars, reference, per_lane=True,
                                    lane_axes=ra.group_axes)
    else:
        flows = ra.value_flows(private_vars | local_vars, reference)
    for src, sink, rel in flows:
        var = _flow_var(kernel, src, private_vars | local_vars)
        is_local = var in local_vars
        axes = ra.group_axes if is_local else ra.axes
        if not axes:
            continue
        pairs = None
        # the value the sink uses was written in its own iteration of these
        # (a flag set and read under the same condition)
        own = same_iteration_inames(kernel, ref_paths, sink, var)
        for ax in axes:
            if ra.space(src).axis_iname.get(ax) is None:
                continue      # every work-item computes the value itself
            if ra.space(sink).axis_iname.get(ax) in own:
                continue
            if pairs is None:
                pairs = ra.flow_pair_set(src, sink, rel)
            bad = ra.differs(pairs, [ax])
            if bad.is_empty() or _nosync(kernel, src.id, sink.id, "any"):
                continue
            iname = ra.space(src).axis_iname[ax]
            where = "work-groups" if ax[0] == "g" else "work-items"
            space = "local" if is_local else "private"
            raise RaceError(
                f"iname '{iname}' is tagged {kernel.iname_tag(iname)} but the value of "
                f"'{var}' written by {_insn_desc(src)} is read by {_insn_desc(sink)} in another "
                f"iteration of '{iname}': '{var}' is {space} to the {where[:-1]}, so the value "
                f"would not arrive (do not parallelise '{iname}', or turn the accumulation "
                "into a reduction)", sink.span, (("the value is written here", src.span),))


def _flow_var(kernel, src, candidates):
    names = set(src.assignee_names()) & set(candidates)
    return sorted(names)[0] if names else "?"


# {{{ placement

def _paths(schedule):
    """insn id -> [(position, loop iname or None), ...] from the root down."""
    out = {}

    def walk(nodes, prefix):
        for pos, node in enumerate(nodes):
            if isinstance(node, LoopNode):
                walk(node.body, prefix + [(pos, node.iname)])
            elif isinstance(node, InsnNode):
                out[node.insn_id] = prefix + [(pos, None)]
    walk(schedule, [])
    return out


def _place(kernel, schedule, requirements):
    if not requirements:
        return schedule
    by_level: dict = {}
    for r in requirements:
        by_level.setdefault(r.level, []).append(r)
    _check_uniform(kernel, {lvl for lvl in by_level})
    return tuple(_place_in(kernel, list(schedule), (), by_level))


def _place_in(kernel, nodes, level, by_level):
    new_nodes = []
    for node in nodes:
        if isinstance(node, LoopNode):
            body = _place_in(kernel, list(node.body), level + (node.iname,), by_level)
            node = LoopNode(node.iname, tuple(body))
        new_nodes.append(node)
    reqs = by_level.get(level, [])
    if not reqs:
        return new_nodes
    barriers = {}        # gap position -> scope
    for pos, node in enumerate(new_nodes):
        if _is_barrier(kernel, node):
            barriers[pos] = "global"
    end = len(new_nodes)
    simple = sorted((r for r in reqs if not r.carried), key=lambda r: r.allowed[0][1])
    for r in simple + [r for r in reqs if r.carried]:
        hit = [g for g in barriers if r.satisfied_by(g, end)]
        if hit:
            if r.scope == "global":
                barriers[hit[0]] = "global"
            continue
        gap = end if r.carried else r.allowed[0][1]
        barriers[gap] = r.scope if barriers.get(gap) != "global" else "global"
    out = []
    for pos in range(len(new_nodes) + 1):
        if pos in barriers and not (pos < len(new_nodes)
                                    and _is_barrier(kernel, new_nodes[pos])):
            served = sorted({r.var for r in reqs if r.satisfied_by(pos, end)})
            out.append(BarrierNode(barriers[pos], f"for {', '.join(served)}"))
        if pos < len(new_nodes):
            out.append(new_nodes[pos])
    return out


def _is_barrier(kernel, node) -> bool:
    if isinstance(node, BarrierNode):
        return True
    if isinstance(node, InsnNode):
        return isinstance(kernel.insn(node.insn_id), BarrierInstruction)
    return False


def _check_uniform(kernel, levels):
    """Barriers inside a loop need every work-item of a group to run the loop
    the same number of times."""
    local_inames = {i for i, t in kernel.iname_tags.items()
                    if t.hardware and str(t).startswith("l.")}
    where = iname_to_domain_index(kernel)
    for level in levels:
        for iname in level:
            dom = kernel.domains[where[iname]]
            params = set(dom.get_var_names(dim_type.param))
            bad = params & (local_inames | set(kernel.temporaries))
            if bad:
                raise CodegenError(
                    f"a barrier is needed inside loop '{iname}', but its bounds depend on "
                    f"{', '.join(sorted(bad))}, which differs between the work-items of a "
                    "group", kernel.span)

# }}}
