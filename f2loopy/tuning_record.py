"""Tuning records: what ``f2loopy tune`` measured best, kept beside the source.

``FILE.tune.json`` (for ``volume.f90``: ``volume.f90.tune.json``) is a small
JSON file meant to be committed with the source.  Each entry holds the winning
``tunable(...)`` values for one (file content, ``-D`` values, recipe, OpenCL
device, sizes) and what was measured::

    {"f2loopy_tuning_record": 1,
     "entries": [{"source_sha256": "...", "defines": {"Nq": 8}, "transform": null,
                  "device": "NVIDIA H100 80GB HBM3 (NVIDIA CUDA)", "sizes": {"Ne": 6910},
                  "values": {"tile": 16}, "time_ms": 0.171, "default_ms": 0.179, ...}]}

``f2loopy translate`` uses the newest entry for the file's current content,
``-D`` values and recipe (and says so); an edited file matches no entry until
it is tuned again.  The file is read as untrusted input: it is size-capped,
every name and value is checked (:mod:`f2loopy.directives.tunables`), and
text shown from it (the device name) is reduced to printable characters.
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import json
import os
import re
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from f2loopy.diagnostics import F2LoopyError, SourceSpan
from f2loopy.directives.tunables import (
    TunableError,
    check_assignment,
    check_name,
    format_assignment,
    to_json,
)

FORMAT = 1
MAX_BYTES = 1 << 20
MAX_ENTRIES = 200
_TEXT_RE = re.compile(r"[^\x20-\x7e]")


class RecordError(F2LoopyError):
    """A tuning record that cannot be read or used."""


def record_path(source: str | os.PathLike) -> Path:
    source = Path(source)
    return source.with_name(source.name + ".tune.json")


def check_record_name(source: str | os.PathLike) -> None:
    """Raise a :class:`RecordError` if the record of *source* cannot exist:
    its name (the source's name plus ``.tune.json``) is longer than the file
    system allows.  ``f2loopy tune`` asks before it tunes, not after."""
    path = record_path(source)
    try:
        limit = os.pathconf(path.parent if str(path.parent) else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    if len(os.fsencode(path.name)) > limit:
        raise RecordError(f"the tuning record of {Path(source).name} would be named "
                          f"{path.name}, longer than the {limit} bytes the file system allows "
                          "for a name: shorten the Fortran file's name (or tune with "
                          "--dry-run)", SourceSpan(str(source), 1))


@contextmanager
def _locked(folder: Path):
    """Hold an exclusive lock on *folder* (``flock`` of the folder itself: no
    lock file is left beside the record), so that two ``f2loopy tune`` runs
    that store into one record at once both keep their entries.  Where the
    file system cannot lock, the block runs without."""
    import fcntl
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) |
                     getattr(os, "O_CLOEXEC", 0))
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)        # (releases the lock)


def source_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def clean_text(text, limit: int = 200) -> str:
    """Printable ASCII only, length-capped (device names go to the terminal)."""
    return _TEXT_RE.sub("?", str(text))[:limit]


def _canonical_defines(defines: dict | None) -> dict:
    out: dict[str, bool | int | float | str] = {}
    for k, v in sorted((defines or {}).items()):
        if isinstance(v, (bool, int, float)):
            out[str(k)] = v
        else:
            out[str(k)] = str(v)
    return out


def _check_sizes(sizes) -> dict:
    if not isinstance(sizes, dict) or len(sizes) > 64:
        raise TunableError("malformed sizes")
    out = {}
    for n, v in sizes.items():
        check_name(n)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 2 ** 40:
            raise TunableError(f"size {n} must be a non-negative integer")
        out[n] = v
    return out


@dataclass
class Entry:
    source_sha256: str
    defines: dict
    transform: str | None
    device: str
    sizes: dict
    values: dict
    data: dict              # everything stored (measurements too)

    def describe(self) -> str:
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        t = self.data.get("time_ms")
        timing = f", {t:.4g} ms" if isinstance(t, (int, float)) else ""
        return f"{self.device}" + (f", {sizes}" if sizes else "") + timing

    def matches(self, sha: str, defines: dict, transform: str | None) -> bool:
        return (self.source_sha256 == sha and self.defines == _canonical_defines(defines)
                and self.transform == transform)


def _entry(raw) -> Entry:
    if not isinstance(raw, dict):
        raise TunableError("an entry is not an object")
    sha = raw.get("source_sha256")
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        raise TunableError("bad source_sha256")
    defines = raw.get("defines", {})
    if not isinstance(defines, dict) or len(defines) > 64:
        raise TunableError("bad defines")
    for k, v in defines.items():
        check_name(k)
        if not isinstance(v, (bool, int, float, str)) or (isinstance(v, str) and len(v) > 200):
            raise TunableError(f"bad value for define {k}")
    transform = raw.get("transform")
    if transform is not None and (not isinstance(transform, str) or len(transform) > 500):
        raise TunableError("bad transform")
    device = raw.get("device")
    if not isinstance(device, str):
        raise TunableError("bad device")
    values = check_assignment(raw.get("values"))
    return Entry(sha, _canonical_defines(defines), transform, clean_text(device),
                 _check_sizes(raw.get("sizes", {})), values, raw)


def _error(path: Path, why: str) -> RecordError:
    return RecordError(f"{path} is not a usable tuning record ({why}); delete it or run "
                       "'f2loopy tune' again", SourceSpan(str(path), 1))


def read_record(path: str | os.PathLike) -> list[Entry]:
    """The entries of the record at *path* ([] when there is none)."""
    path = Path(path)
    # opened without blocking and checked on the descriptor: a record that
    # came with downloaded code may be a FIFO or a link to /dev/stdin
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        return []
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            return []       # a source name near the limit: no record can exist
        raise _error(path, exc.strerror or str(exc)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _error(path, "not a regular file")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise _error(path, exc.strerror or str(exc)) from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > MAX_BYTES:
        raise _error(path, f"larger than {MAX_BYTES} bytes")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _error(path, f"invalid JSON: {clean_text(exc, 100)}") from None
    if not isinstance(doc, dict) or doc.get("f2loopy_tuning_record") != FORMAT:
        raise _error(path, "unknown format")
    raw = doc.get("entries")
    if not isinstance(raw, list) or len(raw) > MAX_ENTRIES:
        raise _error(path, "bad entries")
    try:
        return [_entry(e) for e in raw]
    except TunableError as exc:
        raise _error(path, clean_text(exc)) from None


def find_entry(source: str | os.PathLike, text: str, defines: dict | None,
               transform: str | None) -> tuple[Entry | None, Path]:
    """The newest entry of *source*'s record for this content, ``-D`` values
    and recipe (None if none matches), and the record's path."""
    path = record_path(source)
    sha = source_hash(text)
    matching = [e for e in read_record(path) if e.matches(sha, defines or {}, transform)]
    return (matching[-1] if matching else None), path


def usage_note(source, entry: Entry, path: Path) -> str:
    return (f"{source}: using the tuned choices {format_assignment(entry.values)} from "
            f"{path.name} (measured on {entry.describe()})")


def create_empty_record(path: Path) -> bool:
    """Write a record without entries at *path* unless a file is there
    (never replaced); whether the record exists afterwards.  Builds watch it
    (``f2loopy translate --depfile``, ``f2loopyfc`` with ``-MD``)."""
    doc = json.dumps({"f2loopy_tuning_record": FORMAT, "entries": []}) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o644)
    except FileExistsError:
        return True
    except OSError:
        return False                # a read-only source folder: nothing to watch
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(doc)
    try:        # as old as its source: the outputs written just now stay newer
        source = path.with_name(path.name[:-len(".tune.json")]).stat()
        os.utime(path, ns=(source.st_atime_ns, source.st_mtime_ns))
    except OSError:
        pass
    return True


