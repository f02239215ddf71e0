"""Diagnostic ``write``/``print`` statements in kernels, translated to OpenCL
``printf`` (:mod:`f2loopy.ir.prints`).

``write(*,*) items``, ``write(6,*) items`` (also ``output_unit`` and
``error_unit`` of ``iso_fortran_env``: a kernel has no standard error, so
text for unit 0 goes to standard output) and ``print *, items`` whose items
are constant text and scalars (integers, reals, logicals) become a print
site of the kernel: each work-item that reaches the statement prints the
record as gfortran's list-directed output spells it (reals may differ in
their digits).  A constant format of simple edit descriptors (``'(a,i8)'``,
``'(2x,a,g14.6)'``: ``a``, ``i``, ``f``, ``e``, ``es``, ``g``, ``l``, ``x``,
``/``, quoted text, repeat counts, groups: :mod:`f2loopy.frontend.formats`;
also in a ``format`` statement the procedure's body labels) is
printed with the matching printf
conversions (integers and text as gfortran writes them, reals in the same
widths: ``f``, ``es`` and ``g`` with C's digits and layout, ``e`` with
gfortran's ``0.dddE+xx`` layout; ``en`` is refused; a value too wide for its
field is written whole where gfortran writes asterisks).  Output stops at the first
data edit descriptor without an item, ``x`` writes blanks only before
something else of the record, and items left at the end of the format start a
new record with the format again (reversion), as gfortran does; another
descriptor is a located error that names it.  A character dummy of an inlined
procedure bound to a constant prints as that constant (a serial stub's
``print *, string`` in ``call halt_stop('unknown tag')``).  Other output
(files, other formats, ``iostat=``, arrays, character variables whose text is
not known when translating) is a located error.  Output just before a ``stop`` stays part of
the error site (:mod:`f2loopy.frontend.errors`), except output of a real there, which is
a print site (to the screen, also for ``error_unit``) before the stop.
"""

from __future__ import annotations

import itertools

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F
from fparser.two.utils import walk

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.characters import is_character, literal_text
from f2loopy.frontend.formats import parse_format
from f2loopy.ir.folding import NotConstant, evaluate_constant
from f2loopy.ir.prints import PrintItem, PrintSite
from f2loopy.ir.types import INT32

_WHAT = ("a kernel prints only list-directed output to the screen (write(*,*), write(6,*) "
         "or print *), or output with a constant format of simple edit descriptors "
         "(a, i, f, e, es, g, l, x, /), of scalars and constant text, with OpenCL printf")


#: the units printed with printf: ``*``, 6 (``output_unit``) and 0 (``error_unit``: a
#: kernel has no standard error, so its text goes to standard output)
SCREEN_UNITS = (6, 0)


def lower_print(lowering, node, keyword: str, *, units=SCREEN_UNITS) -> None:
    """Lower the ``write``/``print`` statement *node* into a print site;
    *units*: the unit numbers printed (``*`` is)."""
    fmt_node = None
    if keyword == "write":
        control, items = node.items
        specs = list(control.items) if control is not None else []
        for k, spec in enumerate(specs):
            key, value = spec.items
            key = str(key).lower() if key is not None else ("unit", "fmt")[min(k, 1)]
            text = str(value).strip()
            number = int(text) if text.isdigit() else _unit_number(lowering, value)
            if key == "unit" and (text == "*" or number in units):
                continue                 # the screen (output_unit of iso_fortran_env)
            if key == "fmt" and text == "*":
                continue
            if key == "fmt" and isinstance(value, (F.Char_Literal_Constant, F.Label)):
                fmt_node = value
                continue
            _refuse(lowering, node, keyword)
        if len(specs) != 2:
            _refuse(lowering, node, keyword)
    else:
        fmt, items = node.items
        if isinstance(fmt, (F.Char_Literal_Constant, F.Label)):
            fmt_node = fmt
        elif fmt is None or str(fmt).strip() != "*":
            _refuse(lowering, node, keyword)
    item_nodes = expand_items(lowering, list(items.items) if items is not None else [])
    if fmt_node is not None:
        fmt = format_text(lowering, fmt_node)
        if fmt is None:
            _refuse(lowering, node, keyword, str(fmt_node), what="format label")
            return
        _formatted_print(lowering, node, keyword, fmt, item_nodes)
        return
    parts: list[PrintItem] = []
    values: list = []
    for item in item_nodes:
        known = known_text(lowering, item)
        if known is not None:
            parts.append(("text", known))
            continue
        value, dtype = _scalar_item(lowering, node, keyword, item)
        if dtype.kind in "iu":
            parts.append(("integer", dtype.itemsize))
        elif dtype.kind == "f":
            parts.append(("real", dtype.itemsize))
        elif dtype.kind == "b":
            parts.append(("logical", 4))
        else:
            _refuse(lowering, node, keyword, _spelled(item))
        values.append(value)
    _add_site(lowering, PrintSite(tuple(parts), lowering.statement_span()), values)


