"""The stages of one translation and the artifacts they hand on.

::

    text --parse--> Parsed --transform--> Transformed --glue--> Glued
          (preprocess,       (the script in the      (the .cl program
           frontend)          sandbox, the code of     and the host glues)
                              every kernel)

Each artifact is frozen and holds what later stages and the commands that
check, tune or time the translation need: :class:`Parsed` the kernels as the
frontend made them (``check`` and ``tune`` compare against these instead of
parsing again), :class:`Transformed` the script's kernels *with their
generated code* (for a script's kernels: the sandbox child's code,
:class:`~f2loopy.codegen.elsewhere.ChildCode`; the parent never generates
it), :class:`Glued` the output texts.  Nothing is written here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from f2loopy.diagnostics import F2LoopyError, FortranError, SourceSpan
from f2loopy.pipeline.options import TranslateOptions
from f2loopy.pipeline.timings import StageTimes

#: what translating NAME.f90 writes: NAME.cl, NAME_cl.py, NAME_cl.f90, NAME_cl.c
OUTPUT_KINDS = (".cl", "_cl.py", "_cl.f90", "_cl.c")


class NothingToTranslate(FortranError):
    """The file has no subroutine or function to translate (a file of
    modules that other files use, or a main program): nothing is written.
    :attr:`has_modules` says whether it defines modules."""

    has_modules = False


def output_stem(path: Path) -> str:
    return path.name.split(".")[0] if path.suffix else path.name


def output_paths(path, output_dir=None) -> dict:
    """kind -> the path of each output of translating *path* (see OUTPUT_KINDS)."""
    path = Path(path)
    out_dir = Path(output_dir) if output_dir is not None else path.parent
    stem = output_stem(path)
    return {kind: out_dir / f"{stem}{kind}" for kind in OUTPUT_KINDS}


@dataclass(frozen=True)
class Parsed:
    """The frontend's kernels of one file, before any script.

    :attr path: the file (names the outputs and the diagnostics).
    :attr source: the :class:`~f2loopy.frontend.source.SourceFile` the
        frontend read (preprocessed, includes expanded).
    :attr kernels: one kernel per translated procedure, in file order.
    :attr inputs: every file read: the file, the files of the search path,
        the Fortran and ``#include`` files.
    :attr absent: include paths that were looked at and did not exist.
    :attr preprocessed: the preprocessing of the file (None if it needed
        none): errors of later stages are mapped back through it.
    :attr search: the :class:`~f2loopy.frontend.search_path.SearchPath` the
        frontend looked modules and procedures up in (the files it read and
        preprocessed; ``check`` compiles them with the original).
    """

    path: Path
    source: Any
    kernels: tuple
    inputs: tuple = ()
    absent: tuple = ()
    preprocessed: Any = None
    search: Any = None

    @contextmanager
    def original_lines(self) -> Iterator[None]:
        """Errors raised in the block point at the original file and line
        (not at the preprocessed text)."""
        try:
            yield
        except F2LoopyError as exc:
            if self.preprocessed is None:
                raise
            raise self.preprocessed.remap(exc) from None


@dataclass(frozen=True)
class Transformed:
    """The kernels after the file's script (and recipe), with their code.

    :attr kernels: the kernels to generate, in output order.
    :attr generated: their :class:`~f2loopy.codegen.GeneratedKernel`, in the
        same order.
    :attr checkpoints: ``(label, kernels)`` of each ``checkpoint(...)`` call
        (empty without the *checkpoints* option).
    :attr code: the sandbox child's code of the result and checkpoint
        kernels (None when no script ran: the parent generated the code).
    :attr script_output: what the script printed (and the code of kernels
        set to ``write_code``).
    :attr tunables: name -> choices the script declared.
    :attr inputs: recipe files that were read.
    """

    parsed: Parsed
    kernels: tuple
    generated: tuple
    checkpoints: tuple = ()
    code: Any = None
    script_output: str = ""
    tunables: Mapping = field(default_factory=dict)
    inputs: tuple = ()

    def code_of(self, kernel) -> Any:
        """The generated code of a result or checkpoint kernel: the child's
        for a script's kernel (its error raised if it had one)."""
        if self.code is not None:
            return self.code.code(kernel)
        from f2loopy.codegen import generate_code
        return generate_code(kernel)


