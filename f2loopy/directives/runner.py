"""Running a file's transformation script: the parent's whole side.

:func:`run_transformations` turns the ``!$loopy begin`` blocks of a source
file (and an optional ``--transform`` recipe) into a sandbox job, runs it
(:mod:`~f2loopy.directives.sandbox`), and turns the child's JSON answer back
into kernels, checkpoints and located diagnostics.  Everything in the answer
is checked: kernels go through :func:`f2loopy.ir.serialize.kernels_from_data`,
locations must lie in the files the parent knows, messages are length-capped
and stripped of control characters.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

from f2loopy.codegen.elsewhere import ChildCode
from f2loopy.diagnostics import F2LoopyError, SandboxViolation, ScriptError, SourceSpan
from f2loopy.directives import seccomp
from f2loopy.directives.answer_limits import AnswerTooLarge, check_answer
from f2loopy.directives.child import FORMAT, VERSION, CodeUnit, Job
from f2loopy.directives.lockdown import Limits
from f2loopy.directives.child_codegen import (
    MAX_CODE, code_from_answer, lower_all, lower_script_kernels, remaining)
from f2loopy.directives.recipes import Recipe, available_recipes, is_builtin, resolve_recipe
from f2loopy.directives.sandbox import MAX_ANSWER, run_sandboxed
from f2loopy.ir.build_options import BuildOptionError, check_build_options
from f2loopy.directives.tunables import TunableError, check_assignment, check_space
from f2loopy.ir.serialize import SerializationError, kernels_from_data, loads


@dataclass
class TransformOutcome:
    """What the transformation script produced.

    :attr kernels: the kernels to generate, in output order.
    :attr checkpoints: ``(label, kernels)`` for every ``checkpoint(label)``
        call, in call order; each list is complete (code can be generated
        from it alone).
    :attr inputs: recipe files that were read (for make depfiles).
    :attr output: what the script printed.
    :attr layers: the sandbox layers that were in force.
    :attr code: the generated code of every result and checkpoint kernel,
        made by the limited child (None when no script ran: then nobody
        generated code yet).
    :attr times: wall-clock seconds of the script's run (``"script"``) and
        of the child's code generation (``"child codegen"``).
    :attr cpu_times: their CPU seconds (this process's and its children's).
    """

    kernels: list
    checkpoints: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    output: str = ""
    layers: dict = field(default_factory=dict)
    #: tunable name -> choices that the script declared (``tunable(...)``)
    tunables: dict = field(default_factory=dict)
    code: ChildCode | None = None
    times: dict = field(default_factory=dict)
    cpu_times: dict = field(default_factory=dict)


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children that ended so far."""
    import resource
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def _clean(text, limit=2000) -> str:
    text = str(text)[:limit]
    return _CONTROL_RE.sub("?", text)


def block_unit(src, index: int, block) -> CodeUnit:
    """The script block as a :class:`CodeUnit`, with the column of each code
    line in its Fortran line."""
    code_lines = block.code.splitlines()
    offsets = []
    for k, line in enumerate(block.line_map):
        text = src.lines[line - 1] if 0 < line <= len(src.lines) else ""
        code = code_lines[k] if k < len(code_lines) else ""
        if code and text.endswith(code):
            offsets.append(len(text) - len(code))
        else:
            bang = text.find("!")
            offsets.append(bang + 1 if bang >= 0 else 0)
    return CodeUnit("block", index, block.code, tuple(block.line_map), tuple(offsets),
                    bool(getattr(block, "prebound", False)))


def recipe_unit(recipe: Recipe) -> CodeUnit:
    n = max(1, len(recipe.text.splitlines()))
    return CodeUnit("recipe", recipe.name, recipe.text, tuple(range(1, n + 1)), (0,) * n)


def pre_code_unit(text: str) -> CodeUnit:
    n = max(1, len(text.splitlines()))
    return CodeUnit("pre", "pre_transform_code", text, tuple(range(1, n + 1)), (0,) * n)


#: set (to 1) by ``--trust-scripts``: transformation scripts run without the sandbox
TRUST_ENV = "F2LOOPY_TRUST_SCRIPTS"

#: every sandbox layer off: what ``--trust-scripts`` runs a script with
TRUSTED_LAYERS = {"checks": False, "builtins": False, "audit": False, "seccomp": False,
                  "trusted": True}


