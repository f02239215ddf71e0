"""Error paths in the lowering: ``stop``, ``error stop``, ``call xerbla``
(the BLAS and LAPACK argument check) and the ``write``/``print`` statements
of constant text and integers just before them.

A kernel cannot stop a program or print, so each such place becomes an
:class:`~f2loopy.ir.control.ErrorSite` of the kernel and one instruction
``f2l_stop = f2l_raise(site, values...)``: the generated code records the
site and the integers (the first site reached wins, across all work-items)
in an error buffer that the host glue reads after the launch.  The work-item
then leaves the kernel (the subroutine's ``return`` flag is set, so nothing
after it runs), as the Fortran program would have stopped.

``write`` and ``print`` directly before such a statement in the same block
(only other ``write``/``print`` statements in between) are part of the
site; anywhere else list-directed output of scalars is printed with
``printf`` (:mod:`f2loopy.frontend.prints`).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F
from fparser.two.Fortran2008 import Error_Stop_Stmt

from f2loopy.ir.types import INT32, is_integer
from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.characters import literal_text
from f2loopy.ir.control import ERROR_VALUES, ErrorSite

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost as _Host
else:
    _Host = object


#: a file that may stop somewhere (the subroutine then needs a 'return' flag)
STOPS = re.compile(r"\b(stop|xerbla)\b", re.IGNORECASE)


@functools.lru_cache(maxsize=8)
def file_may_stop(text: str) -> bool:
    """Whether *text* (a whole file) mentions ``stop`` or ``xerbla`` anywhere.

    Asked once per subroutine: searching the whole file each time made the
    lowering of a long file quadratic (3 s of a 10,000-line file's 12 s)."""
    return STOPS.search(text) is not None

_IO = (F.Write_Stmt, F.Print_Stmt)


def is_blas_xerbla(lowering, name: str) -> bool:
    """Whether ``call NAME`` is the BLAS/LAPACK error handler: ``xerbla``
    not defined in the file being translated.  One found on the search path
    (Reference-LAPACK's ``xerbla.f``) prints its message and stops, which
    is what the error site does; its formatted ``write`` cannot be inlined."""
    return name.lower() == "xerbla" and lowering.defined_elsewhere(name)


def _is_stop(node, lowering) -> bool:
    if isinstance(node, (F.Stop_Stmt, Error_Stop_Stmt)):
        return True
    return isinstance(node, F.Call_Stmt) and is_blas_xerbla(lowering, str(node.items[0]))


class ErrorPathsMixin(_Host):
    """Stops and the output before them (mixed into UnitLowering)."""

    # {{{ output before a stop

    def _before_stop(self, node) -> bool:
        """Whether output statement *node* comes just before a stop."""
        rest = self.block_rest
        following = rest[1] if rest is not None and rest[0] is node else []
        stop = next((n for n in following if not isinstance(n, (*_IO, F.Continue_Stmt))),
                    None)
        return stop is not None and _is_stop(stop, self)

    def _write(self, node, keyword, unit, fmt, items):
        parts: list[tuple[str, str | None]] = []
        values: list = []
        from f2loopy.frontend.prints import expand_items, known_text, lower_print
        for item in expand_items(self, list(items.items) if items is not None else []):
            text = known_text(self, item)
            if text is not None:
                parts.append(("text", text))
                continue
            value = item[0] if isinstance(item, tuple) else self.expr(item)   # (an element)
            spelled = item[2] if isinstance(item, tuple) else str(item)
            if not is_integer(self.checked_dtype(value)):
                # a real (the Allen-Tildesley modules' 'r_cut/box too large', r):
                # printed with printf where the kernel reaches it, then the stop
                if self.st.pending_output:
                    raise self.error(
                        f"'{spelled}' is not an integer: output before a 'stop' that prints a "
                        "real must be the only output there (it is printed with printf, "
                        "the other output after the kernel); print the integers in the "
                        "same statement or drop them", spelled, UnsupportedFeatureError)
                lower_print(self, node, keyword, units=(6, 0))     # (0: error_unit)
                return
            parts.append(("value", None))
            values.append(value)
        self.st.pending_output.append((unit, fmt, parts, values))

    def _io_format(self, node):
        if node is None or str(node).strip() == "*":
            return "*"
        if isinstance(node, F.Char_Literal_Constant):
            return literal_text(node)
        if isinstance(node, F.Label) and str(int(str(node))) in self.formats:
            return self.formats[str(int(str(node)))]
        raise self.error("only '*' or a constant format can be used in a 'write' before a "
                         "'stop'", str(node), UnsupportedFeatureError)

    def stmt_Write_Stmt(self, node):
        from f2loopy.frontend.messages import refuse_internal_write
        refuse_internal_write(self, node)
        if not self._before_stop(node):          # diagnostic output: printf
            from f2loopy.frontend.prints import lower_print
            return lower_print(self, node, "write")
        control, items = node.items
        specs = list(control.items) if control is not None else []
        unit, fmt = "*", "*"
        for k, spec in enumerate(specs):
            key, value = spec.items
            key = str(key).lower() if key is not None else ("unit", "fmt")[min(k, 1)]
            if key == "unit":
                from f2loopy.frontend.prints import unit_number
                text = str(value).strip()
                number = unit_number(self, value)
                if number is not None and number >= 0:
                    text = str(number)           # error_unit, output_unit
                if text != "*" and not text.isdigit():
                    raise self.error("only unit '*' or a unit number can be used in a 'write' "
                                     "before a 'stop'", text, UnsupportedFeatureError)
                unit = text
            elif key == "fmt":
                fmt = self._io_format(value)
            else:
                raise self.error(f"'{key}=' is not supported in a 'write' before a 'stop'",
                                 key, UnsupportedFeatureError)
        self._write(node, "write", unit, fmt, items)

    def stmt_Format_Stmt(self, node):
        """A ``format`` statement: read where a ``write``/``print`` names its label."""

    def stmt_Print_Stmt(self, node):
        if not self._before_stop(node):          # diagnostic output: printf
            from f2loopy.frontend.prints import lower_print
            return lower_print(self, node, "print")
        fmt_node, items = node.items
        self._write(node, "print", "*", self._io_format(fmt_node), items)

    # }}}

    # {{{ stops

    def _stop_code(self, node):
        code = node.items[1]
        if code is None:
            return None
        if isinstance(code, F.Char_Literal_Constant):
            return literal_text(code)
        text = str(code).strip()
        if text.isdigit():
            return int(text)
        raise self.error("only a constant text or number can be a stop code in a kernel",
                         text, UnsupportedFeatureError)

    def stmt_Stop_Stmt(self, node):
        self.raise_error(("stop", self._stop_code(node)), [])

    def stmt_Error_Stop_Stmt(self, node):
        self.raise_error(("error stop", self._stop_code(node)), [])

    def xerbla_call(self, node, args):
        """``call xerbla('NAME', info)`` of the BLAS (not defined in the file):
        it reports an illegal argument and stops."""
        args = list(args.items) if args is not None else []
        if len(args) != 2 or not isinstance(args[0], F.Char_Literal_Constant):
            raise self.error("'xerbla' is supported with a constant routine name and an "
                             "integer: call xerbla('NAME', info)", "xerbla",
                             UnsupportedFeatureError)
        info = self.expr(args[1])
        if not is_integer(self.checked_dtype(info)):
            raise self.error("the second argument of 'xerbla' must be an integer",
                             str(args[1]))
        self.raise_error(("xerbla", literal_text(args[0])), [info])

    def raise_error(self, final, values):
        """Record an error site ending in *final* (its values: *values*,
        after those of the output before it) and leave the kernel."""
        actions: list = []
        all_values: list = []
        for unit, fmt, parts, vals in self.st.pending_output:
            items, it = [], iter(vals)
            for kind, text in parts:
                if kind == "text":
                    items.append(("text", text))
                else:
                    items.append(("value", len(all_values)))
                    all_values.append(next(it))
            actions.append(("write", unit, fmt, tuple(items)))
        self.st.pending_output.clear()
        if final[0] == "xerbla":
            final = ("xerbla", final[1], len(all_values))
        all_values.extend(values)
        if len(all_values) > ERROR_VALUES:
            raise self.error(f"at most {ERROR_VALUES} integers can be printed before a "
                             "'stop' in a kernel", None, UnsupportedFeatureError)
        actions.append(final)
        self.st.error_sites.append(ErrorSite(tuple(actions), self.statement_span()))
        site = np.int32(len(self.st.error_sites))
        args = tuple(v if self.checked_dtype(v) == INT32 else
                     p.Call(p.Variable("int32"), (v,)) for v in all_values)
        if self.st.stop_temporary is None:
            self.st.stop_temporary = self.new_temporary("f2l_stop", INT32)
        self.add_assignment(p.Variable(self.st.stop_temporary), INT32,
                            p.Call(p.Variable("f2l_raise"), (site, *args)), None,
                            base_id="f2l_stop")
        region = next((r for r in self.st.regions
                       if r.kind == "procedure" and r.owner is self.root), None)
        if region is None or region.flag is None:
            raise self.error("internal error: no flag to leave the kernel")
        self.leave_region(region)

    # }}}
