"""Untrusted text in generated files and on the terminal: one helper per target.

A Fortran file is downloaded code, and so is everything that comes from it:
its own file name, the lines of its source, the names, labels and messages
a transformation script sends back from the sandbox.  Whatever of that text
reaches a file f2loopy writes (Python, C, OpenCL, Fortran, a Make depfile),
the terminal or a CSV table goes through exactly one function of this module
for that target, so that it is shown, never run:

* :func:`py_literal`, :func:`py_docstring`: Python string literals and text
  inside a ``\"\"\"`` docstring;
* :func:`c_comment`, :func:`c_string`: C and OpenCL ``/* */`` comments and
  string literals;
* :func:`fortran_comment`, :func:`fortran_string`: Fortran ``!`` comments and
  character literals;
* :func:`make_path`: a path in a Make rule (depfiles);
* :func:`terminal`, :func:`csv_cell`: text printed to a terminal, cells of a
  CSV table.

Names are not escaped but validated: :func:`is_identifier` (a full match, so
that ``"x\\n"`` is refused) at the boundary where a kernel comes back from
the sandbox (:mod:`f2loopy.ir.serialize`), and :func:`is_plain_name` for
``-D`` names on the command line.

Comments and docstrings show a text as printable ASCII on one line: every
other character, and the backslash itself, as a Python-style escape
(``\\n``, ``\\x1b``, ``\\u202e``, ``\\\\``), so that nothing can end the
comment, start a new line, or reorder what the reader sees.  This module
imports nothing of f2loopy (every layer may use it).
"""

from __future__ import annotations

import re
import unicodedata

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


# {{{ names

def is_identifier(name, max_length: int = 200) -> bool:
    """True if *name* is an ASCII identifier (letters, digits, underscores,
    not starting with a digit), as a whole: a full match, no trailing newline."""
    return isinstance(name, str) and len(name) <= max_length and \
        _IDENTIFIER.fullmatch(name) is not None


def is_plain_name(name) -> bool:
    """True if *name* is a plain ASCII name as Fortran spells one: a letter,
    then letters, digits and underscores (so no ``__dunder__`` and no
    leading underscore), as a whole."""
    return isinstance(name, str) and len(name) <= 63 and \
        _PLAIN_NAME.fullmatch(name) is not None

# }}}


# {{{ one printable line of ASCII

def _escape_char(ch: str) -> str:
    code = ord(ch)
    if ch == "\\":
        return "\\\\"
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


#: printable ASCII but the backslash: what :func:`visible` and
#: :func:`fortran_string` keep as it is (the text of most names and messages,
#: then checked at C speed instead of character by character)
_PLAIN_RE = re.compile(r"[ -\[\]-~]*")


def visible(text) -> str:
    """*text* as one line of printable ASCII: characters outside ``' '..'~'``
    and the backslash are written as Python escapes."""
    text = str(text)
    if _PLAIN_RE.fullmatch(text):
        return text
    return "".join(ch if " " <= ch <= "~" and ch != "\\" else _escape_char(ch)
                   for ch in text)

# }}}


# {{{ Python

def py_literal(text) -> str:
    """A Python string literal of *text* (ASCII, every other character escaped)."""
    return ascii(str(text))


def py_docstring(text) -> str:
    """*text* for the inside of a ``\"\"\"`` docstring (or any non-raw string
    literal): one ASCII line; quotes and backslashes escaped, so the
    docstring's value is *text* shown readably and cannot end early."""
    return visible(text).replace('"', '\\"').replace("'", "\\'")

# }}}


# {{{ C and OpenCL

def c_comment(text) -> str:
    """*text* for the inside of a C or OpenCL ``/* ... */`` comment: one
    printable ASCII line in which neither ``*/`` nor ``/*`` appears."""
    out = visible(text)
    while "*/" in out or "/*" in out:
        out = out.replace("*/", "*\\/").replace("/*", "/\\*")
    return out


def _c_string_escape(byte: int) -> str:
    ch = chr(byte)
    if ch == "\\":
        return "\\\\"
    if ch == '"':
        return '\\"'
    if ch == "?":
        return "\\?"
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if 32 <= byte < 127:
        return ch
    return f"\\{byte:03o}"


#: byte (as the code point of its latin-1 character) -> its form in a C string
_C_STRING_TABLE = {byte: _c_string_escape(byte) for byte in range(256)}


def c_string(text) -> str:
    """The body (without the quotes) of a C string literal holding the UTF-8
    bytes of *text*: printable ASCII as it is, quotes and backslashes escaped,
    ``?`` escaped (no trigraphs), every other byte as a three-digit octal
    escape (which no following digit can extend)."""
    # one character per byte (latin-1), each replaced from the table in C
    # (the glue of a 1,000-line file escapes some 1,400 strings)
    return str(text).encode("utf-8", "surrogateescape").decode("latin-1").translate(
        _C_STRING_TABLE)