def scripts_trusted() -> bool:
    """Whether the user said ``--trust-scripts`` (for this process and its workers)."""
    import os
    return os.environ.get(TRUST_ENV, "") == "1"


def run_transformations(src, kernels, defines, transform, *, debug=False,
                        limits: Limits | None = None, layers: dict | None = None,
                        pre_code: str | None = None,
                        trust: bool | None = None,
                        tunables: dict | None = None,
                        checkpoints: bool = True,
                        default_real_kind: int = 4) -> TransformOutcome:
    """Run the ``!$loopy begin`` blocks of *src* (a
    :class:`~f2loopy.frontend.source.SourceFile`) on *kernels* in the sandbox,
    then the recipe *transform* (a name from ``transforms/`` or a file path)
    if given.

    :arg defines: ``-D NAME=VALUE`` values, visible to the script as variables
        (and to a ``--transform`` recipe as options it declares).
    :arg pre_code: Python run in the sandbox before the blocks, in their
        namespace (loopy's *pre_transform_code*); errors in it are located at
        ``<pre_transform_code>:LINE``.
    :arg limits: resource limits (default: :meth:`Limits.from_environment`).
    :arg layers: for tests only: switch single sandbox layers off
        (``{"checks": False}``) to check that the others hold alone.
    :arg trust: run the script without the sandbox (only the CPU, wall-clock
        and memory limits stay); default: whether ``--trust-scripts`` was given.
    :arg tunables: name -> value for the script's ``tunable(...)`` calls
        (checked literals, :mod:`~f2loopy.directives.tunables`).
    :arg checkpoints: keep the script's ``checkpoint(...)`` kernels (and
        generate their code in the limited child, which costs as much as the
        result's for each); ``translate`` does not need them.
    :arg default_real_kind: the kind *kernels* were read with (8:
        ``-fdefault-real-8``); the script's ``parse_fortran`` of other text
        reads it alike unless told otherwise.
    :raises ScriptError: the script failed (located at its ``.f90`` line).
    :raises SandboxViolation: the script tried something the sandbox forbids,
        or this machine has no seccomp filter and the scripts are not trusted.
    """
    # a name the sandbox could not send back ('a$b'): refused here, located
    from f2loopy.codegen.names import check_names
    for k in kernels:
        check_names(k)
    if trust is None:
        trust = scripts_trusted()
    cli = resolve_recipe(transform) if transform is not None else None
    recipes = available_recipes(cli)
    blocks = tuple(block_unit(src, i, b) for i, b in enumerate(src.scripts))
    job_layers = _sandbox_layers(src, trust, layers)
    job = Job(source=src.text, filename=src.filename, defines=dict(defines or {}),
              blocks=blocks, recipes={n: recipe_unit(r) for n, r in recipes.items()},
              kernels=tuple(kernels), cli_recipe=cli.name if cli else None, debug=debug,
              layers=job_layers, pre_code=pre_code_unit(pre_code) if pre_code else None,
              tunables=check_assignment(tunables or {}), checkpoints=checkpoints,
              default_real_kind=default_real_kind,
              code=lower_all if not blocks and pre_code is None and cli is not None
              and is_builtin(cli) else None)
    limits = limits or Limits.from_environment()
    started, cpu = time.perf_counter(), _cpu_seconds()
    answer = run_sandboxed(job, limits,
                           MAX_ANSWER + MAX_CODE if job.code is not None else MAX_ANSWER)
    script_s = time.perf_counter() - started
    decoder = _AnswerReader(src, recipes, debug, pre_code or "")
    if answer.problem is not None or answer.text is None:
        raise SandboxViolation(answer.problem or "the transformation sandbox gave no answer",
                               decoder.begin_span())
    outcome = decoder.read(answer.text)
    script_cpu = _cpu_seconds() - cpu
    # the parent never lowers a script's kernels itself: a child does, under
    # what is left of the limits
    if not checkpoints:
        # dropped, not kept unlowered: nobody may generate their code here
        outcome.checkpoints = []
    if job.code is not None:
        # no script code ran in the child (f2loopy's own recipe alone): its
        # code is the clean child's, made once (the recipe's check made it)
        try:
            outcome.code = code_from_answer(decoder.table, decoder.code_items,
                                            decoder.begin_span())
        except F2LoopyError as exc:
            exc.script_output = outcome.output
            raise
        outcome.times = {"script": script_s}
        outcome.cpu_times = {"script": script_cpu}
        if cli is not None and cli.path not in outcome.inputs:
            outcome.inputs.insert(0, cli.path)
        return outcome
    started, cpu = time.perf_counter(), _cpu_seconds()
    _lower_in_child(outcome, remaining(limits, answer.cpu_s, answer.elapsed_s),
                    decoder.begin_span())
    outcome.times = {"script": script_s, "child codegen": time.perf_counter() - started}
    outcome.cpu_times = {"script": script_cpu, "child codegen": _cpu_seconds() - cpu}
    if cli is not None and cli.path not in outcome.inputs:
        outcome.inputs.insert(0, cli.path)
    return outcome


