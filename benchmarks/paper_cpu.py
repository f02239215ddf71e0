"""The paper's kernel on the CPU: the original Fortran built with gfortran
against f2loopy's kernels on PoCL, all in one run (issue 19).

Times, on the OpenCL device that ``PYOPENCL_CTX`` selects (PoCL on the CPU),
and on the same cores:

* the original subroutines ``refFluxR`` then ``refFluxS`` of
  ``samples/numa_volume/volume.f90`` as written, built with
  ``gfortran -O3 -march=native -fopenmp`` (``gfortran``), and the same with
  ``!$omp parallel do`` put on the element loop of each (``gfortran+OpenMP``,
  ``OMP_NUM_THREADS`` = the number of CPUs unless set);
* the untransformed kernels (what the frontend makes of the two subroutines,
  no script: one work-item runs everything), unless ``--no-untransformed``;
  they take seconds per launch, so they are timed by one launch in the first
  round only;
* levels 1 and 8 of the paper's (GPU) script in ``volume.f90``;
* the final kernel of ``--cpu FILE`` (default ``samples/numa_volume/volume_cpu.f90``,
  the CPU script) as ``f2loopy translate`` makes it, with its tuning record
  if one matches this device (``--no-record``: the script's first choices);
* a float4 copy (``measure_copy_bandwidth``, before and after the rounds):
  the memory bandwidth the device's cores reach, to put the times against
  the compulsory traffic (every array element read or written once);
* OpenCL's ``pow(x, 1.4f)`` over one value per node, scalar and as float8
  (the pressure's power is what the CPU script's float8 code makes cheap).

Every kernel and both Fortran builds run on the same input values, and every
result is compared with the serial gfortran build's (relative to the largest
value, float32).  Each of ``--rounds`` rounds times every variant once
(OpenCL kernels: warm-up, then batches of back-to-back launches for at least
``--min-time`` s, the median batch; Fortran: calls for at least ``--min-time``
s, the median call), so that the load of a shared machine shifts them alike;
the table gives the median over the rounds.  GFLOP/s counts the paper's 82
FLOP per (e, k, j, i, n) point of the Fortran for every row (the work the
subroutines describe), so the rows compare as times do. Run::

    python3 benchmarks/paper_cpu.py -D Nq=8 --size Ne=6910 --json out.json
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
# threads that sleep while waiting: spinning ones starve on a loaded machine
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

PAPER = REPO / "samples" / "numa_volume" / "volume.f90"
CPU = REPO / "samples" / "numa_volume" / "volume_cpu.f90"
FLAGS = ("-O3", "-march=native", "-fopenmp")
SUBROUTINES = ("refFluxR", "refFluxS")
#: the directive put before each subroutine's element loop
OPENMP = ("!$omp parallel do default(private) shared(geo, D, q, rhsq) &\n"
          "  !$omp& firstprivate(Nq, p_p0, p_Gamma, p_R)")
#: FLOP per (e, k, j, i, n) point of the two subroutines, counted as in the paper
FLOP_PER_POINT = 82


def fortran_text(path: Path) -> str:
    """The Fortran of *path* without its transformation script."""
    text = path.read_text()
    start = text.find("!$loopy begin\n! ")
    return text if start < 0 else text[:start]


def with_openmp(text: str) -> str:
    """*text* with OPENMP before every element loop (``do e = 1, Ne``)."""
    out, n = re.subn(r"(?m)^(\s*)do e = 1, Ne$", lambda m: m.group(1) + OPENMP + "\n"
                     + m.group(0), text)
    if n != len(SUBROUTINES):
        raise SystemExit(f"expected {len(SUBROUTINES)} element loops, found {n}")
    return out


class FortranRun:
    """The original subroutines built with FLAGS, called in sequence."""

    def __init__(self, text: str, inputs: dict):
        from f2loopy.frontend import parse_fortran
        from f2loopy.verify.fortran import FortranLibrary
        self.tu = parse_fortran(text, "volume.f90")
        self.lib = FortranLibrary(text, self.tu.kernels, filename="volume.f90", flags=FLAGS)
        self.work = copy.deepcopy(inputs)

    def call(self, values: dict) -> dict:
        for name in SUBROUTINES:
            k = self.tu[name]
            self.lib.call(name, [values[a.name] for a in k.fortran_args])
        return values

    def result(self, inputs: dict) -> np.ndarray:
        return self.call(copy.deepcopy(inputs))["rhsq"]

    def time(self, min_time: float) -> float:
        times, total = [], 0.0
        while total < min_time or len(times) < 3:
            t0 = time.perf_counter()
            self.call(self.work)
            dt = time.perf_counter() - t0
            times.append(dt)
            total += dt
        return statistics.median(times) * 1e3


class KernelRun:
    """Generated kernels (run one after the other) on device buffers."""

    def __init__(self, gks: list, inputs: dict, sizes: dict, queue, *, single: bool = False):
        import pyopencl as cl

        from f2loopy.bench.run import launch_geometry
        from f2loopy.codegen import join_program
        self.queue, self.parts, self.single = queue, [], single
        for gk in gks:
            prg = cl.Program(queue.context, join_program([gk])).build(
                options=list(gk.build_options))
            knl = cl.Kernel(prg, gk.c_name)
            args = [inputs[a.name] if a.name in inputs else a.fixed_value
                    for a in gk.kernel.args]
            values = {**sizes, **{a.name: a.fixed_value for a in gk.kernel.args
                                  if getattr(a, "fixed_value", None) is not None}}
            gsize, lsize = launch_geometry(gk, values)
            self.parts.append((gk, knl, args, gsize, lsize))
        self.build_options = sorted({o for gk in gks for o in gk.build_options})

    def result(self) -> np.ndarray:
        """rhsq after one run of every part on fresh copies of the inputs."""
        from f2loopy.bench.run import run_once
        state: dict = {}
        for gk, knl, args, gsize, lsize in self.parts:
            args = [state.get(a.name, v) for a, v in zip(gk.kernel.args, args, strict=True)]
            state.update(run_once(gk, knl, [copy.deepcopy(a) for a in args], self.queue,
                                  gsize, lsize))
        return state["rhsq"]

    def time(self, min_time: float) -> float:
        import pyopencl as cl

        from f2loopy.bench.run import device_args, time_launches
        total = 0.0
        for gk, knl, args, gsize, lsize in self.parts:
            bufs = device_args(gk, args, self.queue)
            knl.set_args(*bufs)
            if self.single:
                # one launch (the correctness run was the warm-up)
                t0 = time.perf_counter()
                cl.enqueue_nd_range_kernel(self.queue, knl, gsize, lsize)
                self.queue.finish()
                total += (time.perf_counter() - t0) * 1e3
            else:
                total += time_launches(self.queue, knl, gsize, lsize,
                                       min_time / len(self.parts), 1)
        return total


_POW = """
__kernel void pow1(__global const float *restrict x, __global float *restrict y)
{ size_t i = get_global_id(0); y[i] = pow(x[i], 1.4f); }
__kernel void pow8(__global const float8 *restrict x, __global float8 *restrict y)
{ size_t i = get_global_id(0); y[i] = pow(x[i], (float8)(1.4f)); }
"""


def pow_costs(queue, n: int, min_time: float) -> dict:
    """Nanoseconds per value of OpenCL's pow(x, 1.4f) on *n* floats: scalar
    (one value per work-item) and float8 (eight per work-item)."""
    import pyopencl as cl

    from f2loopy.bench.run import time_launches
    n = -(-n // 512) * 512           # whole work-groups of 64 float8s
    x = np.random.default_rng(0).uniform(0.5, 1.5, n).astype(np.float32)
    mf = cl.mem_flags
    xb = cl.Buffer(queue.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(queue.context, mf.READ_WRITE, x.nbytes)
    prg = cl.Program(queue.context, _POW).build()
    out = {}
    for name, items in (("pow1", n), ("pow8", n // 8)):
        knl = getattr(prg, name)
        knl.set_args(xb, yb)
        out[name] = time_launches(queue, knl, (items,), (64,), min_time, 1) * 1e6 / n
    return out


def rel_error(got, want) -> float:
    g = np.asarray(got, dtype=np.float64)
    w = np.asarray(want, dtype=np.float64)
    if g.shape != w.shape or not np.all(np.isfinite(g)):
        return float("inf")
    return float(np.max(np.abs(g - w))) / (float(np.max(np.abs(w))) or 1.0)


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        return re.search(r"Model name:\s*(.*)", out).group(1).strip()
    except Exception:  # noqa: BLE001 - informative only
        return platform.processor() or "unknown CPU"


def run(opts) -> dict:
    import pyopencl as cl

    from f2loopy.bench.run import make_inputs, measure_copy_bandwidth, scale_compulsory
    from f2loopy.codegen import generate_code
    from f2loopy.frontend import read_source, translate_source
    from f2loopy.pipeline import translate_file
    t_start = time.perf_counter()
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    device = f"{queue.device.name.strip()} ({queue.device.platform.name.strip()})"
    defines, sizes = opts.defines, opts.sizes
    load_start = os.getloadavg()[0]

    paper = translate_file(PAPER, defines=defines, tuning=False)
    cps = dict(paper.checkpoints)
    level1 = cps["level 1"][0]
    cpu = translate_file(opts.cpu, defines=defines, tuning=not opts.no_record)
    cpu_note = "; ".join(cpu.notes) or "no tuning record matched: the script's first choices"
    # the same values for everything: drawn for the fused kernel (Nq and the
    # physical constants fixed by the script), given to the originals by name
    inputs = dict(zip([a.name for a in level1.args], make_inputs(level1, sizes, seed=0), strict=True))
    text = fortran_text(PAPER)
    originals = [k for k in translate_source(read_source(text, str(PAPER)))]
    variants: dict = {}
    variants["gfortran"] = FortranRun(text, inputs)
    variants["gfortran+OpenMP"] = FortranRun(with_openmp(text), inputs)
    if not opts.no_untransformed:
        variants["untransformed"] = KernelRun([generate_code(k) for k in originals], inputs,
                                              sizes, queue, single=True)
    variants["paper level 1"] = KernelRun([generate_code(level1)], inputs, sizes, queue)
    variants["paper level 8"] = KernelRun([generate_code(cps["level 8"][0])], inputs, sizes,
                                          queue)
    variants["CPU script"] = KernelRun(list(cpu.generated), inputs, sizes, queue)

    want = variants["gfortran"].result(inputs)
    errors = {name: rel_error(v.result(inputs) if isinstance(v, FortranRun) else v.result(),
                              want)
              for name, v in variants.items()}
    bandwidth = measure_copy_bandwidth(queue, min_time=opts.min_time)
    times: dict = {name: [] for name in variants}
    for r in range(opts.rounds):
        for name, v in variants.items():
            if name == "untransformed" and r > 0:
                continue            # seconds per launch: one launch, in the first round
            times[name].append(v.time(opts.min_time))
        print(f"  round {r + 1}/{opts.rounds} done ({time.perf_counter() - t_start:.0f} s)",
              file=sys.stderr)
    bandwidth_after = measure_copy_bandwidth(queue, min_time=opts.min_time)
    pows = pow_costs(queue, sizes["Ne"] * defines["Nq"] ** 3, opts.min_time)
    compulsory = scale_compulsory(level1, sizes)
    ne = sizes["Ne"]
    gflop = FLOP_PER_POINT * ne * defines["Nq"] ** 4 / 1e9   # both subroutines
    return {
        "device": device, "cpu": cpu_model(), "cpus": os.cpu_count(),
        "omp_num_threads": os.environ["OMP_NUM_THREADS"], "flags": " ".join(FLAGS),
        "sizes": sizes, "defines": defines, "rounds": opts.rounds, "min_time": opts.min_time,
        "cpu_file": str(Path(opts.cpu).resolve().relative_to(REPO))
        if Path(opts.cpu).resolve().is_relative_to(REPO) else str(opts.cpu),
        "cpu_tuning": cpu_note, "cpu_build_options": variants["CPU script"].build_options,
        "bandwidth_gbs": [bandwidth, bandwidth_after], "compulsory_bytes": compulsory,
        "gflop": gflop, "errors": errors, "times": times, "pow_ns": pows,
        "medians": {k: statistics.median(v) for k, v in times.items()},
        "load": [load_start, os.getloadavg()[0]],
        "seconds": time.perf_counter() - t_start,
    }


def table(res: dict) -> str:
    med = res["medians"]
    serial, omp = med["gfortran"], med["gfortran+OpenMP"]
    bw = max(res["bandwidth_gbs"])
    limit_ms = res["compulsory_bytes"] / (bw * 1e9) * 1e3
    head = (f"{'variant':<16} {'median ms':>10} {'min..max ms':>17} {'x gfortran':>11} "
            f"{'x +OpenMP':>10} {'GFLOP/s':>8} {'GB/s':>7} {'x limit':>8} {'rel err':>9}")
    lines = [head, "-" * len(head)]
    for name, t in med.items():
        lo, hi = min(res["times"][name]), max(res["times"][name])
        lines.append(
            f"{name:<16} {t:>10.1f} {f'{lo:.1f}..{hi:.1f}':>17} {serial / t:>11.2f} "
            f"{omp / t:>10.2f} {res['gflop'] / (t * 1e-3):>8.2f} "
            f"{res['compulsory_bytes'] / 1e9 / (t * 1e-3):>7.1f} {t / limit_ms:>8.1f} "
            f"{res['errors'][name]:>9.1e}")
    return "\n".join(lines)


def report(res: dict) -> str:
    bw = res["bandwidth_gbs"]
    limit_ms = res["compulsory_bytes"] / (max(bw) * 1e9) * 1e3
    med = res["medians"]
    best_fortran = min(med["gfortran"], med["gfortran+OpenMP"])
    return "\n".join([
        f"device: {res['device']}; CPU {res['cpu']}, {res['cpus']} CPUs; "
        f"OMP_NUM_THREADS={res['omp_num_threads']}; gfortran {res['flags']}",
        f"sizes {res['sizes']}, defines {res['defines']}; medians of {res['rounds']} "
        f"interleaved rounds (>= {res['min_time']} s per variant and round); "
        f"load average {res['load'][0]:.2f} at the start, {res['load'][1]:.2f} at the end; "
        f"{res['seconds']:.0f} s",
        f"CPU script: {res['cpu_file']} ({res['cpu_tuning']}; build options "
        f"{' '.join(res['cpu_build_options']) or 'none'})",
        f"bandwidth: float4 copy {bw[0]:.1f} / {bw[1]:.1f} GB/s (before / after the rounds); "
        f"compulsory traffic {res['compulsory_bytes'] / 1e9:.4f} GB -> {limit_ms:.1f} ms; "
        f"work {res['gflop']:.3f} GFLOP ({FLOP_PER_POINT} FLOP per (e,k,j,i,n) point)",
        f"OpenCL pow(x, 1.4f) on one value per node: {res['pow_ns']['pow1']:.1f} ns per value "
        f"scalar, {res['pow_ns']['pow8']:.1f} ns per value as float8",
        table(res),
        f"CPU script vs gfortran: {med['gfortran'] / med['CPU script']:.2f}x faster; "
        f"vs gfortran+OpenMP: {med['gfortran+OpenMP'] / med['CPU script']:.2f}x; "
        f"vs the better Fortran build: {best_fortran / med['CPU script']:.2f}x",
    ])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=INT")
    ap.add_argument("--size", action="append", default=[], metavar="NAME=INT")
    ap.add_argument("--cpu", default=str(CPU), help="the CPU script's file")
    ap.add_argument("--no-record", action="store_true",
                    help="ignore the CPU file's tuning record")
    ap.add_argument("--no-untransformed", action="store_true",
                    help="leave out the untransformed kernels (slow)")
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", dest="json_out", default=None)
    opts = ap.parse_args(argv)
    opts.defines = {k: int(v) for k, v in (d.split("=", 1) for d in opts.defines)}
    opts.sizes = {k: int(v) for k, v in (d.split("=", 1) for d in opts.size)}
    opts.defines.setdefault("Nq", 8)
    opts.sizes.setdefault("Ne", 6910)
    res = run(opts)
    print(report(res))
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(res, indent=1))
    return 0 if all(e <= 1e-4 for e in res["errors"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
