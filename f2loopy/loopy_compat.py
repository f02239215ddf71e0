"""loopy's names and conventions, for code written against loopy's Fortran
frontend: ``import f2loopy.loopy_compat as lp``.

``import f2loopy as lp`` already gives loopy's names for almost everything
(every transformation, ``parse_fortran``, ``parse_transformed_fortran``,
``generate_code_v2``, ``auto_test_vs_ref``, callable translation units).  This
module adds the few places where loopy's *results* differ from f2loopy's and
code depends on the difference:

* :func:`fuse_kernels` returns a translation unit holding one kernel named
  ``a_and_b`` (loopy's convention), where :func:`f2loopy.fuse_kernels`
  returns the kernel named ``a_b`` (the name ``f2loopy check`` maps back to
  the subroutines ``a`` and ``b``);
* ``LoopyError``, ``LoopKernel`` and ``Program`` name f2loopy's classes.

It never imports loopy, and it is not called ``loopy``: a program may use
both.  Inside a ``!$loopy begin`` script, ``import loopy as lp`` gives the
sandbox's own namespace (see :mod:`f2loopy.api`), not this module.
"""

from __future__ import annotations

from collections.abc import Sequence

import f2loopy as _f2loopy
from f2loopy.diagnostics import F2LoopyError
from f2loopy.ir.kernel import Kernel, TranslationUnit

LoopyError = F2LoopyError
LoopKernel = Kernel
Program = TranslationUnit


def fuse_kernels(kernels: Sequence[Kernel | TranslationUnit],
                 suffixes: Sequence[str] | None = None,
                 data_flow: Sequence[tuple[str, int, int]] | None = None) -> TranslationUnit:
    """:func:`f2loopy.fuse_kernels` with loopy's result: a translation unit
    whose one kernel is named ``"_and_".join(names)``."""
    names: list[str] = []
    for k in kernels:
        names.extend(k.keys() if isinstance(k, TranslationUnit) else [getattr(k, "name", "?")])
    fused = _f2loopy.fuse_kernels(kernels, suffixes=suffixes, data_flow=data_flow,
                                  name="_and_".join(names))
    return TranslationUnit([fused])


_OWN = {"fuse_kernels", "LoopyError", "LoopKernel", "Program"}


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_f2loopy, name)


def __dir__() -> list[str]:
    return sorted(set(dir(_f2loopy)) | _OWN)
