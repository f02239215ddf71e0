"""In-file transformation scripts (``!$loopy begin`` ... ``!$loopy end``),
run in a sandbox.

A Fortran file may carry the Python that transforms its kernels, as the Loo.py
paper's section 3 shows.  Whoever wrote the file wrote the script, and it runs
on the machine of whoever builds the project, so f2loopy treats it as
untrusted.  The layers, each able to stop an escape on its own:

1. static checks of the syntax tree (:mod:`.checker`): no ``__dunder__``
   names or attributes, no frame/code attributes, no ``str.format`` field
   lookups, no attribute assignment, no classes, imports from an allow-list;
2. a namespace of proxies (:mod:`.namespace`): restricted builtins and
   import, modules that hold only vetted functions (never another module);
3. a separate process (:mod:`.sandbox`, forked from the initialised
   parent) that talks back only in validated JSON, never pickle;
4. in that process (:mod:`.lockdown`): ``setrlimit`` (CPU, address space, no
   file growth, no core dumps, no descriptors, no processes), a seccomp filter
   (:mod:`.seccomp`: no opening files, sockets, processes, executable memory),
   and an audit hook refusing opens, imports, compiling, ``os``, ``socket``,
   ``subprocess`` and ``ctypes`` events;
5. soft CPU and wall-clock limits that report the script line, and a
   parent-side kill of the process group past the deadline.

:func:`run_transformations` is what the pipeline calls;
:func:`parse_transformed_fortran` is loopy's entry point of the same name.
"""

from __future__ import annotations

from f2loopy.directives.lockdown import Limits
from f2loopy.directives.runner import TransformOutcome, run_transformations

__all__ = ["Limits", "TransformOutcome", "parse_transformed_fortran", "run_transformations"]


def parse_transformed_fortran(source: str, filename: str = "<floopy code>", *,
                              defines: dict | None = None, transform: str | None = None,
                              debug: bool = False):
    """Translate *source* and run its transformation script (loopy's function
    of the same name): returns the kernels of ``RESULT`` as a
    :class:`~f2loopy.ir.kernel.TranslationUnit`."""
    from f2loopy.frontend import read_source, translate_source
    from f2loopy.ir.kernel import TranslationUnit
    src = read_source(source, filename)
    kernels = list(translate_source(src))
    if src.scripts or transform is not None:
        kernels = run_transformations(src, kernels, defines or {}, transform,
                                      debug=debug).kernels
    return TranslationUnit(kernels, filename, source)
