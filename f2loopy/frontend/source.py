"""A Fortran source file and its ``!$loopy`` directives.

Two kinds of directive comments exist:

* ``!$loopy begin tagged: NAME`` ... ``!$loopy end tagged: NAME`` marks the
  statements in between with the instruction tag NAME (regions may nest and
  overlap; several names may be given, separated by commas).
* ``!$loopy begin`` ... ``!$loopy end`` encloses a Python transformation
  script, one statement line per comment line (``! f = split_iname(...)``).
  loopy's older ``!$loopy begin transform`` ... ``!$loopy end transform`` form
  is accepted too (its kernels are pre-bound by subroutine name).

Directives are found by scanning the raw lines (fparser moves comments around
in its tree), so tags attach to statements by line number.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from f2loopy.diagnostics import FortranError, SourceSpan, UnsupportedFeatureError, span_in_text

_DIRECTIVE_RE = re.compile(r"^\s*[!cC*]\$loopy\b(.*)$", re.IGNORECASE)
_TAGGED_RE = re.compile(r"^\s*(begin|end)\s+tagged\s*:\s*(.*)$", re.IGNORECASE)
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")      # used with fullmatch


@dataclass(frozen=True)
class TaggedRegion:
    tag: str
    begin_line: int
    end_line: int


@dataclass(frozen=True)
class ScriptBlock:
    """A ``!$loopy begin`` ... ``!$loopy end`` transformation script.

    :attr code: the Python text (comment markers removed, dedented).
    :attr line_map: line ``k`` (1-based) of *code* is line ``line_map[k-1]``
        of the Fortran file.
    :attr prebound: written as ``!$loopy begin transform`` (old loopy style).
    """

    begin_line: int
    end_line: int
    code: str
    line_map: tuple[int, ...]
    prebound: bool = False


@dataclass
class SourceFile:
    """The text of one Fortran file and what its directives say."""

    filename: str
    text: str
    fixed_form: bool = False
    lines: list[str] = field(init=False)
    tagged_regions: list[TaggedRegion] = field(init=False)
    scripts: list[ScriptBlock] = field(init=False)

    def __post_init__(self):
        self.lines = self.text.splitlines()
        self.tagged_regions, self.scripts = _scan_directives(self)

    def span(self, line: int, needle: str | None = None, *,
             start_column: int | None = None) -> SourceSpan:
        """A span on *line* (1-based), covering *needle* if it occurs there
        (a name only where it stands as a whole word: 'a' is not found in 'call')."""
        if needle and start_column is None and 0 < line <= len(self.lines):
            col = _find(self.lines[line - 1], needle)
            if col is not None:
                start_column = col
        return span_in_text(self.filename, self.lines, line, needle,
                            start_column=start_column)

    def span_in_lines(self, first: int, last: int, needle: str | None) -> SourceSpan:
        """Span of *needle* in the first of lines *first*..*last* containing it."""
        if needle:
            for ln in range(first, last + 1):
                if 0 < ln <= len(self.lines) and _find(self.lines[ln - 1], needle) is not None:
                    return self.span(ln, needle)
        return self.span(first)

    def tags_at(self, line: int) -> frozenset:
        return frozenset(r.tag for r in self.tagged_regions
                         if r.begin_line < line < r.end_line)

    def error(self, message: str, line: int, needle: str | None = None,
              cls=FortranError) -> FortranError:
        return cls(message, self.span(line, needle))


_IDENT_RE = re.compile(r"^[A-Za-z_]\w*$")


def _find(text: str, needle: str) -> int | None:
    """1-based column of *needle* in *text* (case-insensitive; identifiers
    only as whole words), or None."""
    if _IDENT_RE.match(needle):
        m = re.search(rf"(?<![\w%]){re.escape(needle)}(?!\w)", text, re.IGNORECASE)
        return m.start() + 1 if m else None
    pos = text.lower().find(needle.lower())
    return pos + 1 if pos >= 0 else None


def _scan_directives(src: SourceFile):
    regions: list[TaggedRegion] = []
    scripts: list[ScriptBlock] = []
    open_tags: list[tuple[str, int]] = []
    script_start: int | None = None
    script_prebound = False
    script_lines: list[tuple[int, str]] = []

    for lineno, text in enumerate(src.lines, start=1):
        m = _DIRECTIVE_RE.match(text)
        if script_start is not None:
            if m and m.group(1).strip().lower() in ("end", "end transform"):
                code, line_map = _script_code(script_lines)
                scripts.append(ScriptBlock(script_start, lineno, code, line_map,
                                           script_prebound))
                script_start = None
                script_lines = []
                continue
            if m:
                raise FortranError("'!$loopy' directive inside a transformation script block "
                                   "(missing '!$loopy end'?)", src.span(lineno, "$loopy"))
            stripped = text.lstrip()
            if stripped and stripped[0] not in "!cC*":
                raise FortranError("Fortran statement inside a '!$loopy begin' script block "
                                   "(missing '!$loopy end'?)", src.span(lineno))
            script_lines.append((lineno, stripped[1:] if stripped else ""))
            continue
        if not m:
            continue
        rest = m.group(1).strip()
        tm = _TAGGED_RE.match(rest)
        if tm:
            kind, names_text = tm.group(1).lower(), tm.group(2)
            names = [n.strip() for n in names_text.split(",")]
            for name in names:
                if not _NAME_RE.fullmatch(name):
                    raise FortranError(f"invalid tag name {name!r} in '!$loopy {kind} tagged:'",
                                       src.span(lineno, "tagged"))
            for name in names:
                if kind == "begin":
                    if any(t == name for t, _ in open_tags):
                        raise FortranError(f"tagged region {name!r} is already open",
                                           src.span(lineno, name))
                    open_tags.append((name, lineno))
                else:
                    for k in range(len(open_tags) - 1, -1, -1):
                        if open_tags[k][0] == name:
                            regions.append(TaggedRegion(name, open_tags[k][1], lineno))
                            del open_tags[k]
                            break
                    else:
                        raise FortranError(f"'!$loopy end tagged: {name}' without a matching "
                                           "begin", src.span(lineno, name))
            continue
        low = rest.lower()
        if low in ("begin", "begin transform"):
            script_start = lineno
            script_prebound = low == "begin transform"
            continue
        if low == "end":
            raise FortranError("'!$loopy end' without a matching '!$loopy begin'",
                               src.span(lineno, "$loopy"))
        raise FortranError(f"unknown '!$loopy' directive {rest!r} (expected 'begin', 'end', "
                           "'begin tagged: NAME' or 'end tagged: NAME')",
                           src.span(lineno, "$loopy"))

    if script_start is not None:
        raise FortranError("'!$loopy begin' block is never closed with '!$loopy end'",
                           src.span(script_start, "$loopy"))
    if open_tags:
        name, lineno = open_tags[0]
        raise FortranError(f"tagged region {name!r} is never closed with "
                           f"'!$loopy end tagged: {name}'", src.span(lineno, name))
    return regions, scripts


def _script_code(lines: list[tuple[int, str]]) -> tuple[str, tuple[int, ...]]:
    body = textwrap.dedent("\n".join(text for _, text in lines))
    return body + "\n", tuple(ln for ln, _ in lines)


def is_fixed_form_name(filename: str) -> bool:
    return filename.lower().endswith((".f", ".for", ".f77", ".ftn")) or filename.endswith(".F")


def fixed_form_of(filename: str, fixed_form: bool | None = None) -> bool:
    """Whether *filename* is read as fixed form: as *fixed_form* says (True,
    False: gfortran's ``-ffixed-form``/``-ffree-form``, which apply to every
    file it compiles), else (None) from the file name."""
    if fixed_form is None:
        return is_fixed_form_name(filename)
    if not isinstance(fixed_form, bool):
        raise TypeError(f"fixed_form must be True, False or None, not {fixed_form!r}")
    return fixed_form


def preprocessor_lines(src: SourceFile) -> list[FortranError]:
    """Errors for C preprocessor lines (``#ifdef``...): f2loopy reads Fortran
    as the compiler sees it after preprocessing."""
    out: list[FortranError] = []
    for no, text in enumerate(src.lines, start=1):
        stripped = text.lstrip()
        if stripped.startswith("#") and len(stripped) > 1 and \
                (stripped[1:].lstrip()[:1].isalpha()):
            word = "#" + stripped[1:].split()[0] if stripped[1:].split() else "#"
            out.append(UnsupportedFeatureError(
                "preprocessor directives are not supported (preprocess the file first, e.g. "
                "with 'gfortran -E -cpp')", src.span(no, word)))
    return out


def read_source(source: str, filename: str = "<string>", *,
                fixed_form: bool | None = None) -> SourceFile:
    if fixed_form is None:
        fixed_form = is_fixed_form_name(filename)
    # a UTF-8 byte order mark opens the file, not its first statement
    # (gfortran skips it too)
    return SourceFile(filename, source.removeprefix("\ufeff"), fixed_form=fixed_form)


def statement_lines(node) -> tuple[int, int]:
    """First and last line of a statement node (searching children if needed)."""
    item = getattr(node, "item", None)
    if item is not None and getattr(item, "span", None):
        return item.span
    for ch in getattr(node, "children", ()) or ():
        if hasattr(ch, "children"):
            span = statement_lines(ch)
            if span != (0, 0):
                return span
    return (0, 0)
