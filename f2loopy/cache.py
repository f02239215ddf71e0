"""A cache of translations, so that re-translating an unchanged file is cheap.

An entry is keyed by everything the outputs depend on: the content of the
Fortran file, its path and the output directory, the ``-D`` values, the
transformation recipe asked for, f2loopy's version and a fingerprint of
f2loopy's own source files (so that an edited installation never serves stale
outputs).  Files read while translating (recipes, scripts) are recorded with
their content hashes and checked on every hit.

Entries live outside the source tree: ``$F2LOOPY_CACHE_DIR``, else
``$XDG_CACHE_HOME/f2loopy``, else ``~/.cache/f2loopy``.  Each is one JSON file
written to a temporary name and renamed into place, so concurrent builds see
either a complete entry or none.  ``F2LOOPY_NO_CACHE=1`` turns the cache off.

The cache is not trusted:

* an entry holds the *texts* of the outputs by kind (``.cl``, ``_cl.py``, ...),
  never their paths: the caller recomputes the paths the translation writes, so
  an entry can only ever produce those files, and an entry with other kinds is
  ignored;
* the folder is private: created ``0700``, used only while it is owned by the
  user and nobody else may write to it (or read it), and an entry is read only
  when it is a regular file owned by the user; every file operation goes
  through a descriptor of the folder opened without following links;
* a corrupt entry (not JSON, wrong shapes, wrong types) is a miss, never an
  error.

Nothing outside the folder is written: a hit marks the entry itself as recently
used (for pruning), never a file the entry names.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
from pathlib import Path

#: entries kept; beyond this the oldest half is removed when one is stored
MAX_ENTRIES = 2000
#: an entry larger than this is not read (corrupt or planted)
MAX_ENTRY_BYTES = 256 << 20
_FORMAT = 3
_fingerprint: str | None = None
_ENTRY_NAME = "{key}.json"
_CONTROL = set(map(chr, range(32))) | {"\x7f"}


def enabled() -> bool:
    return os.environ.get("F2LOOPY_NO_CACHE", "") in ("", "0")


def cache_dir() -> Path:
    explicit = os.environ.get("F2LOOPY_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "f2loopy"


def code_fingerprint() -> str:
    """Version plus the sizes and modification times of f2loopy's modules."""
    global _fingerprint
    if _fingerprint is None:
        from f2loopy.version import __version__
        root = Path(__file__).resolve().parent
        h = hashlib.sha256(__version__.encode())
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(dirpath, name))
                    rel = os.path.relpath(os.path.join(dirpath, name), root)
                    h.update(f"{rel}:{st.st_size}:{st.st_mtime_ns};".encode())
        _fingerprint = h.hexdigest()
    return _fingerprint


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def translation_key(path, text: str, *, output_dir=None, defines=None, transform=None,
                    extra=()) -> str:
    parts = {
        "format": _FORMAT,
        "code": code_fingerprint(),
        # paths as given, and the directory they are relative to: outputs are
        # recorded as the translation named them
        "cwd": os.getcwd(),
        "path": str(path),
        "output_dir": None if output_dir is None else str(output_dir),
        "defines": sorted((str(k), repr(v)) for k, v in (defines or {}).items()),
        "transform": transform,
        "text": sha256_text(text),
        "extra": [str(x) for x in extra],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _file_sha(path) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


# {{{ the private folder

class _Folder:
    """The cache folder, opened once without following links, checked to be
    the user's own and private.  Use as a context manager."""

    def __init__(self, fd: int):
        self.fd = fd

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        os.close(self.fd)


def _open_folder(create: bool) -> _Folder | None:
    """The checked cache folder, or None when there is none (and *create* is
    false) or it is not safe to use."""
    d = cache_dir()
    if create:
        try:
            d.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(d, flags)
    except OSError:
        return None           # absent, a link, not a folder, or not readable
    try:
        st = os.fstat(fd)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            _warn_once(f"not using the translation cache {d}: it is not a folder of "
                       f"this user's own")
            os.close(fd)
            return None
        if st.st_mode & 0o077:
            # a folder others could write to may hold their entries: make it
            # private (each entry's owner is checked as well)
            os.fchmod(fd, 0o700)
    except OSError:
        os.close(fd)
        return None
    return _Folder(fd)


_warned: set = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        import sys
        print(f"f2loopy: warning: {message}", file=sys.stderr)


def _read_entry(folder: _Folder, name: str) -> dict | None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(name, flags, dir_fd=folder.fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid()
                or st.st_mode & 0o022 or st.st_size > MAX_ENTRY_BYTES):
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_ENTRY_BYTES + 1)
        try:
            entry = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            return None
        try:
            os.utime(fd)          # recently used: kept longest when pruning
        except (OSError, NotImplementedError):
            pass
        return entry if isinstance(entry, dict) else None
    except OSError:
        return None
    finally:
        os.close(fd)

