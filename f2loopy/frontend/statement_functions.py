"""Statement functions (``f(x) = x**2`` before the first executable
statement): split off a procedure's body, to be expanded as expressions
where they are referenced (:mod:`f2loopy.frontend.inline`)."""

from __future__ import annotations

from fparser.two import Fortran2003 as F

from f2loopy.frontend.declarations import statement_lines
from f2loopy.frontend.symbols import StatementFunction


def split_statement_functions(reader, symtab, body):
    """Split leading statement functions (``f(x) = expr``) off *body*."""
    out = {}
    k = 0
    while k < len(body):
        node = body[k]
        if isinstance(node, (F.Data_Stmt, F.Format_Stmt)):
            k += 1
            continue
        if not isinstance(node, F.Assignment_Stmt) or not isinstance(node.items[0], F.Part_Ref):
            break
        lhs = node.items[0]
        name = str(lhs.items[0])
        sym = symtab.get(name)
        if sym is not None and sym.is_array:
            break
        subs = list(lhs.items[1].items)
        if not all(isinstance(s, F.Name) for s in subs):
            break
        reader.lines = statement_lines(node)
        dtype = (sym.dtype if sym is not None and sym.dtype is not None
                 else symtab.implicit_type(name))
        if dtype is None:
            raise reader.error(f"statement function '{name}' has no type (implicit none is "
                               "in effect; declare it)", name)
        arg_dtypes = []
        for s in subs:
            asym = symtab.get(str(s))
            dt = asym.dtype if asym is not None and asym.dtype is not None else \
                symtab.implicit_type(str(s))
            if dt is None:
                raise reader.error(f"'{s}' has no type (implicit none is in effect; declare "
                                   "it)", str(s))
            arg_dtypes.append(dt)
        out[name.lower()] = StatementFunction(name, [str(s) for s in subs], node.items[2],
                                              dtype, arg_dtypes)
        k += 1
    rest = [n for n in body[k:]]
    lead = [n for n in body[:k] if not isinstance(n, F.Assignment_Stmt)]
    return out, lead + rest
