"""The line reader of fparser, with construct names in strict fixed form.

f2loopy reads fixed-form files in fparser's strict mode, so that text after
column 72 is ignored as compilers ignore it.  In that mode fparser's reader
does not take the construct name off a statement (``lab: if (c) then``,
``outer: do k = 1, n``, ``pick: select case (m)``), and the parser then
sees no valid statement, although gfortran reads such lines in a ``.f``
file.  :class:`FixedStringReader` takes the name off as fparser does for
free form, so the parser gets the statement and the name apart.

This is a module of its own (imported where a file is parsed, not at
start-up) so that parse trees, which hold their reader, pickle by reference
to it.
"""

from __future__ import annotations

import re

from fparser.common.readfortran import FortranStringReader

#: a construct name and its colon at the start of a statement: the name,
#: then one colon (not the '::' of a declaration) and the statement's first
#: letter
_CONSTRUCT_NAME = re.compile(r"\s*([a-z][a-z0-9_]*)\s*:\s*(?=[a-z])", re.I)


def split_construct_name(line: str) -> tuple[str | None, str]:
    """``(name, statement)`` of a joined fixed-form statement *line*
    (``("lab", "if (c) then")`` for ``"lab: if (c) then"``); the name is
    None and *line* unchanged when it has no construct name."""
    m = _CONSTRUCT_NAME.match(line)
    if m is None:
        return None, line
    return m.group(1), line[m.end():]


class FixedStringReader(FortranStringReader):
    """fparser's string reader that also splits construct names off
    statements read in strict fixed form (:func:`split_construct_name`)."""

    def line_item(self, line, startlineno, endlineno, label, name, errmessage=None):
        if name is None and self.format.is_f77:
            name, line = split_construct_name(line)
        return super().line_item(line, startlineno, endlineno, label, name, errmessage)


__all__ = ["FixedStringReader", "split_construct_name"]
