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

import re
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


#: a printf conversion of a formatted output's value (``%8d``, ``%14.6G``)
_SPEC_RE = re.compile(r"%-?(?:[1-9]\d{0,2})?(?:\.\d{1,3})?(?:l?d|[EGfe]|c)")
#: Fortran's ``Ew.d`` (``%12.4e``): the width and the digits
_FORTRAN_E = re.compile(r"%([1-9]\d{0,2})\.(\d{1,3})e")


@dataclass(frozen=True)
class PrintSite:
    """One output statement of a kernel: list-directed, or (*specs* given)
    formatted with a constant format of simple edit descriptors.

    :attr items: ``("text", str)``, ``("integer", kind)``, ``("real",
        kind)`` or ``("logical", kind)``, in order.
    :attr span: the statement.
    :attr specs: for formatted output, one printf conversion per value item
        (its text items are printed as they are, the record ends with a
        newline); empty for list-directed output.
    """

    items: Annotated[tuple[PrintItem, ...], Bounded(0, 1000)]
    span: SourceSpan | None = None
    specs: Annotated[tuple[Annotated[str, Text(16)], ...], Bounded(0, 1000)] = ()
    formatted: bool = False

    @property
    def value_count(self) -> int:
        return sum(kind != "text" for kind, _ in self.items)


def printf_format(site: PrintSite) -> tuple[str, tuple]:
    """The printf format of *site* (a Python str, not yet a C literal: a
    ``%`` of the text is doubled) and, per value, how it is converted:
    ``"long"``, ``"int"``, ``"double"``, ``"logical"``, or ``"fortran_eK.D"``
    (Fortran's ``Ew.d`` of a real of kind K with D digits: four printf values, a
    mantissa and the exponent as two characters and two digits)."""
    if site.formatted:
        return _formatted(site)
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


def _formatted(site: PrintSite) -> tuple[str, tuple]:
    """:func:`printf_format` of a formatted output site: text as it is,
    each value with its conversion (checked: a site may come from a cache)."""
    specs = iter(site.specs)
    out, conversions = [], []
    for kind, what in site.items:
        if kind == "text":
            out.append(str(what).replace("%", "%%"))
            continue
        spec = next(specs, None)
        if spec is None or not _SPEC_RE.fullmatch(spec):
            raise ValueError(f"invalid print conversion {spec!r}")
        e_form = _FORTRAN_E.fullmatch(spec)
        if e_form is not None and kind == "real":
            # a mantissa in [0.1, 1) and a two-digit exponent, as gfortran writes Ew.d
            width, digits = int(e_form.group(1)), int(e_form.group(2))
            # (an exponent beyond 99 takes the place of the E: 0.100000-299)
            out.append(f"%{width - 4 if width > 4 else ''}.{digits}f%c%c%02d")
            conversions.append(f"fortran_e{int(what)}.{digits}")
            continue
        if spec.endswith("e"):
            raise ValueError(f"invalid print conversion {spec!r}")
        out.append(spec)
        conversions.append("logical" if kind == "logical" else
                           "long" if spec.endswith("ld") else
                           "int" if spec.endswith("d") else "double")
    if next(specs, None) is not None:
        raise ValueError("more print conversions than values")
    return "".join(out) + "\n", tuple(conversions)

