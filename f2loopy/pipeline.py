"""The whole translation of one Fortran file, as one readable function.

::

    source --frontend--> kernels --script (sandboxed)--> kernels --codegen--> .cl
                                                                     \\--glue--> _cl.py,
                                                                               _cl.f90 + _cl.c

Nothing is written until every stage has succeeded; the outputs of a file
are committed together (:mod:`f2loopy.outputs`: all or none, also when the
process is interrupted) and an output whose content did not change is left
alone, so its timestamp stays.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from f2loopy.diagnostics import F2LoopyError, FortranError

INPUT_SUFFIXES = (".f90", ".F90", ".f", ".F", ".for", ".f77", ".floopy", ".f95", ".f03",
                  ".f08")


class NothingToTranslate(FortranError):
    """The file has no subroutine or function to translate (a file of
    modules that other files use, or a main program): nothing is written.
    :attr:`has_modules` says whether it defines modules."""

    has_modules = False


@dataclass
class TranslationResult:
    """What translating one file produced (nothing is on disk yet)."""

    source_path: Path
    kernels: list            # transformed IR kernels, in output order
    generated: list          # GeneratedKernel objects
    outputs: dict = field(default_factory=dict)   # path -> text
    inputs: list = field(default_factory=list)    # files read (for depfiles)
    checkpoints: list = field(default_factory=list)  # (label, kernels) from checkpoint()
    script_output: str = ""                          # what the script printed
    tunables: dict = field(default_factory=dict)     # tunable name -> choices declared
    notes: list = field(default_factory=list)        # e.g. which tuned choices were used
    absent: list = field(default_factory=list)       # paths an #include looked at, not there


def output_stem(path: Path) -> str:
    return path.name.split(".")[0] if path.suffix else path.name


#: what translating NAME.f90 writes: NAME.cl, NAME_cl.py, NAME_cl.f90, NAME_cl.c
OUTPUT_KINDS = (".cl", "_cl.py", "_cl.f90", "_cl.c")


def output_paths(path, output_dir=None) -> dict:
    """kind -> the path of each output of translating *path* (see OUTPUT_KINDS)."""
    path = Path(path)
    out_dir = Path(output_dir) if output_dir is not None else path.parent
    stem = output_stem(path)
    return {kind: out_dir / f"{stem}{kind}" for kind in OUTPUT_KINDS}


def translate_file(path: str | os.PathLike, *, output_dir: str | os.PathLike | None = None,
                   defines: dict | None = None, transform: str | None = None,
                   debug: bool = False, cache: bool = False,
                   collect_errors: bool = False, include_dirs=(), search_files=(),
                   undefines=(), tuning: bool = True,
                   checkpoints: bool = True, fixed_form: bool | None = None,
                   kernels: tuple[str, ...] | None = None) -> TranslationResult:
    """Translate the Fortran file *path*; return the outputs without writing them.

    With *cache*, an unchanged file's outputs come from the translation cache
    (:mod:`f2loopy.cache`); the result then has outputs, inputs and what the
    script printed only (no kernels).  With *collect_errors*, every statement that cannot be
    translated is reported (:class:`~f2loopy.frontend.FortranErrors`).
    Modules and procedures of other files are looked up in *search_files*
    and under *include_dirs* (``-I``); every file read is in the result's inputs.
    A file that needs the C preprocessor gets it (:mod:`f2loopy.preprocessor`),
    with the *defines*, *undefines* (``-U``) and *include_dirs* (``-I``).
    With *tuning*, the script's ``tunable(...)`` choices come from the file's
    tuning record (``FILE.tune.json``, :mod:`f2loopy.tune.record`) when it has
    an entry for this content, ``-D`` values and recipe; the result's notes
    say so.  *fixed_form* True/False reads every file of the translation
    (the ``-I`` path too) in fixed/free form whatever its name says (a
    compiler's ``-ffixed-form``/``-ffree-form``).  *kernels*:
    the names of the only procedures to translate (``--kernel``).
    """
    path = Path(path)
    from f2loopy.regular_files import read_regular_text
    try:        # a regular file, bounded: not a FIFO or /dev/zero of a downloaded tree
        text = read_regular_text(path)
    except OSError as exc:
        raise F2LoopyError(f"cannot read {path}: {exc.strerror or exc}") from None
    tunables, notes, extra, used = None, [], [], []
    if kernels is not None:
        from f2loopy.frontend.kernel_choice import check_kernel_names
        kernels = check_kernel_names(kernels)
        notes.append(f"{path}: only {', '.join(kernels)} translated (--kernel); the file's "
                     "other units were not")
    if tuning:
        from f2loopy.tune.record import find_entry, usage_note
        entry, record = find_entry(path, text, defines, transform)
        if entry is not None:
            tunables = entry.values
            notes.append(usage_note(path, entry, record))
            extra = [repr(sorted(tunables.items()))]
            used = [record]

    def translate() -> TranslationResult:
        result = translate_text(text, path, output_dir=output_dir, defines=defines,
                                transform=transform, debug=debug,
                                collect_errors=collect_errors, include_dirs=include_dirs,
                                search_files=search_files, undefines=undefines,
                                tunables=tunables, checkpoints=checkpoints,
                                fixed_form=fixed_form, kernels=kernels)
        result.notes[:0] = notes
        result.inputs.extend(used)
        return result

    if not cache:
        return translate()
    from f2loopy import cache as tcache
    on_path = []
    if include_dirs or search_files:
        # the files on the search path as they are now: one added since the
        # entry was stored may define a module or procedure first
        from f2loopy.frontend.search_path import SearchPath
        on_path = ["path:" + SearchPath(include_dirs, search_files).fingerprint()]
    if kernels is not None:
        on_path += [f"--kernel={k.lower()}" for k in kernels]
    # (#included files are inputs: an entry is re-checked against them)
    key = tcache.translation_key(path, text, output_dir=output_dir, defines=defines,
                                 transform=transform,
                                 extra=extra + [f"-U{u}" for u in undefines] +
                                 [f"-I{d}" for d in include_dirs] +
                                 [f"file:{f}" for f in search_files] + on_path +
                                 ([] if fixed_form is None else [f"fixed:{fixed_form}"]))
    # an entry holds texts by kind: the paths are always the ones computed here
    paths = output_paths(path, output_dir)
    # (an entry also lists the include paths that were looked at and did not
    # exist: a header created there since would be read instead)
    hit = tcache.load(key, OUTPUT_KINDS, path)
    if hit is not None:
        texts, inputs, output = hit
        outputs = {paths[kind]: texts[kind] for kind in OUTPUT_KINDS}
        return TranslationResult(path, [], [], outputs, inputs, script_output=output,
                                 notes=notes)
    result = translate()
    by_path = {Path(p): t for p, t in result.outputs.items()}
    if set(by_path) == set(paths.values()):
        tcache.store(key, {kind: by_path[p] for kind, p in paths.items()}, result.inputs,
                     text, result.script_output, absent=result.absent)
    return result


def translate_text(text: str, path: Path, *, output_dir=None, defines=None, transform=None,
                   debug=False, collect_errors=False, include_dirs=(), search_files=(),
                   undefines=(), tunables=None, checkpoints: bool = True,
                   fixed_form: bool | None = None,
                   kernels: tuple[str, ...] | None = None) -> TranslationResult:
    """Translate Fortran *text* as if read from *path* (a str or Path; it
    names the outputs and the diagnostics, and the outputs go next to it
    unless *output_dir* is given).  Nothing is written.

    A ``.F90``/``.F`` file, or one with preprocessor lines, is preprocessed
    first (``-D`` *defines*, ``-U`` *undefines*, ``-I`` *include_dirs*);
    errors then point at the original files and lines, and the files it
    ``#include``s are inputs of the result.  *tunables*: name -> value for
    the script's ``tunable(...)`` calls.  Without *checkpoints*, the
    script's ``checkpoint(...)`` kernels are dropped (only the result's code
    is generated).  *fixed_form*, *kernels*: as for :func:`translate_file`."""
    from f2loopy.frontend.source import fixed_form_of
    from f2loopy.preprocessor import needs_preprocessing, preprocess
    fixed_form_of(str(path), fixed_form)        # (a bad value is refused here)
    options = dict(output_dir=output_dir, defines=defines, undefines=tuple(undefines),
                   transform=transform, debug=debug,
                   collect_errors=collect_errors, include_dirs=tuple(include_dirs),
                   search_files=tuple(search_files), tunables=tunables,
                   checkpoints=checkpoints, fixed_form=fixed_form, kernels=kernels)
    from f2loopy.frontend.includes import expand_includes
    if not needs_preprocessing(text, path):
        pp = expand_includes(text, str(Path(path)), include_dirs)
        if pp is None:
            return _translate_preprocessed(text, path, **options)
    else:
        pp = preprocess(text, path, defines=defines, undefines=undefines,
                        include_dirs=include_dirs, fixed_form=fixed_form)
        # Fortran include lines (after the C preprocessor, as gfortran does)
        pp = expand_includes(pp.text, pp.filename, include_dirs, base=pp) or pp
    try:
        result = _translate_preprocessed(pp.text, path, **options)
    except F2LoopyError as exc:
        raise pp.remap(exc) from None
    result.inputs.extend(Path(f) for f in pp.includes)
    result.absent.extend(pp.absent)
    return result


def _translate_preprocessed(text: str, path: Path, *, output_dir=None, defines=None,
                            undefines=(), transform=None, debug=False, collect_errors=False,
                            include_dirs=(), search_files=(),
                            tunables=None, checkpoints: bool = True,
                            fixed_form: bool | None = None,
                            kernels: tuple[str, ...] | None = None) -> TranslationResult:
    path = Path(path)
    # imported here: a cache hit (translate_file) never loads the compiler
    from f2loopy.codegen import file_header, generate_code, join_program
    from f2loopy.frontend import read_source, translate_source
    from f2loopy.glue.fortran import generate_fortran_glue
    from f2loopy.glue.python import generate_python_glue
    from f2loopy.frontend.search_path import SearchPath
    from f2loopy.frontend.source import fixed_form_of
    src = read_source(text, str(path), fixed_form=fixed_form_of(str(path), fixed_form))
    search = SearchPath(include_dirs, search_files, defines=defines, undefines=undefines,
                        fixed_form=fixed_form)
    try:
        chosen = kernels
        kernels = list(translate_source(src, collect_errors=collect_errors, search=search,
                                        kernels=None if chosen is None else tuple(chosen)))
    except F2LoopyError as exc:
        for pp in search.preprocessed.values():
            pp.remap(exc)        # spans into a preprocessed file of the path
        raise
    inputs = [path, *search.files_read, *map(Path, search.includes)]
    if not kernels and not src.scripts:
        # (before a recipe, which would say only that its RESULT is empty)
        raise _nothing_to_translate(src)
    script = apply_transformations(src, kernels, defines or {}, transform, debug=debug,
                                   tunables=tunables, checkpoints=checkpoints)
    kernels = script.kernels
    inputs.extend(script.inputs)
    if not kernels:
        raise _nothing_to_translate(src)
    from f2loopy.ir.work_limit import parent_isl_limit
    try:
        generated = []
        for k in kernels:       # the parent's own work on downloaded code: bounded
            with parent_isl_limit(f"code generation of kernel '{k.name}'", k.span):
                generated.append(generate_code(k))
    except F2LoopyError as exc:
        exc.script_output = script.output     # what print(knl) showed helps here most
        raise
    stem = output_stem(path)
    paths = output_paths(path, output_dir)
    cl_name = paths[".cl"].name
    program = file_header(path.name) + "\n\n" + join_program(generated)
    glue = generate_python_glue(generated, program, cl_name, path.name)
    f_glue, c_program = generate_fortran_glue(generated, program, stem, path.name)
    outputs = {paths[".cl"]: program, paths["_cl.py"]: glue,
               paths["_cl.f90"]: f_glue, paths["_cl.c"]: c_program}
    # set_options(knl, "write_code"): the code is shown, as loopy does
    shown = "".join(f"{gk.source}\n" for gk in generated if gk.kernel.options.write_code)
    return TranslationResult(path, kernels, generated, outputs, inputs, script.checkpoints,
                             script.output + shown, dict(script.tunables),
                             absent=list(search.absent))


def _nothing_to_translate(src) -> NothingToTranslate:
    import re
    first = 1
    for no, line in enumerate(src.lines, start=1):
        text = line.strip()
        if text and not text.startswith("!") and not (src.fixed_form and
                                                      line[:1] in "cC*"):
            first = no
            break
    has_modules = any(re.match(r"\s*module\s+(?!procedure\b)\w", line, re.I)
                      for line in src.lines)
    program = next((no for no, line in enumerate(src.lines, start=1)
                    if re.match(r"\s*program\s+\w", line, re.I)), None)
    if program is not None and not has_modules:
        first = program
        message = ("nothing to translate: the file has a main program and no subroutine or "
                   "function (f2loopy translates procedures: put the loops in a subroutine "
                   "after the program's 'contains')")
    else:
        message = ("nothing to translate: the file has no subroutine or function (a file of "
                   "modules is read where the files that use it are translated: name it with "
                   "them, or its directory with -I)")
    exc = NothingToTranslate(message, src.span(first) if src.lines else None)
    exc.has_modules = has_modules
    return exc


def apply_transformations(src, kernels, defines, transform, *, debug=False, tunables=None,
                          checkpoints: bool = True):
    """Run the file's ``!$loopy begin`` script (and/or a named recipe) on *kernels*
    in the sandbox; returns a :class:`~f2loopy.directives.TransformOutcome`."""
    from f2loopy.directives import TransformOutcome, run_transformations
    if not src.scripts and transform is None:
        return TransformOutcome(kernels)
    return run_transformations(src, kernels, defines, transform, debug=debug,
                               tunables=tunables, checkpoints=checkpoints)


def write_outputs(outputs: dict) -> list[Path]:
    """Write every output (path -> text), all or none, leaving files whose
    content is unchanged alone (:mod:`f2loopy.outputs`).

    Returns the paths actually (re)written.
    """
    from f2loopy.outputs import write_outputs as commit
    return commit(outputs)
