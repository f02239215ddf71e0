"""Fusion of the vertical (level) loops of a column routine into one loop.

A column-physics routine runs several loops over its levels one after the
other: set-up loops over ``1..KLEV`` (some inside a species loop), a main
loop from a run-time top level (``NCLDTOP..KLEV``), flux loops over
``1..KLEV+1``.  Each loop reads what the previous ones left in level arrays;
run as one loop over the levels, the values of a level are made and used in
the same iteration, which keeps them near (and lets k-caching,
:mod:`f2loopy.transform.kcache`, hold them in registers).

:func:`fuse_level_loops` takes the loops that run directly inside the
column (the loops of *column*, or the kernel's outermost sequential loops
without it) in program order and merges each into the first loop before it
(the *target*) when it can, else makes it the next target:

* a loop of the target's range merges as it is (instance *k* of its
  statements runs in iteration *k* of the target, after the target's own);
* a species loop around a loop of the target's range (all its statements in
  that inner loop) is first interchanged, the species loop then running
  inside the merged level loop; legal where no two conflicting instances lie
  in opposite directions along the two loops, scalars private to each
  iteration of the inner loop (every read sees a write of the same
  iteration, nothing after reads what it leaves: ``ZQADJ`` or a ``cond``
  flag, :class:`~f2loopy.analysis.private.Privatisation`) aside;
* a loop over part of the target's range (``NCLDTOP..KLEV`` into
  ``1..KLEV``, with the kernel's assumptions: ``-D assume="NCLDTOP >= 1"``)
  runs inside the target as a loop of at most one iteration, its index
  equal to the target's within its own range: one test
  (``JK >= NCLDTOP``) guards its whole body, which reads the target's
  index, at exactly its own levels (code generation prints a loop of one
  iteration as a block that fixes its index);
* a loop whose range may start before the target's (``NCLDTOP..KLEV``
  without that assumption) is split first: its levels below the target's
  range (``NCLDTOP..0``, copies of its statements in a loop of their own,
  with copies of the loops inside it) run right before the merged loop,
  its other levels merge as above.  Legal where running those levels
  first keeps every dependence: checked as if the target ran over them
  too, doing nothing there (the merge check below on the copy), and none
  of the statements between the two loops that stay after the merged
  loop may touch what they touch; else the loop stays apart, with the
  statements that conflict named;
* a loop over the target's range extended at the top (``1..KLEV+1``) is
  split first: its levels in the target's range merge, the others stay a
  loop after the merged one (the last level peeled).

Every merge is checked on the dependences of the IR
(:func:`~f2loopy.transform.loop_fusion.check_loop_fusion`: every pair of
conflicting instances of the two loops must keep its order); the statements
between the two loops that are in neither move before the merged loop if
they depend on nothing in the target, else after it if nothing in the
merged loop depends on them (transitively, on the statements' program-order
dependencies, counting a dependency only where the two may still touch the
same element), else the merge is refused.  The kernel's statement order is
rewritten to the order the merged code runs in, and the first statements
of the merged loop depend on the target's last, so that each iteration runs
the two blocks in program order (the order the check assumed).  A refused
merge leaves the kernel as it was and is reported with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
import pymbolic.primitives as p

from f2loopy.analysis.accesses import AccessAnalysis, instruction_accesses
from f2loopy.diagnostics import TransformError
from f2loopy.ir.domains import combined_domain, iname_to_domain_index
from f2loopy.ir.isl_tools import align_params, dim_type
from f2loopy.ir.kernel import Kernel
from f2loopy.transform.util import rename_in_set, unique_name


@dataclass(frozen=True)
class LevelFusion:
    """What :func:`fuse_level_loops` did: *merged* ``(loop, into, how)``
    (how: ``"same range"``, ``"interchanged"``, ``"guarded"``, ``"peeled"``,
    ``"levels below peeled"``),
    *refused* ``(loop, into, reason)``."""

    merged: tuple[tuple[str, str, str], ...]
    refused: tuple[tuple[str, str, str], ...]


def _lines(kernel: Kernel, ids) -> str:
    lines = sorted(kernel.id_to_insn[i].span.line for i in ids
                   if kernel.id_to_insn[i].span is not None)
    if not lines:
        return "no source lines"
    return f"line {lines[0]}" if lines[0] == lines[-1] else f"lines {lines[0]}-{lines[-1]}"


def _domain(kernel: Kernel, x: str) -> isl.Set | None:
    """Loop *x*'s range as a one-dimensional set (kernel assumptions
    included), or None if its bounds depend on other loops."""
    dom = combined_domain(kernel, [x], with_assumptions=True)
    if dom.dim(dim_type.set) != 1:
        return None
    names = set(dom.get_var_names(dim_type.param))
    if names & set(kernel.all_inames()):
        return None
    return dom


def _target_domain(kernel: Kernel, x: str) -> isl.Set | None:
    """Loop *x*'s range if other loops may merge into it: a range of run-time
    extent (levels, ``1..KLEV``), not a constant one (species, ``1..5``)."""
    dom = _domain(kernel, x)
    if dom is None or not any(dom.involves_dims(dim_type.param, i, 1)
                              for i in range(dom.dim(dim_type.param))):
        return None
    return dom


def _as(dom: isl.Set, old: str, new: str, other: isl.Set) -> tuple[isl.Set, isl.Set]:
    return align_params(rename_in_set(dom, old, new), other)


class _Fuser:
    def __init__(self, kernel: Kernel, column: str | None):
        self.kernel = kernel
        self.column = column

    def loops_of(self, insn) -> frozenset:
        hw = self.kernel.hardware_inames()
        return frozenset(insn.within_inames) - hw - ({self.column} if self.column else set())

    def regions(self) -> list[tuple[str | None, list[str]]]:
        """``(loop, ids)`` for each outermost loop (the column aside) in
        program order: the contiguous statements whose outermost loop it is
        (None: statements in no loop)."""
        k = self.kernel
        rank = {n: i for i, n in enumerate(k.all_inames())}
        # the outermost of nested loops runs the most statements (ties: the
        # first in the kernel's order)
        size: dict[str, int] = {}
        for insn in k.instructions:
            for x in self.loops_of(insn):
                size[x] = size.get(x, 0) + 1
        out: list[tuple[str | None, list[str]]] = []
        for insn in k.instructions:
            loops = self.loops_of(insn)
            top = min(loops, key=lambda n: (-size[n], rank.get(n, 10**9))) if loops else None
            if out and out[-1][0] == top:
                out[-1][1].append(insn.id)
            else:
                out.append((top, [insn.id]))
        return out


def _closure_after(kernel: Kernel, between: list[str], sources: set[str]) -> set[str]:
    """The statements of *between* (program order) that depend, directly or
    through others, on one of *sources*."""
    reached = set(sources)
    out = set()
    for i in between:
        if kernel.id_to_insn[i].depends_on & reached:
            reached.add(i)
            out.add(i)
    return out


def _needed(kernel: Kernel, between: list[str], users: list[str]) -> set[str]:
    """The statements of *between* that one of *users* depends on, directly
    or through other statements of *between*; a dependency counts only where
    the two statements' accesses may still touch the same element on the
    current loop ranges (a loop split since the dependencies were made runs
    fewer instances)."""
    analysis = AccessAnalysis(kernel)
    accs: dict = {}

    def of(i):
        if i not in accs:
            accs[i] = instruction_accesses(kernel, kernel.id_to_insn[i])
        return accs[i]

    def conflict(u, b) -> bool:
        return any((x.is_write or y.is_write) and x.name == y.name
                   and analysis.may_conflict(x, y) for x in of(u) for y in of(b))

    inside = set(between)
    want: dict[str, set[str]] = {}
    for u in users:
        for d in kernel.id_to_insn[u].depends_on & inside:
            want.setdefault(d, set()).add(u)
    out = set()
    for i in reversed(between):
        if i in want and any(conflict(u, i) for u in want[i]):
            out.add(i)
            for d in kernel.id_to_insn[i].depends_on & inside:
                want.setdefault(d, set()).add(i)
    return out


def interchange_reason(kernel: Kernel, outer: str, inner: str) -> str:
    """Empty if loop *inner* (whose statements are all inside *outer*) may
    run around *outer*: no two conflicting instances lie in opposite
    directions along the two loops
    (:func:`~f2loopy.analysis.dependences.reorders`), temporaries private
    to each iteration of *inner* aside; else why not."""
    from f2loopy.analysis.dependences import dependence_instances, reorders
    from f2loopy.analysis.private import Privatisation
    from f2loopy.transform.loop_fusion import _Accesses
    insns = [i for i in kernel.instructions if {outer, inner} <= set(i.within_inames)]
    analysis = AccessAnalysis(kernel)
    temps = set(kernel.temporaries)
    for x in insns:
        dom = analysis.instance_domain(x.within_inames)
        if set(dom.get_var_names(dim_type.param)) & temps:
            return f"the bounds of the loops around line {_line(x)} depend on computed values"
    accesses = [a for i in insns for a in instruction_accesses(kernel, i,
                                                               with_domain_params=False)]
    priv = Privatisation(kernel)
    index = _Accesses(kernel)
    private: dict[str, bool] = {}
    for a, b, pairs in dependence_instances(analysis, accesses):
        if a.name not in private:
            private[a.name] = a.name in temps and not priv.why_not(
                inner, a.name, index.every(a.name))
        if private[a.name]:
            continue
        if pairs is None:
            return (f"'{a.name}' is accessed with data-dependent subscripts at line "
                    f"{_line(kernel.id_to_insn[a.insn_id])}")
        if reorders(pairs, outer, inner):
            return (f"lines {_line(kernel.id_to_insn[a.insn_id])} and "
                    f"{_line(kernel.id_to_insn[b.insn_id])} touch the same elements of "
                    f"'{a.name}' in an order the interchange reverses")
    return ""


def _line(insn) -> str:
    return str(insn.span.line) if insn.span is not None else "?"


def _reorder(kernel: Kernel, first: list[str], moved: list[str], between: list[str],
             after: set[str], *, ahead: list[str] | None = None) -> Kernel:
    """Statement order: up to the target, the statements of *between* not in
    *after*, *ahead*, the target's (*first*), the merged loop's (*moved*),
    *after*."""
    ahead = ahead or []
    ids = [i.id for i in kernel.instructions]
    pos = {i: k for k, i in enumerate(ids)}
    start = pos[first[0]]
    block = set(first) | set(moved) | set(between) | set(ahead)
    end = max(pos[i] for i in block)
    head = ids[:start]
    middle = [i for i in between if i not in after] + ahead + first + moved + \
        [i for i in between if i in after]
    if sorted(middle) != sorted(ids[start:end + 1]):
        raise _Refused("the two loops' statements are interleaved with others")
    order = head + middle + ids[end + 1:]
    return kernel.copy(instructions=tuple(kernel.id_to_insn[i] for i in order))


class _Refused(Exception):
    pass


def _nest_guarded(kernel: Kernel, x: str, t: str, ids: list[str]) -> Kernel:
    """Put loop *x* (statements *ids*) inside loop *t* as a loop of at most
    one iteration, ``x = t`` within *x*'s own range: its statements run in
    iteration *k* of *t* when *k* is in their range, all under the one
    test its bounds make (the guard), and read the index of *t*."""
    from f2loopy.transform.iname import _finish, _rewrite_selected
    where = iname_to_domain_index(kernel)
    dom = kernel.domains[where[x]]
    names = list(dom.get_var_names(dim_type.param)) + [t]
    eq = isl.Set.read_from_str(dom.get_ctx(), f"[{', '.join(names)}] -> {{ [{x}] : {x} = {t} }}")
    dom, eq = align_params(dom, eq)
    domains = list(kernel.domains)
    domains[where[x]] = dom & eq
    kernel = kernel.copy(domains=tuple(domains))
    insns, rules = _rewrite_selected(kernel, set(ids), {x: p.Variable(t)})
    chosen = set(ids)
    insns = tuple(i.copy(within_inames=i.within_inames | {t}) if i.id in chosen else i
                  for i in insns)
    return _finish(kernel.copy(instructions=insns, substitutions=rules))


def _peel(kernel: Kernel, x: str, keep: isl.Set, rest: isl.Set, ids: list[str], *,
          before: bool = False) -> tuple[Kernel, str, list[str]]:
    """Split loop *x* (statements *ids*) into *x* over *keep* and a new loop
    over *rest* (both sets over *x*) right after it (*before*: right before
    it), with copies of its statements; the copies that run second depend
    on the statements of the first loop they may touch the same elements
    as.  Returns the kernel, the new loop's name and the copies' ids (in the
    order of *ids*)."""
    from f2loopy.transform.iname import _finish, _rewrite_selected
    where = iname_to_domain_index(kernel)
    xp = unique_name(kernel, f"{x}_peel")
    domains = list(kernel.domains)
    domains[where[x]] = keep
    domains.append(rename_in_set(rest, x, xp))
    taken: list[str] = [xp]
    copy_of: dict[str, str] = {}
    for i in ids:
        copy_of[i] = unique_name(kernel, f"{i}_peel", extra_taken=taken)
        taken.append(copy_of[i])
    originals = frozenset(ids)
    # the loops inside x (only its statements run in them) get copies of
    # their own for the copied statements: each loop is entered once
    inner = sorted({n for i in ids for n in kernel.id_to_insn[i].within_inames}
                   - {x} - kernel.hardware_inames())
    inner = [n for n in inner if all(i.id in originals for i in kernel.instructions
                                     if n in i.within_inames)]
    if set(inner) & set(kernel.loop_exits):
        raise _Refused(f"a loop inside loop '{x}' is left by 'exit', so its levels cannot "
                       "be split")
    to: dict[str, str] = {}
    for n in inner:
        to[n] = unique_name(kernel, n, extra_taken=taken)
        taken.append(to[n])
    for d in kernel.domains:
        names = set(d.get_var_names(dim_type.set))
        if names & set(to):
            if not names <= set(to):
                raise _Refused(f"the bounds of a loop inside loop '{x}' are bound to loops "
                               "outside it, so its levels cannot be split")
            for n in names | (set(d.get_var_names(dim_type.param)) & set(to)):
                d = rename_in_set(d, n, to[n])
            domains.append(d)
    out = []
    at = [k for k, insn in enumerate(kernel.instructions) if insn.id in originals]
    where_copies = at[0] if before else at[-1]
    for k, insn in enumerate(kernel.instructions):
        if k == where_copies and before:
            for j in ids:
                o = kernel.id_to_insn[j]
                out.append(o.copy(id=copy_of[j], depends_on=frozenset(
                    copy_of.get(d, d) for d in o.depends_on)))
        out.append(insn)
        if k == where_copies and not before:
            for j in ids:
                o = kernel.id_to_insn[j]
                out.append(o.copy(id=copy_of[j], depends_on=o.depends_on | originals))
    kernel = kernel.copy(domains=tuple(domains), instructions=tuple(out))
    copies_set = set(copy_of.values())
    mapping = {x: p.Variable(xp)} | {n: p.Variable(m) for n, m in to.items()}
    insns, rules = _rewrite_selected(kernel, copies_set, mapping, remove=[x], add=[xp])
    insns = tuple(i.copy(within_inames=frozenset(to.get(n, n) for n in i.within_inames))
                  if i.id in copies_set and set(to) & i.within_inames else i for i in insns)
    tags = dict(kernel.iname_tags)
    for n, m in [(x, xp), *to.items()]:
        if n in tags:
            tags[m] = tags[n]
    from f2loopy.ir.frozen import FrozenMap
    kernel = _finish(kernel.copy(instructions=insns, substitutions=rules,
                                 iname_tags=FrozenMap(tags)))
    # each copy depends on what its original did (the copies of the loop's
    # statements in place of them) and on the originals it may conflict with
    analysis = AccessAnalysis(kernel)
    accs = {i: instruction_accesses(kernel, kernel.id_to_insn[i])
            for i in list(ids) + list(copy_of.values())}

    def conflict(a, b) -> bool:
        return any((u.is_write or v.is_write) and u.name == v.name
                   and analysis.may_conflict(u, v) for u in accs[a] for v in accs[b])
    fixed = []
    copies = set(copy_of.values())
    for insn in kernel.instructions:
        if before and insn.id in originals:
            # the originals now run second: they wait for the copies they
            # may touch the same elements as
            extra = {copy_of[j] for j in ids if conflict(insn.id, copy_of[j])}
            insn = insn.copy(depends_on=insn.depends_on | extra)
        elif insn.id in copies and not before:
            o = kernel.id_to_insn[next(j for j in ids if copy_of[j] == insn.id)]
            deps = {copy_of.get(d, d) for d in o.depends_on} | \
                {j for j in ids if conflict(insn.id, j)}
            insn = insn.copy(depends_on=frozenset(deps))
        elif insn.id not in originals and insn.depends_on & originals:
            # a later statement that depended on the loop depends on the
            # copies it may touch the same elements as
            mine = instruction_accesses(kernel, insn)
            accs[insn.id] = mine
            extra = {c for d, c in copy_of.items() if d in insn.depends_on
                     and conflict(insn.id, c)}
            if extra:
                insn = insn.copy(depends_on=insn.depends_on | extra)
        fixed.append(insn)
    return kernel.copy(instructions=tuple(fixed)), xp, [copy_of[j] for j in ids]


def _fuse_one(kernel: Kernel, column: str | None, x: str, t: str,
              allow_peel: bool = True, ahead: tuple[str, ...] = ()
              ) -> tuple[Kernel, str] | None:
    """Merge the loop of region *x* into target loop *t*: the kernel and
    how, None if their ranges are unrelated; raises :class:`_Refused`.
    *ahead*: statements between the two (the levels of *x* below the range
    of *t*, peeled) that run right before the merged loop, checked
    already against the target's statements."""
    from f2loopy.transform.iname import merge_checked_loop
    from f2loopy.transform.loop_fusion import check_loop_fusion
    f = _Fuser(kernel, column)
    regs = f.regions()
    at = [k for k, (top, _) in enumerate(regs) if top == x]
    if not at:
        return None         # not an outermost loop (any more)
    ix = at[0]
    its = [k for k, (top, _) in enumerate(regs) if top == t]
    if len(its) != 1 or its[0] > ix or any(top == x for top, _ in regs[ix + 1:]):
        return None         # not two blocks of statements, one after the other
    it = its[0]
    ids_x, ids_t = regs[ix][1], regs[it][1]
    for y in (x, t):
        if y in kernel.loop_exits:
            raise _Refused(f"loop '{y}' is left by 'exit', so its iterations cannot join "
                           "another loop's")
    between = [i for _, ids in regs[it + 1:ix] for i in ids if i not in ahead]
    dt = _domain(kernel, t)
    if dt is None:
        return None
    inner, how = x, ""
    dx = _domain(kernel, x)
    if dx is None:
        return None
    dxr, dt2 = _as(dx, x, t, dt)
    if not dxr.is_equal(dt2) and not dxr.is_subset(dt2) and not dt2.is_subset(dxr):
        rest = dxr - dt2
        if not (dxr & dt2).is_empty() and rest.lex_ge_set(dt2).is_empty() \
                and not (dxr.params() - rest.params()).is_empty():
            if not allow_peel:
                raise _Refused(f"its range may start before the range of '{t}' (the "
                               "kernel's assumptions do not say that its lower bound is in it)")
            return _peel_below(kernel, column, x, t, ids_x, dt2, rest)
        # a species loop around a level loop of the target's range
        common = frozenset.intersection(*(f.loops_of(kernel.id_to_insn[i]) for i in ids_x))
        found: list[str] = []
        for y in sorted(common - {x}):
            dy = _domain(kernel, y)
            if dy is not None and _as(dy, y, t, dt)[0].is_equal(_as(dy, y, t, dt)[1]):
                found.append(y)
        if len(found) != 1:
            return None
        inner = found[0]
        if inner in kernel.loop_exits:
            raise _Refused(f"loop '{inner}' is left by 'exit', so it cannot run around "
                           f"loop '{x}'")
        if any(inner in i.within_inames and i.id not in set(ids_x)
               for i in kernel.instructions):
            return None
        why = interchange_reason(kernel, x, inner)
        if why:
            raise _Refused(f"loop '{inner}' cannot run around loop '{x}': {why}")
        how, dxr = "interchanged", dt2
    where = iname_to_domain_index(kernel)
    own = kernel.domains[where[inner]]
    if own.dim(dim_type.set) != 1:
        return None
    if any(d.find_dim_by_name(dim_type.param, inner) >= 0 for d in kernel.domains):
        raise _Refused(f"the bounds of loops inside it depend on its index '{inner}'")
    if not dxr.is_equal(dt2) and not dxr.is_subset(dt2):
        # the target's range extended at the top: split, then merge the part
        rest = dxr - dt2
        if not allow_peel or not rest.lex_le_set(dt2).is_empty():
            return None
        keep_x, own_a = _as(dt2, t, inner, own)
        keep = own_a & keep_x
        rest_x = _as(rest, t, inner, own)[0]
        rest_x = rest_x.coalesce()
        if rest_x.n_basic_set() != 1:
            return None
        split = _peel(kernel, inner, keep.coalesce(), rest_x, ids_x)[0]
        out = _fuse_one(split, column, x, t, allow_peel=False)
        if out is None:
            return None
        return out[0], "peeled"
    dep = _closure_after(kernel, between, set(ids_t))
    need = _needed(kernel, between, ids_x)
    both = sorted(dep & need, key=[i.id for i in kernel.instructions].index)
    if both:
        raise _Refused(f"line {_line(kernel.id_to_insn[both[0]])}, between the two loops, "
                       f"uses what loop '{t}' computes and loop '{inner}' uses what it computes")
    if ahead:
        # the peeled levels run before the statements between that follow
        # the target (they ran after them): none may touch their elements
        clash = _first_conflict(kernel, list(ahead), [i for i in between if i in dep])
        if clash is not None:
            raise _Refused(f"its range may start before the range of '{t}', and line "
                           f"{_line(kernel.id_to_insn[clash[1]])}, between the two loops, "
                           f"uses what loop '{t}' computes and touches what its levels "
                           f"below that range touch (line {_line(kernel.id_to_insn[clash[0]])})")
        # ... and before the target's (checked): no order to keep with those
        gone = set(ids_t) | dep
        kernel = kernel.copy(instructions=tuple(
            i.copy(depends_on=i.depends_on - gone) if i.id in ahead else i
            for i in kernel.instructions))
    try:
        check_loop_fusion(kernel, inner, t, caller="fuse_level_loops")
    except TransformError as exc:
        raise _Refused(str(getattr(exc, "message", None) or exc).splitlines()[0]) from exc
    if dxr.is_equal(dt2):
        kernel = merge_checked_loop(kernel, inner, t)
        how = how or "same range"
    else:
        kernel = _nest_guarded(kernel, inner, t, ids_x)
        how = "guarded"
    # what the merged statements depended on among those now after them
    # touches other elements (checked above): no longer an order to keep
    moved = set(ids_x)
    # each iteration runs the target's statements, then the merged loop's
    # (the program order of the two blocks, as the check assumed): the
    # first statements of the merged loop wait for the target's last
    first = set(ids_t)
    sinks = first - {d for i in ids_t for d in kernel.id_to_insn[i].depends_on}
    sources = {i for i in ids_x if not kernel.id_to_insn[i].depends_on & moved}
    insns = tuple(i.copy(depends_on=(i.depends_on - dep) | (sinks if i.id in sources else set()))
                  if i.id in moved else i for i in kernel.instructions)
    kernel = kernel.copy(instructions=insns)
    return _reorder(kernel, ids_t, ids_x, between, dep, ahead=list(ahead)), how


