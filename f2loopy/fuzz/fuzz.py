"""Differential fuzzing: generated programs, translated and run on OpenCL,
compared with gfortran (:mod:`f2loopy.fuzz.progen` makes the programs,
:mod:`f2loopy.verify.check` runs them).

:func:`run_seed` runs one program and classifies what happened:

``pass``
    every output matches.
``mismatch``
    an output differs from gfortran's (a bug somewhere in f2loopy).
``kernel-error``
    the generated OpenCL does not build or run (a code generation bug).
``internal``
    translation raised something other than a located diagnostic.
``rejected``
    the untransformed program was refused with a diagnostic: either the
    generator strayed outside the supported subset or the frontend refuses
    what it should translate (looked at by hand).
``input``, ``reference``, ``gfortran``
    no inputs could be planned, the Fortran reference failed, or gfortran
    refused the program: generator problems, not f2loopy bugs.
``recorded``
    (with a :class:`~f2loopy.verify.recorded.RecordedReferences` in mode
    ``record``) gfortran's results were written to a file; nothing ran on
    OpenCL.
``no-record``
    (mode ``replay``) there are no recorded results for this program and its
    inputs (the recording machine classified it otherwise, or another
    version drew other inputs): nothing was compared.

Transformations the race check or a transformation refuses (the generator
proposes them without knowing the dependences) are dropped, one by one,
before the program runs.
"""

from __future__ import annotations

import re
import shlex
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from f2loopy.diagnostics import F2LoopyError

if TYPE_CHECKING:
    from f2loopy.fuzz.program import Program

BUG_KINDS = ("mismatch", "kernel-error", "internal")


@dataclass
class FuzzOutcome:
    seed: int
    kind: str
    detail: str = ""
    program: Program | None = None
    options: dict = field(default_factory=dict)   # sizes, ranges, seed for check_source
    dropped: list = field(default_factory=list)   # refused transformations

    @property
    def is_bug(self) -> bool:
        return self.kind in BUG_KINDS

    def header(self) -> str:
        """The ``! f2loopy-check:`` line that reproduces the run."""
        return "! f2loopy-check: " + options_to_args(self.options)


def options_to_args(options: dict) -> str:
    args = [f"--seed {options.get('seed', 0)}"]
    for n, v in (options.get("sizes") or {}).items():
        args.append(f"--size {n}={v}")
    for n, (lo, hi) in (options.get("ranges") or {}).items():
        args.append(f"--range {n}={lo}:{hi}")
    for t in options.get("rtol") or ():
        args.append(f"--rtol {t}")
    return " ".join(args)


def args_to_options(text: str) -> dict:
    """Inverse of :func:`options_to_args` (for the regression tests)."""
    from f2loopy.verify.options import parse_number, parse_range
    words = shlex.split(text)
    out: dict[str, Any] = {"seed": 0, "sizes": {}, "ranges": {}}
    it = iter(words)
    for w in it:
        if w == "--seed":
            out["seed"] = int(next(it))
        elif w == "--size":
            n, v = next(it).split("=", 1)
            out["sizes"][n] = parse_number(v)
        elif w == "--range":
            n, v = next(it).split("=", 1)
            out["ranges"][n] = parse_range(v)
        elif w == "--rtol":
            out.setdefault("rtol", []).append(next(it))
        else:
            raise ValueError(f"unknown option {w!r}")
    return out


def _classify_translation(source: str, filename: str):
    """None if *source* translates, else ``(kind, text)``."""
    from f2loopy.pipeline import translate_text
    try:
        translate_text(source, Path(filename))
    except F2LoopyError as exc:
        return "refused", exc.format()
    except Exception as exc:  # noqa: BLE001 - an internal error is a finding
        return "internal", "".join(traceback.format_exception(exc))
    return None


def _failing_transform(program, message: str) -> int:
    """Index of the transformation a diagnostic points at (the script line
    it names), else the last one."""
    import re
    lines = program.render().splitlines()
    try:
        first = lines.index("!$loopy begin") + 2      # after the parse_fortran line
    except ValueError:
        return -1
    m = re.search(r":(\d+):\d+: error:", message)
    if m:
        k = int(m.group(1)) - 1 - first
        if 0 <= k < len(program.transforms):
            return k
    return -1


