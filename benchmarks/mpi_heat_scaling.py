"""samples/mpi_heat on several GPUs: one MPI rank per device, through the
Fortran glue (the CMake build's mpi_heat_opencl) and the Python glue
(heat_mpi4py.py with mpi4py), strong and weak scaling in one run.

    python3 benchmarks/mpi_heat_scaling.py --fortran BUILD/mpi_heat_opencl \\
        [--original BUILD/mpi_heat_fortran] [--python] [--ranks 1,2,4] \\
        [--weak 8192x16384] [--strong 16384x16384] [--tiny 8x8] [--steps 1002]
        [--device '0:{rank}'] [--json FILE]

Each rank keeps its block of columns on its device for the whole run; a step
computes the two edge columns of the new field, copies them to host buffers,
launches the interior columns and, while the device computes those, exchanges
the edges with MPI_Sendrecv and uploads the halo columns received.  The
samples print two times per step of the slowest rank, timed from the third
step on (the first two build the OpenCL program): the mean, and the median of
the single steps (each rank's median; the largest).  This script runs them
under ``mpirun -np P`` and prints:

* the check: at a small size, the field written by 1 rank and by P ranks, and
  by the CPU original (``--original``), compared bit for bit; each rank's
  device as F2LOOPY_VERBOSE reports it;
* the baselines: one rank alone on each device that the largest run uses
  (``F2LOOPY_DEVICE`` from ``--device``, ``{rank}`` replaced by the device's
  number), at the weak-scaling size per rank: the GPUs of one machine are not
  equally fast, and P ranks in step wait for the slowest;
* weak scaling (``--weak NXxNYL``: NYL columns per rank): efficiency
  t(1) / t(P) against one rank on device 0, and against the slowest of the
  P devices alone (the ideal of ranks that wait for each other every step);
* strong scaling (``--strong NXxNY``: the grid split over the ranks):
  speed-up t(1) / t(P) and efficiency t(1) / (P t(P));
* with ``--tiny NXxNY``: a grid so small that the kernel is negligible, whose
  step time is the fixed cost of a step (launches, copies, MPI).

Efficiencies use the medians; the means are printed beside them.

The MPI library's own mpirun is used (``--mpirun``, default ``mpirun``);
Open MPI as root needs OMPI_ALLOW_RUN_AS_ROOT=1 and
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 in the environment.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "mpi_heat"


def size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)x(\d+)", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected NXxNY, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def mpirun(args, ranks: int, command: list, verbose=False, device=None) -> str:
    env = dict(os.environ)
    env.pop("F2LOOPY_DEVICE", None)
    env.pop("PYOPENCL_CTX", None)
    if device is not None:
        env["F2LOOPY_DEVICE"] = device
    if verbose:
        env["F2LOOPY_VERBOSE"] = "1"
    else:
        env.pop("F2LOOPY_VERBOSE", None)
    full = [*shlex.split(args.mpirun), "-np", str(ranks), *map(str, command)]
    proc = subprocess.run(full, capture_output=True, text=True, env=env, timeout=args.timeout,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(full)} failed ({proc.returncode}):\n{proc.stdout}\n"
                           f"{proc.stderr}")
    return proc.stdout + proc.stderr


#: an F2LOOPY_DEVICE template: platform and device parts, {rank} at most once
_DEVICE = re.compile(r"[A-Za-z0-9 _.-]*(?::[A-Za-z0-9 _.{}-]*)?")


def device_spec(template: str, number: int) -> str:
    spec = template.replace("{rank}", str(number), 1)
    if not _DEVICE.fullmatch(template) or "{" in spec or "}" in spec:
        raise SystemExit(f"--device {template!r}: not PLATFORM[:DEVICE] with {{rank}}")
    return spec


def per_step(output: str) -> tuple[float, float]:
    """(mean, median) seconds per step that a sample printed."""
    mean = re.search(r"(?m)^seconds per step\s+(\S+)$", output)
    median = re.search(r"(?m)^median seconds per step\s+(\S+)$", output)
    if not mean or not median:
        raise RuntimeError(f"no 'seconds per step' and 'median seconds per step' in:\n{output}")
    return float(mean.group(1)), float(median.group(1))


def python_driver(tmp: Path) -> list:
    """The command running heat_mpi4py.py beside its translated glue."""
    for name in ("heat_block.f90", "heat_mpi4py.py"):
        shutil.copy(SAMPLE / name, tmp / name)
    subprocess.run([sys.executable, "-m", "f2loopy.cli", "translate", str(tmp / "heat_block.f90")],
                   check=True, cwd=ROOT)
    return [sys.executable, str(tmp / "heat_mpi4py.py")]


def run_times(args, glue, command, p, nx, ny, results, mode, device=None):
    """(mean, median) seconds per step of *p* ranks on an nx x ny grid."""
    mean, median = per_step(mpirun(args, p, [*command, nx, ny, args.steps], device=device))
    results["runs"].append({"glue": glue, "mode": mode, "ranks": p, "nx": nx, "ny": ny,
                            "device": device, "seconds_per_step": mean,
                            "median_seconds_per_step": median})
    return mean, median


def timing(args, glue, command, ranks, results) -> None:
    """The baselines, weak, strong (and tiny) runs of one glue, with their tables."""
    gx, gy = args.weak
    base = {}
    for d in range(max(ranks)):
        base[d] = run_times(args, glue, command, 1, gx, gy, results, "baseline",
                            device_spec(args.device, d))
    print(f"\n{glue}, one rank alone on each device ({gx} x {gy}), {args.steps} steps:\n")
    print("| device | median s per step | mean s per step |")
    print("|---|---|---|")
    for d, (mean, median) in base.items():
        print(f"| {device_spec(args.device, d)} | {median:.4e} | {mean:.4e} |")
    for mode in ("weak", "strong", "tiny"):
        if mode == "tiny" and not args.tiny or mode == "strong" and not args.strong:
            continue
        gx, gy = {"weak": args.weak, "strong": args.strong, "tiny": args.tiny}[mode]
        times = {p: run_times(args, glue, command, p, gx, gy * p if mode == "weak" else gy,
                              results, mode) for p in ranks}
        print(f"\n{glue}, {mode} scaling ({gx} x {gy}"
              f"{' per rank' if mode == 'weak' else ' in all'}), {args.steps} steps:\n")
        if mode == "weak":
            print("| ranks | grid | median s per step | mean s per step | Mpoints/s | "
                  "efficiency vs device 0 alone | vs the slowest of its devices alone |")
            print("|---|---|---|---|---|---|---|")
        else:
            print("| ranks | grid | median s per step | mean s per step | Mpoints/s | "
                  "speed-up | efficiency |")
            print("|---|---|---|---|---|---|---|")
        for p, (mean, median) in times.items():
            ny = gy * p if mode == "weak" else gy
            rate = f"{gx * ny / median / 1e6:.0f}"
            if mode == "weak":
                slowest = max(base[d][1] for d in range(p))
                print(f"| {p} | {gx} x {ny} | {median:.4e} | {mean:.4e} | {rate} | "
                      f"{base[0][1] / median:.3f} | {slowest / median:.3f} |")
            else:
                speed = times[1][1] / median
                print(f"| {p} | {gx} x {ny} | {median:.4e} | {mean:.4e} | {rate} | "
                      f"{speed:.2f} | {speed / p:.3f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fortran", help="mpi_heat_opencl of the sample's CMake build")
    ap.add_argument("--original", help="mpi_heat_fortran (the CPU original), for the check")
    ap.add_argument("--python", action="store_true", help="also heat_mpi4py.py (mpi4py)")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--weak", type=size, default=(8192, 16384))
    ap.add_argument("--strong", type=lambda t: None if t == "none" else size(t),
                    default=(16384, 16384), help="NXxNY, or none")
    ap.add_argument("--tiny", type=size, help="also a grid this small (the fixed cost of a step)")
    ap.add_argument("--steps", type=int, default=1002)
    ap.add_argument("--device", default="0:{rank}",
                    help="F2LOOPY_DEVICE of the baseline on device d ({rank} replaced by d)")
    ap.add_argument("--check-size", type=size, default=(400, 301))
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    ranks = [int(r) for r in args.ranks.split(",")]
    if not ranks or min(ranks) < 1 or ranks[0] != 1:
        raise SystemExit("--ranks: positive numbers of ranks, the first 1")
    device_spec(args.device, 0)
    results: dict = {"ranks": ranks, "runs": [], "check": {}}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        drivers = {}
        if args.fortran:
            drivers["Fortran glue"] = [args.fortran]
        if args.python:
            drivers["Python glue"] = python_driver(tmp)
        ok = True

        # {{{ the check: bit for bit, devices
        nx, ny = args.check_size
        fields = {}
        if args.original:
            mpirun(args, 1, [args.original, nx, ny, 50, tmp / "original.bin"])
            fields["CPU original, 1 rank"] = (tmp / "original.bin").read_bytes()
        for glue, command in drivers.items():
            for p in ranks:
                out = tmp / f"{glue[0]}{p}.bin"
                text = mpirun(args, p, [*command, nx, ny, 50, out], verbose=True)
                fields[f"{glue}, {p} ranks"] = out.read_bytes()
                devices = sorted(set(re.findall(r"f2loopy: [^\n]*", text)) |
                                 set(re.findall(r"rank \d+[^\n]*device[^\n]*", text)))
                results["check"][f"{glue}, {p} ranks: devices"] = devices
                print(f"{glue}, {p} ranks, devices:")
                for line in devices:
                    print(f"  {line}")
        print(f"\nCheck at {nx} x {ny}, 50 steps:")
        import numpy as np

        def compare(name, other, exact=True):
            if name not in fields or other not in fields:
                return True
            a, b = np.frombuffer(fields[name]), np.frombuffer(fields[other])
            if exact:
                same = fields[name] == fields[other]
                what = "bit for bit"
            else:
                # heat_mpi4py's initial field comes from numpy's exp, the
                # Fortran's from the C library's: an ulp apart at places
                same = a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-15, atol=0))
                what = "within 1e-15 relative"
            print(f"  {name} = {other} {what}: {same}")
            results["check"][f"{name} = {other}"] = same
            return same
        for glue in drivers:
            for p in ranks[1:]:
                ok &= compare(f"{glue}, {p} ranks", f"{glue}, {ranks[0]} ranks")
        ok &= compare(f"Fortran glue, {ranks[0]} ranks", "CPU original, 1 rank")
        ok &= compare(f"Python glue, {ranks[0]} ranks", f"Fortran glue, {ranks[0]} ranks",
                      exact=False)
        # }}}

        for glue, command in drivers.items():
            timing(args, glue, command, ranks, results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
