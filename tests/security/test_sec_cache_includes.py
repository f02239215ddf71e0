"""Issue 29, item 5: the cache key covers the whole include resolution.

A header added beside the source (searched first, as gfortran does), in an
earlier ``-I`` folder, or beside an included header changes what the
preprocessor reads; a module file added to an earlier ``-I`` folder changes
which module is used.  Each must be a miss, so that the kernel and its
Fortran never disagree until the cache is cleared.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from security_util import INCLUDING_KERNEL as KERNEL
from security_util import MODULE_USER as USER
from security_util import SCALES_MODULE

from f2loopy import cache as tcache
from f2loopy.pipeline import output_paths, translate_file

@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("F2LOOPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("F2LOOPY_NO_CACHE", raising=False)


def _cl(src: Path, **options) -> str:
    result = translate_file(src, cache=True, **options)
    return result.outputs[output_paths(src)[".cl"]]


def _fresh(src: Path, **options) -> str:
    result = translate_file(src, cache=False, **options)
    return result.outputs[output_paths(src)[".cl"]]


def _hit(src: Path, **options) -> bool:
    return not translate_file(src, cache=True, **options).kernels


def test_a_header_added_beside_the_source(tmp_path, preprocessor):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "defs.h").write_text("#define SCALE 2.0\n")
    src = tmp_path / "k.F90"
    src.write_text(KERNEL)
    opts = {"include_dirs": [str(tmp_path / "inc")]}
    assert "2.0f" in _cl(src, **opts) and _hit(src, **opts)
    (tmp_path / "defs.h").write_text("#define SCALE 3.0\n")
    assert "3.0f" in _cl(src, **opts)
    assert _cl(src, **opts) == _fresh(src, **opts)


def test_a_header_added_in_an_earlier_include_folder(tmp_path, preprocessor):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
    (tmp_path / "b" / "defs.h").write_text("#define SCALE 2.0\n")
    (tmp_path / "src").mkdir()
    src = tmp_path / "src" / "k.F90"
    src.write_text(KERNEL)
    opts = {"include_dirs": [str(tmp_path / "a"), str(tmp_path / "b")]}
    assert "2.0f" in _cl(src, **opts) and _hit(src, **opts)
    (tmp_path / "a" / "defs.h").write_text("#define SCALE 5.0\n")
    assert "5.0f" in _cl(src, **opts)


def test_a_header_added_beside_an_included_header(tmp_path, preprocessor):
    """A quoted include inside a header looks in that header's folder
    first."""
    for d in ("hdr", "late"):
        (tmp_path / d).mkdir()
    (tmp_path / "hdr" / "defs.h").write_text('#include "inner.h"\n')
    (tmp_path / "late" / "inner.h").write_text("#define SCALE 2.0\n")
    (tmp_path / "src").mkdir()
    src = tmp_path / "src" / "k.F90"
    src.write_text(KERNEL)
    opts = {"include_dirs": [str(tmp_path / "hdr"), str(tmp_path / "late")]}
    assert "2.0f" in _cl(src, **opts) and _hit(src, **opts)
    (tmp_path / "hdr" / "inner.h").write_text("#define SCALE 7.0\n")
    assert "7.0f" in _cl(src, **opts)


def test_a_module_added_in_an_earlier_include_folder(tmp_path):
    for d in ("a", "b", "src"):
        (tmp_path / d).mkdir()
    (tmp_path / "b" / "scales.f90").write_text(
        SCALES_MODULE)
    src = tmp_path / "src" / "u.f90"
    src.write_text(USER)
    opts = {"include_dirs": [str(tmp_path / "a"), str(tmp_path / "b")]}
    assert "2.0f" in _cl(src, **opts) and _hit(src, **opts)
    (tmp_path / "a" / "scales.f90").write_text(
        "module scales\n  real, parameter :: factor = 9.0\nend module\n")
    assert "9.0f" in _cl(src, **opts)


def test_a_header_added_for_a_module_file_on_the_path(tmp_path, preprocessor):
    """A module file on the ``-I`` path that is preprocessed: its own
    includes count too."""
    for d in ("mods", "hdrs", "src"):
        (tmp_path / d).mkdir()
    (tmp_path / "mods" / "scales.F90").write_text(
        'module scales\n#include "factor.h"\nend module\n')
    (tmp_path / "hdrs" / "factor.h").write_text("  real, parameter :: factor = 2.0\n")
    src = tmp_path / "src" / "u.f90"
    src.write_text(USER)
    opts = {"include_dirs": [str(tmp_path / "mods"), str(tmp_path / "hdrs")]}
    assert "2.0f" in _cl(src, **opts) and _hit(src, **opts)
    (tmp_path / "mods" / "factor.h").write_text("  real, parameter :: factor = 4.0\n")
    assert "4.0f" in _cl(src, **opts)


def test_absent_paths_recorded_are_plain(tmp_path, preprocessor):
    """An entry's list of paths that must stay absent is checked like its
    inputs: a path with a control character makes the entry a miss."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "defs.h").write_text("#define SCALE 2.0\n")
    src = tmp_path / "k.F90"
    src.write_text(KERNEL)
    opts = {"include_dirs": [str(tmp_path / "inc")]}
    _cl(src, **opts)
    (entry_path,) = (tmp_path / "cache").glob("*.json")
    name = entry_path.name[:-len(".json")]
    secret = tcache.secret_key()
    entry = tcache.decode_entry(name, entry_path.read_bytes(), secret)
    assert str(tmp_path / "defs.h") in entry["absent"]
    entry["absent"].append("x\n\ty")
    entry_path.write_bytes(tcache.encode_entry(name, entry, secret))
    assert not _hit(src, **opts)