def store_entry(source: str | os.PathLike, text: str, *, defines: dict | None,
                transform: str | None, device: str, sizes: dict, values: dict,
                measurements: dict) -> Path:
    """Add (or replace) the entry for this content, defines, recipe, device and
    sizes in *source*'s record; the file is replaced atomically.  Entries for
    older contents of the file are dropped."""
    path = record_path(source)
    sha = source_hash(text)
    values = check_assignment(values)
    sizes = _check_sizes(dict(sizes))
    device = clean_text(device)
    with _locked(path.parent):     # read, merge and replace as one step
        return _store(path, sha, defines, transform, device, sizes, values, measurements)


def _store(path: Path, sha: str, defines, transform, device: str, sizes: dict, values: dict,
           measurements: dict) -> Path:
    kept = []
    for e in read_record(path):
        if e.source_sha256 != sha:
            continue                       # tuned for an older version of the file
        if e.matches(sha, defines or {}, transform) and e.device == device \
                and e.sizes == sizes:
            continue                       # replaced below
        kept.append(e.data)
    entry = {"source_sha256": sha, "defines": _canonical_defines(defines),
             "transform": transform, "device": device, "sizes": sizes,
             "values": {k: to_json(v) for k, v in values.items()},
             "when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    entry.update(measurements)
    kept.append(entry)
    doc = {"f2loopy_tuning_record": FORMAT, "entries": kept[-MAX_ENTRIES:]}
    text_out = json.dumps(doc, indent=1, sort_keys=False, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=".tune-", dir=str(path.parent or "."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text_out)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
