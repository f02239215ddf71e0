"""The C preprocessor, run on Fortran as a compiler runs it.

A file is preprocessed when its suffix says so (``.F90``, ``.F``, ``.F95``,
``.F03``, ``.F08``, ``.FOR``) or when it has preprocessor lines (``#ifdef``,
``#include``, ``#define``...); ``-cpp`` preprocesses every file and ``-nocpp``
none, as for gfortran.  ``-D NAME[=VALUE]`` and ``-U NAME`` go to the
preprocessor (the ``-D`` values stay visible to the transformation script), and
``-I DIR`` is searched for ``#include`` files after the file's own folder.  The
preprocessor is ``gfortran -E -cpp`` (the one the file's users compile with), else
GCC's ``cpp`` in the same traditional mode.

Transformation scripts (``!$loopy`` lines and the lines of ``!$loopy begin``
... ``!$loopy end`` blocks) are Python, not Fortran: they are hidden from the
preprocessor (its macros would rewrite ``tile`` in ``split_iname(k, "i",
tile)`` as well), and kept or dropped with the lines around them (a block under
``#ifdef GPU`` exists only with ``-D GPU``).

The preprocessed text keeps every line of the file at its line number where it
can (``#include`` shifts what follows); :meth:`Preprocessed.remap` moves the
spans of an error back to the file and line they came from, honouring the
``# N "file"`` markers the preprocessor writes (also for ``#line``).
"""

from __future__ import annotations

import codecs
import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from f2loopy import cpp_guard
from f2loopy.cpp_guard import (MACRO_INCLUDE_MARK, IncludeChecker, macro_include_refusal,
                               run_limited)
from f2loopy.diagnostics import F2LoopyError, SourceSpan

PREPROCESSED_SUFFIXES = (".F90", ".F", ".F95", ".F03", ".F08", ".FOR", ".FPP", ".fpp")
_CPP_LINE_RE = re.compile(
    r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif|define|undef|include|line|error|"
    r"warning|pragma|\d+)\b")
_DIRECTIVE_RE = re.compile(r"^\s*[!cC*]\$loopy\b(.*)$", re.IGNORECASE)
_BEGIN_RE = re.compile(r"^\s*begin\b(?!\s+tagged\s*:)", re.IGNORECASE)
_END_RE = re.compile(r"^\s*end\b(?!\s+tagged\s*:)", re.IGNORECASE)
_MARKER_RE = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"((?: \d)*)\s*$')
_PLACEHOLDER_RE = re.compile(r"^!@@(\d+)@@\s*$")
_DIAG_RE = re.compile(r"^(.*?):(\d+):(\d+):(.*)$")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: seconds the preprocessor may take
TIMEOUT = 120
MAX_OUTPUT_BYTES = cpp_guard.MAX_OUTPUT_BYTES


class PreprocessorError(F2LoopyError):
    """``#error``, an unterminated ``#if``, a missing ``#include`` file..."""


def needs_preprocessing(text: str, path, cpp: bool | None = None) -> bool:
    """Whether *text* (the content of *path*) goes through the preprocessor:
    *cpp* True (``-cpp``) or False (``-nocpp``) decides, as for gfortran;
    None: when the suffix says so (``.F90``...) or the text has preprocessor
    lines (which gfortran would warn about and skip in a ``.f90``: f2loopy
    preprocesses such a file rather than read both branches of an ``#ifdef``)."""
    if cpp is not None:
        return cpp
    if str(path).endswith(PREPROCESSED_SUFFIXES):
        return True
    return any(_CPP_LINE_RE.match(line) for line in text.splitlines())


@dataclass
class Preprocessed:
    """The preprocessed text and where each of its lines came from."""

    text: str
    filename: str                       # the name diagnostics use for the file itself
    origin: list = field(default_factory=list)    # line k (1-based) -> (file, line) at k-1
    includes: list = field(default_factory=list)  # files #included (for depfiles)
    absent: list = field(default_factory=list)    # include paths looked at, not there
    sources: dict = field(default_factory=dict)   # file -> its lines (for caret displays)

    def where(self, line: int):
        if 0 < line <= len(self.origin):
            return self.origin[line - 1]
        return None

    def remap_span(self, span: SourceSpan | None) -> SourceSpan | None:
        if span is None or span.filename != self.filename:
            return span
        origin = self.where(span.line)
        if origin is None:
            return span
        file, line = origin
        lines = self.sources.get(file)
        if lines is None:
            # only files that were checked and included are read again: a
            # '#line N "/proc/self/environ"' names a file, it does not open it
            lines = self.sources[file] = (_read_lines(file) if file in self.includes
                                          else [])
        text = lines[line - 1] if 0 < line <= len(lines) else span.text
        column, length = span.column, span.length
        if text != span.text:
            # a macro changed the line: underline the same word, where it is
            word = span.text[span.column - 1:span.column - 1 + span.length] if span.text else ""
            pos = text.find(word) if word else -1
            column, length = (pos + 1, len(word)) if pos >= 0 else (1, max(1, len(text)))
        return dataclasses.replace(span, filename=file, line=line, column=column,
                                   length=length, text=text)

    def remap(self, exc: F2LoopyError) -> F2LoopyError:
        """Move the spans of *exc* (its notes, the errors it collects) back to
        the original files and lines, in place; returns *exc*."""
        exc.span = self.remap_span(exc.span)
        exc.notes = tuple((msg, self.remap_span(span)) for msg, span in exc.notes)
        for inner in getattr(exc, "errors", ()) or ():
            if inner is not exc and isinstance(inner, F2LoopyError):
                self.remap(inner)
        return exc