def run_program(program, options: dict, *, queue=None, filename=None,
                recorded=None) -> tuple:
    """Check *program* with *options*; returns ``(kind, detail)``.  With
    *recorded* (a :class:`~f2loopy.verify.recorded.RecordedReferences`), the
    gfortran results are written to its file or read from it."""
    from f2loopy.verify.check import CheckError, check_source
    from f2loopy.verify.options import CheckOptions, parse_tolerances
    from f2loopy.verify.fortran import FortranToolError
    from f2loopy.verify.inputs import InputError
    from f2loopy.verify.recorded import RecordError
    source = program.render()
    filename = filename or program.filename
    try:
        tolerances = parse_tolerances(rtol=options.get("rtol", ()))
        report = check_source(source, Path(filename), CheckOptions(
            sizes=options.get("sizes") or {}, ranges=options.get("ranges") or {},
            seed=options.get("seed", 0), timeout=60, tolerances=tolerances),
            queue=queue, recorded=recorded)
    except RecordError as exc:
        return "no-record", exc.format()
    except InputError as exc:
        return "input", exc.format()
    except CheckError as exc:
        return "reference", exc.format()
    except FortranToolError as exc:
        return "gfortran", exc.format()
    except F2LoopyError as exc:
        return "refused", exc.format()
    except Exception as exc:  # noqa: BLE001
        return "internal", "".join(traceback.format_exception(exc))
    if report.recorded:
        return "recorded", ""
    if report.passed:
        return "pass", ""
    if any(c.error is not None for c in report.checks):
        return "kernel-error", report.format()
    return "mismatch", report.format()


def _start(seed: int, transforms: bool):
    """Program *seed*, its options, its random generator (after choosing the
    transformations, which are not applied yet) or a FuzzOutcome if it
    cannot be parsed."""
    from f2loopy.frontend import parse_fortran
    from f2loopy.fuzz.progen import generate_program
    from f2loopy.fuzz.scripts import choose_transformations
    program = generate_program(seed)
    rng = np.random.default_rng([seed, 7])
    source = program.render()
    options = {"seed": seed, "sizes": {}, "ranges": program.data_ranges()}
    if program.loose64:
        # single-precision rounding (sin of a real, ...) flows into double results
        options["rtol"] = ["float64=2e-5"]
    if transforms:
        # (without transformations check's own translation tells the same)
        try:
            kernel = parse_fortran(source, program.filename)[program.name]
        except F2LoopyError as exc:
            return FuzzOutcome(seed, "rejected", exc.format(), program)
        except Exception as exc:  # noqa: BLE001
            return FuzzOutcome(seed, "internal", "".join(traceback.format_exception(exc)),
                               program)
        program.transforms = choose_transformations(program, kernel, rng)
    return program, options, rng


def _choose_sizes(program, options: dict, rng, *, fixed: bool | None = None) -> None:
    """A fixed size, sometimes (not where the script fixes one; *fixed*: whether it
    does, default: from the program's script)."""
    if fixed is None:
        fixed = any(t.startswith("k = fix_parameters") for t in program.transforms)
    used = program.used_names()
    sizes = [a.name for a in program.args if a.role == "size" and a.name in used]
    if not fixed and sizes and rng.random() < 0.3:
        options["sizes"] = {sizes[0]: int(rng.integers(1, 4))}


def _without_script(program):
    """*program* without its transformation script: the Fortran gfortran
    compiles (the script is comments to it)."""
    import dataclasses
    return dataclasses.replace(program, transforms=[])


def run_seed(seed: int, *, transforms: bool = True, queue=None,
             recorded=None) -> FuzzOutcome:
    """Generate program *seed*, choose transformations, run and classify.
    *recorded* (mode ``replay``): compare with the results
    :func:`record_seed` recorded instead of running gfortran."""
    start = _start(seed, transforms)
    if isinstance(start, FuzzOutcome):
        return start
    program, options, rng = start
    dropped = []
    # drop what is refused (the generator does not know the dependences)
    while program.transforms:
        bad = _classify_translation(program.render(), program.filename)
        if bad is None:
            break
        kind, text = bad
        if kind == "internal":
            return FuzzOutcome(seed, "internal", text, program, options)
        at = _failing_transform(program, text)
        dropped.append((program.transforms.pop(at), text.splitlines()[0]))
    _choose_sizes(program, options, rng)
    if recorded is not None:
        recorded = recorded.for_key(_without_script(program).render())
    kind, detail = run_program(program, options, queue=queue, recorded=recorded)
    if kind == "refused" and not program.transforms:
        kind = "rejected"
    return FuzzOutcome(seed, kind, detail, program, options, dropped)


