"""What ``f2loopy check`` proves: which statements of the original ran.

A check on inputs that never reach a loop proves nothing about it.  The
reference is built with gcov instrumentation; after it ran, the line counts
say which statements of the checked subroutines executed.  The statements
that must run are the executable lines gcov knows in each checked
subroutine, except those of error paths (``stop``, ``error stop``, ``call
xerbla``, the ``write``/``print`` before them, ``return``, and the
assignments of the argument ``xerbla`` reports), which valid inputs do not
reach, and ``deallocate`` statements: in a kernel one only ends a local work
array (a kernel cannot deallocate a module array), which changes nothing the
caller sees, and a saved work array's (``if (allocated(t) .and. any(shape(t)
/= ...)) deallocate(t)``) runs only on a later call, which a check, of first
calls, never makes (:mod:`f2loopy.frontend.local_allocatables`).

:func:`check_covering` runs the check in rounds: the user's inputs first,
then other seeds with special values (0 and 1) for real scalars and each
one-character constant the subroutine compares a character argument with,
until every statement ran or the rounds are spent; then rounds whose free
data (values neither a size, a subscript nor ``--range`` bounds) take
either sign, also of mixed magnitudes, then with many elements exactly 0 or
1 (masks, equal neighbours: a note says what they covered); what
never ran is named in the report (which then fails).  Every round compares
every output: a mismatch in any round fails the check.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from f2loopy.frontend.source import is_fixed_form_name
from f2loopy.ir.kernel import ScalarArg
from f2loopy.ir.roles import character_of

#: extra rounds of inputs tried to reach the statements that have not run
ROUNDS = 24

_STATEMENT_FUNCTION = re.compile(
    r"[a-z]\w*\s*\(\s*[a-z]\w*(\s*,\s*[a-z]\w*)*\s*\)\s*=[^=]", re.IGNORECASE)
_EXCUSED = re.compile(r"^\s*(\d+\s+)?(stop|error\s*stop|return|write|print|call\s+xerbla|"
                      r"deallocate)\b", re.IGNORECASE)
_LITERAL = re.compile(r"""'([^'])'|"([^"])\"""")


def gcov_available() -> bool:
    return shutil.which("gcov") is not None


def gcov_counts(library) -> dict[int, int] | None:
    """Line -> execution count of the original source, from the gcov data
    *library* (a :class:`~f2loopy.verify.fortran.FortranLibrary` built with
    coverage) wrote; None if gcov is missing or failed."""
    gcov = shutil.which("gcov")
    if gcov is None or not library.coverage:
        return None
    lib = Path(library.lib_path)
    stem = Path(library.source_path).stem
    data = lib.parent / f"{lib.name}-{stem}.gcda"
    if not data.exists():
        return {}
    proc = subprocess.run([gcov, "-t", data.name], cwd=lib.parent, capture_output=True,
                          text=True, errors="replace", timeout=120)
    if proc.returncode != 0:
        return None
    counts: dict[int, int] = {}
    current = None
    for line in proc.stdout.splitlines():
        parts = line.split(":", 2)
        if len(parts) < 3:
            continue
        count, number = parts[0].strip(), parts[1].strip()
        if number == "0":
            if parts[2].startswith("Source:"):
                current = Path(parts[2][len("Source:"):]).name
            continue
        if current != Path(library.source_path).name or count == "-":
            continue
        try:
            n = 0 if count.startswith(("#", "=")) else int(count.rstrip("*"))
        except ValueError:
            continue
        counts[int(number)] = counts.get(int(number), 0) + n
    return counts


#: the first line of a subroutine or function (not its 'end', not a call)
_PROCEDURE_START = re.compile(
    r"\s*(?:(?:pure|elemental|recursive|impure|module|integer|real|double\s*precision|"
    r"logical|complex|character)\b[\w\s(),*=]*?\s)?(subroutine|function)\s+\w+", re.I)


def procedure_ranges(text: str, kernels) -> dict[str, tuple[int, int]]:
    """Kernel name -> (first, last) lines of its subroutine in *text* (up to
    the line before the next procedure of the file, also one that is not a
    kernel: ``check --kernel`` translates only one)."""
    starts = sorted({k.span.line for k in kernels if k.span is not None} |
                    {no for no, line in enumerate(text.splitlines(), start=1)
                     if _PROCEDURE_START.match(line)})
    total = len(text.splitlines())
    out = {}
    for k in kernels:
        if k.span is None:
            continue
        later = [s for s in starts if s > k.span.line]
        out[k.name] = (k.span.line, (later[0] - 1) if later else total)
    return out


