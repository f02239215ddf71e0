"""What the C preprocessor may read, and the limits it runs under.

A downloaded ``.F90`` file is untrusted, and the preprocessor opens every file
its ``#include`` lines name: ``#include "/proc/self/environ"`` or ``#include
"../../.ssh/id_rsa"`` would pull the user's environment or files into the
translation (and from there into the generated kernels and glue, or into
error messages), and ``#include "/dev/zero"`` or a FIFO would hang it.  So,
before the preprocessor runs, :func:`check_includes` follows every
``#include`` (``#include_next``, ``#import``) of the file and of the files it
includes, in every ``#if`` branch, and refuses (with the line) one that

- names its file with a macro (``#include HEADER``): which file that is cannot
  be known before the preprocessor runs;
- reaches a file outside the source's own folder and the ``-I`` folders (after
  following symbolic links: a link in the source tree that points at the home
  folder is outside);
- reaches something that is not a regular file (a device, a FIFO, a folder),
  or a file larger than :data:`MAX_INCLUDE_BYTES`.

The preprocessor then runs without the system's include folders
(``-nostdinc``), with no standard input, in its own process group, under
memory, CPU-time and output-size limits (:func:`run_limited`): a macro that
expands to gigabytes stops with a clear error, and a timeout kills its
``cc1`` child too.  ``#line N "FILE"`` only renames lines: the file it names
is never opened (diagnostics show the line as preprocessed).
"""

from __future__ import annotations

import os
import re
import resource
import signal
import stat
import subprocess
from pathlib import Path

from f2loopy.diagnostics import F2LoopyError, SourceSpan
from f2loopy.escape import fits_depfile
from f2loopy.regular_files import read_regular

#: the largest file ``#include`` may read
MAX_INCLUDE_BYTES = 16 * 1024 * 1024
#: the most files (counted with repeats) a translation may include
MAX_INCLUDES = 2000
#: nesting depth of includes (the preprocessor's own limit is 200)
MAX_DEPTH = 200
#: the largest preprocessed text (and diagnostics) the preprocessor may write
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
#: address space of the preprocessor's processes
MEMORY_BYTES = 2 * 1024 * 1024 * 1024

# (a byte order mark before the first line's '#' is skipped by the preprocessor)
_INTRO_RE = re.compile(r"^\ufeff?[ \t]*(?:#|%:|\?\?=)(.*)$")
_COMMENT_RE = re.compile(r"/\*.*?\*/", re.S)
_INCLUDE_RE = re.compile(r"[ \t]*(include_next|include|import)(?![A-Za-z0-9_$])(.*)$", re.S)
# (the preprocessor runs with these undefined, so a name pasted together from
# parts is an undefined name; written out, they get a clear message)
_REFUSED_RE = re.compile(r"\b__has_include(?:_next)?\b|^[ \t]*pragma[ \t]+GCC[ \t]+dependency\b")
_QUOTED_RE = re.compile(r'[ \t]*(?:"([^"\n]*)"|<([^>\n]*)>)')


class IncludeRefused(F2LoopyError):
    """An ``#include`` that may not be followed."""


#: the directive that stands for an ``#include`` of a macro-named file in
#: the preprocessor's copy of the source (see :meth:`IncludeChecker.check`)
MACRO_INCLUDE_MARK = "#error f2loopy_macro_include"


def macro_include_refusal(directive: str, span: SourceSpan) -> IncludeRefused:
    """The refusal of an ``#include`` (``#include_next``, ``#import``) that
    names its file with a macro, in a branch the preprocessor takes."""
    return IncludeRefused(f"#{directive} with a macro for the file name is not supported (the "
                          "file it reads could be any file): write the name in quotes", span)


def _directives(lines: list[str]):
    """``(first line number, last line number, directive text)`` of the
    preprocessor lines of *lines*: backslash continuations joined, comments
    removed."""
    k = 0
    while k < len(lines):
        start = k
        m = _INTRO_RE.match(lines[k])
        if not m:
            k += 1
            continue
        body = m.group(1)
        k += 1
        while (body.endswith("\\") or body.count("/*") > body.count("*/")) and k < len(lines):
            body = (body[:-1] if body.endswith("\\") else body + "\n") + lines[k]
            k += 1
        yield start + 1, k, _COMMENT_RE.sub(" ", body)


def _inside(real: Path, roots: list[Path]) -> bool:
    return any(real == r or r in real.parents for r in roots)


