"""Fortran ``include`` lines, expanded as gfortran expands them, before fparser
reads the file (issue 26, item 3).

fparser would open the file itself, relative to the process's current folder
(or any absolute path), and keep an ``include`` it cannot find as a statement.
Here instead:

* ``include 'name'`` is looked up in the folder of the file that holds the
  line first, then in the ``-I`` folders in order (gfortran's order);
* the file found must lie under the translated file's folder or an ``-I``
  folder (its real path: a symbolic link out of them is refused), as for
  ``#include`` (:mod:`f2loopy.cpp_guard`); an absolute name is confined the
  same way;
* a file that is not found, not a regular file, too large, nested too deep
  or that includes itself is a located error at the ``include`` line;
* the files included are inputs of the translation (depfiles), and an error
  in their lines points at them (:class:`~f2loopy.preprocessor.Preprocessed`).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from f2loopy import cpp_guard
from f2loopy.diagnostics import FortranError, SourceSpan
from f2loopy.escape import fits_depfile
from f2loopy.preprocessor import Preprocessed

#: an include line (free or fixed form; a trailing comment allowed)
_INCLUDE_RE = re.compile(r"""^[ \t]*include[ \t]*(?:'((?:[^']|'')*)'|"((?:[^"]|"")*)")"""
                         r"[ \t]*(?:!.*)?$", re.IGNORECASE)


def include_name(line: str) -> str | None:
    """The file name of Fortran include line *line*, else None."""
    m = _INCLUDE_RE.match(line)
    if not m:
        return None
    return m.group(1).replace("''", "'") if m.group(1) is not None \
        else m.group(2).replace('""', '"')


def has_includes(text: str) -> bool:
    return "include" in text.lower() and \
        any(_INCLUDE_RE.match(line) for line in text.splitlines())


class IncludeError(FortranError):
    """An ``include`` line that cannot be followed."""


def expand_includes(text: str, filename: str, include_dirs=(), *,
                    base: Preprocessed | None = None) -> Preprocessed | None:
    """*text* (of file *filename*) with its include lines replaced by the
    files they name, or None if it has none.  *base*: *text* is itself the
    output of the C preprocessor, whose line origins are composed with the
    include lines' (an include line there is looked up from the folder of
    the file it came from)."""
    if not has_includes(text):
        return None
    main = Path(filename)
    folder = main.parent if str(main.parent) else Path(".")
    search = [Path(d) for d in include_dirs]
    roots = []
    for d in [folder, *search]:
        try:
            roots.append(Path(os.path.realpath(d)))
        except (OSError, ValueError):
            pass
    out: list[str] = []
    origin: list = []
    includes: list[str] = []
    #: candidates looked at before the file found (a depfile names them: a
    #: file created there later is found first)
    absent: list[str] = []
    sources: dict = {} if base is None else dict(base.sources)
    count = [0]

    def where(k: int, file: str):
        if base is not None and file == filename:
            return base.where(k) or (file, k)
        return (file, k)

    def expand(lines: list[str], file: str, depth: int, chain: tuple):
        for k, line in enumerate(lines, 1):
            name = include_name(line)
            if name is None:
                out.append(line)
                origin.append(where(k, file))
                continue
            at_file, at_line = where(k, file)
            span = SourceSpan(at_file, at_line, max(1, line.lower().find("include") + 1), 7,
                              line)
            path = _find(name, Path(at_file).parent if str(Path(at_file).parent) else Path("."),
                         search, roots, span, absent)
            real = os.path.realpath(path)
            count[0] += 1
            if count[0] > cpp_guard.MAX_INCLUDES:
                raise IncludeError(f"more than {cpp_guard.MAX_INCLUDES} include lines are "
                                   "followed (includes that repeat themselves?)", span)
            if real in chain or depth >= cpp_guard.MAX_DEPTH:
                raise IncludeError(f"include '{name}': {path} includes itself", span)
            data = _read(path, name, span)
            if str(path) not in includes:
                includes.append(str(path))
            inner = data.splitlines()
            sources[str(path)] = inner
            expand(inner, str(path), depth + 1, (*chain, real))

    expand(text.splitlines(), filename, 0, (os.path.realpath(filename),))
    if base is not None:
        includes = [*base.includes, *(f for f in includes if f not in base.includes)]
        absent = [*base.absent, *(f for f in absent if f not in base.absent)]
    return Preprocessed("\n".join(out) + "\n", filename, origin=origin, includes=includes,
                        absent=absent, sources=sources)


def _find(name: str, folder: Path, search: list[Path], roots: list[Path],
          span: SourceSpan, absent: list[str]) -> Path:
    if not name or "\0" in name:
        raise IncludeError("include of an empty file name", span)
    dirs = [Path("/")] if os.path.isabs(name) else [folder, *search]
    for d in dirs:
        cand = d / name
        if not os.path.lexists(cand):
            if fits_depfile(cand) and str(cand) not in absent:
                absent.append(str(cand))
            continue
        if not fits_depfile(cand):
            raise IncludeError(f"include '{name}': an included file's path may not hold "
                               "control characters", span)
        try:
            real = Path(os.path.realpath(cand))
        except (OSError, ValueError, RuntimeError):
            raise IncludeError(f"include '{name}': {cand} cannot be read (a looping "
                               "symbolic link?)", span) from None
        if not any(real == r or r in real.parents for r in roots):
            raise IncludeError(
                f"include '{name}' reaches {real}, outside the source's folder and the -I "
                "folders (an included file must lie under one of them; add -I DIR for a "
                "folder of headers)", span)
        return cand
    where = ", ".join(str(d) for d in dirs)
    raise IncludeError(f"include '{name}': no such file in {where}", span)


def _read(path: Path, name: str, span: SourceSpan) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise IncludeError(f"include '{name}': {path}: {exc.strerror}", span) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise IncludeError(f"include '{name}': {path} is not a regular file (a device, a "
                               "FIFO or a folder)", span)
        if st.st_size > cpp_guard.MAX_INCLUDE_BYTES:
            raise IncludeError(f"include '{name}': {path} is larger than "
                               f"{cpp_guard.MAX_INCLUDE_BYTES} bytes", span)
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(cpp_guard.MAX_INCLUDE_BYTES + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")