def required_lines(text: str, kernel, first: int, last: int, counts: dict, *,
                   fixed_form: bool | None = None) -> dict:
    """Line -> text of the statements of *kernel* (lines *first*..*last*)
    that valid inputs must run (see the module docstring); *fixed_form*: the
    source form the file was read in (default: from its name)."""
    lines = text.splitlines()
    info_names = set()
    for m in re.finditer(r"call\s+xerbla\s*\(\s*['\"][^'\"]*['\"]\s*,\s*-?\s*(\w+)\s*\)",
                         "\n".join(lines[first - 1:last]), re.IGNORECASE):
        info_names.add(m.group(1).lower())
    error_lines = {s.span.line for s in kernel.error_sites if s.span is not None}
    # statement functions (f(i,j) = ..., before the first executable statement)
    # are expanded where they are used: gcov lists their lines but never runs them
    executable = [i.span.line for i in getattr(kernel, "instructions", ()) if i.span is not None
                  and i.span.filename == getattr(kernel.span, "filename", None)
                  and first < i.span.line <= last]
    body_start = min(executable, default=first)       # (not known: none skipped)
    fixed = kernel.span is not None and is_fixed_form_name(kernel.span.filename) \
        if fixed_form is None else fixed_form
    out = {}
    for number in counts:
        if not first < number <= last or number in error_lines:
            continue
        src = lines[number - 1] if number <= len(lines) else ""
        if fixed and len(src) > 5 and src[:1] not in "cC*!" and src[5] not in " 0" or \
                not fixed and number > 1 and lines[number - 2].rstrip().endswith("&"):
            continue          # a continuation line: part of a statement counted already
        body = re.sub(r"^\s*\d+\s+", "", src).strip()
        if not body or _EXCUSED.match(src) or \
                re.match(r"(end|select|case|else)\b", body, re.IGNORECASE):
            continue          # (gcov counts a 'select case' on its cases)
        if number < body_start and _STATEMENT_FUNCTION.match(body):
            continue
        target = re.match(r"(\w+)\s*=[^=]", body)
        if target and target.group(1).lower() in info_names:
            continue          # INFO = k: an argument check reporting to xerbla
        if not counts.get(number) and any(counts.get(n) for n in _continuations(
                lines, number, fixed)):
            continue          # gfortran counts some statements (on allocatable
            # components) on a continuation line: the statement ran
        if re.match(r"if\s*\(.*\)\s*(return|stop|call\s+xerbla)\b", body, re.IGNORECASE):
            # a one-line guard: the line runs whenever the test does
            pass
        out[number] = body
    return out


def _continuations(lines: list, number: int, fixed: bool) -> list[int]:
    """The numbers of the continuation lines of the statement that starts on
    line *number* (from 1) of *lines*."""
    out = []
    n = number
    while n < len(lines):
        nxt = lines[n]
        if fixed:
            if not (len(nxt) > 5 and nxt[:1] not in "cC*!" and nxt[5] not in " 0"):
                break
        elif not lines[n - 1].split("!")[0].rstrip().endswith("&"):
            break
        n += 1
        out.append(n)
    return out


def character_choices(text: str, first: int, last: int) -> list:
    """The one-character constants of lines *first*..*last* (upper case
    first), for drawing the values of character arguments."""
    found = []
    for line in text.splitlines()[first - 1:last]:
        if line[:1] in "cC*!" or line.lstrip().startswith("!"):
            continue          # a comment
        for m in _LITERAL.finditer(line.split("!", 1)[0]):
            c = m.group(1) or m.group(2)
            if c.strip() and c not in found:
                found.append(c)
    found.sort(key=lambda c: (not c.isupper(), c))
    return found or ["N"]


def special_ranges(kernels, round_no: int, user_ranges: dict, seed: int) -> dict:
    """Value ranges (pairs) or values for round *round_no*, drawn (from
    *seed*) for each scalar argument the user gave no range: a real one is
    random, 0 or 1; an integer one that no declaration or loop bound uses
    (an increment) random, -2, 1 or 3."""
    import numpy as np
    rng = np.random.default_rng([seed, round_no])
    shared = int(rng.integers(0, 4)) if rng.random() < 0.5 else None
    out: dict[str, tuple[float, float] | int] = {}
    given = {n.lower() for n in user_ranges}
    for k in kernels:
        written = k.written_variables()
        in_shapes = {n for a in k.args for e in a.shape if e is not None
                     for n in _names(e)}
        for d in k.domains:       # loop bounds: sizes, which the planner chooses
            in_shapes.update(d.get_var_names(isl_param()))
        for a in k.fortran_args:
            if not isinstance(a, ScalarArg) or a.name.lower() in given or \
                    a.name in written or character_of(a.role) is not None or a.name in out:
                continue
            if a.dtype.kind == "f":
                pick = int(rng.integers(0, 3))
                if pick:
                    out[a.name] = (0.0, 0.0) if pick == 1 else (1.0, 1.0)
            elif a.dtype.kind in "iu" and a.name not in in_shapes:
                pick = int(rng.integers(0, 4)) if shared is None else shared
                if pick:          # (a value, not a range: the planner may take it for a size)
                    out[a.name] = (-2, 1, 3)[pick - 1]
    return out


