"""How long ``f2loopy translate`` takes on scripts that try to run forever
(issue 14: the parent's work is bounded too).

Runs ``f2loopy translate`` as a command (a fresh process, as a user would) on
files whose transformation scripts burn CPU in Python and in C, sleep, eat
memory, recurse, print without end, and return kernels whose scheduling and
code generation would take hours (an isl set of many ``mod`` disjunctions),
with the sandbox limits set small.  Prints per attack the wall time of the
whole command, the exit status and the first line of the error, and at the
end the worst case against the configured wall-clock limit::

    python3 benchmarks/sandbox_limits.py                 # CPU 3 s, wall 5 s
    python3 benchmarks/sandbox_limits.py --cpu 5 --wall 8

The target: every command ends within the wall-clock limit plus the start-up
of Python (about a second) and a small margin.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FORTRAN = """\
subroutine saxpy(n, a, x, y)
  implicit none
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a*x(i) + y(i)
  end do
end subroutine
"""
PARSE = "from loopy import *\nk, = parse_fortran(SOURCE, FILENAME)\n"
MOD_SET = ("ps = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53]\n"
           "c = ' or '.join(f'(n mod {p} = 1 and n mod {q} = 2)' for p in ps for q in ps[:4])\n")

ATTACKS = {
    "baseline (split_iname)": PARSE + "RESULT = split_iname(k, 'i', 4, inner_tag='l.0')",
    "python busy loop": "while True:\n    pass",
    "busy loop catching": "while True:\n    try:\n        while True:\n            pass\n"
                          "    except BaseException:\n        pass",
    "C loop (sum of a range)": "x = sum(range(10 ** 13))",
    "regex backtracking": "import re\nre.match('(a+)+$', 'a' * 64 + 'b')",
    "memory": "x = [bytes(10 ** 6) for i in range(100000)]",
    "deep recursion": "def f(n):\n    return f(n + 1) + 1\nf(0)",
    "endless print": "while True:\n    print('x' * 1000)",
    "isl work in the script": PARSE + MOD_SET + "k = assume(k, c)\n"
                              "print(k.assumptions.coalesce().complement())\nRESULT = k",
    "hard set for code generation": PARSE + MOD_SET + "RESULT = assume(k, c)",
    "hard set in 20 checkpoints": PARSE + MOD_SET + "k = assume(k, c)\n"
                                  "for i in range(20):\n    checkpoint(f'c{i}', k)\n"
                                  "RESULT = split_iname(k, 'i', 2)",
    "101 checkpoints": PARSE + "for i in range(101):\n    checkpoint(f'c{i}', k)\n"
                       "RESULT = k",
    "400 nested split loops": PARSE + "name = 'i'\nfor j in range(400):\n"
                              "    k = split_iname(k, name, 2)\n    name += '_inner'\n"
                              "RESULT = k",
}


def fortran_with(script: str) -> str:
    return (FORTRAN + "!$loopy begin\n" + "".join(f"! {s}\n" for s in script.splitlines())
            + "!$loopy end\n")


def run_one(name: str, script: str, work: Path, cpu: float, wall: float) -> tuple:
    src = work / (name.replace(" ", "_").replace("(", "").replace(")", "") + ".f90")
    src.write_text(fortran_with(script))
    env = dict(os.environ, F2LOOPY_SCRIPT_CPU_LIMIT=str(cpu),
               F2LOOPY_SCRIPT_WALL_LIMIT=str(wall), F2LOOPY_SCRIPT_MEMORY_LIMIT="512",
               PYTHONHASHSEED="0")
    repo = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = str(repo) + os.pathsep + env.get("PYTHONPATH", "")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "f2loopy.cli", "translate", "-o",
                           str(work / "out"), str(src)], env=env, capture_output=True,
                          text=True, timeout=10 * wall + 60)
    elapsed = time.monotonic() - start
    lines = [ln for ln in proc.stderr.splitlines() if "error:" in ln]
    what = lines[0].split("error: ", 1)[1] if lines else "(translated)"
    return elapsed, proc.returncode, what


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", type=float, default=3.0, help="CPU limit (s)")
    parser.add_argument("--wall", type=float, default=5.0, help="wall-clock limit (s)")
    parser.add_argument("--only", default="",
                        help="attacks to run, comma-separated (the baseline always runs)")
    args = parser.parse_args()
    only = [s for s in args.only.split(",") if s]
    unknown = [s for s in only if s not in ATTACKS]
    if unknown:
        parser.error(f"no attack named {unknown[0]!r}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, script) in enumerate(ATTACKS.items()):
            if only and k and name not in only:
                continue
            rows.append((name, *run_one(name, script, Path(tmp), args.cpu, args.wall)))
    startup = rows[0][1]            # the baseline: a translation that does no harm
    print(f"limits: CPU {args.cpu:g} s, wall {args.wall:g} s; a harmless translation takes "
          f"{startup:.2f} s (Python start-up and imports included)\n")
    print(f"{'attack':30} {'status':>6} {'wall s':>7} {'over':>6}  result")
    for name, elapsed, status, what in rows:
        over = max(0.0, elapsed - args.wall)
        print(f"{name:30} {status:>6} {elapsed:7.2f} {over:6.2f}  {what[:80]}")
    worst = max(rows, key=lambda r: r[1])
    print(f"\nworst case: {worst[0]!r}: {worst[1]:.2f} s = wall limit {args.wall:g} s "
          f"+ {worst[1] - args.wall:.2f} s ({worst[1] - args.wall - startup:.2f} s beyond the "
          "time of a harmless translation)")


if __name__ == "__main__":
    main()
