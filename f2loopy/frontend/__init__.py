"""The Fortran frontend: source text to kernels.

:func:`parse_fortran` reads a file (free or fixed form) with fparser.two and
lowers every subroutine to a :class:`~f2loopy.ir.kernel.Kernel`.
"""

from __future__ import annotations

from f2loopy.frontend.reader import parse_tree
from f2loopy.frontend.source import SourceFile, is_fixed_form_name
from f2loopy.frontend.units import lower_subroutine, program_units
from f2loopy.ir.kernel import TranslationUnit


def read_source(source: str, filename: str = "<string>", *,
                fixed_form: bool | None = None) -> SourceFile:
    if fixed_form is None:
        fixed_form = is_fixed_form_name(filename)
    return SourceFile(filename, source, fixed_form=fixed_form)


def parse_fortran(source: str, filename: str = "<string>", *,
                  auto_dependencies: bool = True, fixed_form: bool | None = None,
                  **_loopy_compat) -> TranslationUnit:
    """Translate the subroutines of Fortran *source* into kernels.

    Returns a :class:`~f2loopy.ir.kernel.TranslationUnit` that unpacks like a
    sequence (``f_r, f_s = parse_fortran(SOURCE, FILENAME)``) and indexes like a
    mapping (``tu["refFluxR"]``).

    Dependencies always come from program order, exactly (*auto_dependencies*
    is accepted for compatibility with loopy scripts and has no effect).
    Raises :class:`~f2loopy.diagnostics.FortranError` with the location for
    anything that cannot be translated.
    """
    src = read_source(source, filename, fixed_form=fixed_form)
    return translate_source(src)


def translate_source(src: SourceFile) -> TranslationUnit:
    tree = parse_tree(src)
    kernels = [lower_subroutine(src, unit, host) for unit, host in program_units(src, tree)]
    names = [k.name.lower() for k in kernels]
    for k in kernels:
        if names.count(k.name.lower()) > 1:
            from f2loopy.diagnostics import FortranError
            raise FortranError(f"subroutine '{k.name}' is defined twice", k.span)
    return TranslationUnit(kernels, src.filename, src.text)