def format_statements(nodes) -> dict[str, str]:
    """Label -> format of the ``format`` statements among *nodes* (a
    procedure's executable part: ``100 format(a, i3)`` gives ``"100": "(a,
    i3)"``, as fparser writes it)."""
    out = {}
    for stmt in walk(nodes, F.Format_Stmt):
        label = stmt.item.label if stmt.item is not None else None
        if label is not None:
            out[str(int(label))] = str(stmt.items[1])
    return out


def format_text(lowering, fmt_node) -> str | None:
    """The format that *fmt_node* gives: a character constant's text, or the
    ``format`` statement of a label of the procedure (None: no such one)."""
    if isinstance(fmt_node, F.Label):
        return lowering.formats.get(str(int(str(fmt_node))))
    return literal_text(fmt_node)


def unit_number(lowering, node) -> int | None:
    """The unit number a named integer constant *node* gives (``output_unit``,
    ``error_unit`` of ``iso_fortran_env``), else None."""
    if not isinstance(node, F.Name):
        return None
    sym = lowering.symtab.get(str(node))
    if sym is None or not sym.is_parameter or sym.is_array or \
            not isinstance(sym.value, (int, np.integer)) or isinstance(sym.value, np.bool_):
        return None
    return int(sym.value)


_unit_number = unit_number


def _add_site(lowering, site: PrintSite, values: list) -> None:
    st = lowering.st
    st.prints.append(site)
    if st.print_temporary is None:
        st.print_temporary = lowering.new_temporary("f2l_print", INT32)
    lowering.add_assignment(p.Variable(st.print_temporary), INT32,
                            p.Call(p.Variable("f2l_print"), (np.int32(len(st.prints)), *values)),
                            None, base_id="f2l_print")


def _refuse(lowering, node, keyword, item=None, *, what=None):
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
    named = "" if item is None else f"{what} '{item}' in " if what else f"'{item}' in "
    raise lowering.error(f"{named}'{statement}' cannot be translated: {_WHAT} (write the values "
                         "to an argument and print them after the call)", keyword,
                         UnsupportedFeatureError)


# {{{ formatted output

def known_text(lowering, item) -> str | None:
    """The text of output item *item* where it is known when translating: a
    character constant or parameter, or a string whose characters are all known (a
    character dummy of an inlined procedure bound to a constant, as in
    ``call halt_stop('unknown tag')`` whose body prints its argument); else
    None."""
    if isinstance(item, tuple):                # (an element of an array item)
        return None
    if isinstance(item, F.Char_Literal_Constant):
        return literal_text(item)
    if isinstance(item, F.Name):
        sym = lowering.symtab.get(str(item))
        if sym is not None and sym.text is not None and \
                lowering.bindings.get(str(item).lower()) is None:
            return sym.text                  # a character parameter
    if not lowering.is_string(item):
        return None
    chars = lowering.known_string(item)
    if not all(isinstance(c, (int, np.integer)) for c in chars):
        return None
    return "".join(chr(int(c)) for c in chars)


#: the most elements a whole array printed as one output item may have
_MAX_ELEMENTS = 64