def _first_conflict(kernel: Kernel, these: list[str], those: list[str]
                    ) -> tuple[str, str] | None:
    """The first pair (one of *these*, one of *those*) whose accesses may
    touch the same element, one of them writing; None if none."""
    if not these or not those:
        return None
    analysis = AccessAnalysis(kernel)
    accs = {i: instruction_accesses(kernel, kernel.id_to_insn[i]) for i in these + those}
    for a in these:
        for b in those:
            if any((u.is_write or v.is_write) and u.name == v.name
                   and analysis.may_conflict(u, v) for u in accs[a] for v in accs[b]):
                return a, b
    return None


def _peel_below(kernel: Kernel, column: str | None, x: str, t: str, ids_x: list[str],
                dt: isl.Set, rest: isl.Set) -> tuple[Kernel, str]:
    """Merge loop *x*, whose range may start before the range *dt* of the
    target *t* (the levels *rest*, both sets over *t*), into *t*: its
    levels in *dt* merge as a guarded loop, the others (a new loop of
    copies of its statements) run right before the merged loop, which the
    dependences must allow: as if *t* ran over those levels too, doing
    nothing there (:func:`~f2loopy.transform.loop_fusion.check_loop_fusion`
    of the new loop into *t*); the statements between the two loops that
    stay after the merged loop must not touch what they touch."""
    from f2loopy.transform.loop_fusion import check_loop_fusion
    own = kernel.domains[iname_to_domain_index(kernel)[x]]
    if own.dim(dim_type.set) != 1:
        raise _Refused(f"its range may start before the range of '{t}' and its bounds "
                       "depend on other loops")
    keep_x, own_a = _as(dt, t, x, own)
    rest_x = _as(rest, t, x, own)[0].coalesce()
    if rest_x.n_basic_set() != 1:
        raise _Refused(f"its range may start before the range of '{t}', and its levels "
                       "below that range are not one range")
    split, low, copies = _peel(kernel, x, (own_a & keep_x).coalesce(), rest_x & own_a,
                               ids_x, before=True)
    try:
        check_loop_fusion(split, low, t, caller="fuse_level_loops")
    except TransformError as exc:
        why = str(getattr(exc, "message", None) or exc).splitlines()[0]
        raise _Refused(f"its range may start before the range of '{t}', and its levels "
                       f"below that range cannot run before it: {why}") from exc
    out = _fuse_one(split, column, x, t, allow_peel=False, ahead=tuple(copies))
    if out is None:
        raise _Refused(f"its range may start before the range of '{t}', and its levels "
                       "in that range do not merge into it")
    return out[0], "levels below peeled"