def _deciding_sizes(report, missing: dict, given: set) -> list[str]:
    """The integer size arguments (in declarations or loop bounds) that
    decide whether the statements *missing* run, less those the user gave."""
    reaching = getattr(report, "_inputs_reaching", None)
    if reaching is None:
        return []
    names = {n for line in missing for n in reaching(line)}
    out = []
    for k in report.kernels:
        sizes = {n for a in k.args for e in a.shape if e is not None for n in _names(e)}
        for d in k.domains:
            sizes.update(d.get_var_names(isl_param()))
        for a in k.fortran_args:
            if isinstance(a, ScalarArg) and a.dtype.kind in "iu" and a.name in names and \
                    a.name in sizes and a.name.lower() not in given and a.name not in out:
                out.append(a.name)
    return sorted(out)


def isl_param():
    from f2loopy.ir.isl_tools import dim_type
    return dim_type.param


def _names(expr):
    from f2loopy.ir.expressions import variables_read
    return variables_read(expr)


#: the value given an integer argument that xerbla reported as illegal
#: (a leading dimension smaller than what the other sizes need)
LEARNED_SIZE = 24


def _learn_from_stops(report, learned: dict, user_sizes: dict, refused: dict) -> None:
    """Where the original's xerbla refused integer argument number p, give
    that argument a larger value in the next rounds (twice as large each
    time), unless the user gave it."""
    for c in report.checks:
        m = re.search(r"parameter number (\d+) had an illegal value", c.note or "")
        if m is None:
            continue
        kernel = next((k for k in report.kernels if k.name == c.kernel), None)
        p = int(m.group(1))
        if kernel is None or not 0 < p <= len(kernel.fortran_args):
            continue
        a = kernel.fortran_args[p - 1]
        if isinstance(a, ScalarArg) and character_of(a.role) is not None:
            if a.name in report.char_values:
                refused.setdefault(a.name, set()).add(report.char_values[a.name])
            continue
        if not isinstance(a, ScalarArg) or a.dtype.kind not in "iu" or \
                a.name.lower() in {n.lower() for n in user_sizes}:
            continue
        learned[a.name] = min(learned.get(a.name, LEARNED_SIZE // 2) * 2, 32 * LEARNED_SIZE)


def check_covering(text: str, path, options, *, check, **context):
    """Run *check* (:func:`~f2loopy.verify.check.check_source`) with
    *options* (a :class:`~f2loopy.verify.options.CheckOptions`, the
    assumed-size fallback allowed) in rounds until every statement of the
    checked subroutines ran; returns the first round's report, with the
    other rounds and what never ran added.  *context* (``queue``, ...) goes
    to every round."""
    from f2loopy.verify.fortran import ReferenceBuilds
    builds = ReferenceBuilds()
    try:
        return _check_in_rounds(text, path, options, check,
                                {**context, "reference_builds": builds})
    finally:
        builds.close()


def _check_in_rounds(text: str, path, options, check, context: dict):
    """:func:`check_covering`'s rounds, with *context* for every round (the
    reference builds they share included)."""
    seed = options.seed
    ranges = dict(options.ranges)
    options = options.replace(assumed_size_fallback=True)
    report = check(text, path, options.replace(char_round=0), **context)
    if report.coverage is None or not report.checks:
        return report
    if report.translation is not None:
        # the rounds change inputs only: the code checked stays the same
        context = {**context, "result": report.translation}
    missing = dict(report.coverage)
    user_sizes = dict(options.sizes)
    learned: dict = {}
    refused: dict = {}
    _learn_from_stops(report, learned, user_sizes, refused)
    # sizes that decide whether a statement that never ran runs (a branch for
    # n == 1): every other round gives them small values
    deciding = _deciding_sizes(report, missing, {n.lower() for n in (*user_sizes, *ranges)})
    r = attempts = 0
    while missing and r < ROUNDS and attempts < 2 * ROUNDS:
        attempts += 1
        r += 1
        extra = special_ranges(report.kernels, attempts, ranges, seed)
        if deciding and attempts % 2 == 0:
            extra.update({n: (1, 2, 3)[(attempts // 2 - 1) % 3] for n in deciding})
        values = {n: v for n, v in extra.items() if not isinstance(v, tuple)}
        extra = {n: v for n, v in extra.items() if isinstance(v, tuple)}
        try:
            again = check(text, path, options.replace(
                seed=seed + attempts, ranges={**extra, **ranges},
                sizes={**values, **learned, **user_sizes}, char_round=attempts,
                char_exclude=refused), **context)
        except Exception as exc:  # noqa: BLE001 - a round whose inputs cannot be made
            report.rounds.append((f"seed {seed + attempts}", f"not run: {exc}"))
            continue
        if again.checks and all(c.note.startswith("both stop") for c in again.checks):
            r -= 1            # argument checks refused the inputs: draw others
            _learn_from_stops(again, learned, user_sizes, refused)
            continue
        report.rounds.append((f"seed {seed + attempts}" + (f"; {again.inputs}"
                                                            if again.inputs else ""), again))
        missing = _covered_by(report, missing, again, "")
    # data of either sign and other magnitudes (the default rounds draw reals
    # from 0.5..1.5 only): a limiter's or an upwind scheme's branches
    # then data with many exact zeros and ones (a land mask's 0, equal
    # neighbours): the branches of ``if (r == 0)`` and of masked differences
    styles = ["signed"] * (SIGNED_ROUNDS // 2) + ["wide"] * (SIGNED_ROUNDS - SIGNED_ROUNDS // 2) \
        + ["zeros"] * ZERO_ROUNDS
    for k, style in enumerate(styles if missing else ()):
        if not missing:
            break
        attempts += 1
        extra = special_ranges(report.kernels, attempts, ranges, seed) if k % 2 else {}
        if deciding and k % 2:
            extra.update({n: (1, 2, 3)[(k // 2) % 3] for n in deciding})
        if k % 2 == 0:
            extra.update(compared_values(text, report.kernels, attempts, seed,
                                         {n.lower() for n in (*ranges, *user_sizes)}))
        if style == "zeros":
            extra.update(compared_arrays(text, report.kernels, attempts, seed,
                                         {n.lower() for n in (*ranges, *user_sizes)}))
        values = {n: v for n, v in extra.items() if not isinstance(v, tuple)}
        extra = {n: v for n, v in extra.items() if isinstance(v, tuple)}
        what = f"seed {seed + attempts}, {STYLE_WORDS[style]}"
        try:
            again = check(text, path, options.replace(
                seed=seed + attempts, ranges={**extra, **ranges},
                sizes={**values, **learned, **user_sizes}, char_round=attempts,
                char_exclude=refused, value_style=style), **context)
        except Exception as exc:  # noqa: BLE001 - a round whose inputs cannot be made
            report.rounds.append((what, f"not run: {exc}"))
            continue
        if again.checks and all(c.note.startswith("both stop") for c in again.checks):
            continue          # argument checks refused the inputs
        report.rounds.append((what + (f"; {again.inputs}" if again.inputs else ""), again))
        missing = _covered_by(report, missing, again, STYLE_WORDS[style])
    report.coverage = missing
    return report


#: extra rounds after :data:`ROUNDS` whose free data take either sign
#: (half ``signed``, half ``wide``: see
#: :data:`~f2loopy.verify.input_plan.VALUE_STYLES`)
SIGNED_ROUNDS = 12
#: extra rounds after those whose free real data are often exactly 0 or 1
#: (``zeros``)
ZERO_ROUNDS = 6
STYLE_WORDS = {"signed": "signed values", "wide": "signed values of mixed magnitudes",
               "zeros": "signed values, many exactly 0 or 1"}


def compared_values(text: str, kernels, round_no: int, seed: int, given: set) -> dict:
    """For round *round_no* of signed data: each integer scalar argument
    that is no size (as for :func:`special_ranges`), not written and not
    in *given*, and that *text* compares with integer constants
    (``south == -1``, ``mode .eq. 2``, the ``case`` values of a ``select
    case`` on it: :func:`_case_values`), one of those constants half the
    time (drawn from *seed*); a flag such as a missing neighbour's -1 is
    rarely drawn at random."""
    import numpy as np
    rng = np.random.default_rng([seed, round_no, 1])
    out: dict[str, int] = {}
    for k in kernels:
        written = k.written_variables()
        in_shapes = {n for a in k.args for e in a.shape if e is not None for n in _names(e)}
        for d in k.domains:
            in_shapes.update(d.get_var_names(isl_param()))
        for a in k.fortran_args:
            if not isinstance(a, ScalarArg) or a.dtype.kind not in "iu" or \
                    a.name.lower() in given or a.name in written or a.name in in_shapes or \
                    a.name in out:
                continue
            found = sorted({int(m.group(1).replace(" ", "")) for m in re.finditer(
                rf"(?<![\w%]){re.escape(a.name)}\s*(?:==|/=|<=|>=|<|>|\.(?:eq|ne|lt|le|gt|ge)\.)"
                r"\s*([+-]?\s*\d{1,9})(?![\w.])", text, re.IGNORECASE)}
                | set(_case_values(text, a.name)))
            if found and rng.random() < 0.5:
                out[a.name] = int(rng.choice(found))
    return out


_INT_PARAMETER = re.compile(r"^\s*integer\b[^!:]*\bparameter\b[^!:]*::([^!]*)",
                            re.IGNORECASE | re.MULTILINE)
_NAMED_VALUE = re.compile(r"(\w+)\s*=\s*([+-]?\s*\d{1,9})(?![\w.])")


def _case_values(text: str, name: str) -> list[int]:
    """The integer values of the ``case`` selectors of each ``select case
    (name)`` of *text*: literals (``case (2)``, ``case (1:3)``: its ends)
    and the integer named constants *text* defines (``integer, parameter ::
    lt = -1``, then ``case (lt)``)."""
    named = {m.group(1).lower(): int(m.group(2).replace(" ", ""))
             for d in _INT_PARAMETER.finditer(text) for m in _NAMED_VALUE.finditer(d.group(1))}
    out = []
    lines = text.splitlines()
    start = re.compile(rf"^\s*(\w+\s*:\s*)?select\s*case\s*\(\s*{re.escape(name)}\s*\)",
                       re.IGNORECASE)
    for no, line in enumerate(lines):
        if not start.match(line):
            continue
        depth = 0
        for later in lines[no + 1:]:
            body = later.split("!", 1)[0].strip().lower()
            if re.match(r"select\s*case\b", body):
                depth += 1
            elif re.match(r"end\s*select\b", body):
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and (m := re.match(r"case\s*\((.*)\)", body)):
                for item in re.split(r"[,:]", m.group(1)):
                    item = item.strip().replace(" ", "")
                    if re.fullmatch(r"[+-]?\d{1,9}", item):
                        out.append(int(item))
                    elif item in named:
                        out.append(named[item])
    return out


def compared_arrays(text: str, kernels, round_no: int, seed: int, given: set) -> dict:
    """For round *round_no* of data with many zeros: each integer array
    argument that is not written, not in *given*, and whose elements *text*
    tests for equality with integer constants (``if (obstacle(i,j) == 0)``,
    a land mask, a cell type), half the time (drawn from *seed*) the range
    from the least of those constants to one above the largest: a value the
    code singles out is then common instead of never drawn."""
    import numpy as np
    rng = np.random.default_rng([seed, round_no, 2])
    out: dict[str, tuple[float, float]] = {}
    for k in kernels:
        written = k.written_variables()
        for a in k.args:
            if a.dtype.kind not in "iu" or not getattr(a, "shape", ()) or \
                    a.name.lower() in given or a.name in written or a.name in out:
                continue
            found = sorted({int(m.group(1).replace(" ", "")) for m in re.finditer(
                rf"(?<![\w%]){re.escape(a.name)}\s*\([^()]*\)\s*(?:==|/=|\.(?:eq|ne)\.)"
                r"\s*([+-]?\s*\d{1,9})(?![\w.])", text, re.IGNORECASE)})
            if found and rng.random() < 0.5:
                out[a.name] = (float(found[0]), float(found[-1] + 1))
    return out


def _covered_by(report, missing: dict, again, words: str) -> dict:
    """*missing* less what round *again* ran; where *words* (how its values
    were drawn) is given, a note on *report* says which statements that
    round covered."""
    still = {n: t for n, t in missing.items() if n in (again.coverage or {})}
    if words and len(still) < len(missing):
        ran = sorted(set(missing) - set(still))
        shown = ", ".join(str(report.line_origins.get(n, (None, n))[1]) for n in ran)
        report.notes.append(f"covered with {words} (seed {again.seed}): "
                            f"{len(ran)} statement(s), line(s) {shown}")
    return still