# }}}


# {{{ Fortran

def fortran_comment(text) -> str:
    """*text* for a Fortran ``!`` comment: one printable ASCII line."""
    return visible(text)


def fortran_string(text) -> str:
    """A Fortran character literal (with its double quotes) showing *text*:
    one printable ASCII line, double quotes doubled, every other character
    and the backslash written ``<U+XXXX>``.  No backslash is left, so the
    literal means the same to compilers that read backslash escapes
    (``gfortran -fbackslash``)."""
    text = str(text)
    if _PLAIN_RE.fullmatch(text):
        return '"' + text.replace('"', '""') + '"'
    out = []
    for ch in text:
        if " " <= ch <= "~" and ch != "\\":
            out.append('""' if ch == '"' else ch)
        else:
            out.append(f"<U+{ord(ch):04X}>")
    return '"' + "".join(out) + '"'

# }}}


# {{{ Make

class UnrepresentablePath(ValueError):
    """A path that a Make rule cannot name (it holds a line break or another
    control character)."""


def _first_control(path: str) -> str | None:
    for ch in path:
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            return ch
    return None


def fits_depfile(path) -> bool:
    """Whether *path* has no control character (a newline would start a
    recipe line, and no terminal shows one safely); :func:`make_path`
    refuses more."""
    return _first_control(str(path)) is None


#: what a depfile may hold besides letters and digits: the characters that
#: GNU Make, Ninja's depfile reader and CMake's conversion of depfiles (for its
#: Makefile and Ninja generators) all read as part of a file name, and the
#: space (written ``\ ``).  Everything else means something to one of them:
#: ``;`` starts a recipe, ``=`` a variable, ``:`` a second rule, ``%``, ``*``,
#: ``?``, ``[`` patterns, ``(`` an archive member, ``|`` order-only
#: prerequisites, ``$`` and ``#`` are written back unescaped by CMake's Ninja
#: conversion, quotes, ``&``, ``<``, ``^`` and the backquote end a name for
#: Ninja, and a backslash escapes the next character.
_DEPFILE_PUNCTUATION = frozenset("/._-+,@!{}~ ")


def _first_unsafe(path: str) -> str | None:
    for k, ch in enumerate(path):
        if ch.isascii():
            if ch.isalnum() or (ch in _DEPFILE_PUNCTUATION and not (ch == "~" and k == 0)):
                continue
            return ch           # (a leading '~' is a home folder to Make)
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"):
            return ch
    return None


def make_path(path) -> str:
    """*path* as a word of a Make rule (depfiles): spaces escaped as ``gcc
    -MD`` does.  A path with a character that Make, Ninja or CMake would read
    as more than a name (``;`` ``:`` ``=`` ``$`` ``#`` ``%`` ``\\`` quotes,
    a newline ...) raises :class:`UnrepresentablePath`: it is refused, never
    half-escaped."""
    path = str(path)
    ch = _first_control(path)
    if ch is not None:
        raise UnrepresentablePath(f"the path {visible(path)} contains the control "
                                  f"character {_escape_char(ch)}, which a depfile "
                                  "cannot hold")
    ch = _first_unsafe(path)
    if ch is not None:
        shown = f"'{ch}'" if ch.isascii() else _escape_char(ch)
        raise UnrepresentablePath(f"the path {visible(path)} contains {shown}, which a "
                                  "depfile cannot hold (Make, Ninja or CMake would read it "
                                  "as part of a rule): rename the file or folder, or "
                                  "translate without --depfile")
    return path.replace(" ", "\\ ")

# }}}


# {{{ terminal and CSV

# characters a terminal interprets or that change what the reader sees:
# controls (escape sequences, carriage return, backspace), format characters
# (bidirectional overrides, zero-width), line and paragraph separators,
# surrogates (undecodable bytes of a file name) and private-use characters
_HIDDEN = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs", "Co"))


def terminal(text) -> str:
    """*text* safe to print on a terminal: newlines and tabs kept, every other
    control or format character (``ESC``, ``CR``, bidirectional overrides...)
    and every undecodable byte shown as a Python escape.  Printable
    non-ASCII text stays as it is; applying it twice changes nothing."""
    text = str(text)
    return "".join(ch if ch in "\n\t" or unicodedata.category(ch) not in _HIDDEN
                   else _escape_char(ch) for ch in text)


def csv_cell(text) -> str:
    """A text cell of a CSV table (the csv module does the quoting): safe on
    a terminal, and a leading ``= + - @`` that a spreadsheet would read as a
    formula is preceded by a quote."""
    text = terminal(text)
    if text[:1] in ("=", "+", "-", "@"):
        return "'" + text
    return text

# }}}
