"""``f2loopy check``: run the original Fortran and the generated OpenCL on the
same inputs and compare everything the subroutines write.

::

    file --translate--> kernels (final and each checkpoint)
      \\--gfortran--> shared library of the original subroutines
    originals --plan_inputs--> random inputs (sizes that fit, indices in bounds)
    for each kernel: original subroutines (a fused kernel 'a_b': a then b) on a copy
                     generated OpenCL (through its Python glue) on a copy
                     compare every written array and scalar (per-dtype tolerances)

The reference runs in a forked child, so that a subroutine that crashes on
the inputs (an out-of-bounds subscript the input analysis could not
foresee) is reported instead of taking the command down.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from f2loopy.diagnostics import F2LoopyError
from f2loopy.directives.isl_quota import IslQuotaExceeded, isl_operation_limit
from f2loopy.ir.roles import character_of
from f2loopy.verify.compare import Tolerance, tolerance_for  # noqa: F401 - re-exported
from f2loopy.verify import shared_data
from f2loopy.verify.inputs import InputError, plan_inputs
from f2loopy.verify.original_build import (
    compiled_sources, include_flags, legacy_flags, parse_original, reference_kind_flags)
from f2loopy.verify.options import (  # the option values: part of this module's API too
    CheckOptions, parse_assignments, parse_number, parse_range, parse_tolerances)
from f2loopy.verify.runs import (  # noqa: F401 - CheckError and run_isolated are re-exported
    STOPPED, CheckError, OutputCheck, cl_queue, compare_outputs, fixed_parameters, fortran_storage, glue_for_kernels,
    glue_for_result, load_glue, max_error, references, run_counter, run_generated,
    run_isolated, run_sequence)


# {{{ results

@dataclass
class KernelCheck:
    """One generated kernel (the final one or a checkpoint) against the
    original subroutines it stands for."""

    kernel: str
    label: str | None                 # checkpoint label, None for the final kernel
    originals: tuple = ()             # names of the subroutines, in call order
    outputs: list = field(default_factory=list)
    error: str | None = None
    note: str = ""                    # e.g. both stop on these inputs
    #: the second of two calls in a row (saved locals carried over)
    twice: bool = False
    #: outputs differ, and the subroutines read variables nothing assigns:
    #: the messages saying so (undefined on both sides, not a translation error)
    undefined: tuple = ()
    #: outputs differ, and a NaN reached MIN/MAX (processor-dependent:
    #: :mod:`f2loopy.verify.nan_minmax`)
    nan_minmax: bool = False

    @property
    def undefined_only(self) -> bool:
        """Fails only for reading what nothing assigns (no error of its own)."""
        return bool(self.undefined) and self.error is None

    @property
    def passed(self) -> bool:
        return self.error is None and all(o.passed for o in self.outputs)

    @property
    def title(self) -> str:
        what = self.kernel if self.label is None else f"{self.kernel} [checkpoint {self.label!r}]"
        if self.originals and tuple(self.originals) != (self.kernel,):
            what += " = " + " then ".join(self.originals)
        if self.twice:
            what += " (called again: its saved variables carried over)"
        return what


@dataclass
class CheckReport:
    path: str
    seed: int
    inputs: str = ""
    checks: list = field(default_factory=list)
    #: line -> text of the statements of the checked subroutines that never
    #: ran on the inputs (None: not measured; see f2loopy.verify.coverage)
    coverage: dict | None = None
    #: further rounds of inputs: (description, CheckReport or a message)
    rounds: list = field(default_factory=list)
    #: the original subroutines checked (IR, untransformed)
    kernels: list = field(default_factory=list)
    #: what the check assumed (printed after the inputs)
    notes: list = field(default_factory=list)
    #: the strings given the character arguments
    char_values: dict = field(default_factory=dict)
    #: line of the preprocessed text -> (file, line) it came from (.F90)
    line_origins: dict = field(default_factory=dict)
    #: the translation checked (a TranslationResult): the next rounds of
    #: inputs (f2loopy.verify.coverage) check the same code without
    #: translating the file again
    translation: Any = field(default=None, repr=False, compare=False)
    #: argument name -> how outputs show it (module data as the glue's
    #: ``module.variable``, components as ``p%x``)
    labels: dict = field(default_factory=dict)
    #: the original's results were written to a file (``recorded`` in mode
    #: ``record``) and nothing ran on OpenCL: no kernel is checked
    recorded: bool = False

    def _inputs_reaching(self, line: int) -> list[str]:
        """The arguments (sizes, data) that the conditions and loop bounds
        guarding the statements of *line* read: the inputs that decide
        whether it runs."""
        from f2loopy.ir.domains import iname_to_domain_index
        from f2loopy.ir.expressions import variables_read
        from f2loopy.ir.isl_tools import param_names
        names: list = []
        for k in self.kernels:
            args = {a.name for a in k.args}
            where = iname_to_domain_index(k)
            computed: dict = {}     # a variable -> what the statements setting it read
            for i in k.instructions:
                if hasattr(i, "assignee_names") and hasattr(i, "read_expressions"):
                    for n in i.assignee_names():
                        computed.setdefault(n, set()).update(
                            variables_read(*i.read_expressions()))
            for i in k.instructions:
                span = getattr(i, "span", None)
                if span is None or span.line != line:
                    continue
                used = set(variables_read(*i.predicates)) if i.predicates else set()
                for iname in i.within_inames:
                    if iname in where:
                        used |= set(param_names(k.domains[where[iname]]))
                todo = list(used)          # and what those were computed from
                while todo:
                    for m in computed.get(todo.pop(), ()):
                        if m not in used:
                            used.add(m)
                            todo.append(m)
                names += sorted(n for n in used if n in args and n not in names)
        return names

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks) and \
            not self.coverage and all(not isinstance(r, CheckReport) or
                                      all(c.passed for c in r.checks)
                                      for _, r in self.rounds)

    def _kernel_count(self) -> int:
        return sum(not c.twice for c in self.checks)

    def failures(self) -> list:
        return [c for c in self.checks if not c.passed]

    def format(self) -> str:
        lines = [f"check {self.path} (seed {self.seed}" +
                 (f"; {self.inputs}" if self.inputs else "") + ")"]
        lines += [f"note: {n}" for n in self.notes]
        for c in self.checks:
            lines.append(c.title)
            if c.error is not None:
                lines.extend("  " + ln for ln in c.error.splitlines())
                lines.append("  FAIL")
                continue
            width = max([len(_decl(o, self.labels)) for o in c.outputs] + [1])
            for o in c.outputs:
                lines.append("  " + _output_line(o, width, self.labels))
                if o.fma_note:
                    lines.append("    " + o.fma_note)
            lines.extend("  " + u for u in c.undefined)
            if c.note:
                lines.append("  " + c.note)
            elif not c.outputs:
                lines.append("  (writes no argument)")
        for what, r in self.rounds:
            if isinstance(r, CheckReport):
                bad_r = [c for c in r.checks if not c.passed]
                state = "ok" if not bad_r else "MISMATCH in " + ", ".join(
                    c.kernel for c in bad_r)
                lines.append(f"inputs ({what}): {state}")
                if bad_r:
                    lines.extend("  " + ln for ln in r.format().splitlines()[1:-1])
            else:
                lines.append(f"inputs ({what}): {r}")
        n_out = sum(len(c.outputs) for c in self.checks) + sum(
            len(c.outputs) for _, r in self.rounds if isinstance(r, CheckReport)
            for c in r.checks)
        bad = self.failures()
        if self.coverage:
            lines.append("statements that never ran on these inputs (nothing is proven about "
                         "them):")
            for number in sorted(self.coverage):
                file, line = self.line_origins.get(number, (self.path, number))
                lines.append(f"  {file}:{line}: {self.coverage[number]}")
                reach = self._inputs_reaching(line)
                if reach:
                    what = "it another value" if len(reach) == 1 else "them other values"
                    lines.append(f"    (it runs depending on {', '.join(reach)}: give {what} "
                                 "with --size/--range)")
        if not self.checks:
            lines.append("nothing checked")
        elif bad or any(isinstance(r, CheckReport) and r.failures() for _, r in self.rounds):
            every = bad + [c for _, r in self.rounds if isinstance(r, CheckReport)
                           for c in r.failures()]
            titles = list(dict.fromkeys(c.title.split(" = ")[0].split(" (called again")[0]
                                        for c in every))
            if all(c.undefined_only for c in every):
                lines.append(f"UNDEFINED: {len(titles)} of {self._kernel_count()} kernel(s) "
                             "read variables that nothing assigns (above), so their results "
                             "are undefined in the original too: " + ", ".join(titles))
                return "\n".join(lines)
            if all(c.nan_minmax for c in every):
                lines.append(f"MISMATCH (processor-dependent): {len(titles)} of "
                             f"{self._kernel_count()} kernel(s) differ from the original Fortran "
                             "where a NaN reached MIN/MAX (above): " + ", ".join(titles))
                return "\n".join(lines)
            lines.append(f"MISMATCH: {len(titles)} of {self._kernel_count()} kernel(s) differ from "
                         "the original Fortran: " + ", ".join(titles))
        elif self.coverage:
            lines.append(f"NOT COVERED: {len(self.coverage)} statement(s) never ran; give "
                         "sizes or value ranges that reach them (--size, --range)")
        else:
            rounds = sum(isinstance(r, CheckReport) for _, r in self.rounds)
            lines.append(f"ok: {n_out} output(s) of {self._kernel_count()} kernel(s) match the "
                         "original Fortran" + (f" (over {rounds + 1} sets of inputs)"
                                               if rounds else ""))
        return "\n".join(lines)


def _decl(o: OutputCheck, labels=None) -> str:
    return f"{_subscripted(o.name, o.shape, labels)} {o.type_name}"


def _subscripted(name: str, idx, labels=None) -> str:
    """``name(i,j)`` for an output as the user knows it: module data as the
    glue's ``module.variable``, a component as ``p%x(k)`` or, of an array of
    a derived type (whose axes come last), ``pts(i)%x(k)``."""
    def par(xs):
        return "" if not xs else "(" + ",".join(str(x) for x in xs) + ")"
    label = (labels or {}).get(name)
    if label is None:
        return name + par(idx)
    text, rank = label
    if not rank or "%" not in text:
        return text + par(idx)
    root, path = text.split("%", 1)
    own = len(idx) - rank
    return f"{root}{par(idx[own:])}%{path}{par(idx[:own])}"


def _fmt(x, dtype) -> str:
    """*x* with as many digits as its dtype needs to be told apart."""
    try:
        return str(np.dtype(dtype).type(x))
    except (TypeError, ValueError, OverflowError):
        return str(x)


def _output_line(o: OutputCheck, width: int, labels=None) -> str:
    where = ""
    if o.where:
        where = " at " + _subscripted(o.name, tuple(o.where), labels)
    if o.note:
        return f"{_decl(o, labels).ljust(width)}  {o.note}  FAIL"
    err = o.error_text(where)
    if o.mismatch is None:
        return f"{_decl(o, labels).ljust(width)}  {err}  ok"
    m = o.mismatch
    loc = ""
    if m.where:
        loc = " at " + _subscripted(o.name, tuple(m.where), labels)
    return (f"{_decl(o, labels).ljust(width)}  max |error| {o.max_error:.3g}{loc}: got {_fmt(m.got, o.dtype)}, "
            f"expected {_fmt(m.want, o.dtype)} ({m.count} of {m.total} elements differ)  FAIL")

# }}}


# {{{ which subroutines a kernel stands for

def original_sequence(name: str, originals: dict):
    """The original subroutines (names) that kernel *name* stands for:
    ``[name]`` itself, or for a fused kernel ``a_b`` (``fuse_kernels`` joins
    the names with ``_``) ``[a, b]``.  None if it cannot be told."""
    low = {k.lower(): k for k in originals}
    if name.lower() in low:
        return [low[name.lower()]]
    target = name.lower()
    best = None

    def search(pos, acc):
        nonlocal best
        if best is not None:
            return
        if pos == len(target):
            best = list(acc)
            return
        for cand in sorted(low, key=len, reverse=True):
            if target.startswith(cand, pos):
                end = pos + len(cand)
                if end == len(target):
                    search(end, acc + [low[cand]])
                elif target[end] == "_" and end + 1 < len(target):
                    search(end + 1, acc + [low[cand]])
    search(0, [])
    return best

# }}}


# {{{ running


# }}}


def check_source(text: str, path, options: CheckOptions | None = None, *, result=None,
                 queue=None, recorded=None, reference_builds=None) -> CheckReport:
    """Check the translation of Fortran *text* (from file *path*) against
    gfortran, as *options* (a :class:`~f2loopy.verify.options.CheckOptions`;
    None: the defaults) say; see the module docstring.  *result* is a
    :class:`~f2loopy.pipeline.TranslationResult` of *text* if already made
    (with the same translation options); *queue* the OpenCL queue (None: one
    of the check's own).

    Raises :class:`~f2loopy.diagnostics.F2LoopyError` when the file cannot be
    translated or checked at all; mismatches are in the report.  With
    ``options.coverage``, the report says which statements never ran
    (:mod:`f2loopy.verify.coverage`).  *recorded* (a
    :class:`~f2loopy.verify.recorded.RecordedReferences`): write the
    original's results to its file and stop before OpenCL
    (``report.recorded``), or take them from the file instead of gfortran.
    """
    from f2loopy.frontend.search_path import SearchPath
    from f2loopy.pipeline import translate_text
    from f2loopy.verify.fortran import FortranLibrary
    options = options if options is not None else CheckOptions()
    translation = options.translation
    defines = translation.define_values()
    transform, include_dirs = translation.transform, translation.include_dirs
    checkpoints, fixed_form = translation.checkpoints, translation.fixed_form
    kernel, sizes, ranges, seed = options.kernel, options.sizes, options.ranges, options.seed
    tolerances, isolate, timeout = options.tolerances, options.isolate, options.timeout
    path = Path(path)
    source_text = text
    replay = recorded is not None and recorded.mode == "replay"
    # a file without a script: --kernel chooses what is translated too (the
    # file's other units do not matter, as for 'f2loopy translate --kernel')
    only = (kernel,) if kernel is not None and transform is None and \
        "!$loopy" not in text.lower() else None
    if result is None:
        # what 'f2loopy translate' makes of the file: with its tuned choices
        tunables = translation.tunables
        if translation.tuning:
            from f2loopy.tuning_record import find_entry
            entry, _ = find_entry(path, text, defines, transform)
            if entry is not None:
                tunables = entry.values
        try:
            result = translate_text(text, path, translation.replace(tunables=tunables,
                                                                    kernels=only))
        except F2LoopyError as exc:
            if only is not None and exc.message.startswith(f"--kernel {only[0].lower()}: "):
                raise CheckError(f"no kernel or subroutine named '{kernel}' in {path}") \
                    from None
            raise
    from f2loopy.preprocessor import needs_preprocessing, preprocess
    preprocessed = needs_preprocessing(text, path, translation.cpp)
    if preprocessed:
        # the original as the compiler sees it with the same macros (the
        # translation preprocessed it the same way: gfortran -cpp does it
        # once, here, and builds the preprocessed text)
        pp = preprocess(text, path, defines=defines, undefines=translation.undefines,
                        include_dirs=include_dirs, fixed_form=fixed_form)
        text = pp.text
    # Fortran include lines expanded as the translation reads them: the
    # kernels' statements are numbered in that text, so the original is built
    # (and its coverage counted) from it, and reported by the files' lines
    from f2loopy.frontend.includes import expand_includes
    expanded = expand_includes(text, str(path), include_dirs, base=pp if preprocessed else None)
    if expanded is not None:
        text, pp, preprocessed = expanded.text, expanded, True
    from f2loopy.frontend.source import fixed_form_of
    fixed = fixed_form_of(str(path), fixed_form)
    fortran_flags = (*options.fortran_flags, *reference_kind_flags(translation),
                     *include_flags(path, include_dirs),
                     *(() if replay else legacy_flags()))
    if result.parsed is not None:     # the translation's own parse
        originals = {k.name: k for k in result.parsed.kernels}
        search = result.parsed.search
    else:
        search = SearchPath(include_dirs, defines=defines, fixed_form=fixed_form,
                            cpp=translation.cpp)
        originals = {k.name: k for k in parse_original(text, path, search, include_dirs,
                                                       translation, fixed, only)}

    units = [(None, list(result.kernels), result.generated)]
    if checkpoints:
        units += [(label, list(ks), None) for label, ks in result.checkpoints]

    selected = []
    for label, ks, gks in units:
        for idx, k in enumerate(ks):
            seq = original_sequence(k.name, originals)
            if kernel is not None:
                wanted = kernel.lower()
                if k.name.lower() != wanted and not any(s.lower() == wanted
                                                         for s in (seq or ())):
                    continue
            selected.append((label, ks, gks, idx, k, seq))
    if kernel is not None and not selected:
        raise CheckError(f"no kernel or subroutine named '{kernel}' in {path}")

    # strings given with --size set CHARACTER flags (the same in every round)
    char_given = {n: v for n, v in (sizes or {}).items() if isinstance(v, str)}
    sizes = {n: v for n, v in (sizes or {}).items() if not isinstance(v, str)}
    char_args = {a.name.lower(): a.name for o in originals.values() for a in o.fortran_args
                 if character_of(a.role) is not None}
    for n, v in char_given.items():
        if n.lower() not in char_args:
            raise InputError(f"--size {n}={v}: '{n}' is no CHARACTER argument of the checked "
                             "subroutines (a string sets only those)")
    char_fixed = {char_args[n.lower()]: v for n, v in char_given.items()}

    report = CheckReport(str(path), seed, translation=result)
    if preprocessed:
        # (statements are named by the lines of the files as written)
        report.line_origins = {k: o for k, o in enumerate(pp.origin, 1) if o is not None}
    report.labels = shared_data.labels(originals.values())
    # a PRIVATE module procedure cannot be called from outside its module
    # (the harness's shim): it is checked inlined in the public ones
    from f2loopy.verify.fortran import (openable_procedures, private_procedures,
                                        private_type_arguments)
    typed = private_type_arguments(text, originals.values())
    # (private by the module's default only: made public in the original's copy)
    opened = openable_procedures(text) & {n.lower() for n in originals}
    hidden = ((private_procedures(text) - opened) & {n.lower() for n in originals}) | set(typed)
    for label, _, _, _, k, seq in selected:
        shut = [n for n in seq or () if n.lower() in hidden]
        if shut and shut[0].lower() in typed:
            dummy, tname = typed[shut[0].lower()]
            report.checks.append(KernelCheck(k.name, label, tuple(seq), note=(
                f"not checked: argument '{dummy}' of '{shut[0]}' has type '{tname}', which is "
                "PRIVATE in its module: a harness outside the module cannot make one")))
        elif shut:
            report.checks.append(KernelCheck(k.name, label, tuple(seq), note=(
                f"not checked: '{shut[0]}' is PRIVATE in its module, out of the reach of a "
                "harness (it is checked where a public procedure of the file calls it)")))
    # an array-valued function: stored with its bounds (fortran.array_result_bounds)
    from f2loopy.verify.fortran import array_result_bounds
    beyond = {n.lower(): "is an array-valued function " + (
        "outside a module, which the harness cannot call without an interface" if not o.module
        else "whose bounds are not constants or integer arguments, which the harness cannot "
        "declare") for n, o in originals.items()
        if o.result_arg is not None and o.result_arg.shape and array_result_bounds(o) is None}
    for label, _, _, _, k, seq in selected:
        shut = [n for n in seq or () if n.lower() in beyond]
        if shut and not any(n.lower() in hidden for n in seq):
            report.checks.append(KernelCheck(k.name, label, tuple(seq), note=(
                f"not checked: '{shut[0]}' {beyond[shut[0].lower()]} (compare it through "
                "the glue)")))
    hidden |= set(beyond)
    runnable = [s for s in selected if s[5] is not None
                and not any(n.lower() in hidden for n in s[5])]
    from f2loopy.verify import coverage as cov
    from f2loopy.verify import honesty
    checked_names = list(dict.fromkeys(n for *_, seq in runnable for n in seq))
    report.kernels = [originals[n] for n in checked_names]
    ranges_of = cov.procedure_ranges(text, list(originals.values()))
    char_choices = {n: cov.character_choices(text, *ranges_of[n])
                    for n in checked_names if n in ranges_of}
    for label, _, _, _, k, seq in selected:
        if seq is None:
            report.checks.append(KernelCheck(
                k.name, label, (), error=(
                    f"cannot tell which subroutines kernel '{k.name}' computes (its name is "
                    "neither a subroutine of the file nor fused subroutine names joined by '_')")))
    if not runnable:
        return report

    # inputs: one set per group of related subroutines (those a kernel runs in
    # sequence, transitively), fitting the assumptions of the group's kernels;
    # unrelated subroutines may declare arguments of the same name differently
    groups = _input_groups([seq for *_, seq in runnable])
    # a name no checked kernel has is ignored with a note: one set of options
    # can then serve every file and kernel of a project
    report.notes += _names_not_given(groups, originals, sizes, "--size")
    report.notes += _names_not_given(groups, originals, ranges, "--range")
    plans = {}
    for group in groups:
        members = [r for r in runnable if r[5][0] in group]
        given = fixed_parameters([r[4] for r in members])
        names = {a.name.lower() for n in group for a in originals[n].args}
        for n, v in (sizes or {}).items():
            if n.lower() not in names:
                continue
            match = [f for f in given if f.lower() == n.lower()]
            if match and given[match[0]] != v:
                raise CheckError(f"--size {n}={v}: the kernel was translated for {n}="
                                 f"{given[match[0]]} (fix_parameters)")
            if not match:
                given[n] = v
        # an allocatable module array: allocated with lower bounds 1 on both
        # sides (the Python glue's, for an array assigned to it)
        given.update(shared_data.allocation_given([originals[n] for n in group]))
        honesty.check_given_sizes(given, {n: v for n, v in (sizes or {}).items()
                                          if n.lower() in names},
                                  [originals[n] for n in group])
        from f2loopy.verify.module_extents import planners_for, too_complex
        members_of, memo = [originals[n] for n in group], (str(path), tuple(group))
        planners = planners_for(memo, members_of, plan_inputs)
        for attempt, planner in enumerate(planners):
            try:
                # the assumptions may come from a script: bounded isl work only
                with isl_operation_limit():
                    plan = honesty.plan_with_fallback(
                        planner, members_of,
                        assumptions=[r[4].assumptions for r in members], given=given,
                        ranges={n: r for n, r in (ranges or {}).items() if n.lower() in names},
                        seed=seed,
                        notes=report.notes if options.assumed_size_fallback else None)
                    generated = honesty.character_inputs(
                        members_of, plan.generate(seed, style=options.value_style),
                        char_choices, options.char_round, options.char_exclude,
                        fixed=char_fixed)
                    # saved locals start where the original's first call does
                    generated = shared_data.with_saved_initial(members_of, generated)
                break
            except IslQuotaExceeded:
                if attempt + 1 < len(planners):
                    too_complex(memo)
                    continue
                raise CheckError("the kernels' assumptions are too complex to draw inputs "
                                 "for (isl's operation limit was reached); give the sizes "
                                 "with --size NAME=VALUE") from None
        report.char_values.update({n: v for n, v in generated.items() if isinstance(v, str)})
        plans[group] = (plan, generated)
    described = [(group, plan.describe()) for group, (plan, _) in plans.items()]
    if len(described) == 1:
        report.inputs = described[0][1]
    else:
        report.inputs = "; ".join(f"{'+'.join(g)}: {d}" for g, d in described if d)

    def group_of(seq):
        return next(g for g in plans if seq[0] in g)

    with tempfile.TemporaryDirectory(prefix="f2loopy-check-") as tmp_dir:
        tmp = Path(tmp_dir)
        suffix = ".f" if fixed else ".f90"
        if fixed_form is None and path.suffix in (".F90", ".F", ".f95", ".f03", ".f08",
                                                   ".for", ".f77"):
            # (gfortran would preprocess a .F90 again, without the macros)
            suffix = path.suffix.lower() if preprocessed or translation.cpp is False \
                else path.suffix
        measure = options.coverage and isolate and not replay and cov.gcov_available()
        # (F77's 'real dx(1)' dummies, assumed size: not bounds-checked)
        from f2loopy.verify.legacy import assumed_size_copy
        compiled = assumed_size_copy(text, originals.values(), ranges_of, fixed=fixed)
        from f2loopy.verify.programs import may_have_main_program
        if any(k.host_program for k in originals.values()) or may_have_main_program(text):
            from f2loopy.verify.programs import program_as_module
            compiled = program_as_module(text, str(path), fixed)
        # the files the search path provided, each after the modules it uses
        # (a subscript the inputs could not be sized for stops the original
        # with a message, not writing past the drawn arrays: isolated only)
        ref_flags = tuple(fortran_flags) + (("-fcheck=bounds",) if isolate else ())
        if opened - hidden:
            from f2loopy.verify.fortran import with_public
            compiled = with_public(compiled, opened - hidden)
            ref_flags += ("-ffixed-line-length-none" if fixed else "-ffree-line-length-none",)
        if not replay:
            lib = FortranLibrary(compiled,
                                 [o for o in originals.values() if o.name.lower() not in hidden],
                                 filename=f"original{suffix}",
                                 flags=ref_flags, workdir=str(tmp), coverage=measure,
                                 extra_sources=compiled_sources(search, tmp, fixed_form, text,
                                                                  cpp=translation.cpp),
                                 builds=reference_builds)
        sequences = []
        for *_, seq in runnable:
            if tuple(seq) not in sequences:
                sequences.append(tuple(seq))
            # with saved locals, also twice in a row (the second call starts
            # from what the first left in them; a fresh child each: isolated)
            if isolate and shared_data.saved_names([originals[n] for n in seq]) and \
                    tuple(seq) * 2 not in sequences:
                sequences.append(tuple(seq) * 2)
        if replay:
            refs = recorded.load(source_text, sequences, lambda s: plans[group_of(s)][1])
        else:
            try:
                refs = references(lib, originals, sequences, lambda s: plans[group_of(s)][1],
                                   isolate, timeout)
            except CheckError as exc:
                _locate_runtime_error(exc, path, text, report.line_origins)
                raise
        if recorded is not None and not replay:
            recorded.save(source_text, refs, lambda s: plans[group_of(s)][1])
            report.recorded = True
            return report
        if measure:
            counts = cov.gcov_counts(lib) or {}
            report.coverage = {}
            for n in checked_names:
                if n in ranges_of:
                    need = cov.required_lines(text, originals[n], *ranges_of[n], counts,
                                              fixed_form=fixed)
                    report.coverage.update({ln: t for ln, t in need.items()
                                            if not counts.get(ln)})

        if queue is None:
            queue = cl_queue()
        modules = {}
        for label, ks, gks, idx, k, seq in runnable:
            kc = KernelCheck(k.name, label, tuple(seq))
            report.checks.append(kc)
            try:
                key = (label, id(ks))
                if key not in modules:
                    if gks is not None:
                        modules[key] = (glue_for_result(result, tmp / "final"), gks)
                    else:
                        modules[key] = glue_for_kernels(ks, tmp / f"c{len(modules)}",
                                                         path.name)
                module, gk_list = modules[key]
                plan, inputs = plans[group_of(seq)]
                stopped = refs[tuple(seq)] is STOPPED
                try:
                    got = run_generated(module, gk_list[idx], inputs, queue)
                except Exception as exc:  # noqa: BLE001
                    if not honesty.is_kernel_stop(exc):
                        raise
                    if stopped:
                        kc.note = f"both stop on these inputs ({honesty.stop_message(exc)})"
                    else:
                        kc.error = (f"the kernel stopped ({honesty.stop_message(exc)}), the "
                                    "original Fortran did not")
                    continue
                if stopped:
                    kc.error = "the original Fortran stops on these inputs, the kernel does not"
                    continue
            except F2LoopyError as exc:
                kc.error = exc.format()
                continue
            except Exception as exc:  # noqa: BLE001 - the generated code failed to run
                kc.error = _describe_failure(exc)
                continue
            want = refs[tuple(seq)]
            written = []
            for n in seq:
                for a in originals[n].args:
                    if a.name in originals[n].written_variables() and a.name not in written:
                        written.append(a.name)
            for ka in gk_list[idx].arguments:
                if ka.written and ka.name not in written:
                    written.append(ka.name)
            order = list(plan.args)
            written.sort(key=lambda x: order.index(x) if x in order else len(order))
            # (a saved local's value after the call is out of the original's reach)
            saved = shared_data.saved_names([originals[n] for n in seq])
            written = [w for w in written if w not in saved]
            kc.outputs = compare_outputs(written, got, want, inputs, plan.lower_bounds,
                                          tolerances)
            again = refs.get(tuple(seq) * 2)
            twice = None
            if saved and again is not None and again is not STOPPED:
                twice = KernelCheck(k.name, label, tuple(seq), twice=True)
                report.checks.append(twice)
                try:
                    got2 = run_generated(module, gk_list[idx], got, queue)
                    twice.outputs = compare_outputs(written, got2, again, inputs,
                                                    plan.lower_bounds, tolerances)
                    honesty.explain_nan_minmax(twice.outputs, got2, again,
                                               [originals[n] for n in seq], tolerances)
                except Exception as exc:  # noqa: BLE001 - as the first call's
                    twice.error = _describe_failure(exc)
            if any(o.mismatch is not None for o in kc.outputs) and \
                    all(k2.options.fp_contract for k2 in ks):
                honesty.rerun_without_contraction(
                    kc, ks, idx, seq, written, inputs, plan, compiled, originals, suffix,
                    fortran_flags, tmp, path, tolerances, queue, isolate, timeout, want)
            honesty.explain_nan_minmax(kc.outputs, got, want, [originals[n] for n in seq],
                                       tolerances)
            from f2loopy.verify.nan_minmax import explain_nan_minmax_reach
            explain_nan_minmax_reach(kc, ks, idx, written, inputs, got, plan,
                                     [originals[n] for n in seq], tmp, path, tolerances, queue)
            _blame_undefined([c for c in (kc, twice) if c is not None],
                             [originals[n] for n in seq])
    return report


def _blame_undefined(checks, kernels) -> None:
    """The *checks* of *kernels* whose outputs differ while the subroutines
    read variables nothing assigns: say so (no translation error is shown by
    such a difference)."""
    undefined = None
    for kc in checks:
        if kc.error is not None or kc.undefined or \
                all(o.mismatch is None for o in kc.outputs):
            continue
        if undefined is None:
            from f2loopy.verify import honesty
            undefined = honesty.undefined_reads(kernels)
        if not undefined:
            return
        from f2loopy.verify.honesty import undefined_message
        kc.undefined = tuple(undefined_message(n, sp) for n, sp in undefined)
        for o in kc.outputs:
            if o.mismatch is not None:
                o.fma_note = ""


def _locate_runtime_error(exc: CheckError, path: Path, text: str, origins: dict) -> None:
    """Give *exc* the place of the statement where gfortran's run-time
    library stopped the original (its copy ``original.*`` keeps the lines
    of *text*; a preprocessed line maps back through *origins*)."""
    place = exc.fortran_place
    if exc.span is not None or place is None or not place[0].startswith("original."):
        return
    from f2loopy.diagnostics import SourceSpan
    line = place[1]
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return
    shown = lines[line - 1]
    file, at = origins.get(line, (str(path), line))
    column = len(shown) - len(shown.lstrip()) + 1
    exc.span = SourceSpan(str(file), at, column, max(1, len(shown.strip())), shown)


def _input_groups(sequences) -> list:
    """The subroutine names of *sequences* grouped so that the names of one
    sequence are in one group (tuples, in order of first appearance)."""
    groups: list = []
    for seq in sequences:
        joined = list(seq)
        for g in [g for g in groups if set(g) & set(seq)]:
            groups.remove(g)
            joined = list(g) + [n for n in joined if n not in g]
        groups.append(tuple(dict.fromkeys(joined)))
    return groups


def _names_not_given(groups, originals, values, option) -> list[str]:
    """A note for each name of ``--size``/``--range`` that no checked
    subroutine has as an argument (it is ignored)."""
    names = {a.name.lower() for g in groups for n in g for a in originals[n].args}
    checked = ", ".join(dict.fromkeys(n for g in groups for n in g))
    return [f"{option} {n} ignored: no argument called '{n}' in {checked}"
            for n in values or {} if n.lower() not in names]


def _describe_failure(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = text.splitlines()
    if len(lines) > 20:
        lines = lines[:20] + ["..."]
    return f"running the generated kernel failed: {type(exc).__name__}: " + "\n".join(lines)


def check_file(path, options: CheckOptions | None = None, *, queue=None) -> CheckReport:
    """:func:`check_source` on the file *path*; with ``options.coverage``, in
    rounds of inputs until every statement ran (:func:`~f2loopy.verify.coverage.
    check_covering`).  *options* None: the defaults with coverage (the
    command's)."""
    options = options if options is not None else CheckOptions(coverage=True)
    path = Path(path)
    from f2loopy.regular_files import read_regular_text
    try:        # a regular file, bounded: not a FIFO or /dev/zero of a downloaded tree
        text = read_regular_text(path)
    except OSError as exc:
        raise CheckError(f"cannot read {path}: {exc.strerror or exc}") from None
    if options.coverage:
        from f2loopy.verify.coverage import check_covering
        return check_covering(text, path, options, check=check_source, queue=queue)
    return check_source(text, path, options, queue=queue)


__all__ = ["CheckError", "CheckOptions", "CheckReport", "InputError", "KernelCheck", "OutputCheck",
           "check_file", "check_source", "original_sequence", "parse_assignments",
           "parse_number", "parse_range", "parse_tolerances", "run_isolated"]
