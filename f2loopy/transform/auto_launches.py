"""The automatic recipe's use of several launches (:mod:`f2loopy.transform.launches`).

Loop nests that exchange data across the grid (one reads what another wrote
in other work-groups) cannot share a launch, and a time loop that carries a
dependence around parallel sweeps cannot be a loop of the kernel either.
:func:`split_for_auto` gives such a kernel global barriers between the nests
that touch the same data (one of them writing) and makes its time loops host
loops, so that :func:`~f2loopy.transform.auto.plan_auto` can then map every
nest to a grid of its own.
"""

from __future__ import annotations

from f2loopy.ir.domains import iname_to_domain_index
from f2loopy.ir.isl_tools import dim_type, param_names
from f2loopy.ir.kernel import BarrierInstruction, Kernel
from f2loopy.ir.tags import SequentialTag
from f2loopy.transform.auto import loop_dependences
from f2loopy.transform.launches import add_global_barriers_between_nests
from f2loopy.transform.util import for_each_kernel


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


@for_each_kernel
def split_for_auto(kernel: Kernel) -> Kernel:
    """*kernel* with global barriers between the loop nests that touch the
    same data (one writing) and its :func:`time_loops` on the host; the
    kernel itself when neither applies."""
    out = add_global_barriers_between_nests(kernel, host_loops=time_loops(kernel)[:1])
    return out if len(out.instructions) != len(kernel.instructions) else kernel


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