def _sandbox_layers(src, trust: bool, layers: dict | None) -> dict:
    """The sandbox's layers for a job (all on unless the scripts are trusted
    or a test switches one off); without a seccomp filter on this machine an
    untrusted script is refused, located at its first block."""
    job_layers = {"checks": True, "builtins": True, "audit": True, "seccomp": True}
    job_layers.update(TRUSTED_LAYERS if trust else (layers or {}))
    if job_layers["seccomp"] and not seccomp.supported():
        import platform
        begin = src.span(src.scripts[0].begin_line, "$loopy") if src.scripts else None
        raise SandboxViolation(
            f"the transformation sandbox needs a seccomp filter, which f2loopy has for Linux "
            f"on x86-64 and, with libseccomp (libseccomp.so.2), on other Linux architectures "
            f"(this machine: {platform.system()} on {platform.machine()}); "
            "pass --trust-scripts to run the script without the sandbox if you trust "
            "whoever wrote it", begin)
    return job_layers


def _lower_in_child(outcome: TransformOutcome, limits: Limits, begin_span) -> None:
    """Set *outcome*'s code: the script's kernels and checkpoints (each
    distinct object once) lowered in limited children, never here."""
    unique: dict = {}
    for k in list(outcome.kernels) + [k for _, ks in outcome.checkpoints for k in ks]:
        unique.setdefault(id(k), k)
    try:
        outcome.code = lower_script_kernels(list(unique.values()), limits, begin_span)
    except F2LoopyError as exc:
        exc.script_output = outcome.output      # what print(knl) showed helps here
        raise