@dataclass(frozen=True)
class Glued:
    """The output texts: path -> text (see :data:`OUTPUT_KINDS`)."""

    transformed: Transformed
    outputs: Mapping


def parse(text: str, path: Path, options: TranslateOptions,
          times: StageTimes | None = None) -> Parsed:
    """Preprocess *text* (the content of *path*) if it needs it, expand its
    Fortran ``include`` lines and run the frontend."""
    times = times if times is not None else StageTimes()
    path = Path(path)
    with times.stage("preprocess"):
        from f2loopy.frontend.includes import expand_includes
        from f2loopy.preprocessor import needs_preprocessing, preprocess
        if options.cpp is False:
            from f2loopy.preprocessor import nocpp_refusal
            refusal = nocpp_refusal(text, path)
            if refusal is not None:
                raise refusal
        if not needs_preprocessing(text, path, options.cpp):
            pp = expand_includes(text, str(path), options.include_dirs)
            unapplied = unapplied_macros_of(text, path, options)
        else:
            unapplied = []
            pp = preprocess(text, path, defines=options.define_values(),
                            undefines=options.undefines, include_dirs=options.include_dirs,
                            fixed_form=options.fixed_form)
            # Fortran include lines (after the C preprocessor, as gfortran does)
            pp = expand_includes(pp.text, pp.filename, options.include_dirs, base=pp) or pp
    try:
        if pp is None:
            return _frontend(text, path, options, times)
        try:
            parsed = _frontend(pp.text, path, options, times)
        except F2LoopyError as exc:
            raise pp.remap(exc) from None
    except F2LoopyError as exc:
        # '-D N=128' on a .f90 without -cpp: 'N' is then a Fortran name
        from f2loopy.preprocessor import unapplied_macro_message
        exc.notes = (*exc.notes, *((unapplied_macro_message(name, path), span)
                                   for name, span in unapplied))
        raise
    return Parsed(path, parsed.source, parsed.kernels,
                  (*parsed.inputs, *(Path(f) for f in pp.includes)),
                  (*parsed.absent, *pp.absent), pp, parsed.search)


def unapplied_macros_of(text: str, path: Path, options: TranslateOptions) -> list:
    """``(name, span)`` for the first place of each ``-D`` macro that appears
    in *text*, a file that is not preprocessed (see
    :func:`~f2loopy.preprocessor.unapplied_macros`); the options of the
    ``--transform`` recipe are left out (all names, where the recipe does
    not declare them)."""
    if not options.defines:
        return []
    from f2loopy.frontend.source import fixed_form_of
    from f2loopy.preprocessor import unapplied_macros
    defines = list(options.defines)
    if options.transform is not None:
        from f2loopy.directives.recipes import declared_options, resolve_recipe
        try:
            known = declared_options(resolve_recipe(options.transform))
        except Exception:  # noqa: BLE001 - the recipe's own errors come later
            known = None
        if not known:
            return []
        defines = [name for name in defines if name not in known]
    return unapplied_macros(text, path, defines,
                            fixed_form=fixed_form_of(str(path), options.fixed_form))


def _frontend(text: str, path: Path, options: TranslateOptions, times: StageTimes) -> Parsed:
    with times.stage("parse"):
        from f2loopy.frontend import read_source, translate_source
        from f2loopy.frontend.search_path import SearchPath
        from f2loopy.frontend.source import fixed_form_of
        src = read_source(text, str(path), fixed_form=fixed_form_of(str(path),
                                                                    options.fixed_form))
        search = SearchPath(options.include_dirs, options.search_files,
                            defines=options.define_values(), undefines=options.undefines,
                            fixed_form=options.fixed_form, cpp=options.cpp)
        try:
            kernels = tuple(translate_source(
                src, collect_errors=options.collect_errors, search=search,
                kernels=None if options.kernels is None else tuple(options.kernels),
                bindings=options.bindings, default_real_kind=options.default_real_kind))
        except F2LoopyError as exc:
            for pp in search.preprocessed.values():
                pp.remap(exc)        # spans into a preprocessed file of the path
            raise
    return Parsed(path, src, kernels, (path, *search.files_read, *map(Path, search.includes)),
                  tuple(search.absent), None, search)


