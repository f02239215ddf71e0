"""Loops that end early: ``do while``, ``exit``, a ``goto`` out of a loop,
and loops whose step is only known at run time.

Such a loop is an ordinary loop domain over an iname, and its instructions
are guarded by logical flags (set by ``exit``, ``cycle``, ``return`` or
``goto``, or by a ``do while`` condition turning false).  What the domain
cannot say is *when the loop stops*: a ``do while`` loop's domain has no
upper bound that means anything (its trip counter runs up to the largest
``int``), so the generated loop must also stop as soon as one of its flags is
set.  :class:`LoopExit` records that, per iname, in
:attr:`~f2loopy.ir.kernel.Kernel.loop_exits`.

A loop whose iterations depend on what earlier iterations did (a ``do
while`` condition, an ``exit``) or whose order is only known at run time (a
step of unknown sign) runs sequentially in one work-item: :attr:`LoopExit.
sequential` says why, and a parallel tag on such an iname is refused where
the Fortran ``do`` statement is (:func:`check_loop_exits`).
"""

from __future__ import annotations

from dataclasses import dataclass

from f2loopy.diagnostics import SourceSpan

#: the last value a ``do while`` loop's trip counter may take (the largest
#: 32-bit ``int`` less one, so that the counter itself cannot overflow)
WHILE_TRIP_LIMIT = 2147483646


@dataclass(frozen=True)
class LoopExit:
    """How a loop ends besides running out of its domain.

    :attr flags: logical temporaries: the loop stops before an iteration
        when one of them is true (every instruction of its body is guarded
        by them too, so stopping only saves the empty iterations, except in
        a ``do while`` loop, which would otherwise run ``WHILE_TRIP_LIMIT``
        of them).
    :attr sequential: why the loop must stay a sequential loop of one
        work-item (``"it is a 'do while' loop"``), or None.
    :attr span: the ``do`` statement.
    """

    flags: tuple = ()
    sequential: str | None = None
    span: SourceSpan | None = None

    def with_flag(self, flag: str) -> "LoopExit":
        return self if flag in self.flags else LoopExit(self.flags + (flag,), self.sequential,
                                                        self.span)

    def renamed(self, mapping: dict) -> "LoopExit":
        return LoopExit(tuple(mapping.get(f, f) for f in self.flags), self.sequential,
                        self.span)


def check_loop_exits(kernel) -> None:
    """Refuse a kernel in which a loop that must run sequentially was given
    a parallel tag, or was split or renamed away by a transformation (its
    early end would be lost)."""
    from f2loopy.diagnostics import CodegenError
    inames = set(kernel.all_inames())
    for iname, ex in kernel.loop_exits.items():
        if ex.sequential is None:
            continue
        if iname not in inames:
            raise CodegenError(
                f"loop '{iname}' must run sequentially ({ex.sequential}), but a "
                "transformation removed it (split, joined or renamed it): such a loop "
                "can only be tagged 'for'", ex.span)
        tag = kernel.iname_tag(iname)
        if tag.hardware or getattr(tag, "innermost", False):
            raise CodegenError(
                f"loop '{iname}' cannot be tagged '{tag}': it must run sequentially in one "
                f"work-item ({ex.sequential})", ex.span)
