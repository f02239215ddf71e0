"""Run ``f2loopy check`` on every sample and every Fortran test kernel, and
count the outcomes (issue 26: no crash, no false MISMATCH, no internal error).

Units swept:

* every ``.f90``/``.F90``/``.f`` under ``samples/`` (with the options its README
  or tests give, :data:`OPTIONS`);
* ``tests/regressions/*.f90`` with the options of their ``! f2loopy-check:``
  line; a file whose ``! f2loopy-expect: error:`` names an error counts as
  ``refused`` when check refuses it with that error, ``wrong-error`` otherwise;
* with ``--tests``: ``tests/floopy/*.floopy`` and every Fortran unit written
  as a string constant in ``tests/**/test_*.py`` (many are meant to be
  refused: a located error is a right answer for them).

Outcomes: ``ok``, ``not-covered`` (check ran but some statement never did),
``undefined`` (results differ where the unit reads a variable nothing
assigns, said with its place: an undefined ``-D`` macro),
``refused`` (a located error, ``file:line:col: error:``), ``unlocated`` (an
error without a source position: a defect of the message), ``invalid-fortran``
(gfortran refuses the unit itself: check says so with gfortran's messages),
``harness`` (gfortran refuses check's harness: a defect), ``mismatch``,
``internal``, ``crash`` (a signal), ``timeout``.  Usage::

    nice -n 15 python3 scripts/check_sweep.py --tests --quick [--transform auto]

With ``--log FILE`` every outcome is also appended to FILE (one line
``KIND SECONDS UNIT``) and a later run with the same FILE skips the units
already in it and counts them in its totals: a long sweep can be stopped and
resumed.  Test units are named ``tests:<module>_<n>.f90`` there (their folder
is a new temporary one each run).

Exit status 1 when a run crashed, hit an internal error, timed out,
mismatched, gave an error without a position or not the expected one.  A
mismatch may still be a right answer (a test whose script drops a statement on
purpose, :data:`EXPECTED_MISMATCH`): counted as ``expected-mismatch``.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# options a file needs (the values its README, tests or script expect)
OPTIONS = {
    "samples/numa_volume/volume.f90": ["-D", "Nq=4", "--size", "Ne=3"],
    "samples/numa_volume/volume_cpu.f90": ["-D", "Nq=4", "--size", "Ne=3"],
    "samples/numa_volume/volume_tunable.f90": ["-D", "Nq=4", "--size", "Ne=3"],
    "samples/multifile/relax.f90": ["-I", "samples/multifile/include"],
}
# files that are not kernels to check (programs, or inputs meant to be refused)
SKIP_PREFIXES = ("samples/heat_app/main.F90", "samples/mpi_heat/main.F90",
                 "samples/multifile/main.F90", "tests/regressions/hostile_")
#: a unit whose transformation script does this changes what the kernel
#: computes on purpose (tests/test_check.py's check of check): its mismatch is right
EXPECTED_MISMATCH = re.compile(r"^!\s*\w+\s*=.*\bremove_instructions\(", re.MULTILINE)

#: --quick units run in children forked from the sweep (set by main)
_FORK = False

BAD = ("mismatch", "internal", "crash", "timeout", "unlocated", "wrong-error", "harness")


def default_files() -> list[str]:
    files = []
    for pattern in ("samples/**/*.f90", "samples/**/*.F90", "samples/**/*.f",
                    "tests/regressions/*.f90"):
        files += [str(p.relative_to(ROOT)) for p in sorted(ROOT.glob(pattern))]
    return [f for f in files if not f.startswith(SKIP_PREFIXES)]


_UNIT = re.compile(r"^\s*(subroutine|module|program|(?:\w+(?:\([^)]*\))?\s+)*function)\s+\w+",
                   re.IGNORECASE)
_END = re.compile(r"^\s*end\b", re.MULTILINE | re.IGNORECASE)


def test_kernels(work: Path) -> list[str]:
    """The Fortran sources written as string constants in tests/**/test_*.py
    (a whole unit each, leading comment lines allowed) and the
    tests/floopy/*.floopy files, saved under *work* as
    ``<test module>_<n>.f90`` (``floopy_<name>.f90``)."""
    out = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        k = 0
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            text = node.value
            body = "\n".join(ln for ln in text.splitlines()
                             if ln.strip() and not ln.lstrip().startswith("!"))
            if "\n" not in text or not _UNIT.match(body) or not _END.search(text):
                continue
            k += 1
            dest = work / f"{path.stem}_{k}.f90"
            dest.write_text(text)
            out.append(str(dest))
    for path in sorted((ROOT / "tests" / "floopy").glob("*.floopy")):
        dest = work / f"floopy_{path.stem}.f90"
        dest.write_text(path.read_text())
        out.append(str(dest))
    return out


def regression_options(path: str) -> tuple[list[str], str | None]:
    """The check options of a regression file's ``! f2loopy-check:`` line and
    the error its ``! f2loopy-expect: error:`` line expects (else None)."""
    args: list[str] = []
    expect = None
    try:
        lines = (ROOT / path).read_text().splitlines()
    except OSError:
        return args, expect
    for line in lines:
        if not line.startswith("!"):
            break
        if line.startswith("! f2loopy-check:"):
            args = shlex.split(line[len("! f2loopy-check:"):])
        elif line.startswith("! f2loopy-expect: error:"):
            expect = line[len("! f2loopy-expect: error:"):].strip()
    return args, expect


_LOCATED = re.compile(r":\d+:\d+: error:")


def classify(rc: int, out: str, expect: str | None = None, name: str = "") -> str:
    if rc < 0 or rc >= 128:
        return "crash"
    if "Traceback" in out or "internal error" in out:
        return "internal"
    if rc == 0:
        return "ok"
    if "MISMATCH" in out:
        try:
            text = Path(name).read_text() if Path(name).is_absolute() else \
                (ROOT / name).read_text()
        except OSError:
            text = ""
        return "expected-mismatch" if EXPECTED_MISMATCH.search(text) else "mismatch"
    if "NOT COVERED" in out:
        return "not-covered"
    if "\nUNDEFINED: " in out and _LOCATED.search(out):
        return "undefined"
    if expect is not None:
        return "refused" if expect in out else "wrong-error"
    if "gfortran failed to compile the original Fortran" in out:
        # gfortran's own errors: in the harness (a defect of check) or in the
        # unit itself (not Fortran gfortran accepts: a right refusal)
        return "harness" if re.search(r"shims\.f90:\d+", out) else "invalid-fortran"
    if _LOCATED.search(out):
        return "refused"
    return "unlocated"


#: --quick: one set of inputs, no coverage rounds, in a child process of its own
_QUICK = """
import sys
import numpy as np
from f2loopy.diagnostics import F2LoopyError
from f2loopy.verify.check import check_file
from f2loopy.fuzz.fuzz import args_to_options
from f2loopy.pipeline.options import TranslateOptions
from f2loopy.verify.options import CheckOptions, parse_tolerances
path, transform, header = sys.argv[1], sys.argv[2] or None, sys.argv[3]
opts = args_to_options(header) if header else {"seed": 0, "sizes": {}, "ranges": {}}
try:
    with np.errstate(all="ignore"):
        report = check_file(path, CheckOptions(
            translation=TranslateOptions(transform=transform), assumed_size_fallback=True,
            seed=opts["seed"], sizes=opts["sizes"] or {}, ranges=opts["ranges"] or {},
            tolerances=parse_tolerances(rtol=opts.get("rtol", ()))))
except F2LoopyError as exc:
    print(exc.format(), file=sys.stderr)
    sys.exit(1)
except Exception as exc:
    import traceback
    traceback.print_exc()
    print(f"f2loopy: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(1)
print(report.format())
sys.exit(0 if report.passed else 1)
"""


def _forked_quick(path: str, transform: str, header: str,
                  timeout: float) -> tuple[int | None, str]:
    """The --quick check of *path* in a child forked from this process (which
    has imported f2loopy once: no start-up cost per unit); ``(exit status or
    -signal, output)``, status None after *timeout* seconds (the child is
    killed)."""
    with tempfile.TemporaryFile("w+") as out:
        pid = os.fork()
        if pid == 0:                            # the child: never returns
            code = 1
            try:
                os.dup2(out.fileno(), 1)
                os.dup2(out.fileno(), 2)
                sys.argv = ["-c", path, transform, header]
                try:
                    exec(compile(_QUICK, "<quick>", "exec"), {"__name__": "__main__"})
                    code = 0
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 1
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
        deadline = time.monotonic() + timeout
        status = None
        while time.monotonic() < deadline:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(raw)
                break
            time.sleep(0.05)
        if status is None:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        out.seek(0)
        return status, out.read()


def run_one(path: str, extra: list[str], timeout: float,
            quick: bool = False) -> tuple[str, str, str, float]:
    header, expect = regression_options(path) if path.startswith("tests/regressions/") \
        else ([], None)
    if quick and path not in OPTIONS and _FORK:
        t0 = time.monotonic()
        os.chdir(ROOT)
        status, out = _forked_quick(path, extra[1] if extra else "", shlex.join(header),
                                    timeout)
        if status is None:
            return path, "timeout", out, time.monotonic() - t0
        return path, classify(status if status >= 0 else 128 - status, out, expect, path), \
            out, time.monotonic() - t0
    cmd = [sys.executable, "-m", "f2loopy.cli", "check", *OPTIONS.get(path, []), *header,
           *extra, path]
    if quick and path not in OPTIONS:
        transform = extra[1] if extra else ""
        cmd = [sys.executable, "-c", _QUICK, path, transform, shlex.join(header)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return path, "timeout", "", time.monotonic() - t0
    out = proc.stdout + proc.stderr
    return path, classify(proc.returncode, out, expect, path), out, time.monotonic() - t0


def unit_key(path: str) -> str:
    """The name of *path* in a ``--log`` file: its path in the repository, or
    ``tests:<file name>`` for a test unit saved in a temporary folder."""
    p = Path(path)
    if not p.is_absolute():
        return path
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return "tests:" + p.name


_LOG_LINE = re.compile(r"([a-z-]+) +(\d+(?:\.\d+)?)s (\S+)")


def read_log(path: Path) -> dict[str, str]:
    """unit key -> outcome of the units a ``--log`` file records (lines that
    are not a whole record, such as one cut short by a kill, are ignored)."""
    done: dict[str, str] = {}
    try:
        text = path.read_text()
    except FileNotFoundError:
        return done
    for line in text.splitlines():
        m = _LOG_LINE.fullmatch(line)
        if m and m.group(1) in KINDS:
            done[m.group(3)] = m.group(1)
    return done


#: every outcome a unit can have
KINDS = ("ok", "not-covered", "undefined", "refused", "unlocated", "invalid-fortran", "harness",
         "mismatch", "expected-mismatch", "internal", "crash", "timeout", "wrong-error")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--transform")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="one set of inputs per file (no coverage rounds): a faster sweep")
    ap.add_argument("--tests", action="store_true",
                    help="also tests/floopy and every Fortran unit written in tests/**/test_*.py")
    ap.add_argument("--only-tests", action="store_true",
                    help="the test units only (not samples/ and tests/regressions/)")
    ap.add_argument("--list", action="store_true", help="print the units and stop")
    ap.add_argument("--reverse", action="store_true", help="the units in reverse order")
    ap.add_argument("--log", type=Path,
                    help="append outcomes to this file; units already in it are skipped")
    ap.add_argument("--no-fork", action="store_true",
                    help="with --quick: a new interpreter per unit instead of a forked child")
    args = ap.parse_args(argv)
    global _FORK
    _FORK = args.quick and not args.no_fork and args.jobs == 1 and hasattr(os, "fork")
    if _FORK:
        sys.path.insert(0, str(ROOT))
        import f2loopy.fuzz.fuzz  # noqa: F401  (imported once, before the children fork)
        import f2loopy.verify.check  # noqa: F401
        import pyopencl  # noqa: F401
    extra = ["--transform", args.transform] if args.transform else []
    files = args.paths or ([] if args.only_tests else default_files())
    if args.tests or args.only_tests:
        files += test_kernels(Path(tempfile.mkdtemp(prefix="f2loopy-sweep-")))
    if args.reverse:
        files.reverse()
    if args.list:
        print("\n".join(files))
        print(f"{len(files)} units")
        return 0
    counts: dict[str, int] = {}
    done = read_log(args.log) if args.log else {}
    total = len(files)
    for kind in (done[unit_key(f)] for f in files if unit_key(f) in done):
        counts[kind] = counts.get(kind, 0) + 1
    if done:
        print(f"{sum(counts.values())} units already in {args.log}: skipped", flush=True)
    files = [f for f in files if unit_key(f) not in done]
    log = open(args.log, "a") if args.log else None   # noqa: SIM115 - closed below
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for path, kind, out, secs in pool.map(
                lambda p: run_one(p, extra, args.timeout, args.quick), files):
            counts[kind] = counts.get(kind, 0) + 1
            print(f"{kind:17s} {secs:6.1f}s {path}", flush=True)
            if log is not None:
                log.write(f"{kind} {secs:.1f}s {unit_key(path)}\n")
                log.flush()
            if kind in BAD or args.verbose:
                print("    " + "\n    ".join(out.strip().splitlines()[-15:]), flush=True)
            elif kind in ("refused", "not-covered"):
                lines = out.strip().splitlines()
                first = next((ln for ln in lines if "error:" in ln or "NOT COVERED" in ln),
                             lines[0] if lines else "")
                print("    " + first[:300], flush=True)
    if log is not None:
        log.close()
    print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())),
          f"(of {total} units, {time.monotonic() - t0:.0f} s)")
    return 1 if any(counts.get(k) for k in BAD) else 0


if __name__ == "__main__":
    sys.exit(main())
