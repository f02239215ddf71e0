"""The whole translation of one Fortran file, as one readable function.

::

    source --parse--> Parsed --transform (script sandboxed, code)--> Transformed
           --glue--> Glued: .cl, _cl.py, _cl.f90 + _cl.c

The stages and their artifacts are in :mod:`f2loopy.pipeline.stages`, the
options of a translation in one frozen :class:`TranslateOptions`
(:mod:`f2loopy.pipeline.options`), the seconds of each stage in
:class:`StageTimes` (``f2loopy translate --timings``).

Nothing is written until every stage has succeeded; the outputs of a file
are committed together (:mod:`f2loopy.outputs`: all or none, also when the
process is interrupted) and an output whose content did not change is left
alone, so its timestamp stays.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from f2loopy.diagnostics import F2LoopyError
from f2loopy.pipeline.options import TranslateOptions
from f2loopy.pipeline.stages import (
    OUTPUT_KINDS, Glued, NothingToTranslate, Parsed, Transformed, glue,
    output_paths, output_stem, parse, transform)
from f2loopy.pipeline.timings import StageTimes

__all__ = ["INPUT_SUFFIXES", "OUTPUT_KINDS", "Glued", "NothingToTranslate", "Parsed",
           "StageTimes", "Transformed", "TranslateOptions", "TranslationResult",
           "output_paths", "output_stem", "translate_file",
           "translate_parsed", "translate_text", "write_outputs"]

INPUT_SUFFIXES = (".f90", ".F90", ".f", ".F", ".for", ".f77", ".floopy", ".f95", ".f03",
                  ".f08")


@dataclass
class TranslationResult:
    """What translating one file produced (nothing is on disk yet).

    :attr parsed: the frontend's artifact (:class:`~f2loopy.pipeline.stages.Parsed`;
        None for a translation from the cache), which ``check`` and ``tune``
        compare against; :attr transformed: the script's kernels with their
        code; :attr timings: seconds per stage."""

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
    parsed: Parsed | None = None
    transformed: Transformed | None = None
    timings: StageTimes = field(default_factory=StageTimes)


def translate_file(path: str | os.PathLike, options: TranslateOptions | None = None, *,
                   cache: bool = False, times: StageTimes | None = None,
                   **keywords: Any) -> TranslationResult:
    """Translate the Fortran file *path*; return the outputs without writing them.

    *options*: a :class:`~f2loopy.pipeline.options.TranslateOptions`; each of
    its fields may also be given as a keyword (``defines={"n": 4}``), which
    replaces the field.  With *cache*, an unchanged file's outputs come from
    the translation cache (:mod:`f2loopy.cache`); the result then has
    outputs, inputs and what the script printed only (no kernels, no
    artifacts).  With *collect_errors*, every statement that cannot be
    translated is reported (:class:`~f2loopy.frontend.FortranErrors`).
    Modules and procedures of other files are looked up in *search_files*
    and under *include_dirs* (``-I``); every file read is in the result's inputs.
    A file that needs the C preprocessor gets it (:mod:`f2loopy.preprocessor`),
    with the *defines*, *undefines* (``-U``) and *include_dirs* (``-I``).
    With *tuning*, the script's ``tunable(...)`` choices come from the file's
    tuning record (``FILE.tune.json``, :mod:`f2loopy.tuning_record`) when it has
    an entry for this content, ``-D`` values and recipe; the result's notes
    say so.  *fixed_form* True/False reads every file of the translation
    (the ``-I`` path too) in fixed/free form whatever its name says (a
    compiler's ``-ffixed-form``/``-ffree-form``).  *kernels*:
    the names of the only procedures to translate (``--kernel``).  *times*
    collects the seconds of each stage (also when the translation fails);
    the result's ``timings`` is it.
    """
    options = TranslateOptions.with_keywords(options, keywords, "translate_file")
    times = times if times is not None else StageTimes()
    path = Path(path)
    from f2loopy.regular_files import read_regular_text
    with times.stage("read"):
        try:        # a regular file, bounded: not a FIFO or /dev/zero of a downloaded tree
            text = read_regular_text(path)
        except OSError as exc:
            raise F2LoopyError(f"cannot read {path}: {exc.strerror or exc}") from None
    notes: list = []
    extra: list = []
    used: list = []
    if options.kernels is not None:
        from f2loopy.frontend.kernel_choice import check_kernel_names
        options = options.replace(kernels=check_kernel_names(options.kernels))
        notes.append(f"{path}: only {', '.join(options.kernels or ())} translated (--kernel); "
                     "the file's other units were not")
    if options.tuning:
        with times.stage("tuning record"):
            from f2loopy.tuning_record import find_entry, usage_note
            entry, record = find_entry(path, text, options.define_values(), options.transform)
        if entry is not None:
            options = options.replace(tunables=entry.values)
            notes.append(usage_note(path, entry, record))
            extra = [repr(sorted(entry.values.items()))]
            used = [record]

    def translate() -> TranslationResult:
        result = translate_text(text, path, options, times=times)
        result.notes[:0] = notes
        result.inputs.extend(used)
        return result

    if not cache:
        return translate()
    with times.stage("cache lookup"):
        from f2loopy import cache as tcache
        key = _cache_key(path, text, options, extra)
        # an entry holds texts by kind: the paths are always the ones computed here
        paths = output_paths(path, options.output_dir)
        # (an entry also lists the include paths that were looked at and did not
        # exist: a header created there since would be read instead)
        hit = tcache.load(key, OUTPUT_KINDS, path)
    if hit is not None:
        texts, inputs, output = hit
        outputs = {paths[kind]: texts[kind] for kind in OUTPUT_KINDS}
        return TranslationResult(path, [], [], outputs, inputs, script_output=output,
                                 notes=notes, timings=times)
    result = translate()
    by_path = {Path(p): t for p, t in result.outputs.items()}
    if set(by_path) == set(paths.values()):
        with times.stage("cache store"):
            tcache.store(key, {kind: by_path[p] for kind, p in paths.items()}, result.inputs,
                         text, result.script_output, absent=result.absent)
    return result


def _cache_key(path, text: str, options: TranslateOptions, extra: list) -> str:
    """The translation cache's key of *text* at *path* with *options*: all
    that can change the outputs (*extra*: the tuning record's values)."""
    from f2loopy import cache as tcache
    on_path = []
    if options.include_dirs or options.search_files:
        # the files on the search path as they are now: one added since the
        # entry was stored may define a module or procedure first
        from f2loopy.frontend.search_path import SearchPath
        on_path = ["path:" + SearchPath(options.include_dirs,
                                        options.search_files).fingerprint()]
    if options.kernels is not None:
        on_path += [f"--kernel={k.lower()}" for k in options.kernels]
    if options.bindings:
        from f2loopy.frontend.procedure_dummies import parse_bindings
        on_path += [b.option() for b in parse_bindings(options.bindings)]
    # (#included files are inputs: an entry is re-checked against them)
    return tcache.translation_key(
        path, text, output_dir=options.output_dir, defines=options.define_values(),
        transform=options.transform,
        extra=extra + [f"-U{u}" for u in options.undefines] +
        [f"-I{d}" for d in options.include_dirs] +
        [f"file:{f}" for f in options.search_files] + on_path +
        ([] if options.fixed_form is None else [f"fixed:{options.fixed_form}"]) +
        ([] if options.cpp is None else [f"cpp:{options.cpp}"]) +
        # (-fdefault-real-8: other dtypes; none for kind 4, so keys stay as they were)
        ([] if options.default_real_kind == 4 else
         [f"default-real-kind:{options.default_real_kind}"]))


def translate_text(text: str, path: str | os.PathLike, options: TranslateOptions | None = None,
                   *, times: StageTimes | None = None, **keywords: Any) -> TranslationResult:
    """Translate Fortran *text* as if read from *path* (a str or Path; it
    names the outputs and the diagnostics, and the outputs go next to it
    unless *output_dir* is given).  Nothing is written.

    A ``.F90``/``.F`` file, or one with preprocessor lines, is preprocessed
    first (``-D`` *defines*, ``-U`` *undefines*, ``-I`` *include_dirs*);
    errors then point at the original files and lines, and the files it
    ``#include``s are inputs of the result.  *tunables*: name -> value for
    the script's ``tunable(...)`` calls.  Without *checkpoints*, the
    script's ``checkpoint(...)`` kernels are dropped (only the result's code
    is generated).  *options* and the keywords: as for :func:`translate_file`
    (*tuning* is not used here: give *tunables*)."""
    options = TranslateOptions.with_keywords(options, keywords, "translate_text")
    times = times if times is not None else StageTimes()
    with times.stage("preprocess"):     # (the first stage to load the frontend's modules)
        from f2loopy.frontend.source import fixed_form_of
        fixed_form_of(str(path), options.fixed_form)    # (a bad value is refused here)
    parsed = parse(text, Path(path), options, times)
    return translate_parsed(parsed, options, times=times)


def translate_parsed(parsed: Parsed, options: TranslateOptions | None = None, *,
                     times: StageTimes | None = None, **keywords: Any) -> TranslationResult:
    """The rest of the translation of a file already parsed (*parsed*, from
    :func:`translate_text` or :func:`~f2loopy.pipeline.stages.parse` with the
    same preprocessing and search options): ``tune`` translates each variant
    of a script's choices (*tunables*) from one parse."""
    options = TranslateOptions.with_keywords(options, keywords, "translate_parsed")
    times = times if times is not None else StageTimes()
    with parsed.original_lines():
        transformed = transform(parsed, options, times)
        glued = glue(transformed, options, times)
    return TranslationResult(parsed.path, list(transformed.kernels),
                             list(transformed.generated), dict(glued.outputs),
                             [*parsed.inputs[:_own_inputs(parsed)], *transformed.inputs,
                              *parsed.inputs[_own_inputs(parsed):]],
                             list(transformed.checkpoints), transformed.script_output,
                             dict(transformed.tunables), absent=list(parsed.absent),
                             parsed=parsed, transformed=transformed, timings=times)


def _own_inputs(parsed: Parsed) -> int:
    """How many of *parsed*'s inputs come before a recipe's (the file and
    its search path; the preprocessor's ``#include`` files come after)."""
    if parsed.preprocessed is None:
        return len(parsed.inputs)
    return len(parsed.inputs) - len(parsed.preprocessed.includes)


def write_outputs(outputs: dict) -> list[Path]:
    """Write every output (path -> text), all or none, leaving files whose
    content is unchanged alone (:mod:`f2loopy.outputs`).

    Returns the paths actually (re)written.
    """
    from f2loopy.outputs import write_outputs as commit
    return commit(outputs)