class _AnswerReader:
    """Checks the child's answer and rebuilds kernels and diagnostics from it."""

    def __init__(self, src, recipes: dict, debug: bool, pre_code: str = ""):
        self.src = src
        self.pre_lines = pre_code.splitlines()
        self.recipes = recipes
        self.debug = debug
        #: the decoded kernels of the answer's table, and the answer's code
        #: of each (only asked for where no script code ran in the child)
        self.table: list = []
        self.code_items = None

    def begin_span(self) -> SourceSpan | None:
        if not self.src.scripts:
            return None
        return self.src.span(self.src.scripts[0].begin_line, "$loopy")

    def invalid(self, why: str):
        return ScriptError(f"the transformation sandbox sent an invalid answer ({why})",
                           self.begin_span())

    # {{{ locations

    @staticmethod
    def _int(v, lo, hi) -> TypeGuard[int]:
        return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi

    def span(self, loc) -> SourceSpan | None:
        if not isinstance(loc, dict):
            return None
        unit = loc.get("unit")
        if unit == "begin":
            idx = loc.get("index")
            if self._int(idx, 0, len(self.src.scripts) - 1):
                return self.src.span(self.src.scripts[idx].begin_line, "$loopy")
            return self.begin_span()
        line, col, length = loc.get("line"), loc.get("col", 1), loc.get("length", 1)
        if not self._int(col, 1, 100_000):
            col = 1
        if not self._int(length, 1, 100_000):
            length = 1
        if unit == "block":
            if not self._int(line, 1, len(self.src.lines)):
                return self.begin_span()
            return SourceSpan(self.src.filename, line, col, length, self.src.lines[line - 1])
        if unit == "recipe":
            recipe = self.recipes.get(loc.get("name"))
            if recipe is None:
                return None
            lines = recipe.text.splitlines()
            if not self._int(line, 1, max(1, len(lines))):
                return None
            text = lines[line - 1] if lines else ""
            return SourceSpan(recipe.display_path, line, col, length, text)
        if unit == "pre":
            if not self._int(line, 1, max(1, len(self.pre_lines))):
                return None
            text = self.pre_lines[line - 1] if self.pre_lines else ""
            return SourceSpan("<pre_transform_code>", line, col, length, text)
        if unit == "span":
            filename = loc.get("filename")
            if not isinstance(filename, str) or not self._int(line, 1, 10_000_000):
                return None
            text = ""
            if filename == self.src.filename and line <= len(self.src.lines):
                text = self.src.lines[line - 1]
            return SourceSpan(_clean(filename, 500), line, col, length, text)
        return None

    # }}}

    def error(self, err) -> F2LoopyError:
        if not isinstance(err, dict) or not isinstance(err.get("message"), str):
            return self.invalid("malformed error")
        notes = []
        for note in err.get("notes") or []:
            if isinstance(note, dict) and isinstance(note.get("message"), str):
                notes.append((_clean(note["message"]), self.span(note.get("at"))))
        tb = err.get("traceback")
        if self.debug and isinstance(tb, str):
            notes.append(("Python traceback of the script (--debug):\n" + _clean(tb, 20000),
                          None))
        cls = SandboxViolation if err.get("sandbox") is True else ScriptError
        return cls(_clean(err["message"]), self.span(err.get("at")), tuple(notes))

    def read(self, text: str) -> TransformOutcome:
        try:
            data = loads(text)
        except SerializationError as exc:
            raise self.invalid(str(exc)) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT \
                or data.get("version") != VERSION:
            raise self.invalid("unknown format")
        if "internal" in data:
            raise RuntimeError(f"the transformation sandbox failed: {_clean(data['internal'])}")
        output = data.get("output", "")
        output = _clean(output, 70_000) if isinstance(output, str) else ""
        if data.get("ok") is not True:
            error = self.error(data.get("error"))
            error.script_output = output
            raise error
        try:
            check_answer(data)
        except AnswerTooLarge as exc:
            raise SandboxViolation(f"the transformation script returned {exc}",
                                   self.begin_span()) from None
        try:
            table = kernels_from_data(data.get("table"))
        except SerializationError as exc:
            raise self.invalid(str(exc)) from None
        self.table, self.code_items = list(table), data.get("code")

        def pick(indices, what):
            if not isinstance(indices, list) or not all(
                    self._int(i, 0, len(table) - 1) for i in indices):
                raise self.invalid(f"bad kernel references in {what}")
            return [table[i] for i in indices]

        for k in table:
            # the allow-list again: the child's set_options checked it, but the
            # answer is only data from an untrusted process
            try:
                check_build_options(k.options.build_options)
            except BuildOptionError as exc:
                raise SandboxViolation(str(exc), self.begin_span()) from None
        kernels = pick(data.get("result"), "the result")
        if not kernels:
            raise self.invalid("no kernels")
        names = [k.name for k in kernels]
        if len(set(names)) != len(names):
            raise self.invalid("duplicate kernel names")
        checkpoints = []
        raw_cps = data.get("checkpoints", [])
        if not isinstance(raw_cps, list):
            raise self.invalid("bad checkpoints")
        for cp in raw_cps:
            if not isinstance(cp, dict) or not isinstance(cp.get("label"), str):
                raise self.invalid("bad checkpoint")
            checkpoints.append((_clean(cp["label"], 200), pick(cp.get("kernels"), "a checkpoint")))
        used = data.get("recipes", [])
        inputs: list[Path] = []
        if isinstance(used, list):
            inputs = [self.recipes[n].path for n in used
                      if isinstance(n, str) and n in self.recipes]
        given = data.get("layers")
        layers = {str(k)[:20]: bool(v) for k, v in list(given.items())[:10]} \
            if isinstance(given, dict) else {}
        try:
            tunables = check_space(data.get("tunables", {}))
        except TunableError as exc:
            raise self.invalid(str(exc)) from None
        return TransformOutcome(kernels, checkpoints, inputs, output, layers, tunables)