def expand_items(lowering, item_nodes: list) -> list:
    """*item_nodes* with each array item replaced by its elements in array
    element order, as ``(value, dtype, item as written)``: ``shape(a)`` (its extents),
    and an array of constant shape of at most :data:`_MAX_ELEMENTS` numbers
    (not of characters); other items as they are."""
    out: list = []
    for item in item_nodes:
        if isinstance(item, F.Intrinsic_Function_Reference) and \
                str(item.items[0]).lower() == "shape":
            args = list(item.items[1].items) if item.items[1] is not None else []
            out += [(ext, np.dtype(np.int32), str(item))
                    for ext in lowering.shape_extents(args)]
            continue
        sym = lowering.symtab.get(str(item)) if isinstance(item, F.Name) else None
        if sym is not None and lowering.is_array_symbol(sym) and not is_character(sym.dtype):
            view = lowering.view(sym, str(item))
            try:
                lows = [int(evaluate_constant(b)) for b in view.lbounds]
                highs = [int(evaluate_constant(b)) for b in view.ubounds]
            except (NotConstant, TypeError):
                out.append(item)               # (refused as an array)
                continue
            ranges = [range(lo, hi + 1) for lo, hi in zip(lows, highs, strict=True)]
            if 0 < np.prod([len(r) for r in ranges]) <= _MAX_ELEMENTS:
                # Fortran order: the first subscript varies fastest
                for index in itertools.product(*reversed(ranges)):
                    out.append((view.element([np.int32(i) for i in reversed(index)]),
                                np.dtype(view.dtype), str(item)))
                continue
        out.append(item)
    return out


def _spelled(item) -> str:
    """Output item *item* as written (an element of an array item: the array)."""
    return item[2] if isinstance(item, tuple) else str(item)


def _scalar_item(lowering, node, keyword, item):
    """The value and dtype of output item *item*: a scalar expression (an
    array or a character variable is refused at the statement), or an
    element of :func:`expand_items`."""
    if isinstance(item, tuple):
        return item[0], item[1]
    if isinstance(item, F.Part_Ref) and any(
            isinstance(sub, F.Subscript_Triplet) for sub in walk(item.items[1:])):
        _refuse(lowering, node, keyword, str(item))      # an array section
    if isinstance(item, F.Name):
        sym = lowering.symtab.get(str(item))
        if sym is not None and (lowering.is_array_symbol(sym) or is_character(sym.dtype)):
            _refuse(lowering, node, keyword, _spelled(item))
    value = lowering.expr(item)
    return value, np.dtype(lowering.checked_dtype(value))

def _formatted_print(lowering, node, keyword: str, fmt: str, item_nodes: list) -> None:
    """Lower a ``write``/``print`` with constant format *fmt*, as gfortran
    writes it: output stops at the first data edit descriptor without an item
    (the text before it is written), blanks of ``x`` are written only where
    something follows them in the record, and items left at the end of the
    format start a new record with the format from its start (reversion)."""
    parsed = parse_format(fmt)
    if isinstance(parsed, str):
        _refuse(lowering, node, keyword, parsed, what="edit descriptor")
        return
    descriptors, revert = parsed
    items = list(item_nodes)
    if items and all(kind in ("text", "x", "newline") for kind, _ in descriptors[revert:]):
        _refuse(lowering, node, keyword)     # (gfortran stops: no data edit descriptor)
    parts: list[PrintItem] = []
    specs: list[str] = []
    values: list = []
    blanks = ""                        # of 'x', written when something follows
    while True:
        for kind, what in descriptors:
            if kind == "x":
                blanks += " " * what
                continue
            if kind == "newline":
                parts.append(("text", "\n" * what))
                blanks = ""
                continue
            if kind == "text":
                parts.append(("text", blanks + what))
                blanks = ""
                continue
            if not items:
                break                  # output stops at the first edit without an item
            item = items.pop(0)
            if blanks:
                parts.append(("text", blanks))
                blanks = ""
            if kind == "a":
                text = known_text(lowering, item)
                if text is None:
                    _refuse(lowering, node, keyword, _spelled(item))
                    return
                if what is not None:   # aW: the first W characters, or blanks first
                    text = text[:what] if len(text) >= what else " " * (what - len(text)) + text
                parts.append(("text", text))
                continue
            value, dtype = _scalar_item(lowering, node, keyword, item)
            if kind == "i" and dtype.kind in "iu":
                parts.append(("integer", dtype.itemsize))
                specs.append(what + ("ld" if dtype.itemsize == 8 else "d"))
            elif kind == "real" and dtype.kind == "f":
                parts.append(("real", dtype.itemsize))
                specs.append(what)
            elif kind == "logical" and dtype.kind == "b":
                parts.append(("logical", 4))
                specs.append(what)
            else:
                _refuse(lowering, node, keyword, _spelled(item))
            values.append(value)
        else:
            if items:                  # reversion: a new record, the format again
                parts.append(("text", "\n"))
                blanks = ""
                descriptors = parsed[0][revert:]
                continue
        break
    _add_site(lowering, PrintSite(tuple(parts), lowering.statement_span(), tuple(specs),
                                  formatted=True), values)

# }}}

