"""F77's ``dimension a(1)`` dummies in the reference that ``f2loopy check``
compiles.

F77 code declares a dummy array of any length with a last extent of 1
(``real dx(1)``, ``double precision a(lda, 1)``): the frontend takes it as
assumed size (:func:`f2loopy.frontend.argument_facts.last_extent_one`), as
the code means and as gfortran runs it without bounds checking.  The
reference runs under ``-fcheck=bounds`` (so that a subscript the inputs
could not be sized for stops it instead of writing past the drawn arrays),
which would call ``dx(2)`` out of bounds: the copy of the source the
reference compiles declares those extents ``*`` instead (assumed size, whose
last extent gfortran does not check), one character for one, so that every
line and column stays where it was.
"""

from __future__ import annotations

import re

_SPEC = re.compile(r"(?:real|integer|double\s*precision|double\s*complex|complex|logical|"
                   r"dimension|byte)\b", re.IGNORECASE)


def _statement_start(line: str, fixed: bool) -> int | None:
    """Column (0-based) where the statement of *line* starts, None for a
    comment or (fixed form) a continuation line."""
    if fixed:
        if not line or line[0] in "cC*!":
            return None
        if len(line) > 5 and line[5] not in " 0":
            return None
        body = line[6:]
        return 6 + (len(body) - len(body.lstrip()))
    stripped = line.lstrip()
    if not stripped or stripped.startswith(("!", "&")):
        return None
    return len(line) - len(stripped)


def _code_end(line: str) -> int:
    """Where the code of *line* ends: its first ``!`` outside a string."""
    quote = None
    for i, ch in enumerate(line):
        if quote is not None:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "!":
            return i
    return len(line)


def _close(line: str, open_at: int) -> int | None:
    """Index of the parenthesis closing the one at *open_at*, else None."""
    depth = 0
    for i in range(open_at, len(line)):
        if line[i] == "(":
            depth += 1
        elif line[i] == ")":
            depth -= 1
            if depth == 0:
                return i
        elif line[i] in "!'\"":
            return None
    return None


def _used_whole(name: str, body: str) -> bool:
    """Whether the procedure text *body* uses array *name* whole (``size(c)``,
    ``c(:, 1)``, ``c = 0``), which gfortran refuses of an assumed-size array:
    such a declaration stays as written."""
    n = re.escape(name)
    return bool(re.search(rf"\b(?:size|shape|ubound|lbound)\s*\(\s*{n}\b", body, re.I)
                or re.search(rf"\b{n}\s*\([^()\n]*:", body, re.I)
                or re.search(rf"\b{n}\b(?!\s*\()(?!\s*\*)", "\n".join(
                    ln for ln in body.splitlines()
                    if not _SPEC.match(ln.strip())), re.I) and
                re.search(rf"^\s*\d*\s*{n}\s*=", body, re.I | re.M))


def assumed_size_copy(text: str, kernels, ranges: dict, *, fixed: bool) -> str:
    """*text* with the last extent ``1`` of each dummy of *kernels* that
    the frontend took as assumed size written ``*`` in its declaration (in
    the lines *ranges* gives the kernel: name -> (first, last)); a
    declaration it cannot find on one line is left as it is."""
    lines = text.split("\n")
    for k in kernels:
        span = ranges.get(k.name)
        if span is None:
            continue
        first, last = span
        body = "\n".join(lines[max(first, 1) - 1:min(last, len(lines))])
        names = [a.name for a in k.args
                 if getattr(a, "shape", None) and a.shape[-1] is None
                 and not _used_whole(a.name, body)]
        if not names:
            continue
        pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\s*\(",
                             re.IGNORECASE)
        for no in range(max(first, 1), min(last, len(lines)) + 1):
            line = lines[no - 1]
            start = _statement_start(line, fixed)
            if start is None or not _SPEC.match(line, start):
                continue
            for m in pattern.finditer(line, start, _code_end(line)):
                close = _close(line, m.end() - 1)
                if close is None:
                    continue
                inner = line[m.end():close]
                if ":" in inner.rsplit(",", 1)[-1]:
                    continue
                cut = inner.rfind(",") + 1
                item = inner[cut:]
                if item.strip() == "1":
                    at = m.end() + cut + item.index("1")
                    line = line[:at] + "*" + line[at + 1:]
            lines[no - 1] = line
    return "\n".join(lines)


__all__ = ["assumed_size_copy"]
