"""Enumerations: ``enum, bind(c)`` with ``enumerator :: red, green = 5, blue``.

Each enumerator is a named integer constant of kind ``c_int`` (int32), as
if declared ``integer(c_int), parameter``: the first is 0 unless given a
value, each later one the one before plus 1 (``red = 0, green = 5,
blue = 6``), across the ``enumerator`` statements of one ``enum``.  A
value given must be an integer constant expression.
"""

from __future__ import annotations

import numpy as np
from fparser.two import Fortran2003 as F

from f2loopy.frontend.source import statement_lines
from f2loopy.ir.folding import cast_value

#: the kind of every enumerator (``c_int``)
ENUM_DTYPE = np.dtype(np.int32)


def read_enum(reader, enum_def) -> None:
    """Declare the enumerators of *enum_def* (an ``Enum_Def`` node) as
    parameters in the symbol table of declaration reader *reader*."""
    following = 0
    for stmt in enum_def.content:
        if not isinstance(stmt, F.Enumerator_Def_Stmt):
            continue
        reader.lines = statement_lines(stmt)     # (where its errors are located)
        for item in stmt.items[1].items:
            if isinstance(item, F.Enumerator):
                name_node, value_node = item.items[0], item.items[2]
                value = reader.constant(value_node)
                if value.dtype.kind not in "iu":
                    raise reader.error(f"the value of enumerator '{name_node}' must be an "
                                       "integer constant", str(name_node))
                following = int(value)
            else:
                name_node = item
            name = str(name_node)
            if np.iinfo(ENUM_DTYPE).min > following or following > np.iinfo(ENUM_DTYPE).max:
                raise reader.error(f"the value {following} of enumerator '{name}' does not "
                                   "fit in an integer(c_int)", name)
            sym = reader.declare(name)
            if sym.dtype is not None or sym.is_parameter:
                raise reader.error(f"enumerator '{name}' is declared twice", name)
            sym.is_parameter = True
            sym.dtype = ENUM_DTYPE
            sym.value = cast_value(np.int64(following), ENUM_DTYPE)
            following += 1


__all__ = ["ENUM_DTYPE", "read_enum"]
