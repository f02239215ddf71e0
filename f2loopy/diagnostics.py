"""Source spans and the project's error classes.

Every error a user can cause (bad Fortran, an unsupported construct, a
transformation that cannot apply, a race found at code generation, a failing
transformation script) is an :class:`F2LoopyError` carrying the
:class:`SourceSpan` it is about.  :meth:`F2LoopyError.format` renders it the
way a compiler does::

    volume.f90:42:7: error: 'read' statements are not supported (kernels cannot do I/O)
          read (*, *) err
          ^~~~
"""

from __future__ import annotations

from dataclasses import dataclass

from f2loopy.escape import terminal


@dataclass(frozen=True)
class SourceSpan:
    """A place in a source file.

    :attr filename: the file name as the user gave it.
    :attr line: 1-based line number.
    :attr column: 1-based column of the first character.
    :attr length: number of characters to underline (at least 1).
    :attr text: the text of the line, for the caret display ("" if unknown).
    """

    filename: str
    line: int
    column: int = 1
    length: int = 1
    text: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"

    def caret_lines(self) -> list[str]:
        """The source line and a caret line under the span, as a compiler prints them
        (control characters of the line shown as escapes, the caret moved with them)."""
        if not self.text:
            return []
        text = self.text.rstrip("\n").expandtabs(1)
        col = max(self.column, 1)
        length = max(1, min(self.length, max(1, len(text) - col + 1)))
        before = terminal(text[:col - 1].replace("\n", " "))
        under = terminal(text[col - 1:col - 1 + length].replace("\n", " "))
        shown = terminal(text.replace("\n", " "))
        return ["    " + shown, "    " + " " * len(before) + "^" + "~" * (len(under) - 1)]


class F2LoopyError(Exception):
    """Base class of every error a user of f2loopy can cause.

    :arg message: what went wrong, one sentence, no trailing period needed.
    :arg span: where (a :class:`SourceSpan`) or None when no place applies.
    :arg notes: further ``(message, span)`` pairs printed as ``note:`` lines,
        e.g. the second statement of a race.
    """

    kind = "error"
    #: what a transformation script printed before the error (shown with it)
    script_output: str = ""

    def __init__(self, message: str, span: SourceSpan | None = None,
                 notes: tuple[tuple[str, SourceSpan | None], ...] = ()):
        super().__init__(message)
        self.message = message
        self.span = span
        self.notes = tuple(notes)

    def __str__(self) -> str:
        return self.format()

    def format(self) -> str:
        lines = [_headline(self.span, self.kind, self.message)]
        if self.span is not None:
            lines.extend(self.span.caret_lines())
        for note, span in self.notes:
            lines.append(_headline(span, "note", note))
            if span is not None:
                lines.extend(span.caret_lines())
        return "\n".join(lines)


def _headline(span: SourceSpan | None, kind: str, message: str) -> str:
    # messages quote names and text of the file: safe for a terminal
    if span is None:
        return f"f2loopy: {kind}: {terminal(message)}"
    return f"{terminal(span)}: {kind}: {terminal(message)}"


class LocatedWarning(F2LoopyError):
    """Not raised: a warning formatted as errors are (``file:line:col:
    warning: ...`` and the caret lines)."""

    kind = "warning"


class FortranError(F2LoopyError):
    """The Fortran source cannot be read: a syntax or semantic error."""


class UnsupportedFeatureError(FortranError):
    """The Fortran is valid but uses a construct f2loopy does not translate."""


class TransformError(F2LoopyError):
    """A transformation cannot be applied to the kernel as asked."""


class UnsupportedArgumentError(TransformError, TypeError):
    """A keyword argument of loopy's API that f2loopy does not implement was
    given a value that would change the result (rather than being ignored).

    Also a :class:`TypeError`, as Python raises for an unknown keyword."""

    def __init__(self, function: str, argument: str, value: object, why: str,
                 span: SourceSpan | None = None, notes: tuple = ()):
        message = f"{function}: {argument}={value!r} is not supported: {why}" \
            if why else function
        super().__init__(message, span, notes)
        self.function, self.argument, self.why = function, argument, why


class CodegenError(F2LoopyError):
    """The kernel cannot be turned into OpenCL (e.g. no valid schedule)."""


class RaceError(CodegenError):
    """Parallel execution would change results: a dependence crosses work-items."""


class ScriptError(F2LoopyError):
    """The transformation script in a ``!$loopy begin`` block failed."""


class SandboxViolation(ScriptError):
    """The transformation script tried something the sandbox forbids."""


def span_in_text(filename: str, lines: list[str], line: int, needle: str | None = None,
                 *, start_column: int | None = None) -> SourceSpan:
    """Make a span for *line* (1-based) of *lines*.

    If *needle* is found on the line (case-insensitively, at or after
    *start_column*), the span covers it; otherwise it covers the first
    non-blank character run of the statement.
    """
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if needle:
        low = text.lower()
        pos = low.find(needle.lower(), (start_column or 1) - 1)
        if pos >= 0:
            return SourceSpan(filename, line, pos + 1, len(needle), text)
    stripped = text.lstrip()
    col = len(text) - len(stripped) + 1
    word = stripped.split("!")[0].rstrip()
    return SourceSpan(filename, line, col, max(1, len(word)), text)
