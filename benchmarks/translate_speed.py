"""Translation time as a fresh ``f2loopy translate`` command (issue 19).

Runs ``f2loopy translate`` (the console script's ``f2loopy.cli:entry``) as a
new process, the translation
cache off (``F2LOOPY_NO_CACHE=1``), on the paper sample
(``samples/numa_volume/volume.f90 -D Nq=8``: parse, the whole level-8 script
in the sandbox, code generation, glue) and on generated files of about 1,000,
5,000 and 10,000 lines (``benchmarks/frontend_speed.py``'s kernels, no
script), and prints the median of N runs, seconds per 1,000 lines, and the
ratio to the targets (paper file under 0.8 s; at most 1.0 s per 1,000 lines
at every size); also the median CPU seconds (user + system of the command and
its children), which say more than wall time on a loaded machine.  The
process starts as the console script does: without
``PYTHONHASHSEED``, so the command's re-execution with a fixed hash seed is
counted.

``--compare DIR`` times another checkout of f2loopy (e.g. an older commit
from ``git worktree add``) in the same run, interleaved run by run, so a
loaded machine affects both alike.  Bytecode: an installed package has its
modules compiled; this script compiles them first (``compileall``) unless
``--no-compile`` is given, since with ``PYTHONDONTWRITEBYTECODE`` set every
run would otherwise recompile f2loopy's sources.  Run::

    python3 benchmarks/translate_speed.py                 # 7 runs per row
    python3 benchmarks/translate_speed.py -n 11 --sizes 1000 5000 --compare ../old
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PAPER = REPO / "samples" / "numa_volume" / "volume.f90"
PAPER_TARGET_S = 0.8
PER_KLINE_TARGET_S = 1.0
#: what the installed ``f2loopy`` console script runs (``python -m f2loopy.cli``
#: would skip ``entry``, and with it the re-execution with a fixed hash seed)
CONSOLE_SCRIPT = "import sys; from f2loopy.cli import entry; sys.argv[0] = 'f2loopy'; entry()"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _command_time(root: Path, args: list, cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    # the checkout first; the rest of PYTHONPATH stays (packages installed there)
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and Path(p).resolve() not in (REPO, root)]
    env.update(F2LOOPY_NO_CACHE="1", PYTHONPATH=os.pathsep.join([str(root), *rest]))
    c, t = _cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CONSOLE_SCRIPT, "translate", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, check=False)
    dt, dc = time.perf_counter() - t, _cpu() - c
    if proc.returncode != 0:
        raise SystemExit(f"f2loopy translate {' '.join(args)} failed ({root}):\n{proc.stderr}")
    return dt, dc


def _cases(sizes, work: Path) -> list:
    sys.path.insert(0, str(HERE))
    from frontend_speed import generate
    cases = []
    paper = work / "volume.f90"
    shutil.copyfile(PAPER, paper)
    cases.append(("paper (volume.f90, Nq=8)", ["-D", "Nq=8", paper.name],
                  PAPER.read_text().count("\n"), PAPER_TARGET_S))
    for size in sizes:
        text = generate(size)
        path = work / f"gen{size}.f90"
        path.write_text(text)
        lines = text.count("\n")
        cases.append((f"generated {lines} lines", [path.name], lines,
                      PER_KLINE_TARGET_S * lines / 1000))
    return cases


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--runs", type=int, default=7, help="fresh processes per row (7)")
    ap.add_argument("--sizes", type=int, nargs="*", default=[1000, 5000, 10000],
                    help="lengths of the generated files (1000 5000 10000)")
    ap.add_argument("--compare", metavar="DIR", default=None,
                    help="another f2loopy checkout to time in the same run")
    ap.add_argument("--no-compile", action="store_true",
                    help="do not byte-compile the modules first")
    opts = ap.parse_args(argv)
    roots = [("this", REPO)]
    if opts.compare:
        other = Path(opts.compare).resolve()
        if not (other / "f2loopy" / "cli.py").is_file():
            ap.error(f"{other} holds no f2loopy checkout")
        roots.append(("compare", other))
    if not opts.no_compile:
        for _, root in roots:
            compileall.compile_dir(str(root / "f2loopy"), quiet=1)
    work = Path(tempfile.mkdtemp(prefix="f2loopy-tspeed-"))
    try:
        cases = _cases(opts.sizes, work)
        print(f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f} at the start; "
              f"median of {opts.runs} fresh processes; cache off; bytecode "
              f"{'not ' if opts.no_compile else ''}precompiled")
        header = (f"{'file':<28} {'which':<8} {'median s':>9} {'min s':>7} {'cpu s':>6} "
                  f"{'s/kline':>8} {'target s':>9} {'ratio':>6}")
        print(header)
        print("-" * len(header))
        for label, args, lines, target in cases:
            times = {name: [] for name, _ in roots}
            cpus = {name: [] for name, _ in roots}
            _command_time(roots[0][1], args, work)          # warm the file system cache
            for _ in range(opts.runs):
                for name, root in roots:
                    wall, cpu = _command_time(root, args, work)
                    times[name].append(wall)
                    cpus[name].append(cpu)
            for name, _ in roots:
                med = statistics.median(times[name])
                print(f"{label:<28} {name:<8} {med:>9.3f} {min(times[name]):>7.3f} "
                      f"{statistics.median(cpus[name]):>6.2f} "
                      f"{med / (lines / 1000):>8.3f} {target:>9.2f} {med / target:>6.2f}")
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
