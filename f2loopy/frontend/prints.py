"""Diagnostic ``write``/``print`` statements in kernels, translated to OpenCL
``printf`` (:mod:`f2loopy.ir.prints`).

``write(*,*) items``, ``write(6,*) items`` and ``print *, items`` whose items
are constant text and scalars (integers, reals, logicals) become a print
site of the kernel: each work-item that reaches the statement prints the
record as gfortran's list-directed output spells it (reals may differ in
their digits).  Other output (files, formats, ``iostat=``, arrays, character
variables) is a located error.  Output just before a ``stop`` stays part of
the error site (:mod:`f2loopy.frontend.errors`).
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.characters import is_character, literal_text
from f2loopy.ir.prints import PrintItem, PrintSite
from f2loopy.ir.types import INT32

_WHAT = ("a kernel prints only list-directed output to the screen (write(*,*), write(6,*) "
         "or print *) of scalars and constant text, with OpenCL printf")


def lower_print(lowering, node, keyword: str) -> None:
    """Lower the ``write``/``print`` statement *node* into a print site."""
    if keyword == "write":
        control, items = node.items
        specs = list(control.items) if control is not None else []
        for k, spec in enumerate(specs):
            key, value = spec.items
            key = str(key).lower() if key is not None else ("unit", "fmt")[min(k, 1)]
            text = str(value).strip()
            if key == "unit" and text in ("*", "6"):
                continue
            if key == "fmt" and text == "*":
                continue
            _refuse(lowering, node, keyword)
        if len(specs) != 2:
            _refuse(lowering, node, keyword)
    else:
        fmt, items = node.items
        if fmt is None or str(fmt).strip() != "*":
            _refuse(lowering, node, keyword)
    parts: list[PrintItem] = []
    values: list = []
    for item in (items.items if items is not None else ()):
        if isinstance(item, F.Char_Literal_Constant):
            parts.append(("text", literal_text(item)))
            continue
        if isinstance(item, F.Name):
            sym = lowering.symtab.get(str(item))
            if sym is not None and (lowering.is_array_symbol(sym) or is_character(sym.dtype)):
                _refuse(lowering, node, keyword, str(item))
        value = lowering.expr(item)
        dtype = np.dtype(lowering.checked_dtype(value))
        if dtype.kind in "iu":
            parts.append(("integer", dtype.itemsize))
        elif dtype.kind == "f":
            parts.append(("real", dtype.itemsize))
        elif dtype.kind == "b":
            parts.append(("logical", 4))
        else:
            _refuse(lowering, node, keyword, str(item))
        values.append(value)
    st = lowering.st
    st.prints.append(PrintSite(tuple(parts), lowering.statement_span()))
    if st.print_temporary is None:
        st.print_temporary = lowering.new_temporary("f2l_print", INT32)
    lowering.add_assignment(p.Variable(st.print_temporary), INT32,
                            p.Call(p.Variable("f2l_print"), (np.int32(len(st.prints)), *values)),
                            None, base_id="f2l_print")


def _refuse(lowering, node, keyword, item=None):
    """A located error naming statement *node* as written (its first line)."""
    first = lowering.lines[0]
    lines = lowering.src.lines
    statement = str(node)
    if 0 < first <= len(lines):
        text = lines[first - 1].split("!")[0]
        at = text.lower().find(keyword)
        if at >= 0:
            statement = text[at:].strip().rstrip("&").strip()
    statement = " ".join(statement.split())
    if len(statement) > 60:
        statement = statement[:57] + "..."
    what = f"'{item}' in " if item is not None else ""
    raise lowering.error(f"{what}'{statement}' cannot be translated: {_WHAT} (write the values "
                         "to an argument and print them after the call)", keyword,
                         UnsupportedFeatureError)
