"""In-file transformation scripts (``!$loopy begin`` ... ``!$loopy end``),
run in a sandbox.

A Fortran file may carry the Python that transforms its kernels, as the Loo.py
paper's section 3 shows.  Whoever wrote the file wrote the script, and it runs
on the machine of whoever builds the project, so f2loopy treats it as
untrusted.  The layers, each able to stop an escape on its own:

1. static checks of the syntax tree (:mod:`.checker`): no ``__dunder__``
   names or attributes, no frame/code attributes, no ``str.format`` field
   lookups, no attribute assignment, no classes, no keyword attributes in
   class patterns, imports from an allow-list;
2. an allow-list of readable attributes (:mod:`.attributes`: every ``x.attr``
   and ``getattr`` goes through a guard) and a namespace of proxies
   (:mod:`.namespace`): restricted builtins and import, modules that hold only
   vetted functions (never another module), a curated numpy
   (:mod:`.numpy_surface`: nothing that wraps raw memory or touches files);
3. a separate process (:mod:`.sandbox`, forked from the initialised
   parent) that talks back only in validated JSON, never pickle, and forgets
   its environment before the script runs;
4. in that process (:mod:`.lockdown`): ``setrlimit`` (CPU, address space, no
   file growth, no core dumps, no descriptors, a bounded number of processes),
   a seccomp allow-list of system calls (:mod:`.seccomp`: x86-64, or
   libseccomp elsewhere; without either, scripts run only with
   ``--trust-scripts``), and an audit hook refusing
   opens, imports, compiling, ``os``, ``socket``, ``subprocess`` and
   ``ctypes`` events;
5. soft CPU and wall-clock limits that report the script line, and a
   parent-side kill of the process group past the deadline;
6. bounded work in the parent: the answer's size is capped
   (:mod:`.answer_limits`) and the kernels it holds are scheduled and
   generated in a second limited child (:mod:`.child_codegen`), under what is
   left of the same limits.

:func:`run_transformations` is what the pipeline calls;
:func:`parse_transformed_fortran` is loopy's entry point of the same name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# (a real name, not only for the type checker: typing.get_type_hints of the
# entry point below must find it; every translation loads the IR anyway)
from f2loopy.ir.kernel import TranslationUnit

if TYPE_CHECKING:
    from f2loopy.directives.lockdown import Limits
    from f2loopy.directives.runner import TransformOutcome, run_transformations

__all__ = ["Limits", "TransformOutcome", "parse_transformed_fortran", "run_transformations"]


def __getattr__(name: str) -> Any:
    """The sandbox's names, imported on first use (PEP 562): a translation
    without a script reads only :mod:`.tunables` of this package, and need
    not load the sandbox (its seccomp filter, ``ctypes``, the checker)."""
    if name == "Limits":
        from f2loopy.directives.lockdown import Limits
        return Limits
    if name in ("TransformOutcome", "run_transformations"):
        from f2loopy.directives import runner
        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_transformed_fortran(source: str, free_form: bool = True, strict: bool = True,
                              pre_transform_code: str | None = None,
                              transform_code_context: dict | None = None,
                              filename: str = "<floopy code>", *, defines: dict | None = None,
                              transform: str | None = None, debug: bool = False,
                              default_real_kind: int = 4) -> TranslationUnit:
    """Translate *source* and run its transformation script in the sandbox:
    loopy's function of the same name (and arguments).  Returns the kernels of
    ``RESULT`` as a :class:`~f2loopy.ir.kernel.TranslationUnit`.

    :arg free_form: False reads *source* as fixed form.
    :arg strict: f2loopy is always strict (what it cannot translate is an
        error); False is refused.
    :arg pre_transform_code: Python run before the script, in the sandbox and
        in the script's namespace (``"split_amount = 128"``); an error in it is
        reported at ``<pre_transform_code>:LINE``.
    :arg transform_code_context: names visible to the script (loopy's name for
        what ``-D`` gives); merged with *defines*.
    :arg filename: names the source in diagnostics.
    :arg transform: a recipe (name from ``transforms/`` or a file) applied
        after the script.
    :arg debug: add the script's Python traceback to its errors.
    :arg default_real_kind: 8 reads default REAL as gfortran's
        ``-fdefault-real-8 -fdefault-double-8`` do (the script's own
        ``parse_fortran`` too); see :func:`~f2loopy.frontend.parse_fortran`.
    """
    from f2loopy.diagnostics import UnsupportedArgumentError
    from f2loopy.directives.runner import run_transformations
    from f2loopy.frontend import read_source, translate_source
    from f2loopy.ir.kernel import TranslationUnit
    if not strict:
        raise UnsupportedArgumentError(
            "parse_transformed_fortran", "strict", strict,
            "f2loopy always reports what it cannot translate as an error")
    if pre_transform_code is not None and not isinstance(pre_transform_code, str):
        raise UnsupportedArgumentError(
            "parse_transformed_fortran", "pre_transform_code", pre_transform_code,
            "it must be Python source text")
    values = {**(transform_code_context or {}), **(defines or {})}
    src = read_source(source, filename, fixed_form=not free_form)
    kernels = list(translate_source(src, default_real_kind=default_real_kind))
    if src.scripts or transform is not None or pre_transform_code:
        kernels = run_transformations(src, kernels, values, transform, debug=debug,
                                      pre_code=pre_transform_code,
                                      default_real_kind=default_real_kind).kernels
    return TranslationUnit(kernels, filename, source)
