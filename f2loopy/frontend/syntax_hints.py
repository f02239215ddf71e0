"""Sharper messages for statements fparser cannot parse.

fparser says only that a statement does not parse; a compiler says why.  For
the line of such a statement, :func:`explain` looks for the usual causes and
returns a message with the column it is about:

* an unclosed ``(`` or ``[`` (the opening one is underlined), an unmatched
  ``)`` or ``]``, an unterminated character string;
* Fortran 2018 syntax that is valid but not translated: assumed rank
  ``dimension(..)``.

Anything else stays "syntax error" on the whole statement.
"""

from __future__ import annotations

import re

from f2loopy.diagnostics import FortranError, SourceSpan, UnsupportedFeatureError

_ASSUMED_RANK_RE = re.compile(r"\(\s*\.\.\s*\)")
_CLOSE = {")": "(", "]": "["}


def _code_part(line: str, fixed_form: bool) -> tuple[str, int]:
    """The statement part of a physical line and the column offset of its
    first character (fixed form: columns 7-72)."""
    if fixed_form:
        return line[6:72], 6
    return line, 0


def explain(line: str, fixed_form: bool = False):
    """``(error class, message, column, length)`` for the cause found on
    *line*, or None."""
    code, offset = _code_part(line, fixed_form)
    stripped = code.rstrip()
    if stripped.endswith("&") or (not fixed_form and stripped.lstrip().startswith("&")):
        return None         # a continued statement: its parts do not stand alone
    stack: list[tuple[str, int]] = []
    quote = None
    quote_at = 0
    i = 0
    while i < len(code):
        ch = code[i]
        if quote:
            if ch == quote:
                if i + 1 < len(code) and code[i + 1] == quote:
                    i += 2          # a doubled quote inside the string
                    continue
                quote = None
        elif ch in "'\"":
            quote, quote_at = ch, i
        elif ch == "!":
            break                   # a comment
        elif ch in "([":
            stack.append((ch, i))
        elif ch in ")]":
            if not stack or stack[-1][0] != _CLOSE[ch]:
                return (FortranError, f"syntax error: unmatched '{ch}'", offset + i + 1, 1)
            stack.pop()
        i += 1
    if quote:
        return (FortranError, "syntax error: unterminated character string",
                offset + quote_at + 1, 1)
    if stack:
        ch, at = stack[-1]
        closing = ")" if ch == "(" else "]"
        return (FortranError, f"syntax error: missing '{closing}' (the '{ch}' here is not "
                              "closed)", offset + at + 1, 1)
    m = _ASSUMED_RANK_RE.search(code.split("!")[0])
    if m:
        return (UnsupportedFeatureError, "assumed-rank arrays (dimension(..), Fortran 2018) "
                                         "are not supported", offset + m.start() + 1,
                len(m.group(0)))
    return None


def syntax_error(filename: str, lines: list[str], line: int, span: SourceSpan,
                 fixed_form: bool = False) -> FortranError:
    """The error for an unparsable statement on *line*: :func:`explain`'s
    when it finds a cause, else "syntax error" on *span*."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    found = explain(text, fixed_form) if text else None
    if found is None:
        if fixed_form:
            return FortranError("syntax error (read as fixed form: statements in columns "
                                "7-72; give -ffree-form for a free-form file)", span)
        return FortranError("syntax error", span)
    cls, message, column, length = found
    return cls(message, SourceSpan(filename, line, column, length, text))
