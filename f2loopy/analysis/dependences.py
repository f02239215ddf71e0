"""Instruction dependencies from program order.

Fortran is sequential.  An instruction depends on earlier instructions (in
program order) that access the same memory with at least one of the two
accesses a write, and only then: accesses to disjoint elements (decided exactly
with isl where the subscripts are affine) do not order instructions, which
keeps transformations free.

The dependences are those of every conflicting pair, less the ones that
others already imply: a write that covers an earlier access (a write of the
whole variable, or of the same subscripts in the same loops) depends on it,
and conflicts with every later access that the earlier one conflicts with,
so later instructions depend on the write alone.  The order the dependences
impose (their transitive closure) is the same; the work and the number of
dependences stay near linear in the length of a subroutine (a 20,000-line
subroutine that updates one scalar has 20,000 dependences, not 200 million).
"""

from __future__ import annotations

from collections import defaultdict

from f2loopy.analysis.accesses import Access, AccessAnalysis, instruction_accesses
from f2loopy.diagnostics import FortranError
from f2loopy.ir.kernel import Kernel

#: conflict tests one kernel may need (pairs of accesses to one variable
#: that no earlier write covers); past it, a located error: the parent's
#: work on a downloaded file stays bounded
MAX_PAIR_TESTS = 1_000_000


def add_program_order_dependencies(kernel: Kernel) -> Kernel:
    """Return *kernel* with each instruction depending on the earlier
    instructions it conflicts with (less those implied by others, see the
    module's docstring)."""
    analysis = AccessAnalysis(kernel)
    # name -> live accesses in program order: (writes, reads); an access is
    # dropped once a later write covers it
    live: dict = defaultdict(lambda: ([], []))
    deps: dict = defaultdict(set)
    tests = 0
    for insn in kernel.instructions:
        accs = instruction_accesses(kernel, insn)
        mine = deps[insn.id]
        for b in accs:
            writes, reads = live[b.name]
            for cands in ((writes, reads) if b.is_write else (writes,)):
                for a in cands:
                    if a.insn_id in mine:
                        continue
                    tests += 1
                    if analysis.may_conflict(a, b):
                        mine.add(a.insn_id)
            if tests > MAX_PAIR_TESTS:
                raise FortranError(
                    f"too many possibly overlapping accesses to '{b.name}' to order the "
                    f"statements of '{kernel.name}' (more than {MAX_PAIR_TESTS} tests); "
                    "split the subroutine", insn.span)
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
