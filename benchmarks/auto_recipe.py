"""Benchmark of ``--transform auto`` on the PolyBench-style samples.

For each kernel of ``samples/polybench/`` this prints, from one run on the
default OpenCL device (``PYOPENCL_CTX`` chooses):

* the untransformed kernel (one work-item runs everything), the ``auto``
  recipe with its default choices, and (for the kernels named by ``--tune``)
  the best variant ``f2loopy tune`` finds within ``--budget`` variants, all
  timed as ``f2loopy tune`` times (raw launches, median of batches);
  every variant of a kernel, the Fortran builds included, is timed once per
  round (``--rounds``, interleaved so that the load of a shared machine
  shifts them alike) and the median over the rounds is reported;
* the original Fortran built with ``gfortran -O3 -march=native -fopenmp``,
  serial as written, and with ``!$omp parallel do`` added to a copy (the
  directives of :data:`OPENMP`, on the loops a programmer would choose),
  ``OMP_NUM_THREADS`` = the number of CPUs unless set;
* whether the auto kernel's outputs match the untransformed kernel's (at the
  small ``VERIFY`` sizes), the plan auto took, and ratios.

Usage::

    python3 benchmarks/auto_recipe.py [--tune gemm,2mm] [--budget 6]
        [--min-time 0.1] [--only gemm,atax] [--markdown FILE]

``--markdown FILE`` writes the table and the run's details as Markdown.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
# threads that sleep while waiting: spinning ones starve on a loaded machine
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

POLYBENCH = ROOT / "samples" / "polybench"

#: kernel -> (file, sizes timed, sizes verified)
KERNELS = {
    "gemm": ("gemm.f90", dict(ni=256, nj=256, nk=256), dict(ni=37, nj=45, nk=70)),
    "2mm": ("2mm.f90", dict(ni=192, nj=192, nk=192, nl=192),
            dict(ni=37, nj=45, nk=70, nl=33)),
    "atax": ("atax.f90", dict(m=1600, n=1600), dict(m=150, n=131)),
    "bicg": ("bicg.f90", dict(m=1600, n=1600), dict(m=150, n=131)),
    "gesummv": ("gesummv.f90", dict(n=1600), dict(n=70)),
    "jacobi-2d": ("jacobi_2d.f90", dict(n=256, tsteps=20), dict(n=40, tsteps=3)),
    "fdtd-2d": ("fdtd_2d.f90", dict(nx=256, ny=256, tmax=20), dict(nx=40, ny=30, tmax=3)),
    "heat-3d": ("heat_3d.f90", dict(n=48, tsteps=10), dict(n=12, tsteps=2)),
    "jacobi-2d step": ("jacobi_2d_step.f90", dict(n=1024), dict(n=40)),
    "heat-3d step": ("heat_3d_step.f90", dict(n=96), dict(n=13)),
    "covariance": ("covariance.f90", dict(m=192, n=192), dict(m=40, n=50)),
}

#: kernel -> [(loop statement as written, directive put before it), ...] in
#: source order: the OpenMP version a programmer would write
OPENMP = {
    "gemm": [("do j = 1, nj", "!$omp parallel do private(i, k)")],
    "2mm": [("do j = 1, nj", "!$omp parallel do private(i, k)"),
            ("do j = 1, nl", "!$omp parallel do private(i, k)")],
    "atax": [("do i = 1, m", "!$omp parallel do private(j, s)"),
             ("do j = 1, n", "!$omp parallel do private(i, s)")],
    "bicg": [("do j = 1, m", "!$omp parallel do private(i)"),
             ("do i = 1, n", "!$omp parallel do private(j)")],
    "gesummv": [("do i = 1, n", "!$omp parallel do private(j, sa, sb)")],
    "jacobi-2d": [("do j = 2, n - 1", "!$omp parallel do private(i)"),
                  ("do j = 2, n - 1", "!$omp parallel do private(i)")],
    "fdtd-2d": [("do j = 1, ny", "!$omp parallel do"),
                ("do j = 1, ny", "!$omp parallel do private(i)"),
                ("do j = 2, ny", "!$omp parallel do private(i)"),
                ("do j = 1, ny - 1", "!$omp parallel do private(i)")],
    "heat-3d": [("do k = 2, n - 1", "!$omp parallel do private(i, j)"),
                ("do k = 2, n - 1", "!$omp parallel do private(i, j)")],
    "jacobi-2d step": [("do j = 2, n - 1", "!$omp parallel do private(i)")],
    "heat-3d step": [("do k = 2, n - 1", "!$omp parallel do private(i, j)")],
    "covariance": [("do j = 1, m", "!$omp parallel do private(k, s)"),
                   ("do j = 1, m", "!$omp parallel do private(k)"),
                   ("do i = 1, m", "!$omp parallel do private(j, k, s) schedule(dynamic)")],
}

FLAGS = ("-O3", "-march=native", "-fopenmp")


def with_openmp(text: str, directives) -> str:
    """*text* with each directive put before the next loop (after the loop the
    previous directive annotated) whose statement reads exactly as given."""
    lines = text.splitlines()
    start = 0
    for stmt, directive in directives:
        for k in range(start, len(lines)):
            if lines[k].strip() == stmt:
                indent = re.match(r"\s*", lines[k]).group(0)
                lines.insert(k, indent + directive)
                start = _after_loop(lines, k + 1)
                break
        else:
            raise SystemExit(f"OpenMP table: no loop '{stmt}' after line {start}")
    return "\n".join(lines) + "\n"


def _after_loop(lines, k: int) -> int:
    """The index of the line after the ``end do`` that closes the loop at *k*."""
    depth = 0
    for j in range(k, len(lines)):
        word = lines[j].strip().lower()
        if re.match(r"do\b", word):
            depth += 1
        elif re.match(r"end\s*do\b", word):
            depth -= 1
            if depth == 0:
                return j + 1
    raise SystemExit(f"OpenMP table: the loop at line {k + 1} has no end do")


class FortranTimer:
    """The subroutine built with FLAGS, on inputs drawn like the kernels'."""

    def __init__(self, text: str, kernel, sizes: dict):
        from f2loopy.bench.run import make_inputs
        from f2loopy.verify.fortran import FortranLibrary
        self.lib = FortranLibrary(text, [kernel], filename="original.f90", flags=FLAGS)
        self.name = kernel.name
        self.work = make_inputs(kernel, sizes, 0)
        self.lib.call(self.name, self.work)            # also the warm-up
        self.first = copy.deepcopy(self.work)          # the results of one call

    def __call__(self, min_time: float) -> float:
        """Median milliseconds of a call over at least *min_time* seconds."""
        times, total = [], 0.0
        while total < min_time or len(times) < 3:
            t0 = time.perf_counter()
            self.lib.call(self.name, self.work)
            dt = time.perf_counter() - t0
            times.append(dt)
            total += dt
        return statistics.median(times) * 1e3