class IncludeChecker:
    """Follows the includes of one translation (see the module's text)."""

    def __init__(self, source: Path, include_dirs):
        folder = source.parent if str(source.parent) else Path(".")
        self.search = [folder, *(Path(d) for d in include_dirs)]
        self.roots = []
        for d in self.search:
            try:
                self.roots.append(Path(os.path.realpath(d)))
            except (OSError, ValueError):
                pass
        #: the real paths of every file that may be included
        self.allowed: set[Path] = set()
        #: every path looked at for an include that did not exist, in order: a
        #: file created there later would be read instead (the translation
        #: cache's entries are valid only while they stay absent)
        self.absent: list[Path] = []
        self.count = 0
        #: every included file found, by where it was found: (index of its
        #: search folder, path relative to that folder) -> (its path, its
        #: bytes as checked, the ``(first, last, word)`` of its #include lines
        #: that name their file with a macro, the #include line that reached it)
        self.found: dict[tuple[int, str], tuple[Path, bytes, list, SourceSpan]] = {}

    def check(self, lines: list[str], filename: str, folder: Path | None, depth: int = 0,
              *, deferred: list[tuple[int, int, str]] | None = None,
              place: tuple[int, str] | None = None):
        """Check the includes of *lines* (the text of *filename*, whose
        quoted includes are looked up in *folder* first).

        With *deferred* (a list; only for the text the preprocessor reads
        from f2loopy's own copy, never for a file it opens itself), an
        ``#include`` naming its file with a macro is not refused here: its
        first and last line numbers and its directive word are appended, and the caller replaces those
        lines by an ``#error`` (:data:`MACRO_INCLUDE_MARK`) so that the
        preprocessor stops there if, and only if, the branch holding it is taken
        (a project's ``#ifdef USE_NETCDF`` / ``#include NETCDF_INC`` is then no
        obstacle where the macro is not defined).  In an included file (one
        with a *place*: its search folder's index and its path relative to
        it) such lines are recorded in :attr:`found` likewise; the caller
        then has the preprocessor read checked copies
        (:meth:`write_copies`)."""
        for no, last, body in _directives(lines):
            text = lines[no - 1] if no <= len(lines) else ""
            span = SourceSpan(filename, no, 1, max(1, len(text)), text)
            refused = _REFUSED_RE.search(body)
            if refused:
                raise IncludeRefused(f"'{refused.group(0)}' is not supported in files "
                                     "f2loopy preprocesses (it reads or tests files by "
                                     "name)", span)
            m = _INCLUDE_RE.match(body)
            if not m:
                continue
            q = _QUOTED_RE.match(m.group(2))
            if not q and deferred is not None:
                deferred.append((no, last, m.group(1)))
                continue
            if not q and place is not None:
                self.found[place][2].append((no, last, m.group(1)))
                continue
            if not q:
                raise macro_include_refusal(m.group(1), span)
            name = q.group(1) if q.group(1) is not None else q.group(2)
            if not name:
                raise IncludeRefused(f"#{m.group(1)} of an empty file name", span)
            here = (place[0], os.path.dirname(place[1])) if place is not None and \
                q.group(1) is not None else None
            for found, where in self._candidates(name, folder if q.group(1) is not None
                                                 else None, here):
                self._admit(found, name, span, depth, where)

    def _candidates(self, name: str, folder: Path | None, here: tuple[int, str] | None):
        """``(path, place)`` of the files *name* may reach, in the order the
        preprocessor looks (the includer's *folder* first, at *here*); the
        place (index of a search folder, path relative to it) is None for
        an absolute name."""
        dirs: list[tuple[Path, tuple[int, str] | None]]
        if os.path.isabs(name):
            dirs = [(Path("/"), None)]
        else:
            dirs = ([(folder, here)] if folder is not None else []) + \
                [(d, (k, "")) for k, d in enumerate(self.search)]
        seen = set()
        for d, at in dirs:
            cand = d / name
            if cand in seen:
                continue
            seen.add(cand)
            if os.path.lexists(cand):
                yield cand, None if at is None else (at[0], os.path.join(at[1], name))
            elif cand not in self.absent:
                self.absent.append(cand)

    def _admit(self, cand: Path, name: str, span: SourceSpan, depth: int,
               place: tuple[int, str] | None):
        if not fits_depfile(cand):
            # (a depfile, a terminal or a Make rule could not show it safely)
            raise IncludeRefused(f"#include \"{name}\": an included file's path may not hold "
                                 "control characters", span)
        try:
            real = Path(os.path.realpath(cand))
            st = os.stat(real)
        except (OSError, ValueError, RuntimeError):
            raise IncludeRefused(f"#include \"{name}\": {cand} cannot be read (a broken or "
                                 "looping symbolic link?)", span) from None
        if not _inside(real, self.roots):
            raise IncludeRefused(
                f"#include \"{name}\" reaches {real}, outside the source's folder and the "
                "-I folders (an included file must lie under one of them; add -I DIR for "
                "a folder of headers)", span)
        if not stat.S_ISREG(st.st_mode):
            raise IncludeRefused(f"#include \"{name}\": {cand} is not a regular file (a "
                                 "device, a FIFO or a folder)", span)
        if st.st_size > MAX_INCLUDE_BYTES:
            raise IncludeRefused(f"#include \"{name}\": {cand} is larger than "
                                 f"{MAX_INCLUDE_BYTES} bytes", span)
        self.count += 1
        if self.count > MAX_INCLUDES:
            raise IncludeRefused(f"more than {MAX_INCLUDES} #include lines are followed "
                                 "(includes that repeat themselves?)", span)
        if depth >= MAX_DEPTH:
            raise IncludeRefused(f"#include nested more than {MAX_DEPTH} deep (a file that "
                                 "includes itself?)", span)
        if place is not None and place in self.found:
            return            # checked where it was first found there
        if real in self.allowed and place is None:
            return            # its own includes were checked when it was first seen
        self.allowed.add(real)
        try:        # checked again on the open file: one swapped since is not read
            data = read_regular(real, MAX_INCLUDE_BYTES)
        except OSError as exc:
            raise IncludeRefused(f"#include \"{name}\": {exc.strerror}", span) from None
        if place is not None:
            self.found[place] = (cand, data, [], span)
        lines = data.decode("utf-8", errors="replace").splitlines()
        self.check(lines, str(cand), cand.parent, depth + 1, place=place)

    def macro_includes(self) -> list[tuple[Path, int, int, str]]:
        """``(file, first line, last line, directive)`` of the #include lines
        of included files that name their file with a macro."""
        return [(cand, *d) for cand, _data, deferred, _span in self.found.values()
                for d in deferred]

    def write_copies(self, folder: Path) -> tuple[list[str], dict]:
        """Write every included file found into *folder*, as it was checked
        and with its macro-named #include lines replaced by
        :data:`MACRO_INCLUDE_MARK` (the preprocessor stops there if, and only
        if, their branch is taken), at the same places under copies of the
        search folders; returns the ``-I`` options for the copies (in the
        order of the search folders) and copy path -> the file's own path.

        :raises IncludeRefused: (at the #include line) an included file that
            such a copy cannot stand for: reached through ``..``."""
        copies: dict[str, str] = {}
        for (k, rel), (cand, data, deferred, span) in self.found.items():
            parts = Path(rel).parts
            if os.path.isabs(rel) or ".." in parts:
                raise IncludeRefused(
                    f"#include \"{rel}\" goes through '..' in a project whose headers "
                    "#include a file named by a macro: name the header from an -I folder "
                    "instead", span)
            lines = data.decode("utf-8", "surrogateescape").splitlines(keepends=True)
            for first, last, _word in deferred:
                for j in range(first - 1, min(last, len(lines))):
                    ending = lines[j][len(lines[j].rstrip("\r\n")):]
                    lines[j] = (MACRO_INCLUDE_MARK if j == first - 1 else "") + ending
            target = folder / str(k) / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes("".join(lines).encode("utf-8", "surrogateescape"))
            copies[str(target)] = str(cand)
        for k in range(len(self.search)):
            (folder / str(k)).mkdir(parents=True, exist_ok=True)
        return [f"-I{folder / str(k)}" for k in range(len(self.search))], copies

    def admitted(self, name: str) -> bool:
        """Whether *name* (a file the preprocessor says it entered) is one
        of the files checked."""
        try:
            return Path(os.path.realpath(name)) in self.allowed
        except (OSError, ValueError):
            return False


