"""Checks and normalisations run before code generation."""

from __future__ import annotations

from f2loopy.analysis.types import FortranTypeError, kernel_type_inferrer
from f2loopy.diagnostics import CodegenError
from f2loopy.ir.kernel import Assignment, Kernel


def preprocess(kernel: Kernel) -> Kernel:
    """Validate *kernel* for code generation and return it ready to emit:
    reductions become plain instructions."""
    from f2loopy.codegen.reductions import realize_reductions
    check_instructions(kernel)
    kernel = realize_reductions(kernel)
    check_instructions(kernel)
    return kernel


def check_instructions(kernel: Kernel) -> None:
    inames = set(kernel.all_inames())
    types = kernel_type_inferrer(kernel)
    ids = set()
    for insn in kernel.instructions:
        if insn.id in ids:
            raise CodegenError(f"two instructions have the id '{insn.id}'", insn.span)
        ids.add(insn.id)
        unknown = set(insn.within_inames) - inames
        if unknown:
            raise CodegenError(f"instruction '{insn.id}' runs in loop(s) that no domain "
                               f"defines: {', '.join(sorted(unknown))}", insn.span)
        from f2loopy.ir.kernel import BarrierInstruction
        if isinstance(insn, BarrierInstruction) and insn.scope == "global":
            raise CodegenError(f"global barrier '{insn.id}': synchronising all work-groups "
                               "needs the kernel split in two, which f2loopy does not do; "
                               "use a local barrier or separate kernels", insn.span)
        if isinstance(insn, Assignment):
            for expr in (insn.assignee, insn.expression, *insn.predicates):
                try:
                    types(expr)
                except (FortranTypeError, KeyError) as exc:
                    raise CodegenError(f"instruction '{insn.id}': {exc}", insn.span) from None
    for insn in kernel.instructions:
        missing = set(insn.depends_on) - ids
        if missing:
            raise CodegenError(f"instruction '{insn.id}' depends on unknown instruction(s) "
                               f"{', '.join(sorted(missing))}", insn.span)