# }}}


def _plain_path(p) -> bool:
    return isinstance(p, str) and 0 < len(p) < 4096 and not (set(p) & _CONTROL)


def load(key: str, kinds, main_path):
    """``(outputs, inputs, script_output)`` of a valid entry, or None.

    *kinds* are the output kinds the translation writes (suffixes such as
    ``".cl"``); *outputs* maps each to its text, and the entry must hold exactly
    those.  *main_path* is the translated file: *inputs* starts with it,
    followed by the other files the entry recorded (each re-hashed)."""
    if not enabled() or not isinstance(key, str) or not key.isalnum():
        return None
    folder = _open_folder(create=False)
    if folder is None:
        return None
    with folder:
        entry = _read_entry(folder, _ENTRY_NAME.format(key=key))
    if entry is None or entry.get("format") != _FORMAT:
        return None
    outputs = entry.get("outputs")
    if (not isinstance(outputs, dict) or set(outputs) != set(kinds)
            or not all(isinstance(t, str) for t in outputs.values())):
        return None
    inputs = entry.get("inputs")
    if not isinstance(inputs, list) or not inputs:
        return None
    for item in inputs:
        if (not isinstance(item, list) or len(item) != 2 or not _plain_path(item[0])
                or not isinstance(item[1], str)):
            return None
    if inputs[0][0] != str(main_path):
        return None
    for path, sha in inputs[1:]:            # the first input is the key's own text
        if _file_sha(path) != sha:
            return None
    output = entry.get("script_output", "")
    return (dict(outputs), [Path(main_path)] + [Path(p) for p, _ in inputs[1:]],
            output if isinstance(output, str) else "")


def store(key: str, outputs: dict, inputs, main_text: str, script_output: str = "") -> None:
    """Record a translation: *outputs* maps each output kind to its text;
    *inputs* are the files read, the translated file first.  Errors writing
    the cache are ignored."""
    if not enabled() or not key.isalnum():
        return
    recorded = []
    for k, path in enumerate(inputs):
        sha = sha256_text(main_text) if k == 0 else _file_sha(path)
        if sha is None or not _plain_path(str(path)):
            return            # an input vanished (or cannot be recorded): do not cache
        recorded.append([str(path), sha])
    entry = {"format": _FORMAT, "inputs": recorded,
             "outputs": {str(kind): text for kind, text in outputs.items()},
             "script_output": script_output}
    data = json.dumps(entry).encode("utf-8", "surrogatepass")
    folder = _open_folder(create=True)
    if folder is None:
        return
    with folder:
        tmp = f".entry.{secrets.token_hex(8)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                         | getattr(os, "O_NOFOLLOW", 0), 0o600, dir_fd=folder.fd)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, _ENTRY_NAME.format(key=key), src_dir_fd=folder.fd,
                           dst_dir_fd=folder.fd)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=folder.fd)
                except OSError:
                    pass
                raise
            _prune(folder)
        except OSError:
            pass


def _prune(folder: _Folder) -> None:
    try:
        with os.scandir(folder.fd) as it:
            entries = [(e.stat(follow_symlinks=False).st_mtime, e.name) for e in it
                       if e.name.endswith(".json")]
    except OSError:
        return
    if len(entries) <= MAX_ENTRIES:
        return
    entries.sort()
    for _, name in entries[:len(entries) // 2]:
        try:
            os.unlink(name, dir_fd=folder.fd)
        except OSError:
            pass