def _read_lines(file: str) -> list[str]:
    from f2loopy.regular_files import read_regular
    try:        # a regular file, bounded (the guard checked it; it may have changed)
        return read_regular(file).decode("utf-8", "replace").splitlines()
    except OSError:
        return []


def _hide_scripts(lines: list[str]) -> tuple[list[str], dict]:
    """Replace the script lines by placeholders the preprocessor leaves alone."""
    out, hidden = [], {}
    in_block = False
    for no, line in enumerate(lines, start=1):
        m = _DIRECTIVE_RE.match(line)
        directive = m is not None
        if m is not None and _BEGIN_RE.match(m.group(1)):
            in_block = True
        if directive or in_block:
            hidden[no] = line
            out.append(f"!@@{no}@@")
        else:
            out.append(line)
        if m is not None and _END_RE.match(m.group(1)):
            in_block = False
    return out, hidden


def macro_text(value) -> str:
    """The text the preprocessor gets for a ``-D`` *value*."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, str):
        return value
    return repr(value)


def _macro_options(defines: dict, undefines) -> list[str]:
    opts = []
    for name, value in (defines or {}).items():
        if not _NAME_RE.fullmatch(str(name)):
            raise F2LoopyError(f"-D {name!r}: not a valid macro name")
        text = macro_text(value)
        if "\n" in text or "\r" in text or "\0" in text:
            raise F2LoopyError(f"-D {name}: the value may not hold a line break")
        opts.append(f"-D{name}={text}")
    for name in undefines or ():
        if not _NAME_RE.fullmatch(str(name)):
            raise F2LoopyError(f"-U {name!r}: not a valid macro name")
        opts.append(f"-U{name}")
    return opts


def preprocess(text: str, path, *, defines=None, undefines=(), include_dirs=(),
               raw_defines: dict | None = None, fixed_form: bool | None = None) -> Preprocessed:
    """Run the preprocessor on *text* (the content of *path*).

    *raw_defines* maps a ``-D`` name to the text given on the command line
    (``-D tile=(8,4)`` passes ``(8,4)`` to the preprocessor, whatever value the
    script gets); names missing there are passed as their values print.
    *fixed_form* True/False reads the file in fixed/free form whatever its
    name (gfortran's ``-ffixed-form``/``-ffree-form``)."""
    command = preprocessor_command(path)
    if fixed_form is not None and Path(command[0]).name.startswith("gfortran"):
        command.append("-ffixed-form" if fixed_form else "-ffree-form")
    path = Path(path)
    filename = str(path)
    lines = text.splitlines()
    hidden_lines, hidden = _hide_scripts(lines)
    macros = dict(defines or {})
    macros.update(raw_defines or {})
    options = _macro_options(macros, undefines)
    # every #include is followed and checked before the preprocessor opens it
    checker = IncludeChecker(path, include_dirs)
    deferred: list[tuple[int, int, str]] = []
    checker.check(lines, filename, None, deferred=deferred)
    for first, last, _word in deferred:     # an #error where a macro-named #include was
        hidden_lines[first - 1] = MACRO_INCLUDE_MARK
        for k in range(first, last):
            hidden_lines[k] = ""
    with tempfile.TemporaryDirectory(prefix="f2loopy-cpp-") as tmp:
        # the same name, so that the suffix picks the same source form
        # in a folder of its own: the preprocessor's output files lie beside it
        # (the folder of the main file is searched first for quoted includes)
        (Path(tmp) / "src").mkdir()
        tmp_file = Path(tmp) / "src" / (path.name if path.name else "input.F90")
        tmp_file.write_text("\n".join(hidden_lines) + "\n", encoding="utf-8")
        search = ["-I", str(path.parent.resolve() if str(path.parent) else "."),
                  *[f"-I{os.path.abspath(d)}" for d in include_dirs]]
        copies: dict[str, str] = {}
        if checker.macro_includes():
            # a header #includes a file named by a macro (in a branch that
            # may not be taken): the preprocessor reads checked copies of
            # the headers, where such a line is an #error
            search, copies = checker.write_copies(Path(tmp) / "inc")
        # __has_include would let the file test whether any path exists
        cmd = [*command, "-nostdinc", *options, "-U__has_include", "-U__has_include_next",
               *search, str(tmp_file)]
        try:
            proc = run_limited(cmd, tmp, TIMEOUT)
        except subprocess.TimeoutExpired:
            raise PreprocessorError(f"{path}: the preprocessor took longer than {TIMEOUT} s") \
                from None
        except OSError as exc:
            raise PreprocessorError(f"cannot run the preprocessor: {exc}") from None
        if proc.truncated:
            raise PreprocessorError(f"the preprocessed text is larger than "
                                    f"{MAX_OUTPUT_BYTES} bytes (a macro that expands to "
                                    "huge text?)", SourceSpan(filename, 1))
        if proc.returncode != 0:
            for first, _last, word in deferred:
                if f"{tmp_file}:{first}:" in proc.stderr:
                    text = lines[first - 1]
                    raise macro_include_refusal(
                        word, SourceSpan(filename, first, 1, max(1, len(text)), text))
            copy_of = {v: k for k, v in copies.items()}
            for header, first, _last, word in checker.macro_includes():
                if f"{copy_of.get(str(header))}:{first}:" in proc.stderr:
                    shown = (_read_lines(str(header))[first - 1:first] or [""])[0]
                    raise macro_include_refusal(
                        word, SourceSpan(str(header), first, 1, max(1, len(shown)), shown))
            stderr = proc.stderr
            for copy, original in copies.items():
                stderr = stderr.replace(copy, original)
            raise _diagnostic(stderr, str(tmp_file), filename, lines)
        return _assemble(proc.stdout, str(tmp_file), filename, lines, hidden, checker, copies)


def preprocessor_command(path) -> list[str]:
    """``gfortran -E -cpp``, or else GCC's ``cpp`` in the traditional mode
    gfortran itself uses (C99 tokens would take Fortran's ``//`` for a
    comment and its apostrophes for character constants), without the
    predefined macros (``linux``, ``unix``) and system headers of C."""
    gfortran = shutil.which("gfortran")
    if gfortran is not None:
        return [gfortran, "-E", "-cpp", "-fdiagnostics-plain-output"]
    cpp = shutil.which("cpp")
    if cpp is not None:
        return [cpp, "-E", "-traditional-cpp", "-undef", "-nostdinc",
                "-fdiagnostics-plain-output"]
    raise PreprocessorError(f"{path} needs the C preprocessor: install gfortran (f2loopy runs "
                            "'gfortran -E -cpp') or GCC's cpp")


def _diagnostic(stderr: str, tmp_name: str, filename: str, lines) -> PreprocessorError:
    """The preprocessor's first error, located in the original file."""
    stderr_lines = stderr.splitlines()
    for k, line in enumerate(stderr_lines):
        m = _DIAG_RE.match(line)
        if not m:
            continue
        message = m.group(4).strip()
        if not message:     # file:line:col: on a line of its own, the message further down
            for x in stderr_lines[k + 1:]:
                if _DIAG_RE.match(x) or x.startswith("Warning:"):
                    break       # that header's message is a warning
                if x.startswith(("Error:", "Fatal Error:")):
                    message = x.split(":", 1)[1].strip()
                    break
        elif not re.match(r"\s*(fatal )?error:", message, re.IGNORECASE):
            continue
        else:
            message = message.split(":", 1)[1].strip()
        if not message:
            continue
        file, ln, col = m.group(1), int(m.group(2)), int(m.group(3))
        if file == tmp_name:
            file = filename
            if (0 < ln - 1 <= len(lines) and lines[ln - 2].lstrip().startswith("#")
                    and not (ln <= len(lines) and lines[ln - 1].lstrip().startswith("#"))):
                ln, col = ln - 1, 1     # gfortran names the line after a failed #include
            text = lines[ln - 1] if 0 < ln <= len(lines) else ""
        else:
            text = ""
        return PreprocessorError(message, SourceSpan(file, ln, max(col, 1), 1, text))
    tail = stderr.strip().replace(tmp_name, filename)
    return PreprocessorError(f"{filename}: the preprocessor failed: {tail[-500:]}")


def _assemble(output: str, tmp_name: str, filename: str, lines, hidden,
              checker: IncludeChecker, copies: dict | None = None) -> Preprocessed:
    """Text and line origins from the preprocessor's output and its markers
    (a marker naming a checked copy of a header, one of *copies*, stands for
    the header)."""
    out: list[str] = []
    origin: list = []
    includes: list[str] = []
    file, line = filename, 1
    for raw in output.splitlines():
        m = _MARKER_RE.match(raw)
        if m:
            line = int(m.group(1))
            # (escapes are C's; other bytes are the file name's own UTF-8)
            name = codecs.escape_decode(m.group(2).encode("utf-8"))[0].decode(
                "utf-8", "surrogateescape")
            name = (copies or {}).get(name, name)
            if name == tmp_name:
                file = filename
            elif name.startswith("<"):
                file = name                # <built-in>, <command-line>
            else:
                file = name
                if "1" in m.group(3).split() and name not in includes:
                    if not checker.admitted(name):      # checked above: cannot happen
                        raise PreprocessorError(f"{filename}: the preprocessor included a "
                                                "file that was not checked",
                                                SourceSpan(filename, 1))
                    includes.append(name)
            if file == filename:
                # keep the file's lines at their own numbers where nothing was
                # inserted before them (the preprocessor leaves out runs of
                # blank lines and says where it goes on)
                while len(out) < line - 1 and (not origin or origin[-1][0] == filename):
                    out.append("")
                    origin.append((filename, len(out)))
            continue
        if file.startswith("<"):
            continue
        ph = _PLACEHOLDER_RE.match(raw)
        if ph and file == filename and int(ph.group(1)) in hidden:
            raw = hidden[int(ph.group(1))]
        out.append(raw)
        origin.append((file, line))
        line += 1
    sources = {filename: list(lines)}
    return Preprocessed("\n".join(out) + "\n", filename, origin, includes,
                        [str(p) for p in checker.absent], sources)


def names_in(text: str) -> set[str]:
    """Every identifier-like word of *text* (lower case)."""
    return {w.lower() for w in _NAME_RE.findall(text)}


_QUOTED_RE = re.compile(r"'[^']*'|\"[^\"]*\"")


def unapplied_macros(text: str, path, defines, *,
                     fixed_form: bool = False) -> list[tuple[str, SourceSpan]]:
    """Where a ``-D`` macro of *defines* appears as a word (cpp's spelling: case
    matters) in the Fortran of *text*, a file that is not preprocessed: the
    first place of each such macro, in the order of *defines*.  Comments,
    character constants and the lines of a transformation script do not
    count, and a name the script mentions is left out (``-D Nq=8`` is the
    script's value of the argument ``Nq`` of the paper's file).  Pairs
    (name, span)."""
    wanted = [str(name) for name in defines or () if _NAME_RE.fullmatch(str(name))]
    if not wanted:
        return []
    lines = text.splitlines()
    hidden_lines, hidden = _hide_scripts(lines)
    for line in hidden.values():
        script_words = set(_NAME_RE.findall(line))
        wanted = [name for name in wanted if name not in script_words]
    first: dict[str, SourceSpan] = {}
    for no, line in enumerate(hidden_lines, start=1):
        if _PLACEHOLDER_RE.match(line) or (fixed_form and line[:1] in ("c", "C", "*")):
            continue
        # character constants blanked (same length), then the comment cut off
        code = _QUOTED_RE.sub(lambda m: " " * len(m.group()), line).split("!", 1)[0]
        for m in _NAME_RE.finditer(code):
            word = m.group()
            if word in wanted and word not in first:
                first[word] = SourceSpan(str(path), no, m.start() + 1, len(word), lines[no - 1])
    return [(name, first[name]) for name in wanted if name in first]


def unapplied_macro_message(name: str, path) -> str:
    """What :func:`unapplied_macros` reports for the macro *name* of *path*."""
    return (f"-D {name} is not applied: {Path(str(path)).name} is not preprocessed (gfortran "
            f"preprocesses a .f90 or .f file only with -cpp), so '{name}' stays a Fortran "
            "name; give -cpp, as the project's build does, to have the file preprocessed")


def nocpp_refusal(text: str, path) -> F2LoopyError | None:
    """The error for the first preprocessor line of *text* (the content of
    *path*) under ``-nocpp`` (gfortran warns 'Illegal preprocessor directive'
    and skips the line, so both branches of an ``#ifdef`` would be compiled),
    or None when it has none."""
    for no, line in enumerate(text.splitlines(), start=1):
        m = _CPP_LINE_RE.match(line)
        if m is not None:
            word = line.lstrip()
            word = word[:len(word) - len(word[1:].lstrip()) + len(m.group(1))]
            column = len(line) - len(line.lstrip()) + 1
            return PreprocessorError(
                f"'{word}' is a preprocessor line, but -nocpp turns the preprocessor off "
                "(gfortran then skips the line with a warning and compiles every branch of "
                "an #ifdef): drop -nocpp, or remove the line",
                SourceSpan(str(path), no, column, len(word), line))
    return None
