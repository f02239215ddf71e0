"""Bounds on the work the translating process does itself.

A Fortran file is downloaded code.  Its script runs in a limited child, but
reading the file, deriving dependences and generating code for a file
without a script run in the process that translates; a small file can make
that work explode (isl sets whose size grows exponentially with the depth of
a loop nest of ``/`` and ``mod`` bounds).  isl counts its own operations
(each a step of an isl function): :func:`isl_operation_limit` runs a block
with at most N of them, after which every isl call fails and the block
raises :class:`IslQuotaExceeded`; :func:`parent_isl_limit` turns that into
a located :class:`~f2loopy.diagnostics.CodegenError`.

:data:`PARENT_MAX_OPERATIONS` is the budget of one subroutine's reading
and dependences and of one kernel's code generation.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

import islpy as isl

from f2loopy.diagnostics import CodegenError

#: isl operations the parent may spend on one subroutine (reading and
#: dependences) and again on one kernel's code generation.  The paper's
#: kernels (samples/numa_volume) need under 400,000 per kernel; an attack
#: made to explode runs about 50,000 a second on a slow machine, so the
#: limit stops it within a minute or two.  ``F2LOOPY_ISL_LIMIT`` (a positive
#: integer) sets another.
PARENT_MAX_OPERATIONS = 5_000_000


def parent_max_operations() -> int:
    """The budget: ``F2LOOPY_ISL_LIMIT`` when it is a positive decimal
    integer (a full match), else :data:`PARENT_MAX_OPERATIONS`."""
    text = os.environ.get("F2LOOPY_ISL_LIMIT", "")
    if text.isascii() and text.isdigit() and 0 < len(text) <= 12 and int(text) > 0:
        return int(text)
    return PARENT_MAX_OPERATIONS


class IslQuotaExceeded(Exception):
    """isl stopped: the operation limit was reached."""


def _over_quota(ctx) -> bool:
    try:
        isl.Set.universe(isl.Space.create_from_names(ctx, set=["i"])).is_empty()
        return False
    except isl.Error:
        return True


def next_step_budget(ctx=None) -> None:
    """Inside :func:`isl_operation_limit`, start the budget again for the next
    step of work made of bounded steps (the input planner's two, see
    :func:`f2loopy.verify.module_extents.plan_extents_last`): raises
    :class:`IslQuotaExceeded` if the step so far reached the limit (its
    results may rest on failed operations); nothing outside a limit."""
    ctx = ctx or isl.DEFAULT_CONTEXT
    if not ctx.get_max_operations():
        return
    if _over_quota(ctx):
        raise IslQuotaExceeded(f"isl stopped after {ctx.get_max_operations()} operations")
    ctx.reset_operations()


@contextmanager
def isl_operation_limit(max_operations: int, ctx=None):
    """Run the block with at most *max_operations* isl operations in *ctx*
    (default: islpy's default context, where kernels live); raises
    :class:`IslQuotaExceeded` when the block reached the limit (also in place
    of the error the block raised then: every isl call past the limit
    fails, and the block may have made another error of that).  Inside a block that already
    runs under a limit, the outer limit stays in force (the inner block
    neither resets nor extends it)."""
    ctx = ctx or isl.DEFAULT_CONTEXT
    before = ctx.get_max_operations()
    if before:
        yield
        return
    ctx.set_max_operations(max_operations)
    ctx.reset_operations()
    try:
        try:
            yield
        except Exception as exc:
            # an isl error, or an error the block made of one: the quota decides
            if _over_quota(ctx):
                raise IslQuotaExceeded(f"isl stopped after {max_operations} "
                                       "operations") from exc
            raise
        if _over_quota(ctx):
            raise IslQuotaExceeded(f"isl stopped after {max_operations} operations")
    finally:
        ctx.set_max_operations(before)
        ctx.reset_operations()


@contextmanager
def parent_isl_limit(what: str, span, error: type = CodegenError):
    """Run the block under :func:`parent_max_operations` isl operations; past
    them, raise *error* (a :class:`~f2loopy.diagnostics.F2LoopyError` class)
    at *span*, saying that *what* (``"code generation of kernel 'k'"``) was
    too hard."""
    limit = parent_max_operations()
    try:
        with isl_operation_limit(limit):
            yield
    except IslQuotaExceeded:
        raise error(f"{what} needs more than {limit} isl operations (many statements "
                    "whose subscripts may overlap, or loop bounds and subscripts whose integer "
                    "sets grow too large, such as deep nests of '/' and 'mod' bounds); split or "
                    "simplify them, or raise the limit with F2LOOPY_ISL_LIMIT", span) from None


#: integer divisions (isl's existentially quantified variables) that one
#: loop's domain or the context of the loops around it may hold.  Loop
#: bounds with ``/`` or ``mod`` add some; nested ones multiply (each level
#: of ``do i = (j+1)/2, (j+n)/3`` triples them), and isl's work on such
#: sets grows faster still.  The samples need none; tiled loops a few.
MAX_DIVS = 64
#: disjoint pieces a loop's context may have
MAX_PIECES = 1024


def set_too_complex(s) -> str | None:
    """Why *s* (an isl set) is beyond :data:`MAX_DIVS` or :data:`MAX_PIECES`,
    or None.  Cheap: it reads the set's representation, computes nothing."""
    pieces = s.n_basic_set()
    if pieces > MAX_PIECES:
        return f"{pieces} disjoint pieces (at most {MAX_PIECES})"
    divs = max((b.dim(isl.dim_type.div) for b in s.get_basic_sets()), default=0)
    if divs > MAX_DIVS:
        return f"{divs} integer divisions (at most {MAX_DIVS})"
    return None
