"""Where the files f2loopy ships beside its modules are.

* ``runtime``: the C and Fortran runtime the Fortran glue links with,
  ``F2Loopy.cmake`` and the CMake package configuration
  (``find_package(f2loopy CONFIG)``);
* ``transforms``: the transformation recipes;
* ``samples``: the annotated example programs (``f2loopy samples DIR``
  copies them);
* ``docs/tutorial`` and ``docs/cookbook``: the tutorial's application and the
  cookbook's files (``f2loopy samples DIR`` copies them too, so that a pip
  user can follow the documentation without a checkout).

In a checkout (and an editable install) they are the top-level ``runtime/``
and ``transforms/`` folders; a wheel carries copies inside the package, in
``f2loopy/_data/`` (``setup.py`` puts them there when it builds one).  The copy
inside the package wins, so that an installed f2loopy never picks up a
``runtime`` folder that merely lies beside it in ``site-packages``.

This module imports nothing of f2loopy: any layer may use it.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
#: the folder inside the package that a wheel's data lives in
DATA_DIR = PACKAGE_DIR / "_data"
DATA_NAMES = ("runtime", "transforms", "samples")


def data_dir(name: str) -> Path:
    """The folder of the shipped files *name* (one of :data:`DATA_NAMES`)."""
    if name not in DATA_NAMES:
        raise ValueError(f"no shipped folder {name!r}")
    inside = DATA_DIR / name
    if inside.is_dir():
        return inside
    return PACKAGE_DIR.parent / name


#: the documentation's example folders (``docs/NAME`` of a checkout)
DOC_EXAMPLES = ("tutorial", "cookbook")


def doc_examples_dir(name: str) -> Path:
    """The folder of the documentation's example files *name* (one of
    :data:`DOC_EXAMPLES`): ``f2loopy/_data/docs/NAME`` in a wheel, else
    ``docs/NAME`` of the checkout."""
    if name not in DOC_EXAMPLES:
        raise ValueError(f"no documentation examples {name!r}")
    inside = DATA_DIR / "docs" / name
    if inside.is_dir():
        return inside
    return PACKAGE_DIR.parent / "docs" / name


def runtime_dir() -> Path:
    return data_dir("runtime")


def transforms_dir() -> Path:
    return data_dir("transforms")


def samples_dir() -> Path:
    return data_dir("samples")


def cmake_dir() -> Path:
    """The folder holding ``f2loopyConfig.cmake`` and ``F2Loopy.cmake``: pass
    it to CMake as ``-Df2loopy_DIR=...``."""
    return runtime_dir()
