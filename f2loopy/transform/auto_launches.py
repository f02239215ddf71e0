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

from f2loopy.analysis.loops import time_loops
from f2loopy.ir.kernel import Kernel
from f2loopy.transform.launches import add_global_barriers_between_nests
from f2loopy.transform.util import for_each_kernel


@for_each_kernel
def split_for_auto(kernel: Kernel) -> Kernel:
    """*kernel* with global barriers between the loop nests that touch the
    same data (one writing) and its :func:`time_loops` on the host; the
    kernel itself when neither applies."""
    out = add_global_barriers_between_nests(kernel, host_loops=time_loops(kernel)[:1])
    return out if len(out.instructions) != len(kernel.instructions) else kernel
