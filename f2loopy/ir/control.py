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
from typing import Annotated, Literal, Union

from f2loopy.diagnostics import SourceSpan
from f2loopy.ir.fieldtypes import Bounded, Name, Text

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

    flags: Annotated[tuple[Name, ...], Bounded(0, 1000)] = ()
    sequential: Annotated[str, Text(1000)] | None = None
    span: SourceSpan | None = None

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


#: how many integer values an error site records (xerbla's argument, the
#: integers a 'write' before a 'stop' prints)
ERROR_VALUES = 8

#: the number of a recorded integer
_Slot = Annotated[int, Bounded(0, ERROR_VALUES - 1)]
#: what a ``write`` before a stop prints: text, or the k-th recorded integer
WriteItem = Union[tuple[Literal["text"], Annotated[str, Text(10_000)]],
                  tuple[Literal["value"], _Slot]]
#: ``("write", unit, format, items)``, ``("stop" or "error stop", code)``,
#: ``("xerbla", name, k)`` (see :attr:`ErrorSite.actions`)
ErrorAction = Union[
    tuple[Literal["write"], Annotated[str, Text(20)], Annotated[str, Text(10_000)],
          Annotated[tuple[WriteItem, ...], Bounded(0, 1000)]],
    tuple[Literal["stop", "error stop"], Union[int, Annotated[str, Text(10_000)], None]],
    tuple[Literal["xerbla"], Annotated[str, Text(100)], _Slot]]


@dataclass(frozen=True)
class ErrorSite:
    """A place where the Fortran stops the program: ``stop``, ``error stop``
    or ``call xerbla(...)``, with the ``write``/``print`` statements just
    before it.  The kernel records the first one reached (its number, from
    1, and up to :data:`ERROR_VALUES` integers) in its error buffer; the
    host glue raises an exception (Python) or does what the Fortran does
    (Fortran glue) from it.

    :attr actions: in order, ``("write", unit, format, items)`` with items
        ``("text", str)`` or ``("value", k)`` (the k-th recorded integer);
        then one of ``("stop", code)`` or ``("error stop", code)`` with code
        None, an int or a str; ``("xerbla", name, k)``.
    :attr span: the stopping statement.
    """

    actions: Annotated[tuple[ErrorAction, ...], Bounded(1, 1000)]
    span: SourceSpan | None = None

    def message(self, values=()) -> str:
        """What the program prints, as one line (for exceptions)."""
        parts = []
        for act in self.actions:
            if act[0] == "write":
                parts.append(" ".join(str(values[i]) if kind == "value" else str(i)
                                      for kind, i in act[3]))
            elif act[0] in ("stop", "error stop"):
                word = "STOP" if act[0] == "stop" else "ERROR STOP"
                parts.append(word if act[1] is None else f"{word} {act[1]}")
            elif act[0] == "xerbla":
                parts.append(f"On entry to {act[1].strip()} parameter number "
                             f"{values[act[2]]} had an illegal value")
        return "; ".join(p for p in parts if p)

    def exit_code(self) -> int:
        """The program's exit status (Fortran: a stop code, 1 for error stop
        and xerbla's stop... gfortran's conventions)."""
        last = self.actions[-1]
        if last[0] == "stop":
            return last[1] if isinstance(last[1], int) else 0
        if last[0] == "error stop":
            return last[1] if isinstance(last[1], int) else 1
        return 0
