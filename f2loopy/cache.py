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
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

#: entries kept; beyond this the oldest half is removed when one is stored
MAX_ENTRIES = 2000
_FORMAT = 2
_fingerprint: str | None = None


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


def load(key: str):
    """``(outputs, inputs, script_output)`` of a valid entry, or None."""
    if not enabled():
        return None
    path = cache_dir() / f"{key}.json"
    try:
        with open(path, encoding="utf-8") as f:
            entry = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != _FORMAT:
        return None
    inputs = entry.get("inputs", [])
    for path, sha in inputs[1:]:            # the first input is the key's own text
        if _file_sha(path) != sha:
            return None
    outputs = {Path(p): text for p, text in entry.get("outputs", [])}
    try:
        os.utime(path)           # recently used: kept longest when pruning
    except OSError:
        pass
    output = entry.get("script_output", "")
    return outputs, [Path(p) for p, _ in inputs], output if isinstance(output, str) else ""


def store(key: str, outputs: dict, inputs, main_text: str, script_output: str = "") -> None:
    """Record a translation and what its script printed (errors writing the
    cache are ignored)."""
    if not enabled():
        return
    d = cache_dir()
    recorded = []
    for k, path in enumerate(inputs):
        sha = sha256_text(main_text) if k == 0 else _file_sha(path)
        if sha is None:
            return            # an input vanished: do not cache
        recorded.append([str(path), sha])
    entry = {"format": _FORMAT, "inputs": recorded,
             "outputs": [[str(p), text] for p, text in outputs.items()],
             "script_output": script_output}
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".entry.", suffix=".tmp", dir=d)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f)
            os.replace(tmp, d / f"{key}.json")
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        _prune(d)
    except OSError:
        pass


def _prune(d: Path) -> None:
    try:
        entries = [e for e in os.scandir(d) if e.name.endswith(".json")]
    except OSError:
        return
    if len(entries) <= MAX_ENTRIES:
        return
    entries.sort(key=lambda e: e.stat().st_mtime)
    for e in entries[:len(entries) // 2]:
        try:
            os.unlink(e.path)
        except OSError:
            pass
