"""Diagnostic output of a kernel: list-directed ``write(*,*)``/``print *``
statements translated to OpenCL ``printf``.

A :class:`PrintSite` is one such statement; the kernel lists them
(:attr:`~f2loopy.ir.kernel.Kernel.prints`, numbered from 1) and an
instruction ``f2l_print = f2l_print(site, values...)`` prints site *site*
with the values of its value items, in order.  :func:`printf_format` spells
the record as gfortran writes list-directed output: a blank before text that
starts the record or follows a value, integers right-justified in fields of
5, 7, 12 and 21 characters (kinds 1, 2, 4, 8), logicals as `` T``/`` F``;
reals in fields of gfortran's widths, whose digits may differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, Union

from f2loopy.diagnostics import SourceSpan
from f2loopy.ir.fieldtypes import Bounded, Text

#: the printf spelling of a value item: integer kinds, then reals, logicals
_INT_WIDTHS = {1: 5, 2: 7, 4: 12, 8: 21}
_REALS = {4: "%15.8E", 8: "%25.16E"}


#: one item of a record: constant text, or a value of a type and kind
PrintItem = Union[tuple[Literal["text"], Annotated[str, Text(10_000)]],
                  tuple[Literal["integer", "logical"], Literal[1, 2, 4, 8]],
                  tuple[Literal["real"], Literal[4, 8]]]


@dataclass(frozen=True)
class PrintSite:
    """One list-directed output statement of a kernel.

    :attr items: ``("text", str)``, ``("integer", kind)``, ``("real",
        kind)`` or ``("logical", kind)``, in order.
    :attr span: the statement.
    """

    items: Annotated[tuple[PrintItem, ...], Bounded(0, 1000)]
    span: SourceSpan | None = None

    @property
    def value_count(self) -> int:
        return sum(kind != "text" for kind, _ in self.items)


def printf_format(site: PrintSite) -> tuple[str, tuple]:
    """The printf format of *site* (a Python str, not yet a C literal: a
    ``%`` of the text is doubled) and, per value, how it is converted:
    ``"long"``, ``"int"``, ``"double"`` or ``"logical"``."""
    out, conversions = [], []
    previous = None
    for kind, what in site.items:
        if kind == "text":
            if previous != "text":
                out.append(" ")
            out.append(str(what).replace("%", "%%"))
        elif kind == "integer":
            long = int(what) == 8
            out.append(f"%{_INT_WIDTHS[int(what)]}{'ld' if long else 'd'}")
            conversions.append("long" if long else "int")
        elif kind == "real":
            out.append(_REALS[int(what)])
            conversions.append("double")
        else:
            out.append(" %c")
            conversions.append("logical")
        previous = kind
    return "".join(out) + "\n", tuple(conversions)
