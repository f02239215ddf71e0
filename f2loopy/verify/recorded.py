"""The original Fortran's results kept in a file, for a check on a machine
without gfortran (the differential fuzzer's campaign on a GPU machine).

Where gfortran runs, :func:`~f2loopy.verify.check.check_source` with a
:class:`RecordedReferences` in mode ``"record"`` plans the inputs, runs the
original subroutines and writes their inputs and results to the file, then
stops (nothing runs on OpenCL).  Elsewhere, mode ``"replay"`` plans the inputs
the same way, takes the results from the file instead of running gfortran,
and runs and compares the generated kernels as usual.  The file is refused
(:class:`RecordError`) unless it was made for the same
source text and exactly the same inputs (the same bits): a replay never
compares with the results of other inputs.

The file is a numpy ``.npz`` read without pickle; every name in it must be
a Fortran name (``a``, ``p%x``, ``mod.var``) and every value a number array or
a string, so a file from elsewhere cannot run code or name anything else.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
import zlib
from pathlib import Path

import numpy as np

from f2loopy.verify.runs import STOPPED, CheckError

class RecordError(CheckError):
    """The recorded references cannot serve this check (missing, made for
    another source or other inputs, malformed) or a value cannot be recorded."""


_VERSION = 1
_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$%.]{0,200}")
_MODES = ("record", "replay")


def source_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


class RecordedReferences:
    """The reference results of one check of one source text in file *path*.

    :arg mode: ``"record"`` (run gfortran, write the file, stop before
        OpenCL) or ``"replay"`` (read the file instead of running gfortran).
    :arg key: the text the results belong to (default: the checked source).
        The fuzzer gives its program without the transformation script
        (comments to gfortran), so that one recording serves the program
        whatever the script; the inputs must still match bit for bit.
    """

    def __init__(self, path, *, mode: str, key: str | None = None) -> None:
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, not {mode!r}")
        self.path = Path(path)
        self.mode = mode
        self.key = key

    def for_key(self, key: str) -> RecordedReferences:
        """The same file and mode for results that belong to *key*."""
        return RecordedReferences(self.path, mode=self.mode, key=key)

    def _key(self, text: str) -> str:
        return text if self.key is None else self.key

    # {{{ writing

    def save(self, text: str, refs: dict, inputs_of) -> None:
        """Write the results *refs* (sequence of subroutine names -> name ->
        value, or STOPPED) of the inputs ``inputs_of(sequence)``, made from
        source *text* (or :attr:`key`).  A file already there for the same
        text keeps its results of other inputs (a replay picks those of its
        own inputs); one for another text is replaced."""
        digest = source_digest(self._key(text))
        arrays: dict = {}
        entries: list = []
        try:
            files, manifest = self._read(digest)
            arrays, entries = files, manifest["sequences"]
        except RecordError:
            pass
        for seq, out in refs.items():
            k = len(entries)
            entries.append({"names": list(seq), "stopped": out is STOPPED,
                            "inputs": _store(arrays, f"s{k}i", inputs_of(seq)),
                            "outputs": {} if out is STOPPED else _store(arrays, f"s{k}o", out)})
        manifest = {"version": _VERSION, "source": digest, "sequences": entries}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".part.npz")
        np.savez_compressed(tmp, manifest=np.array(json.dumps(manifest)), **arrays)
        tmp.replace(self.path)

    # }}}

    # {{{ reading

    def _read(self, digest: str) -> tuple:
        """``(arrays, manifest)`` of the file, which must be one for *digest*."""
        where = f"the recorded references {self.path}"
        try:
            with np.load(self.path, allow_pickle=False) as data:
                files = {k: data[k] for k in data.files}
        except FileNotFoundError:
            raise RecordError(f"{where} do not exist") from None
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise RecordError(f"{where} cannot be read: {exc}") from None
        try:
            manifest = json.loads(str(files.pop("manifest")[()]))
            if manifest.get("version") != _VERSION:
                raise RecordError(f"{where} have version {manifest.get('version')!r}, not "
                                  f"{_VERSION}")
            if manifest.get("source") != digest:
                raise RecordError(f"{where} were made for another source text")
            for e in manifest["sequences"]:
                _names(e["names"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RecordError(f"{where} are malformed ({type(exc).__name__})") from None
        return files, manifest

    def load(self, text: str, sequences, inputs_of) -> dict:
        """The recorded results of *sequences*; raises RecordError unless the
        file holds every one of them for this *text* (or :attr:`key`) and the
        same inputs."""
        where = f"the recorded references {self.path}"
        files, manifest = self._read(source_digest(self._key(text)))
        refs = {}
        for seq in sequences:
            entries = [e for e in manifest["sequences"] if tuple(e["names"]) == tuple(seq)]
            if not entries:
                raise RecordError(f"{where} have no results of {' then '.join(seq)}")
            inputs = inputs_of(seq)
            try:
                for entry in entries:
                    if _same_values(_restore(files, entry["inputs"]), inputs):
                        refs[seq] = STOPPED if entry["stopped"] is True else \
                            _restore(files, entry["outputs"])
                        break
                else:
                    raise RecordError(f"{where} were made for other inputs of "
                                      f"{' then '.join(seq)} (another seed, sizes or version)")
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise RecordError(f"{where} are malformed ({type(exc).__name__})") from None
        return refs

    # }}}


def _names(names) -> list:
    if not isinstance(names, list) or not all(isinstance(n, str) and _NAME.fullmatch(n)
                                              for n in names):
        raise ValueError("not a list of names")
    return names


def _store(arrays: dict, prefix: str, values: dict) -> dict:
    """Put *values* (name -> array, number or string) into *arrays*; returns
    name -> [key, kind] (kind: ``array``, ``scalar`` or ``str``)."""
    index = {}
    for k, (name, v) in enumerate(values.items()):
        key = f"{prefix}{k}"
        if isinstance(v, str):
            kind, a = "str", np.array(v)
        else:
            kind = "array" if isinstance(v, np.ndarray) else "scalar"
            a = np.asarray(v)
            if a.dtype.hasobject:
                raise RecordError(f"cannot record the value of '{name}' (a {type(v).__name__})")
        arrays[key] = a
        index[name] = [key, kind]
    return index


def _restore(files: dict, index) -> dict:
    if not isinstance(index, dict):
        raise TypeError("not an index")
    out = {}
    for name, (key, kind) in index.items():
        _names([name])
        a = files[key]
        if a.dtype.hasobject:
            raise ValueError("an object array")
        if kind == "array":
            out[name] = a
        elif kind == "scalar":
            out[name] = a[()]
        elif kind == "str" and a.dtype.kind == "U":
            out[name] = str(a[()])
        else:
            raise ValueError(f"unknown kind {kind!r}")
    return out


def _same_values(a: dict, b: dict) -> bool:
    """Whether *a* and *b* hold the same names with bit-identical values."""
    if set(a) != set(b):
        return False
    for name, x in a.items():
        y = b[name]
        if isinstance(x, str) or isinstance(y, str):
            if x != y:
                return False
            continue
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
            return False
    return True


__all__ = ["RecordError", "RecordedReferences", "source_digest"]