_FIX = re.compile(r"k = fix_parameters\(k, (\w+)=(\d+)\)")


def record_seed(seed: int, *, transforms: bool = True, recorded) -> FuzzOutcome:
    """The gfortran half of :func:`run_seed` for another machine: program
    *seed* with the options :func:`run_seed` gives it, its original run on
    the inputs of the untransformed translation, written to *recorded*
    (mode ``record``; kind ``recorded``).  The transformations are chosen but
    not tried (a translation with a script costs seconds); the inputs of a
    script's ``fix_parameters`` are recorded both with the value fixed and
    without (the replay drops it when the script is refused).  Where the
    replay's script still changes the inputs (an ``assume`` that moves the
    sizes drawn), they differ from the recorded ones and the replay says
    ``no-record`` rather than compare."""
    import copy
    start = _start(seed, transforms)
    if isinstance(start, FuzzOutcome):
        return start
    program, options, rng = start
    fixes = [m for m in map(_FIX.fullmatch, program.transforms) if m]
    variants = []
    if fixes:       # the fixed value as the kernel is translated for it
        fixed = dict(options, sizes={m.group(1): int(m.group(2)) for m in fixes})
        variants.append(fixed)
    free = copy.deepcopy(options)
    _choose_sizes(program, free, rng, fixed=False)
    variants.append(free)
    fortran = _without_script(program)
    kind, detail = "recorded", ""
    for opts in variants:
        kind, detail = run_program(fortran, opts, recorded=recorded.for_key(fortran.render()))
        if kind != "recorded":
            break
    return FuzzOutcome(seed, kind, detail, program, variants[-1])


def shrink_outcome(outcome: FuzzOutcome, *, queue=None, max_steps: int = 300,
                   log=None) -> object:
    """The smallest variant of the failing program that fails the same way."""
    from f2loopy.fuzz.shrink import shrink

    def still_fails(candidate):
        kind, _ = run_program(candidate, outcome.options, queue=queue)
        return kind == outcome.kind

    if outcome.program is None:
        raise ValueError(f"outcome {outcome.kind!r} of seed {outcome.seed} has no program")
    return shrink(outcome.program, still_fails, max_steps=max_steps, log=log)


def regression_text(outcome: FuzzOutcome, program=None) -> str:
    """A regression test file: the (shrunk) program with how to run it."""
    program = program or outcome.program
    used = program.used_names()
    options = dict(outcome.options)
    options["sizes"] = {n: v for n, v in (options.get("sizes") or {}).items() if n in used}
    options["ranges"] = {n: v for n, v in (options.get("ranges") or {}).items() if n in used}
    first = (outcome.detail.strip().splitlines() or [""])
    summary = [ln for ln in first if "FAIL" in ln or "error" in ln.lower()][:3] or first[:1]
    lines = ["! f2loopy-check: " + options_to_args(options),
             f"! found by scripts/fuzz_differential.py, seed {outcome.seed}: {outcome.kind}"]
    lines += [f"!   {ln.strip()[:100]}" for ln in summary]
    return "\n".join(lines) + "\n" + program.render()


def read_regression(path) -> tuple:
    """``(source, options, expected_error)`` of a regression file: the options
    of its ``! f2loopy-check:`` line and the text of its ``! f2loopy-expect:
    error: ...`` line (None: every output must match; NO_TRACEBACK for
    ``! f2loopy-expect: no traceback``: success or a located diagnostic)."""
    text = Path(path).read_text()
    options = {"seed": 0, "sizes": {}, "ranges": {}}
    expect = None
    for line in text.splitlines():
        if not line.startswith("!"):
            break
        if line.startswith("! f2loopy-check:"):
            options = args_to_options(line[len("! f2loopy-check:"):])
        elif line.startswith("! f2loopy-expect: error:"):
            expect = line[len("! f2loopy-expect: error:"):].strip()
        elif line.startswith("! f2loopy-expect: no traceback"):
            expect = NO_TRACEBACK
        elif line.startswith("! f2loopy-xfail:"):
            options["xfail"] = line[len("! f2loopy-xfail:"):].strip()
    return text, options, expect


#: expectation of a hostile input: success or a located diagnostic
NO_TRACEBACK = "<no traceback>"
