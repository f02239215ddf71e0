"""Elemental functions applied to arrays (``y = f(a, b(:, j)) + 1`` with ``f``
an ``elemental`` function of the file).

The array expression is evaluated element by element after it is converted,
so a call in it cannot lower the function's statements; an elemental
function whose body is straight-line scalar assignments (to its locals and
its result, as most such helpers are) is expanded as an expression instead:
each assignment's value, with the names assigned so far standing for their
values, and the dummies for the elements of the actual arguments.  A body
with other statements is refused with its location.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import UnsupportedFeatureError

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost as _Host
else:
    _Host = object


def is_elemental(proc) -> bool:
    stmt = proc.node.children[0]
    prefix = stmt.items[0]
    return prefix is not None and "ELEMENTAL" in str(prefix).upper()


class ElementalMixin(_Host):
    """Elemental calls in array expressions (mixed into UnitLowering)."""

    def elemental_call(self, proc, actual_nodes):
        """The element of ``proc(actuals...)`` at the current position of the
        array expression being converted."""
        if not is_elemental(proc):
            raise self.error(f"'{proc.name}' is called with array arguments but is not "
                             "elemental", proc.name)
        if proc.kind != "function":
            raise self.error(f"elemental subroutine '{proc.name}' called with arrays is not "
                             "supported (write a loop)", proc.name, UnsupportedFeatureError)
        callee = proc.prepare(self.src, self.registry)
        actuals = self.match_arguments(proc, callee.dummies, actual_nodes)
        values = {}
        for dummy, node in zip(callee.dummies, actuals, strict=True):
            dsym = callee.symtab.get(dummy)
            if dsym.is_array:
                raise self.error(f"elemental function '{proc.name}' has an array argument "
                                 f"'{dummy}'", proc.name)
            node = node.items[1] if isinstance(node, F.Actual_Arg_Spec) else node
            values[dummy.lower()] = self.convert_for_assignment(self.expr(node), dsym.dtype,
                                                                proc.name)
        for sym in callee.symtab.symbols():
            if sym.is_parameter and sym.name.lower() not in values:
                values[sym.name.lower()] = sym.value
        result = callee.result_name.lower()
        for stmt in callee.body:
            if isinstance(stmt, (F.Continue_Stmt, F.Return_Stmt)) and \
                    stmt is callee.body[-1] or isinstance(stmt, F.Continue_Stmt):
                continue
            lhs = stmt.items[0] if isinstance(stmt, F.Assignment_Stmt) else None
            if not isinstance(lhs, F.Name):
                from f2loopy.frontend.declarations import statement_lines
                line = statement_lines(stmt)[0]
                raise UnsupportedFeatureError(
                    f"elemental function '{proc.name}' applied to arrays: only a body of "
                    "scalar assignments can be expanded in an array expression (write a "
                    "loop)", self.src.span(line))
            target = callee.symtab.get(str(lhs))
            if target is None or target.is_array:
                raise self.error(f"elemental function '{proc.name}' assigns '{lhs}', which is "
                                 "not one of its scalar variables", proc.name,
                                 UnsupportedFeatureError)
            with self.names.scope(dict(values)):
                rhs = self.expr(stmt.items[2])
            values[str(lhs).lower()] = self.convert_for_assignment(rhs, target.dtype,
                                                                   proc.name)
        if result not in values:
            raise self.error(f"elemental function '{proc.name}' does not assign its result",
                             proc.name)
        return values[result]
