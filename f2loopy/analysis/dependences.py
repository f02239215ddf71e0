"""Dependences between instruction instances: the one place they are computed.

* :func:`dependence_candidates` and :func:`dependence_instances`: the pairs
  of accesses to one variable of which one writes, and the pairs of their
  instances that touch the same element (exact with isl where the
  subscripts are affine); :func:`carried_by` and :func:`reorders` ask them
  what a loop may do: whether a loop carries a dependence
  (:func:`f2loopy.analysis.loops.loop_dependences`), whether two loops may be
  interchanged (:func:`f2loopy.schedule.linearize.order_keeps_dependences`);
* :func:`add_program_order_dependencies`: the dependencies the frontend
  gives instructions, from program order (below).

Instruction dependencies from program order.

Fortran is sequential.  An instruction depends on earlier instructions (in
program order) that access the same memory with at least one of the two
accesses a write, and only then: accesses to disjoint elements (decided exactly
with isl where the subscripts are affine) do not order instructions, which
keeps transformations free.

The dependences are those of every conflicting pair, less the ones that
others already imply: a write that covers an earlier access (a write of the
whole variable, or of the same subscripts in the same loops) depends on it,
and conflicts with every later access that the earlier one conflicts with,
so later instructions depend on the write alone; and an earlier access whose
instruction the current one already follows (through the dependences found
so far, tested newest first) needs no test.  The order the dependences
impose (their transitive closure) is the same; the work and the number of
dependences stay near linear in the length of a subroutine (a 20,000-line
subroutine that updates one scalar has 20,000 dependences, not 200 million).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence

import islpy as isl

from f2loopy.analysis.accesses import Access, AccessAnalysis, instruction_accesses
from f2loopy.diagnostics import FortranError
from f2loopy.ir.isl_tools import align_params, lazy_affs
from f2loopy.ir.kernel import Kernel

#: conflict tests one kernel may need (pairs of accesses to one variable
#: that no earlier write covers); past it, a located error: the parent's
#: work on a downloaded file stays bounded
MAX_PAIR_TESTS = 1_000_000


def dependence_candidates(accesses: Sequence[Access]) -> Iterator[tuple[Access, Access]]:
    """Every pair ``(a, b)`` of *accesses* (``b`` not before ``a`` in the
    sequence; an access with itself too) to the same variable of which one
    is a write: the pairs a dependence may join, in sequence order."""
    for k, a in enumerate(accesses):
        for b in accesses[k:]:
            if a.name == b.name and (a.is_write or b.is_write):
                yield a, b


def dependence_instances(analysis: AccessAnalysis, accesses: Sequence[Access], *,
                         skip_non_affine: bool = False
                         ) -> Iterator[tuple[Access, Access, isl.Set | None]]:
    """``(a, b, pairs)`` for each of the :func:`dependence_candidates` of
    *accesses*: *pairs* are the instances of the two instructions that touch
    the same element, over the inames renamed ``i__a`` and ``i__b``
    (:meth:`~f2loopy.analysis.accesses.AccessAnalysis.conflict_set`: None
    where a subscript is not affine, unless *skip_non_affine*)."""
    for a, b in dependence_candidates(accesses):
        yield a, b, analysis.conflict_set(a, b, skip_non_affine=skip_non_affine)


def carried_by(pairs: isl.Set, iname: str) -> isl.Set:
    """The instance *pairs* that lie in different iterations of loop *iname*
    (empty: the loop carries none of these dependences)."""
    affs = lazy_affs(pairs.get_space())
    a, b = affs[iname + "__a"], affs[iname + "__b"]
    return pairs & (a.lt_set(b) | a.gt_set(b))


def reorders(pairs: isl.Set, outer: str, inner: str) -> bool:
    """Whether two instances of *pairs* lie in opposite directions along
    loops *outer* and *inner* (one has the larger *outer*, the other the
    larger *inner*), so that one of the two nestings of the loops runs them
    in the wrong order."""
    affs = lazy_affs(pairs.get_space())
    o_a, o_b = affs[outer + "__a"], affs[outer + "__b"]
    i_a, i_b = affs[inner + "__a"], affs[inner + "__b"]
    crossing = (o_a.lt_set(o_b) & i_a.gt_set(i_b)) | (o_a.gt_set(o_b) & i_a.lt_set(i_b))
    pairs, crossing = align_params(pairs, crossing)
    return not isinstance(pairs, isl.Set) or not (pairs & crossing).is_empty()


def add_program_order_dependencies(kernel: Kernel) -> Kernel:
    """Return *kernel* with each instruction depending on the earlier
    instructions it conflicts with (less those implied by others, see the
    module's docstring)."""
    analysis = AccessAnalysis(kernel)
    # name -> live accesses in program order: (writes, reads); an access is
    # dropped once a later write covers it
    live: dict = defaultdict(lambda: ([], []))
    deps: dict = defaultdict(set)
    # the instructions each one follows through its dependences (transitively),
    # as bits by position: an access of one of those needs no test
    position = {insn.id: k for k, insn in enumerate(kernel.instructions)}
    before: dict = {}
    tests = 0
    for insn in kernel.instructions:
        accs = instruction_accesses(kernel, insn)
        mine = deps[insn.id]
        follows = 0
        for d in insn.depends_on:
            if d in position:
                follows |= before.get(d, 0) | (1 << position[d])
        for b in accs:
            writes, reads = live[b.name]
            for cands in ((writes, reads) if b.is_write else (writes,)):
                for a in reversed(cands):       # the latest first: they imply most
                    if (follows >> position[a.insn_id]) & 1:
                        continue
                    tests += 1
                    if analysis.may_conflict(a, b):
                        mine.add(a.insn_id)
                        follows |= before[a.insn_id] | (1 << position[a.insn_id])
            if tests > MAX_PAIR_TESTS:
                raise FortranError(
                    f"too many possibly overlapping accesses to '{b.name}' to order the "
                    f"statements of '{kernel.name}' (more than {MAX_PAIR_TESTS} tests); "
                    "split the subroutine", insn.span)
        before[insn.id] = follows
        for b in accs:
            if b.is_write:
                _cover(live[b.name], b, insn, analysis)
        for b in accs:
            live[b.name][0 if b.is_write else 1].append(b)

    insns = tuple(insn.copy(depends_on=insn.depends_on | frozenset(deps[insn.id]))
                  if deps[insn.id] else insn for insn in kernel.instructions)
    return kernel.copy(instructions=insns)


def _cover(lists: tuple, w: Access, insn, analysis: AccessAnalysis) -> None:
    """Drop the live accesses that write *w* of *insn* covers: every one if
    *w* is a use of the whole variable, else those with the same subscripts
    in the same loops (the same elements).  Each depends on *w*'s
    instruction, and conflicts with a later access only if *w* does."""
    for acc_list in lists:
        if w.index is None:
            acc_list.clear()
            continue
        within = insn.within_inames
        acc_list[:] = [a for a in acc_list
                       if not (a.index == w.index and
                               analysis.id_to_insn[a.insn_id].within_inames == within)]


def lex_before(pairs: isl.Set, loops: Sequence[tuple[str, str]], *, on_tie: bool = False,
               tie_only: bool = False) -> isl.Set:
    """The instance *pairs* whose first instance's iteration of *loops*
    (``(first's dim, second's dim)``, outermost first) comes
    lexicographically before the second's; with *on_tie* also those equal
    on all of them; with *tie_only* only those."""
    affs = lazy_affs(pairs.get_space())
    prefix = isl.Set.universe(pairs.get_space())
    out = isl.Set.empty(pairs.get_space())
    for da, db in loops:
        if not tie_only:
            out = out | (prefix & affs[da].lt_set(affs[db]))
        prefix = prefix & affs[da].eq_set(affs[db])
    if tie_only:
        out = prefix
    elif on_tie:
        out = out | prefix
    pairs, out = align_params(pairs, out)
    return pairs & out


def order_changes(pairs: isl.Set, before: Sequence[tuple[str, str]],
                  after: Sequence[tuple[str, str]], *, first_on_tie: bool) -> bool:
    """Whether some of the instance *pairs* run in one order when the two
    instructions share the loops *before* and in the other when they share
    *after* (each ``(first's dim, second's dim)``, outermost first; pairs
    equal on all of them run in kernel order: the first instance first if
    *first_on_tie*)."""
    was = lex_before(pairs, before, on_tie=first_on_tie)
    now = lex_before(pairs, after, on_tie=first_on_tie)
    was, now = align_params(was, now)
    return not (was - now).is_empty() or not (now - was).is_empty()


def split_by(pairs: isl.Set, da: str, db: str, *, equal: bool) -> isl.Set:
    """The instance *pairs* with dims *da* and *db* equal (or, not *equal*,
    different)."""
    affs = lazy_affs(pairs.get_space())
    cond = affs[da].eq_set(affs[db]) if equal else (affs[da].lt_set(affs[db])
                                                     | affs[da].gt_set(affs[db]))
    pairs, cond = align_params(pairs, cond)
    return pairs & cond
