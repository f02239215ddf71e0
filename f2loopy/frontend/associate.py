"""``associate (a => selector, ...) ... end associate``.

A name associated with a variable or a component (``ramin => yrecldp%ramin``,
``c => x``) is an alias: reads and writes go to the variable.  A name
associated with a scalar expression holds its value, computed once on entry
(as Fortran does), in a temporary.  The names are visible in the block only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from fparser.two import Fortran2003 as F
from fparser.two.utils import walk

from f2loopy.frontend.derived_types import selector_symbol
from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.symbols import Symbol

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost as _Host
else:
    _Host = object


def associate_writes(body, symtab, written: set) -> None:
    """Add to *written* the variables written through associate names."""
    for node in body:
        for construct in walk(node, F.Associate_Construct):
            for assoc in construct.children[0].items[1].items:
                alias, _, selector = assoc.items
                if str(alias).lower() in written:
                    sym = selector_symbol(symtab, selector)
                    if sym is not None:
                        written.add(sym.name.lower())


class AssociateMixin(_Host):
    """``associate`` constructs (mixed into UnitLowering)."""

    def stmt_Associate_Construct(self, node):
        stmt = node.children[0]
        aliases = {}
        for assoc in stmt.items[1].items:
            alias, _, selector = assoc.items
            name = str(alias)
            sym = selector_symbol(self.symtab, selector)
            if sym is None and isinstance(selector, (F.Name, F.Data_Ref, F.Part_Ref)) and \
                    not isinstance(selector, F.Name):
                raise self.error(f"associating '{name}' with an array element or section is "
                                 "not supported (associate a variable, a component or a "
                                 "scalar expression)", name, UnsupportedFeatureError)
            if sym is None:
                value = self.expr(selector)
                dtype = self.checked_dtype(value)
                tmp = self.new_temporary(name, dtype)
                sym = Symbol(name=tmp, dtype=dtype, span=self.statement_span())
                self.add_assignment(p_variable(tmp), dtype, value, name)
                self.st.storage_by_name.setdefault(tmp, sym)
                sym.attributes.add("associate_value")
            aliases[name.lower()] = sym
        with self.associated(aliases):
            self.lower_block(node.children[1:-1])

    @contextmanager
    def associated(self, aliases: dict[str, Symbol]) -> Iterator[None]:
        """The names of *aliases* (lower-case) stand for their symbols inside
        (the views of arrays of the same names are made again, inside and
        after)."""
        saved = dict(self.symtab.aliases)
        self.symtab.aliases.update(aliases)
        self.forget_views(aliases)
        try:
            yield
        finally:
            self.symtab.aliases = saved
            self.forget_views(aliases)

    def forget_views(self, names) -> None:
        for name in names:
            self.views.pop(name, None)


def p_variable(name):
    import pymbolic.primitives as p
    return p.Variable(name)
