"""A fast scan of a Fortran file for the line ranges of its program units.

Used to parse the units of a long file in parallel: each worker parses a copy
of the file in which every line outside its units is blank, so line numbers
(and every location in diagnostics) stay those of the whole file.  The scan
only needs to find where units begin and end; whenever the text is not what
it expects it gives up (returns None) and the file is parsed in one piece.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TYPE = (r"(?:integer|real|double\s*precision|double\s*complex|complex|logical|character)"
         r"(?:\s*\*\s*\d+|\s*\([^()]*\))?")
_PREFIX = rf"(?:(?:pure|elemental|recursive|impure|non_recursive|{_TYPE})\s+)*"
_PROC_RE = re.compile(rf"^{_PREFIX}(subroutine|function)\s+([a-z_]\w*)")
_MODULE_RE = re.compile(r"^module\s+([a-z_]\w*)\s*$")
_PROGRAM_RE = re.compile(r"^program\s+([a-z_]\w*)\s*$")
_BLOCK_DATA_RE = re.compile(r"^block\s*data\b")
_INTERFACE_RE = re.compile(r"^(abstract\s+)?interface\b")
_END_RE = re.compile(
    r"^end\s*(subroutine|function|module|program|interface|block\s*data|submodule)?\b(.*)$")
_END_CONSTRUCT_RE = re.compile(
    r"^end\s*(do|if|select|where|forall|associate|block|critical|type|enum|team)\b")
_LABEL_RE = re.compile(r"^\d+\s+")


@dataclass
class Unit:
    """A program unit or a module procedure: lines *start*..*end* (1-based)."""

    kind: str              # "procedure", "module", "program"
    name: str
    start: int
    end: int
    module: "Unit | None" = None
    contains_line: int | None = None      # for modules
    children: list = field(default_factory=list)


def _statements(lines: list[str], fixed: bool):
    """Yield ``(first_line, text)`` of each statement, comments removed,
    continuation lines joined, lower-cased."""
    if fixed:
        yield from _fixed_statements(lines)
    else:
        yield from _free_statements(lines)


def _strip_comment(text: str) -> str:
    """Text before a ``!`` comment outside quotes (all of *text* where there is
    none; an unclosed quote runs to the end of the line)."""
    quote = None
    for k, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "!":
            return text[:k]
    return text


def _free_statements(lines):
    pending, first = "", None
    for no, raw in enumerate(lines, start=1):
        text = _strip_comment(raw)
        stripped = text.strip()
        if not stripped:
            continue
        if pending and stripped.startswith("&"):
            stripped = stripped[1:]
        if stripped.endswith("&"):
            if first is None:
                first = no
            pending += stripped[:-1] + " "
            continue
        stmt = pending + stripped
        start = first if first is not None else no
        pending, first = "", None
        for part in stmt.split(";"):
            if part.strip():
                yield start, part.strip().lower()
    if pending:
        yield first, pending.strip().lower()


def _fixed_statements(lines):
    current, first = None, None
    for no, raw in enumerate(lines, start=1):
        if not raw.strip() or raw[0] in "cC*!dD":
            continue
        if raw.lstrip().startswith("!"):
            continue
        if raw.startswith("#"):
            continue
        body = raw[:72]
        if "\t" in body[:6]:
            return                      # tab format: let fparser decide
        if len(body) > 5 and body[5] not in " 0":
            if current is None:
                return
            current += _strip_comment(body[6:])
            continue
        if current is not None:
            for part in current.split(";"):
                if part.strip():
                    yield first, part.strip().lower()
        current, first = _strip_comment(body[6:]), no
    if current is not None:
        for part in current.split(";"):
            if part.strip():
                yield first, part.strip().lower()


def scan_units(lines: list[str], fixed: bool) -> list[Unit] | None:
    """Top-level units (modules with their procedures as children), or None
    when the file does not look as expected."""
    top: list[Unit] = []
    stack: list[Unit | str] = []
    last_line = 0
    for line, text in _statements(lines, fixed):
        last_line = line
        text = _LABEL_RE.sub("", text) if fixed or text[:1].isdigit() else text
        if _END_CONSTRUCT_RE.match(text):
            continue
        m = _END_RE.match(text)
        if m and (m.group(1) or not m.group(2).strip() or m.group(2).strip()[0].isalpha()):
            kind = (m.group(1) or "").replace(" ", "")
            rest = m.group(2).strip()
            if not kind and rest and not rest.startswith(("!",)):
                # "end foo" is not an end statement we know
                return None
            if not stack:
                return None
            opened = stack.pop()
            if opened == "interface":
                if kind not in ("", "interface"):
                    # the end of a procedure body inside an interface block
                    stack.append("interface")
                continue
            if isinstance(opened, str):
                continue
            if kind == "interface":
                return None
            opened.end = _statement_end(lines, line, fixed)
            continue
        if stack and stack[-1] == "interface":
            if _PROC_RE.match(text):
                stack.append("interface-body")
            continue
        if stack and stack[-1] == "interface-body":
            continue
        if _INTERFACE_RE.match(text):
            stack.append("interface")
            continue
        if text == "contains":
            if stack and isinstance(stack[-1], Unit) and stack[-1].kind == "module":
                stack[-1].contains_line = line
            continue
        m = _PROC_RE.match(text)
        if m and not text.startswith("module procedure"):
            unit = Unit("procedure", m.group(2), line, 0)
            if not stack:
                top.append(unit)
            elif isinstance(stack[-1], Unit) and stack[-1].kind == "module":
                unit.module = stack[-1]
                stack[-1].children.append(unit)
            stack.append(unit)
            continue
        m = _MODULE_RE.match(text)
        if m and not text.startswith("module procedure"):
            if stack:
                return None
            unit = Unit("module", m.group(1), line, 0)
            top.append(unit)
            stack.append(unit)
            continue
        if _PROGRAM_RE.match(text) or _BLOCK_DATA_RE.match(text):
            if stack:
                return None
            unit = Unit("program", text.split()[-1], line, 0)
            top.append(unit)
            stack.append(unit)
            continue
        if not stack:
            return None          # a statement outside any unit (main program without header)
    if stack or not top:
        return None
    del last_line
    return top


def _statement_end(lines, line, fixed) -> int:
    """Last line of the statement starting on *line* (continuations)."""
    k = line
    while True:
        if fixed:
            nxt = k + 1
            if nxt <= len(lines):
                raw = lines[nxt - 1]
                if len(raw) > 5 and raw[:1] not in "cC*!" and raw[5] not in " 0" and \
                        raw.strip():
                    k = nxt
                    continue
            return k
        text = _strip_comment(lines[k - 1]).rstrip()
        if text.endswith("&") and k < len(lines):
            k += 1
            continue
        return k


def work_items(units: list[Unit]) -> list[tuple[int, int, Unit | None]]:
    """Pieces to distribute: ``(start, end, module)`` for each top-level
    procedure or program, each module procedure, and each module without
    procedures, in file order."""
    items: list[tuple[int, int, Unit | None]] = []
    for u in units:
        if u.kind == "module" and u.children:
            for ch in u.children:
                items.append((ch.start, ch.end, u))
        else:
            items.append((u.start, u.end, None))
    return items


def group_text(lines: list[str], items) -> tuple[str, list[int]]:
    """The lines of *items* (and the header and end lines of their modules),
    and the original line number of each of them."""
    keep = [False] * (len(lines) + 1)
    for start, end, module in items:
        for k in range(start, end + 1):
            keep[k] = True
        if module is not None:
            header_end = module.contains_line or module.start
            for k in range(module.start, header_end + 1):
                keep[k] = True
            for k in range(module.end, _statement_end(lines, module.end, False) + 1):
                keep[k] = True
    numbers = [k for k in range(1, len(lines) + 1) if keep[k]]
    return "\n".join(lines[k - 1] for k in numbers) + "\n", numbers


def partition(items, jobs: int) -> list[list]:
    """Split *items* into at most *jobs* contiguous groups of similar size."""
    total = sum(e - s + 1 for s, e, _ in items)
    groups: list[list] = []
    current: list = []
    size = 0
    target = total / jobs
    for it in items:
        current.append(it)
        size += it[1] - it[0] + 1
        if size >= target * (len(groups) + 1) and len(groups) < jobs - 1:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups
