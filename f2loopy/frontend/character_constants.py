"""Character named constants: ``character(len=*), parameter :: name = 'x'``,
``character ct*11`` with ``parameter (ct = '28 Nov 2026')`` (NPB's
``npbparams.h``), a routine's name kept for its error messages.

A character parameter keeps its text (:attr:`~f2loopy.frontend.symbols.Symbol.text`,
blank-padded or cut to its declared length; ``len=*`` takes the constant's
length) and, as its ``value``, the text's flag code
(:func:`~f2loopy.frontend.characters.character_code`).  It serves the uses of
a character constant: comparisons, ``select case``, ``len``, passing it to a
character dummy, output (:mod:`f2loopy.frontend.prints`).  Its value is a
character constant, a concatenation (``//``) of them, or another character
parameter; a length given by an expression (``len=n``) is a located error,
as is an array of characters.
"""

from __future__ import annotations

import re

import numpy as np
from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.characters import (character_code, character_dtype, character_length,
                                         literal_text)

#: a declaration that gives an assumed length: ``len=*``, ``character*(*)``,
#: ``character(*)``, ``name*(*)``
_ASSUMED = re.compile(r"len\s*=\s*\*|\*\s*\(\s*\*\s*\)|character\s*\(\s*\*\s*[,)]",
                      re.IGNORECASE)


def set_character_parameter(reader, sym, dtype, value_node) -> None:
    """Make *sym* (of character *dtype*) a parameter of value *value_node*."""
    if sym.dims is not None:
        raise reader.error(f"character array parameter '{sym.name}' is not supported",
                           sym.name, UnsupportedFeatureError)
    text = constant_text(reader, value_node, sym.name)
    length = character_length(dtype)
    if length == "*":
        if not _assumed_length(reader, sym):
            raise reader.error(f"the length of character parameter '{sym.name}' is not "
                               "supported (give it as a number or as len=*)", sym.name,
                               UnsupportedFeatureError)
        length = len(text)
    text = text[:length].ljust(length)
    try:
        code = character_code(text)
    except ValueError as exc:
        raise reader.error(str(exc), sym.name) from None
    sym.is_parameter = True
    sym.dtype = character_dtype(length)
    sym.text = text
    sym.value = np.int32(code)


def constant_text(reader, node, name: str) -> str:
    """The text of the character constant expression *node* (the value of
    parameter *name*)."""
    while isinstance(node, F.Parenthesis):
        node = node.items[1]
    if isinstance(node, F.Char_Literal_Constant):
        return literal_text(node)
    if isinstance(node, F.Level_3_Expr) and str(node.items[1]).strip() == "//":
        return constant_text(reader, node.items[0], name) + \
            constant_text(reader, node.items[2], name)
    if isinstance(node, F.Name):
        other = reader.symtab.get(str(node))
        if other is not None and other.text is not None:
            return other.text
    raise reader.error(f"the value of character parameter '{name}' must be a character "
                       "constant, a concatenation of them or another character parameter",
                       str(node), UnsupportedFeatureError)


def _assumed_length(reader, sym) -> bool:
    """Whether the declaration of *sym* gives it an assumed length (``*``)
    rather than a length f2loopy did not evaluate (``len=n``)."""
    span = sym.type_span or sym.span
    lines = reader.src.lines
    if span is None or not 0 < span.line <= len(lines):
        return False
    return _ASSUMED.search(lines[span.line - 1].split("!")[0]) is not None
