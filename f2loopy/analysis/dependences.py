"""Instruction dependencies from program order.

Fortran is sequential.  An instruction depends on every earlier instruction
(in program order) that accesses the same memory with at least one of the two
accesses a write, and only then: accesses to disjoint elements (decided exactly
with isl where the subscripts are affine) do not order instructions, which
keeps transformations free.
"""

from __future__ import annotations

from collections import defaultdict

from f2loopy.analysis.accesses import AccessAnalysis, instruction_accesses
from f2loopy.ir.kernel import Kernel


def add_program_order_dependencies(kernel: Kernel) -> Kernel:
    """Return *kernel* with each instruction depending on the earlier
    instructions it conflicts with."""
    analysis = AccessAnalysis(kernel)
    by_var = defaultdict(list)      # name -> [(position, Access)]
    for pos, insn in enumerate(kernel.instructions):
        for acc in instruction_accesses(kernel, insn):
            by_var[acc.name].append((pos, acc))

    deps = defaultdict(set)
    for name, accs in by_var.items():
        for k, (pos_b, b) in enumerate(accs):
            for pos_a, a in accs[:k]:
                if pos_a >= pos_b or not (a.is_write or b.is_write):
                    continue
                if a.insn_id in deps[b.insn_id]:
                    continue
                if analysis.may_conflict(a, b):
                    deps[b.insn_id].add(a.insn_id)

    insns = tuple(insn.copy(depends_on=insn.depends_on | frozenset(deps[insn.id]))
                  if deps[insn.id] else insn for insn in kernel.instructions)
    return kernel.copy(instructions=insns)
