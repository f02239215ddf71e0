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
  error;
* an entry is served only when this user wrote it: each carries an HMAC-SHA256
  of its key and content under a secret of the user's own
  (:func:`secret_key`: ``$F2LOOPY_CACHE_KEY``, else
  ``$XDG_CONFIG_HOME/f2loopy/cache-key``, else ``~/.config/f2loopy/cache-key``;
  32 random bytes, a regular file of mode ``0600`` owned by the user, kept
  *outside* the cache folder), so an entry written by another job of the same
  account with another secret (a shared CI image, a cache restored from another
  branch) or edited afterwards is a miss.  Without a usable secret the cache
  is off.

Nothing outside the folder is written: a hit marks the entry itself as recently
used (for pruning), never a file the entry names.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path

#: entries kept; beyond this the oldest half is removed when one is stored
MAX_ENTRIES = 2000
#: an entry larger than this is not read (corrupt or planted)
MAX_ENTRY_BYTES = 256 << 20
_FORMAT = 4
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
    # an input swapped for a FIFO or /dev/zero since the entry was stored is
    # not read (None: the entry is stale, the translation says why)
    from f2loopy.regular_files import read_regular
    try:
        return hashlib.sha256(read_regular(path)).hexdigest()
    except OSError:
        return None


# {{{ the user's secret: entries are authenticated

#: the secret's length in bytes
KEY_BYTES = 32
_secret: dict = {}


def key_file() -> Path:
    """Where the user's secret lives (never inside the cache folder, which a
    CI system may restore from elsewhere)."""
    explicit = os.environ.get("F2LOOPY_CACHE_KEY")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg else Path.home() / ".config"
    return base / "f2loopy" / "cache-key"


def _read_key(path: Path) -> bytes | None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid()
                or st.st_mode & 0o077 or st.st_size != KEY_BYTES):
            _warn_once(f"not using the translation cache: its key {path} must be a file "
                       f"of {KEY_BYTES} bytes of this user's own that nobody else can read "
                       "or write (mode 0600)")
            return None
        data = os.read(fd, KEY_BYTES + 1)
        return data if len(data) == KEY_BYTES else None
    except OSError:
        return None
    finally:
        os.close(fd)


def secret_key() -> bytes | None:
    """The user's secret (created on first use), or None where there is no
    usable one (the cache is then off)."""
    path = key_file()
    if str(path) in _secret:
        return _secret[str(path)]
    key = _read_key(path)
    if key is None and not os.path.lexists(path):
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = _private_temp(path.parent)
            try:
                try:
                    data = secrets.token_bytes(KEY_BYTES)
                    if os.write(fd, data) != len(data):
                        raise OSError("short write")
                finally:
                    os.close(fd)
                os.link(tmp, path)       # never replaces a key another process made
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        except OSError:
            pass
        key = _read_key(path)
    _secret[str(path)] = key
    return key


def _private_temp(folder: Path) -> tuple[int, str]:
    tmp = str(folder / f".cache-key.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    return os.open(tmp, flags, 0o600), tmp


def mac(secret: bytes, purpose: str, *parts: bytes) -> str:
    """HMAC-SHA256 under *secret* of *purpose* and *parts* (each length-prefixed:
    no two different lists of parts give the same message)."""
    h = hmac.new(secret, digestmod=hashlib.sha256)
    for part in (purpose.encode(), *parts):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def encode_entry(key: str, entry: dict, secret: bytes) -> bytes:
    """An entry's file: its MAC (hex) on the first line, then its JSON."""
    body = json.dumps(entry).encode("utf-8", "surrogatepass")
    return mac(secret, "entry", key.encode(), body).encode() + b"\n" + body


def decode_entry(key: str, data: bytes, secret: bytes) -> dict | None:
    """The entry in *data* if its MAC is right for *key* under *secret*."""
    tag, sep, body = data.partition(b"\n")
    if not sep or not hmac.compare_digest(tag, mac(secret, "entry", key.encode(),
                                                    body).encode()):
        return None
    try:
        entry = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return entry if isinstance(entry, dict) else None

# }}}


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


def _read_entry(folder: _Folder, name: str, key: str, secret: bytes) -> dict | None:
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
        entry = decode_entry(key, data, secret)
        if entry is None:
            return None
        try:
            os.utime(fd)          # recently used: kept longest when pruning
        except (OSError, NotImplementedError):
            pass
        return entry
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
        secret = secret_key()
        if secret is None:
            return None
        entry = _read_entry(folder, _ENTRY_NAME.format(key=key), key, secret)
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
    absent = entry.get("absent")
    if not isinstance(absent, list) or not all(_plain_path(p) for p in absent):
        return None
    for path in absent:                     # a header created where #include looked
        if os.path.lexists(path):
            return None
    output = entry.get("script_output", "")
    return (dict(outputs), [Path(main_path)] + [Path(p) for p, _ in inputs[1:]],
            output if isinstance(output, str) else "")


def store(key: str, outputs: dict, inputs, main_text: str, script_output: str = "",
          absent=()) -> None:
    """Record a translation: *outputs* maps each output kind to its text;
    *inputs* are the files read, the translated file first; *absent* the
    paths an ``#include`` looked at that did not exist (the entry is a miss
    once one does).  Errors writing the cache are ignored."""
    if not enabled() or not key.isalnum():
        return
    recorded = []
    for k, path in enumerate(inputs):
        sha = sha256_text(main_text) if k == 0 else _file_sha(path)
        if sha is None or not _plain_path(str(path)):
            return            # an input vanished (or cannot be recorded): do not cache
        recorded.append([str(path), sha])
    absent = [str(p) for p in absent]
    if not all(_plain_path(p) for p in absent):
        return
    entry = {"format": _FORMAT, "inputs": recorded, "absent": absent,
             "outputs": {str(kind): text for kind, text in outputs.items()},
             "script_output": script_output}
    secret = secret_key()
    if secret is None:
        return
    data = encode_entry(key, entry, secret)
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