def level_fusion(kernel: Kernel, *, column: str | None = None) -> tuple[Kernel, LevelFusion]:
    """Fuse the level loops directly inside loop *column* (or the kernel's
    outermost loops, *column* None) as the module docstring says; returns
    the kernel and what was merged and refused (each refusal with the
    loop's source lines and the reason)."""
    if column is not None and column not in kernel.all_inames():
        raise TransformError(f"fuse_level_loops: no loop '{column}' in kernel '{kernel.name}'")
    merged: list[tuple[str, str, str]] = []
    refused: list[tuple[str, str, str]] = []
    tops = [top for top, _ in _Fuser(kernel, column).regions() if top is not None]
    target: str | None = None
    for x in dict.fromkeys(tops):
        if target is None:
            target = x if _target_domain(kernel, x) is not None else None
            continue
        if x not in kernel.all_inames():
            continue
        ids = dict(_Fuser(kernel, column).regions()).get(x, [])
        try:
            out = _fuse_one(kernel, column, x, target)
        except _Refused as exc:
            refused.append((x, target, f"loop '{x}' ({_lines(kernel, ids)}) stays apart "
                                       f"from loop '{target}': {exc}"))
            target = x if _target_domain(kernel, x) is not None else target
            continue
        if out is None:
            # unrelated ranges: the loop stays between (a target that took
            # nothing yet gives way to it)
            if not any(m[1] == target for m in merged) \
                    and _target_domain(kernel, x) is not None:
                target = x
            continue
        kernel, how = out
        merged.append((x, target, how))
    return kernel, LevelFusion(tuple(merged), tuple(refused))


def fuse_level_loops(kernel: Kernel, *, column: str | None = None) -> Kernel:
    """:func:`level_fusion`'s kernel: the level loops directly inside loop
    *column* (None: the outermost loops) merged where the dependences allow
    (see the module docstring); loops it cannot merge stay as they were."""
    return level_fusion(kernel, column=column)[0]
