"""How ``f2loopy check`` builds the original Fortran: gfortran's flags for it
(the include folders, the F77 argument-mismatch allowance, the kind options
the translation read the files with) and the files of the search path it
compiles with it (preprocessed as the translation read them); the frontend's
reading of the original where the translation has none of its own."""

from __future__ import annotations

import os
from pathlib import Path

from f2loopy.diagnostics import F2LoopyError


def legacy_flags() -> tuple[str, ...]:
    """``-fallow-argument-mismatch`` where gfortran has it (10 and later): the
    original is compiled whole, and an F77 file passes a scalar where another
    of its units declares an array (Nekbone's ``call gop(tmp, work, ...)``)
    as the project's own build allows; only the kernels' own units are run."""
    global _LEGACY
    if _LEGACY is None:
        import subprocess

        from f2loopy.verify.fortran import find_gfortran
        try:
            proc = subprocess.run([find_gfortran(), "-fallow-argument-mismatch", "-E", "-cpp", "-x",
                                   "f95", os.devnull], capture_output=True, timeout=60)
            _LEGACY = ("-fallow-argument-mismatch",) if proc.returncode == 0 else ()
        except (OSError, subprocess.SubprocessError, F2LoopyError):
            _LEGACY = ()
    return _LEGACY


_LEGACY: tuple[str, ...] | None = None


def include_flags(path: Path, include_dirs) -> list[str]:
    """gfortran's ``-I`` for the Fortran ``include`` lines of the original,
    compiled in a folder of its own: the file's folder, then the ``-I`` ones
    (where a compiler of the project finds them)."""
    return [f"-I{os.path.abspath(d)}" for d in (path.parent, *include_dirs)]


def compiled_sources(search, tmp: Path, fixed_form: bool | None = None,
                      text: str = "", *, cpp: bool | None = None) -> list[str]:
    """The files of the search path in build order (with those defining the
    modules the original *text* uses anywhere), each one that was
    preprocessed for the translation as the preprocessed text (the same
    macros as the translation, not gfortran's own preprocessing without
    them); with *fixed_form* (not None), a copy named for that form where the file's
    own name says the other; with *cpp* False (``-nocpp``), a copy with a
    lower-case suffix where the file's name would have gfortran preprocess it."""
    from f2loopy.frontend.search_path import modules_used_elsewhere
    from f2loopy.frontend.source import fixed_form_of
    out = []
    for k, p in enumerate(search.build_order(closure=True, uses=modules_used_elsewhere(text))):
        pp = search.preprocessed.get(str(p))
        fixed = fixed_form_of(str(p), fixed_form)
        from f2loopy.preprocessor import PREPROCESSED_SUFFIXES
        renamed = cpp is False and str(p).endswith(PREPROCESSED_SUFFIXES)
        if pp is None and fixed == fixed_form_of(str(p)) and not renamed:
            out.append(str(p))
            continue
        copy = tmp / f"path{k}{'.f' if fixed else '.f90'}"
        copy.write_text(pp.text if pp is not None else p.read_text(encoding="utf-8",
                                                                    errors="replace"))
        out.append(str(copy))
    return out


def reference_kind_flags(translation) -> list[str]:
    """gfortran's kind options the translation read the files with
    (``-fdefault-real-8 -fdefault-double-8``): the original is built with them."""
    from f2loopy.kind_flags import kind_flags
    return kind_flags(translation.default_real_kind)


def parse_original(text: str, path: Path, search, include_dirs, translation, fixed: bool,
                   only) -> tuple:
    """The frontend's kernels of *text* (preprocessed already) for a
    translation that has no parse of its own (one from the cache), read the
    way the translation reads it (*translation*: its
    :class:`~f2loopy.pipeline.options.TranslateOptions`)."""
    from f2loopy.frontend import read_source, translate_source
    from f2loopy.frontend.includes import expand_includes
    # its Fortran include lines expanded, as the translation reads them
    expanded = expand_includes(text, str(path), include_dirs)
    return tuple(translate_source(
        read_source(expanded.text if expanded is not None else text, str(path),
                    fixed_form=fixed), search=search, kernels=only,
        bindings=translation.bindings, default_real_kind=translation.default_real_kind))