def transform(parsed: Parsed, options: TranslateOptions,
              times: StageTimes | None = None) -> Transformed:
    """Run the file's script and the *transform* recipe (in the sandbox) on
    the parsed kernels, and get the code of every kernel: from the sandbox's
    limited child for a script's kernels, generated here (under the parent's
    isl limit) when no script ran.  Errors point at the preprocessed text
    (see :meth:`Parsed.original_lines`)."""
    times = times if times is not None else StageTimes()
    src = parsed.source
    kernels: tuple = tuple(parsed.kernels)
    checkpoints: tuple = ()
    inputs: tuple = ()
    code: Any = None
    output, tunables = "", {}
    if not kernels and not src.scripts:
        # (before a recipe, which would say only that its RESULT is empty)
        raise nothing_to_translate(src)
    if src.scripts or options.transform is not None:
        with times.stage("script"):         # (the sandbox's modules, imported)
            from f2loopy.directives import run_transformations
        outcome = run_transformations(
            src, list(parsed.kernels), options.define_values(), options.transform,
            debug=options.debug,
            tunables=None if options.tunables is None else dict(options.tunables),
            checkpoints=options.checkpoints, default_real_kind=options.default_real_kind)
        for name, seconds in outcome.times.items():
            times.add(name, seconds, outcome.cpu_times.get(name))
        kernels, code, output = tuple(outcome.kernels), outcome.code, outcome.output
        checkpoints = tuple((label, list(ks)) for label, ks in outcome.checkpoints)
        tunables, inputs = dict(outcome.tunables), tuple(outcome.inputs)
    if not kernels:
        raise nothing_to_translate(src)
    try:
        if code is not None:
            # the script's kernels: the limited child's code, never the parent's
            generated = tuple(code.code(k) for k in kernels)
        else:
            generated = _generate_here(kernels, times)
    except F2LoopyError as exc:
        # what print(knl) showed helps here most (the command prints it)
        exc.script_output = output
        raise
    # set_options(knl, "write_code"): the code is shown, as loopy does
    shown = "".join(f"{gk.source}\n" for gk in generated if gk.kernel.options.write_code)
    return Transformed(parsed, kernels, generated, checkpoints, code, output + shown,
                       tunables, inputs)


def _generate_here(kernels: tuple, times: StageTimes) -> tuple:
    """The code of the frontend's own kernels (no script ran)."""
    generated = []
    with times.stage("codegen"):
        from f2loopy.codegen import generate_code
        from f2loopy.ir.work_limit import parent_isl_limit
        for k in kernels:       # the parent's own work on downloaded code: bounded
            with parent_isl_limit(f"code generation of kernel '{k.name}'", k.span):
                generated.append(generate_code(k))
    return tuple(generated)


def glue(transformed: Transformed, options: TranslateOptions,
         times: StageTimes | None = None) -> Glued:
    """The OpenCL program and the Python and Fortran/C host glue."""
    times = times if times is not None else StageTimes()
    path = transformed.parsed.path
    generated = list(transformed.generated)
    with times.stage("glue"):
        from f2loopy.codegen import file_header, join_program
        from f2loopy.glue.fortran import generate_fortran_glue
        from f2loopy.glue.python import generate_python_glue
        paths = output_paths(path, options.output_dir)
        program = file_header(path.name) + "\n\n" + join_program(generated)
        py_glue = generate_python_glue(generated, program, paths[".cl"].name, path.name)
        f_glue, c_program = generate_fortran_glue(generated, program, output_stem(path),
                                                  path.name)
    return Glued(transformed, {paths[".cl"]: program, paths["_cl.py"]: py_glue,
                               paths["_cl.f90"]: f_glue, paths["_cl.c"]: c_program})


def nothing_to_translate(src) -> NothingToTranslate:
    """The error for a file without a procedure to translate, at its first line."""
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
    # (an empty file: at its first line all the same, so the error has a place)
    exc = NothingToTranslate(message, src.span(first) if src.lines
                             else SourceSpan(src.filename, 1, 1, 1, ""))
    exc.has_modules = has_modules
    return exc
