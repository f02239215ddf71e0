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

``--cloudsc DIR`` adds a row for the CLOUDSC dwarf (issue 25, item 4: at
most 20 s): ``DIR`` holds ``pre/cloudsc.F90`` and ``mods/`` as
``benchmarks/cloudsc_gpu.py translate`` prepares them (the dwarf's source is
never part of this repository), translated with ``--transform auto -D
assume=...``.  ``--loops N...`` adds a table of code generation time for a
kernel of N loops, each split and tagged on its own (issue 25: near linear
in the number of loops), in fresh processes: CPU seconds per loop and their
ratio to the smallest N's.

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


#: the sandbox's limits for the CLOUDSC row (its defaults suit small files)
LONG_LIMITS = {"F2LOOPY_SCRIPT_CPU_LIMIT": "600", "F2LOOPY_SCRIPT_WALL_LIMIT": "1200"}
CLOUDSC_TARGET_S = 20.0
CLOUDSC_ASSUME = ("assume=YDECLDP_NSSOPT >= 0 and YDECLDP_NSSOPT <= 3 and "
                  "YDECLDP_NCLDTOP >= 1")


def _command_time(root: Path, args: list, cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env.update(LONG_LIMITS)
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


#: generate_code of a kernel of N loops, each split and tagged on its own
#: (prints the CPU seconds of that call)
LOOPS_SNIPPET = """
import sys, time
from f2loopy.codegen import generate_code
from f2loopy.frontend import parse_fortran
from f2loopy.transform.iname import split_iname
n = int(sys.argv[1])
body = "\\n".join(f"  do i{k} = 1, m\\n    a(i{k}, {k + 1}) = a(i{k}, {k + 1}) + {k}.0d0\\n"
                 f"  end do" for k in range(n))
src = (f"subroutine t(m, a)\\n  integer, intent(in) :: m\\n"
       f"  double precision, intent(inout) :: a(m, {n})\\n"
       f"  integer :: {', '.join(f'i{k}' for k in range(n))}\\n{body}\\nend subroutine t\\n")
knl = parse_fortran(src, "t.f90")["t"]
for k in range(n):
    knl = split_iname(knl, f"i{k}", 64, outer_tag="g.0", inner_tag="l.0")
t = time.process_time()
generate_code(knl)
print(time.process_time() - t)
"""


def _codegen_seconds(root: Path, n: int) -> float:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                      if p and Path(p).resolve() not in (REPO, root)]]))
    proc = subprocess.run([sys.executable, "-c", LOOPS_SNIPPET, str(n)], env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"code generation of {n} loops failed ({root}):\n{proc.stderr}")
    return float(proc.stdout.split()[-1])


def _loops_table(roots, loops: list[int], runs: int) -> None:
    print()
    header = (f"{'tagged loops':<14} {'which':<8} {'codegen cpu s':>14} {'ms/loop':>8} "
              f"{'ratio to ' + str(loops[0]):>12}")
    print(header)
    print("-" * len(header))
    for name, root in roots:
        first = None
        for n in loops:
            cpu = statistics.median(_codegen_seconds(root, n) for _ in range(runs))
            per = cpu / n
            first = per if first is None else first
            print(f"{n:<14} {name:<8} {cpu:>14.3f} {1000 * per:>8.2f} {per / first:>12.2f}")


def _cases(sizes, work: Path, cloudsc: Path | None = None) -> list:
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
    if cloudsc is not None:
        pre = cloudsc / "pre" / "cloudsc.F90"
        if not pre.is_file() or not (cloudsc / "mods").is_dir():
            raise SystemExit(f"{cloudsc} holds no pre/cloudsc.F90 and mods/ (see "
                             "benchmarks/cloudsc_gpu.py translate)")
        out = work / "cloudsc-out"
        out.mkdir()
        cases.append(("CLOUDSC --transform auto",
                      ["--transform", "auto", "-D", CLOUDSC_ASSUME, "-I", str(cloudsc / "mods"),
                       "-o", str(out), str(pre)],
                      pre.read_text().count("\n"), CLOUDSC_TARGET_S))
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
    ap.add_argument("--cloudsc", metavar="DIR", type=Path, default=None,
                    help="a folder with CLOUDSC's pre/cloudsc.F90 and mods/ (adds a row)")
    ap.add_argument("--loops", type=int, nargs="*", default=[],
                    help="also time code generation of kernels of these many tagged loops")
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
        cases = _cases(opts.sizes, work, opts.cloudsc)
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
        if opts.loops:
            _loops_table(roots, sorted(opts.loops), opts.runs)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
