"""The Fortran frontend: source text to kernels.

:func:`parse_fortran` reads a file (free or fixed form) with fparser.two and
lowers every subroutine to a :class:`~f2loopy.ir.kernel.Kernel`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from f2loopy.diagnostics import F2LoopyError, FortranError
from f2loopy.frontend.reader import parse_units
from f2loopy.frontend.source import (  # noqa: F401 - re-exported
    SourceFile, is_fixed_form_name, preprocessor_lines, read_source)
from f2loopy.ir.kernel import Kernel, TranslationUnit


class FortranErrors(FortranError):
    """Several located errors (collecting mode): every statement of a file
    that cannot be translated."""

    def __init__(self, errors, filename: str = ""):
        errors = _unique(errors)
        first = errors[0]
        super().__init__(first.message, first.span, first.notes)
        self.errors = errors
        self.filename = filename
        #: notes said after the count of errors
        self.summary_notes: tuple[str, ...] = ()

    def add_summary_note(self, note: str) -> None:
        self.summary_notes = (*self.summary_notes, note)

    def format(self) -> str:
        parts = [e.format() for e in self.errors]
        n = len(self.errors)
        where = self.filename or (self.span.filename if self.span is not None else "input")
        parts.append(f"{where}: {n} error{'s' if n != 1 else ''}: "
                     f"{'this statement' if n == 1 else 'these statements'} cannot be "
                     "translated")
        parts += [f"{where}: note: {note}" for note in self.summary_notes]
        return "\n".join(parts)


def _unique(errors):
    out, seen = [], set()
    for e in errors:
        if isinstance(e, FortranErrors):
            items = e.errors
        else:
            items = [e]
        for x in items:
            key = x.format()
            if key not in seen:
                seen.add(key)
                out.append(x)

    def where(e):
        s = e.span
        return (0, 0) if s is None else (s.line, s.column)
    return sorted(out, key=where)


def parse_fortran(source: str, filename: str = "<string>", *,
                  free_form: bool | None = None, fixed_form: bool | None = None,
                  strict: bool = True, auto_dependencies: bool = True,
                  seq_dependencies: bool | None = None, target: None = None,
                  collect_errors: bool = False,
                  include_dirs: Sequence[str | os.PathLike[str]] = (),
                  search_files: Sequence[str | os.PathLike[str]] = (),
                  bindings: Sequence[str] = (),
                  default_real_kind: int = 4) -> TranslationUnit:
    """Translate the subroutines of Fortran *source* into kernels.

    Returns a :class:`~f2loopy.ir.kernel.TranslationUnit` that unpacks like a
    sequence (``f_r, f_s = parse_fortran(SOURCE, FILENAME)``) and indexes like a
    mapping (``tu["refFluxR"]``).

    :arg filename: names the source in diagnostics; its suffix decides the
        source form (``.f``, ``.F``, ``.for``, ``.f77`` are fixed form).
    :arg free_form: loopy's spelling: ``free_form=False`` is ``fixed_form=True``.
    :arg fixed_form: read columns 1-6 and 73-80 as a compiler does.
    :arg strict: loopy's option; f2loopy is always strict (anything it cannot
        translate is an error), so only True is accepted.
    :arg auto_dependencies, seq_dependencies: how loopy approximates the
        dependencies (from the variables accessed, or in statement order).
        f2loopy derives them exactly from the program order of the Fortran,
        which both keep, so either may be given; both False (no
        dependencies at all) is refused.
    :arg target: loopy's code generation target; f2loopy generates OpenCL
        only, so only None is accepted.
    :arg collect_errors: raise a :class:`FortranErrors` listing every
        statement that cannot be translated instead of the first one.
    :arg include_dirs, search_files: where modules and procedures that
        *source* does not define are looked up: these files, and the Fortran
        sources under each directory (``f2loopy translate -I DIR``;
        :mod:`f2loopy.frontend.search_path`).
    :arg bindings: ``"KERNEL:DUMMY=PROCEDURE"`` strings (``f2loopy translate
        --bind``): the procedure a kernel's dummy procedure calls.
    :arg default_real_kind: 8 reads default REAL, COMPLEX and real literals as
        gfortran's ``-fdefault-real-8 -fdefault-double-8`` do
        (:mod:`f2loopy.frontend.default_kinds`); 4 (the default) otherwise.
    :raises FortranError: with the location, for anything that cannot be
        translated.
    :raises UnsupportedArgumentError: for an option value f2loopy does not
        implement.  Unknown keywords are a :class:`TypeError`.
    """
    from f2loopy.diagnostics import UnsupportedArgumentError
    from f2loopy.frontend.search_path import SearchPath
    if not strict:
        raise UnsupportedArgumentError(
            "parse_fortran", "strict", strict,
            "f2loopy always reports what it cannot translate as an error")
    if seq_dependencies is False and not auto_dependencies:
        raise UnsupportedArgumentError(
            "parse_fortran", "seq_dependencies", seq_dependencies,
            "with auto_dependencies=False there would be no dependencies; f2loopy's "
            "always come from the program order of the Fortran")
    if target is not None:
        raise UnsupportedArgumentError(
            "parse_fortran", "target", target, "f2loopy generates OpenCL only")
    if free_form is not None:
        if fixed_form is not None and fixed_form == free_form:
            raise UnsupportedArgumentError(
                "parse_fortran", "free_form", free_form,
                f"it contradicts fixed_form={fixed_form!r}")
        fixed_form = not free_form
    from f2loopy.frontend.includes import expand_includes
    # Fortran include lines: from the folder of *filename*, then include_dirs
    expanded = expand_includes(source, str(filename), include_dirs)
    src = read_source(expanded.text if expanded else source, filename, fixed_form=fixed_form)
    search = SearchPath(include_dirs, search_files)
    try:
        return translate_source(src, collect_errors=collect_errors, search=search,
                                bindings=tuple(bindings), default_real_kind=default_real_kind)
    except F2LoopyError as exc:
        if expanded is not None:
            raise expanded.remap(exc) from None
        raise


def translate_source(src: SourceFile, *, collect_errors: bool = False,
                     jobs: int | None = None, search=None,
                     kernels: tuple[str, ...] | None = None,
                     bindings: tuple = (), default_real_kind: int = 4) -> TranslationUnit:
    """Kernels of every subroutine of *src*.

    With *collect_errors*, lowering goes on after a statement fails and all
    failures are raised together as :class:`FortranErrors`.  *search* (a
    :class:`~f2loopy.frontend.search_path.SearchPath`) finds the modules and
    procedures of other files; the files it read are in its ``files_read``.
    *kernels*: the names of the only procedures to translate (``--kernel``;
    what they call is inlined as always); a name the file does not define is
    an error.  When a procedure fails, the error's notes say which of the
    others translate (:func:`~f2loopy.frontend.kernel_choice.note_units`).
    *bindings*: ``--bind KERNEL:DUMMY=PROCEDURE`` values, the procedures that
    the kernels' dummy procedures call
    (:mod:`f2loopy.frontend.procedure_dummies`).
    *default_real_kind*: 4, or 8 for gfortran's ``-fdefault-real-8
    -fdefault-double-8`` (:mod:`f2loopy.frontend.default_kinds`); the files
    *search* reads are read with it too.
    """
    from f2loopy.frontend.default_kinds import checked_real_kind, default_real_kind as real_kind
    try:
        checked_real_kind(default_real_kind)
    except ValueError as exc:
        from f2loopy.diagnostics import UnsupportedArgumentError
        raise UnsupportedArgumentError("translate_source", "default_real_kind",
                                       default_real_kind, str(exc)) from None
    with real_kind(default_real_kind):
        return _translate_source(src, collect_errors=collect_errors, jobs=jobs, search=search,
                                 kernels=kernels, bindings=bindings)


def _translate_source(src: SourceFile, *, collect_errors: bool, jobs: int | None, search,
                      kernels: tuple[str, ...] | None, bindings: tuple) -> TranslationUnit:
    from f2loopy.frontend.default_kinds import current_real_kind
    if kernels is not None:
        from f2loopy.frontend.kernel_choice import check_kernel_names
        kernels = check_kernel_names(kernels)
    if bindings:
        from f2loopy.frontend.procedure_dummies import parse_bindings
        bindings = parse_bindings(bindings)
    key = (src.filename, src.text, src.fixed_form, kernels, tuple(bindings), current_real_kind())
    # with a search path the result may depend on other files: always translate
    if not collect_errors and not search and key in _RECENT_UNITS:
        # the same text again (a script's parse_fortran(SOURCE) after the
        # pipeline's own parse, in the same or a forked process): kernels are
        # immutable, so the earlier ones are the answer
        return TranslationUnit(list(_RECENT_UNITS[key]), src.filename, src.text)
    from f2loopy.frontend.units import FileRegistry, lower_subroutine
    cpp = preprocessor_lines(src)
    if cpp:
        if collect_errors:
            raise FortranErrors(cpp, src.filename)
        raise cpp[0]
    units = parse_units(src, jobs=jobs)
    registry = FileRegistry(src, units, search=search if search else None)
    from f2loopy.frontend.kernel_choice import chosen_procedures, note_units
    procedures = chosen_procedures(src, registry, kernels)
    chosen = kernels
    built: list[Kernel] = []
    errors: list[FortranError] = []
    for k, proc in enumerate(procedures):
        try:
            if collect_errors:
                kernel, errs = lower_subroutine(src, proc, registry, collect=True,
                                                bindings=bindings)
                errors.extend(errs)
                if kernel is not None:
                    built.append(kernel)
            else:
                built.append(lower_subroutine(src, proc, registry, bindings=bindings))
        except F2LoopyError as exc:
            note_units(exc, src, registry, procedures, k, chosen, bindings=bindings)
            raise
    if errors:
        collected = FortranErrors(errors, src.filename)
        note_units(collected, src, registry, procedures, None, chosen, failed_kernels=built)
        raise collected
    if search and search.files_read:
        return TranslationUnit(built, src.filename, src.text)   # depends on other files
    if len(_RECENT_UNITS) >= 4:
        del _RECENT_UNITS[next(iter(_RECENT_UNITS))]
    _RECENT_UNITS[key] = tuple(built)
    return TranslationUnit(built, src.filename, src.text)


#: the kernels of the last few sources translated, by (filename, text, form,
#: kernels, bindings, default real kind)
_RECENT_UNITS: dict = {}