def _limits(timeout: int):
    def apply():
        for what, soft, hard in ((resource.RLIMIT_AS, MEMORY_BYTES, MEMORY_BYTES),
                                 (resource.RLIMIT_FSIZE, MAX_OUTPUT_BYTES, MAX_OUTPUT_BYTES),
                                 (resource.RLIMIT_CPU, timeout, timeout + 5),
                                 (resource.RLIMIT_CORE, 0, 0)):
            limit = resource.getrlimit(what)[1]
            if limit != resource.RLIM_INFINITY:
                soft, hard = min(soft, limit), min(hard, limit)
            resource.setrlimit(what, (soft, hard))
    return apply


class Limited:
    """The result of :func:`run_limited`."""

    def __init__(self, returncode: int, stdout: str, stderr: str, truncated: bool):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr
        #: the output reached :data:`MAX_OUTPUT_BYTES`
        self.truncated = truncated


def run_limited(cmd: list[str], cwd: str, timeout: int) -> Limited:
    """Run *cmd* in *cwd* (a private temporary folder) under the limits;
    :class:`subprocess.TimeoutExpired` after *timeout* seconds (the whole
    process group is killed first)."""
    out_path, err_path = os.path.join(cwd, ".cpp-out"), os.path.join(cwd, ".cpp-err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                cwd=cwd, preexec_fn=_limits(timeout), start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except BaseException:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
            raise
    size = os.path.getsize(out_path)
    with open(out_path, encoding="utf-8", errors="replace") as f:
        stdout = f.read()
    with open(err_path, encoding="utf-8", errors="replace") as f:
        stderr = f.read(1 << 20)
    return Limited(proc.returncode, stdout, stderr, size >= MAX_OUTPUT_BYTES)