def same_results(a: list, b: list) -> bool:
    import numpy as np
    return all(np.allclose(x, y, rtol=1e-10, atol=1e-12) for x, y in zip(a, b, strict=True))


def plan_of(result) -> str:
    """The plan the recipe printed for the (first) kernel."""
    line = (result.script_output or "").split("\n")[0]
    if "stays sequential" in line:
        return "sequential"
    m = re.search(r": plan ([\w+-]+),", line)
    split = re.search(r"; (\d+ global barriers?(?:, host loops? [\w, ]+)?)$", line)
    return (m.group(1) if m else "?") + (f" ({split.group(1)})" if split else "")


def run(args) -> tuple[list[dict], dict]:
    import pyopencl as cl

    from f2loopy.pipeline import translate_text
    from f2loopy.tune.command import run_tune
    from f2loopy.tune.measure import Reference, device_label, time_variant

    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    rows = []
    names = [n for n in KERNELS if not args.only or n in args.only]
    t_start = time.perf_counter()
    for name in names:
        fname, sizes, verify = KERNELS[name]
        if args.tiny:
            sizes = verify
        path = POLYBENCH / fname
        text = path.read_text()
        row = {"kernel": name, "sizes": sizes}
        plain = translate_text(text, path)
        auto = translate_text(text, path, transform="auto")
        row["plan"] = plan_of(auto)
        ref = Reference(text, path, queue, verify)
        try:
            check = ref.check(auto)
        finally:
            ref.close()
        row["ok"] = check.ok
        row["tuned"] = ""
        tuned = None
        if (name in args.tune or args.tune == ["all"]) and auto.tunables:
            report = run_tune(path, transform="auto", sizes=sizes, verify_sizes=verify,
                              budget=args.budget, min_time=args.min_time, warmup=1,
                              queue=queue, store=False)
            row["tuned"] = ", ".join(f"{k}={v!r}" for k, v in report.best.values.items())
            row["tuned_variants"] = len(report.variants)
            defaults = {k: choices[0] for k, choices in auto.tunables.items()}
            if report.best.values == defaults:
                row["tuned"] += " (the default choices: the auto kernel)"
            else:
                tuned = translate_text(text, path, transform="auto",
                                       tunables=report.best.values)
        kernel = plain.kernels[0]
        serial = parallel = None
        row["openmp_ok"] = True
        if args.fortran:
            serial = FortranTimer(text, kernel, sizes)
            parallel = FortranTimer(with_openmp(text, OPENMP[name]), kernel, sizes)
            row["openmp_ok"] = same_results(serial.first, parallel.first)

        def opencl(result):
            return lambda t: time_variant(result, queue, sizes, min_time=t, warmup=1)
        timers = {"untransformed_ms": opencl(plain), "auto_ms": opencl(auto),
                  "tuned_ms": opencl(tuned) if tuned is not None else None,
                  "gfortran_ms": serial, "openmp_ms": parallel}
        # every variant once per round, so that the machine's load shifts
        # them all alike; the median over the rounds
        got: dict = {k: [] for k, f in timers.items() if f is not None}
        for _ in range(args.rounds):
            for k in got:
                got[k].append(timers[k](args.min_time))
        for k in timers:
            row[k] = statistics.median(got[k]) if k in got else None
        if row["tuned"] and tuned is None:
            row["tuned_ms"] = row["auto_ms"]
        rows.append(row)
        print(f"  {name}: done ({time.perf_counter() - t_start:.0f} s)", file=sys.stderr)
    info = {"device": device_label(queue), "seconds": time.perf_counter() - t_start,
            "device_type": cl.device_type.to_string(queue.device.type)}
    return rows, info


