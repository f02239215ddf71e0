"""A bound on isl work that the parent does on a script's kernels.

Scheduling and code generation of a script's kernels run in a limited child
(:mod:`~f2loopy.directives.child_codegen`); what little isl work the parent still
does on them afterwards (``f2loopy check`` draws inputs that satisfy the
kernels' assumptions) runs under isl's own operation limit
(:mod:`f2loopy.ir.work_limit`), so that a set a script made hard cannot keep
the parent busy: past the limit every isl operation fails, and
:func:`isl_operation_limit` raises.
"""

from __future__ import annotations

from f2loopy.ir.work_limit import IslQuotaExceeded
from f2loopy.ir.work_limit import isl_operation_limit as _limit

__all__ = ["MAX_OPERATIONS", "IslQuotaExceeded", "isl_operation_limit"]

#: isl operations (each a step of an isl function): drawing inputs for the
#: paper's kernel takes between 100,000 and 500,000; a set made hard on
#: purpose runs about 50,000 a second, so this stops it within a minute
MAX_OPERATIONS = 2_000_000


def isl_operation_limit(max_operations: int = MAX_OPERATIONS, ctx=None):
    """:func:`f2loopy.ir.work_limit.isl_operation_limit` with this module's
    default budget."""
    return _limit(max_operations, ctx)
