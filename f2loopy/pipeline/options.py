"""The options of one translation, declared once.

:class:`TranslateOptions` is what :func:`~f2loopy.pipeline.translate_file`,
:func:`~f2loopy.pipeline.translate_text`, the stages of
:mod:`f2loopy.pipeline.stages`, the ``translate`` command and ``check``,
``tune`` and ``bench`` pass along instead of a dozen keyword arguments each.
It is frozen: a stage cannot change what a later one sees.  The public
functions still take the options as keywords (``translate_file(path,
defines={"n": 4})``); :meth:`TranslateOptions.with_keywords` turns those into
an options object and refuses a keyword no option has, as Python does.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _strings(value: Iterable[Any] | str | os.PathLike | None) -> tuple:
    """A tuple of the items of *value* (one path or name alone is one item)."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes, os.PathLike)):
        return (value,)
    return tuple(value)


@dataclass(frozen=True, kw_only=True)
class TranslateOptions:
    """How to translate one file (its text and the files it reads aside).

    :attr output_dir: the folder of the outputs (None: next to the file); it
        only names them, nothing is written by the pipeline.
    :attr defines: ``-D NAME=VALUE``: preprocessor macros and the values a
        script or recipe sees.
    :attr undefines: ``-U NAME``.
    :attr include_dirs: ``-I DIR``: where ``#include`` files, Fortran
        ``include`` files and the modules and procedures the file uses are found.
    :attr search_files: other files named with it, searched first.
    :attr transform: a recipe (a name from ``transforms/`` or a file) applied
        after the file's own script.
    :attr debug: add the script's Python traceback to its errors.
    :attr collect_errors: report every statement that cannot be translated.
    :attr tuning: use the file's tuning record (``FILE.tune.json``) for the
        script's ``tunable(...)`` choices (:func:`~f2loopy.pipeline.translate_file` only).
    :attr tunables: name -> value for ``tunable(...)``, given directly.
    :attr checkpoints: keep the script's ``checkpoint(...)`` kernels (and
        generate their code).
    :attr fixed_form: True/False reads every file in fixed/free form
        whatever its name says (None: by the name).
    :attr cpp: True (``-cpp``) preprocesses every file of the translation
        (those found through *include_dirs* too), False (``-nocpp``) none;
        None: as gfortran decides by the name (``.F90``, ``.F``...), and a
        file with preprocessor lines.
    :attr kernels: the names of the only procedures to translate (``--kernel``).
    :attr bindings: ``--bind KERNEL:DUMMY=PROCEDURE`` values (strings or
        :class:`~f2loopy.frontend.procedure_dummies.Binding` s): the procedure
        a kernel's dummy procedure calls.
    :attr default_real_kind: 4, or 8 for gfortran's ``-fdefault-real-8
        -fdefault-double-8``: default REAL, COMPLEX and real constants without
        a kind are kind 8 in every file read
        (:mod:`f2loopy.frontend.default_kinds`).
    """

    output_dir: str | os.PathLike | None = None
    defines: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    undefines: tuple = ()
    include_dirs: tuple = ()
    search_files: tuple = ()
    transform: str | None = None
    debug: bool = False
    collect_errors: bool = False
    tuning: bool = True
    tunables: Mapping[str, Any] | None = None
    checkpoints: bool = True
    fixed_form: bool | None = None
    cpp: bool | None = None
    kernels: tuple | None = None
    bindings: tuple = ()
    default_real_kind: int = 4

    def __post_init__(self) -> None:
        # frozen all the way down: copies, as tuples and read-only mappings
        fix = object.__setattr__
        fix(self, "defines", MappingProxyType(dict(self.defines or {})))
        for name in ("undefines", "include_dirs", "search_files", "bindings"):
            fix(self, name, _strings(getattr(self, name)))
        if self.tunables is not None:
            fix(self, "tunables", MappingProxyType(dict(self.tunables)))
        if self.kernels is not None:
            fix(self, "kernels", _strings(self.kernels))
        if self.cpp is not None and not isinstance(self.cpp, bool):
            raise TypeError(f"cpp must be True, False or None, not {self.cpp!r}")
        from f2loopy.kind_flags import checked_real_kind
        try:
            checked_real_kind(self.default_real_kind)
        except ValueError as exc:
            raise TypeError(str(exc)) from None

    @classmethod
    def with_keywords(cls, options: TranslateOptions | None, keywords: Mapping[str, Any],
                      function: str) -> TranslateOptions:
        """*options* (default: the defaults) with the options given as
        *keywords* of *function* replaced.

        :raises TypeError: a keyword that names no option (as a call of
            *function* with an unknown keyword would)."""
        known = {f.name for f in dataclasses.fields(cls)}
        for name in keywords:
            if name not in known:
                raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")
        if options is None:
            return cls(**keywords)
        if not isinstance(options, cls):
            raise TypeError(f"{function}(): options must be a TranslateOptions, not "
                            f"{type(options).__name__}")
        return dataclasses.replace(options, **keywords) if keywords else options

    def __reduce__(self) -> tuple:
        # pickled for the worker processes of ``-j N`` (a read-only mapping
        # is not picklable: its contents travel as plain dicts)
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values["defines"] = dict(self.defines)
        if self.tunables is not None:
            values["tunables"] = dict(self.tunables)
        return (_rebuild, (values,))

    def replace(self, **changes: Any) -> TranslateOptions:
        """A copy with *changes*."""
        return dataclasses.replace(self, **changes)

    def define_values(self) -> dict:
        """The ``-D`` values as a new dict (for code that takes a dict)."""
        return dict(self.defines)


def _rebuild(values: dict) -> TranslateOptions:
    """Unpickling :class:`TranslateOptions`."""
    return TranslateOptions(**values)