def _ms(x) -> str:
    return "-" if x is None else (f"{x:.3g}" if x < 100 else f"{x:.0f}")


def _ratio(a, b) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"


def _checked(r) -> str:
    """Whether auto matched the untransformed kernel and OpenMP the serial build."""
    return ("yes" if r["ok"] else "AUTO WRONG") + ("" if r["openmp_ok"] else ", OPENMP WRONG")


def table(rows) -> str:
    head = ("| kernel | sizes | auto plan | checked | untransformed ms | auto ms | auto tuned ms "
            "| gfortran ms | gfortran+OpenMP ms | untransformed / auto "
            "| best gfortran / best auto |")
    out = [head, "|" + "|".join("---" for _ in range(head.count("|") - 1)) + "|"]
    for r in rows:
        best = min(x for x in (r["auto_ms"], r["tuned_ms"]) if x is not None)
        fortran = None if r["gfortran_ms"] is None else \
            min(r["gfortran_ms"], r["openmp_ms"] if r["openmp_ok"] else r["gfortran_ms"])
        sizes = " ".join(f"{k}={v}" for k, v in r["sizes"].items())
        out.append(f"| {r['kernel']} | {sizes} | {r['plan']} | {_checked(r)} "
                   f"| {_ms(r['untransformed_ms'])} | {_ms(r['auto_ms'])} "
                   f"| {_ms(r['tuned_ms'])} | {_ms(r['gfortran_ms'])} "
                   f"| {_ms(r['openmp_ms'])} "
                   f"| {_ratio(r['untransformed_ms'], r['auto_ms'])} "
                   f"| {_ratio(fortran, best)} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tune", default="gemm",
                    help="kernels to tune (comma-separated, or 'all')")
    ap.add_argument("--budget", type=int, default=6, help="variants per tuned kernel")
    ap.add_argument("--min-time", type=float, default=0.1,
                    help="seconds timed per variant and round")
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds over all variants of a kernel (median reported)")
    ap.add_argument("--only", default="", help="kernels to run (comma-separated)")
    ap.add_argument("--markdown", help="write the results as Markdown to this file")
    ap.add_argument("--no-fortran", dest="fortran", action="store_false",
                    help="do not build and time the Fortran originals (the default "
                         "where no gfortran is installed, e.g. on a GPU machine)")
    ap.add_argument("--tiny", action="store_true",
                    help="time at the small sizes used for verifying (a smoke run, as CI's)")
    args = ap.parse_args(argv)
    if args.fortran and shutil.which("gfortran") is None:
        print("no gfortran: the Fortran columns are left out", file=sys.stderr)
        args.fortran = False
    args.tune = [s for s in args.tune.split(",") if s]
    args.only = [s for s in args.only.split(",") if s]
    rows, info = run(args)
    info["fortran"] = args.fortran
    text = table(rows)
    print(f"device: {info['device']}; OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}; "
          f"{info['seconds']:.0f} s")
    print(text)
    for r in rows:
        if r["tuned"]:
            print(f"{r['kernel']}: tuned choice {r['tuned']} "
                  f"(best of {r['tuned_variants']} variants)")
    if args.markdown:
        Path(args.markdown).write_text(markdown(rows, info, argv))


def markdown(rows, info, argv) -> str:
    cmd = "python3 benchmarks/auto_recipe.py " + " ".join(argv if argv is not None
                                                           else sys.argv[1:])
    try:
        cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = re.search(r"Model name:\s*(.*)", cpu).group(1).strip()
    except Exception:  # noqa: BLE001 - informative only
        model = platform.processor() or "unknown CPU"
    tuned = [f"* {r['kernel']}: {r['tuned']} (best of {r['tuned_variants']} variants "
             "checked and timed by `f2loopy tune`'s search)" for r in rows if r["tuned"]]
    on_cpu = "CPU" in info.get("device_type", "CPU")
    where = f"CPU {model}, {os.cpu_count()} cores" if on_cpu else \
        f"host CPU {model}, {os.cpu_count()} cores"
    return "\n".join([
        "## CPU run" if on_cpu else "## GPU run", "",
        f"Command: `{cmd.strip()}` ({info['seconds']:.0f} s in all).", "",
        f"Device: {info['device']}; {where}, "
        f"`OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}`, "
        f"`OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}`; "
        + (f"gfortran flags `{' '.join(FLAGS)}`." if info["fortran"]
           else "the Fortran originals were not built (no gfortran there)."), "",
        table(rows), "", *tuned, ""])


if __name__ == "__main__":
    main()
