"""A bound on isl work that the parent does on a script's kernels.

Scheduling and code generation of a script's kernels run in a limited child
(:mod:`~f2loopy.directives.lowering`); what little isl work the parent still
does on them afterwards (``f2loopy check`` draws inputs that satisfy the
kernels' assumptions) runs under isl's own operation limit, so that a set a
script made hard cannot keep the parent busy: past the limit every isl
operation fails, and :func:`isl_operation_limit` raises.
"""

from __future__ import annotations

from contextlib import contextmanager

import islpy as isl

#: isl operations (each a step of an isl function): drawing inputs for the
#: paper's kernel takes between 100,000 and 500,000; a set made hard on
#: purpose runs about 50,000 a second, so this stops it within a minute
MAX_OPERATIONS = 2_000_000


class IslQuotaExceeded(Exception):
    """isl stopped: the operation limit was reached."""


def _over_quota(ctx) -> bool:
    try:
        isl.Set.universe(isl.Space.create_from_names(ctx, set=["i"])).is_empty()
        return False
    except isl.Error:
        return True


@contextmanager
def isl_operation_limit(max_operations: int = MAX_OPERATIONS, ctx=None):
    """Run the block with at most *max_operations* isl operations in *ctx*
    (default: islpy's default context, where kernels live); raises
    :class:`IslQuotaExceeded` at the end of a block that reached the limit
    (isl errors inside it may show up first)."""
    ctx = ctx or isl.DEFAULT_CONTEXT
    before = ctx.get_max_operations()
    ctx.set_max_operations(max_operations)
    ctx.reset_operations()
    failed = False
    try:
        yield
    except isl.Error:
        failed = _over_quota(ctx)
        if not failed:
            raise
    finally:
        if not failed:
            failed = _over_quota(ctx)
        ctx.set_max_operations(before)
        ctx.reset_operations()
    if failed:
        raise IslQuotaExceeded(f"isl stopped after {max_operations} operations")
