"""Run ``f2loopy check`` on every sample and every Fortran test kernel on disk,
and count the outcomes: ok, mismatch, located error, internal error, crash.

A crash (a signal, a Python traceback) or an internal error is always a defect
of f2loopy; a MISMATCH is one unless the translation is wrong.  Usage::

    python3 scripts/check_sweep.py [--transform auto] [--jobs N] [PATHS...]

``--tests`` adds every Fortran unit written in the tests' Python files (many
are meant to be refused: a located error is a right answer for them).  Exit
status 1 when any run crashed, hit an internal error, timed out or mismatched.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import tempfile
import subprocess
import sys
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


def default_files() -> list[str]:
    files = []
    for pattern in ("samples/**/*.f90", "samples/**/*.F90", "samples/**/*.f",
                    "tests/regressions/*.f90"):
        files += [str(p.relative_to(ROOT)) for p in sorted(ROOT.glob(pattern))]
    return [f for f in files if not f.startswith(SKIP_PREFIXES)]


_UNIT = re.compile(r"^\s*(subroutine|module|(?:\w+\s+)*function)\s+\w+", re.IGNORECASE)


def test_kernels(work: Path) -> list[str]:
    """The Fortran sources written as string constants in tests/**/test_*.py
    (a whole unit each), saved under *work* as <test module>_<n>.f90."""
    out = []
    for path in sorted((ROOT / "tests").glob("**/test_*.py")):
        k = 0
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            text = node.value
            if "\n" not in text or not _UNIT.match(text) or \
                    not re.search(r"^\s*end\b", text, re.MULTILINE | re.IGNORECASE):
                continue
            k += 1
            dest = work / f"{path.stem}_{k}.f90"
            dest.write_text(text)
            out.append(str(dest))
    return out


def classify(rc: int, out: str) -> str:
    if rc < 0 or rc >= 128:
        return "crash"
    if "Traceback" in out or "internal error" in out:
        return "internal error"
    if rc == 0:
        return "ok"
    if "MISMATCH" in out:
        return "mismatch"
    if "NOT COVERED" in out:
        return "not covered"
    return "error"


#: --quick: one set of inputs, no coverage rounds, in a child process of its own
_QUICK = """
import sys
import numpy as np
from f2loopy.diagnostics import F2LoopyError
from f2loopy.verify.check import check_file
path, transform = sys.argv[1], sys.argv[2] or None
try:
    with np.errstate(all="ignore"):
        report = check_file(path, coverage=False, transform=transform, defines={},
                            assumed_size_fallback=True)
except F2LoopyError as exc:
    print(exc.format(), file=sys.stderr)
    sys.exit(1)
except Exception as exc:
    print(f"f2loopy: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(1)
print(report.format())
sys.exit(0 if report.passed else 1)
"""


def run_one(path: str, extra: list[str], timeout: float,
            quick: bool = False) -> tuple[str, str, str]:
    cmd = [sys.executable, "-m", "f2loopy.cli", "check", *OPTIONS.get(path, []), *extra, path]
    if quick and path not in OPTIONS:
        transform = extra[1] if extra else ""
        cmd = [sys.executable, "-c", _QUICK, path, transform]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return path, "timeout", ""
    out = proc.stdout + proc.stderr
    return path, classify(proc.returncode, out), out


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
                    help="also every Fortran unit written in tests/**/test_*.py")
    args = ap.parse_args(argv)
    extra = ["--transform", args.transform] if args.transform else []
    files = args.paths or default_files()
    if args.tests:
        files += test_kernels(Path(tempfile.mkdtemp(prefix="f2loopy-sweep-")))
    counts: dict[str, int] = {}
    bad = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for path, kind, out in pool.map(lambda p: run_one(p, extra, args.timeout, args.quick),
                                        files):
            counts[kind] = counts.get(kind, 0) + 1
            print(f"{kind:15s} {path}", flush=True)
            if kind in ("crash", "internal error", "mismatch", "timeout") or args.verbose:
                bad += kind != "ok" and kind != "error"
                print("    " + "\n    ".join(out.strip().splitlines()[-15:]), flush=True)
            elif kind == "error":
                print("    " + (out.strip().splitlines() or [""])[0][:300], flush=True)
    print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())), f"(of {len(files)})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
