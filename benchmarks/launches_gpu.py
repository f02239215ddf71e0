"""Launch overhead of f2loopy's host loops, and the time-stepped PolyBench
samples against PolyBench/GPU's CUDA, measured in one run.

    python3 benchmarks/launches_gpu.py [--fortran EXE] [--cuda DIR] [--json FILE]

What it times (every number the median of several repeats, after a call not
timed that builds the program):

* per-launch overhead: samples/polybench/jacobi_2d.f90 translated with
  ``--transform auto`` (its time loop runs on the host, two launches per
  step) at n = 16 (one work-group per launch), called with T1 and T2 steps;
  the time per launch is (t(T2) - t(T1)) / (2 (T2 - T1)), so the call's fixed
  costs cancel.  For the Python glue (arrays as pyopencl arrays: nothing is
  copied), the Fortran glue (``--fortran``: benchmarks/launches/, arrays
  device-resident) and, as floors in the same run, pyopencl alone on the same
  two kernels (arguments set once, a loop of enqueues), the same loop
  waiting for each launch (``queue.finish()``, as PolyBench/GPU's CUDA does),
  and clEnqueueNDRangeKernel called through ctypes without an event (what a
  launch costs the host without pyopencl's wrapper and Event object).
* PolyBench/GPU's sizes: jacobi-2d n = 1000, 20 steps; fdtd-2d 2048 x 2048,
  500 steps, in double precision (the samples; both glues) and single
  precision (the samples with ``real`` for ``double precision``; the Python
  glue), each against PolyBench/GPU's CUDA in the same precision (``--cuda
  DIR``: executables jacobi2D_double, fdtd2d_double, built with
  -DDATA_TYPE=double, and the float originals jacobi2D_float, fdtd2d_float,
  built by the caller from the public sgrauerg/polybenchGpu sources with its
  CPU run left out; their "GPU Time in seconds", which covers the time loop
  with a synchronisation after each kernel).  jacobi-2d's results are checked
  against numpy at that size (double: equal), fdtd-2d's at 200 x 160, 30 steps.

The device: PYOPENCL_CTX if set, else the first GPU, else the first device.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "polybench"


def queue_of_choice():
    import pyopencl as cl
    if os.environ.get("PYOPENCL_CTX"):
        ctx = cl.create_some_context(interactive=False)
    else:
        devices = [d for p in cl.get_platforms() for d in p.get_devices()]
        gpus = [d for d in devices if d.type & cl.device_type.GPU]
        ctx = cl.Context([(gpus or devices)[0]])
    return cl.CommandQueue(ctx)


def single_precision(text: str) -> str:
    """A sample in single precision: ``real`` for ``double precision``, its
    ``d0`` constants without exponent letter (default real), as PolyBench/GPU's
    float CUDA computes."""
    text = text.replace("double precision", "real")
    return re.sub(r"(\d+\.\d*)d0\b", r"\1", text)


def translate(out: Path) -> dict:
    """The glue modules of jacobi_2d.f90 and fdtd_2d.f90 (--transform auto),
    and of their single-precision variants (modules jacobi_2d_f32_cl, fdtd_2d_f32_cl)."""
    files = []
    for name in ("jacobi_2d", "fdtd_2d"):
        text = (SAMPLES / f"{name}.f90").read_text()
        (out / f"{name}.f90").write_text(text)
        (out / f"{name}_f32.f90").write_text(single_precision(text))
        files += [str(out / f"{name}.f90"), str(out / f"{name}_f32.f90")]
    subprocess.run([sys.executable, "-m", "f2loopy.cli", "translate", "--transform", "auto",
                    "-o", str(out), *files], check=True, cwd=ROOT)
    mods = {}
    for name in ("jacobi_2d_cl", "fdtd_2d_cl", "jacobi_2d_f32_cl", "fdtd_2d_f32_cl"):
        spec = importlib.util.spec_from_file_location(name, out / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mods[name] = mod
    return mods


def median_time(run, queue, repeats: int) -> float:
    run()
    queue.finish()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        queue.finish()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# {{{ reference results (numpy)

def jacobi_init(n, dtype=np.float64):
    i = np.arange(n)[:, None]
    j = np.arange(1, n + 1)[None, :]
    a = np.asfortranarray((i * (j + 1) + 2) / n, dtype=dtype)
    b = np.asfortranarray((i * (j + 2) + 3) / n, dtype=dtype)
    return a, b


def jacobi_numpy(steps, a, b):
    a, b = a.copy(), b.copy()
    c = a.dtype.type(0.2)
    for _ in range(steps):
        b[1:-1, 1:-1] = c * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2]
                               + a[1:-1, 2:])
        a[1:-1, 1:-1] = c * (b[1:-1, 1:-1] + b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2]
                               + b[1:-1, 2:])
    return a, b


def fdtd_init(nx, ny, tmax, dtype=np.float64):
    i = np.arange(nx)[:, None]
    j = np.arange(1, ny + 1)[None, :]
    ex = np.asfortranarray(i * j / nx, dtype=dtype)
    ey = np.asfortranarray(i * (j + 1) / ny, dtype=dtype)
    hz = np.asfortranarray(i * (j + 2) / nx, dtype=dtype)
    return np.arange(tmax, dtype=dtype), ex, ey, hz


def fdtd_numpy(fict, ex, ey, hz):
    ex, ey, hz = ex.copy(), ey.copy(), hz.copy()
    for t in range(len(fict)):
        ey[0, :] = fict[t]
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1]
                                             - ey[:-1, :-1])
    return ex, ey, hz

# }}}


def raw_enqueue(queue, kernels, gs, ls):
    """A loop enqueueing *kernels* in turn through the OpenCL library itself
    (ctypes), asking for no event: what a launch costs without pyopencl's
    wrapper and Event.  None where no OpenCL library is found."""
    import ctypes
    import ctypes.util
    import glob

    import pyopencl
    here = os.path.dirname(pyopencl.__file__)
    names = sorted(glob.glob(os.path.join(here, os.pardir, "pyopencl.libs", "libOpenCL*")))
    names.append(ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        return None
    enqueue = lib.clEnqueueNDRangeKernel
    enqueue.restype = ctypes.c_int32
    enqueue.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p,
                        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p,
                        ctypes.c_void_p]
    g, loc = (ctypes.c_size_t * 3)(*gs), (ctypes.c_size_t * 3)(*ls)
    q = queue.int_ptr
    handles = [k.int_ptr for k in kernels]
    if enqueue(q, handles[0], 3, None, g, loc, 0, None, None) != 0:
        return None
    queue.finish()

    def run(steps):
        for _ in range(steps):
            for k in handles:
                enqueue(q, k, 3, None, g, loc, 0, None, None)
    return run


def run_fortran(exe, args, repeats):
    proc = subprocess.run([exe, *map(str, args), str(repeats)], capture_output=True,
                          text=True, check=True, timeout=600)
    times = [float(line.split()[1]) for line in proc.stdout.splitlines()
             if line.startswith("seconds ")]
    if len(times) != repeats:
        raise RuntimeError(f"{exe}: unexpected output:\n{proc.stdout}\n{proc.stderr}")
    return statistics.median(times)


def run_cuda(exe, repeats):
    """Median of PolyBench/GPU's 'GPU Time in seconds' over *repeats* runs."""
    times = []
    env = dict(os.environ, CUDA_MODULE_LOADING="EAGER")
    for _ in range(repeats):
        proc = subprocess.run([exe], capture_output=True, text=True, check=True, timeout=600,
                              env=env)
        lines = proc.stdout.splitlines()
        k = lines.index("GPU Time in seconds:")
        times.append(float(lines[k + 1]))
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fortran", help="the Fortran driver (benchmarks/launches/)")
    ap.add_argument("--cuda", help="folder of PolyBench/GPU's CUDA executables")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", help="write the numbers here too")
    ap.add_argument("--quick", action="store_true",
                    help="small sizes and few steps (to try the script on a CPU)")
    args = ap.parse_args(argv)
    import pyopencl as cl
    import pyopencl.array as cla

    queue = queue_of_choice()
    dev = queue.device
    results: dict = {"device": f"{dev.name.strip()} ({dev.platform.name.strip()})"}
    print(f"device: {results['device']}", flush=True)
    rep = args.repeats
    with tempfile.TemporaryDirectory() as tmp:
        mods = translate(Path(tmp))
        jac = mods["jacobi_2d_cl"].jacobi_2d

        # {{{ launch overhead: jacobi-2d at n = 16, T1 and T2 steps
        n, t1, t2 = (16, 50, 250) if args.quick else (16, 1000, 5000)
        a, b = jacobi_init(n)
        da, db = cla.to_device(queue, a), cla.to_device(queue, b)
        per_launch = {}
        glue = [median_time(lambda t=t: jac(t, n, da, db, queue=queue), queue, rep)
                for t in (t1, t2)]
        per_launch["Python glue"] = (glue[1] - glue[0]) / (2 * (t2 - t1))
        k1 = mods["jacobi_2d_cl"]._kernel(queue, "jacobi_2d_phase1", ())
        k2 = mods["jacobi_2d_cl"]._kernel(queue, "jacobi_2d_phase2", ())
        n32 = np.int32(n)
        for k in (k1, k2):
            k.set_args(n32, n32, da.data, db.data, np.int32(1))
        gs, ls = (32, 16, 1), (32, 8, 1)

        def enqueues(steps, wait):
            for _ in range(steps):
                cl.enqueue_nd_range_kernel(queue, k1, gs, ls)
                if wait:
                    queue.finish()
                cl.enqueue_nd_range_kernel(queue, k2, gs, ls)
                if wait:
                    queue.finish()
        for label, wait in (("pyopencl alone (enqueues only)", False),
                            ("pyopencl, waiting for each launch", True)):
            tt = [median_time(lambda t=t: enqueues(t, wait), queue, rep) for t in (t1, t2)]
            per_launch[label] = (tt[1] - tt[0]) / (2 * (t2 - t1))
        raw = raw_enqueue(queue, (k1, k2), gs, ls)
        if raw is not None:
            tt = [median_time(lambda t=t: raw(t), queue, rep) for t in (t1, t2)]
            per_launch["clEnqueueNDRangeKernel through ctypes, no event"] = \
                (tt[1] - tt[0]) / (2 * (t2 - t1))
        if args.fortran:
            tt = [run_fortran(args.fortran, ["jacobi", n, t], rep) for t in (t1, t2)]
            per_launch["Fortran glue"] = (tt[1] - tt[0]) / (2 * (t2 - t1))
        results["per_launch_us"] = {k: v * 1e6 for k, v in per_launch.items()}
        print(f"\nPer-launch time, jacobi-2d n = {n} (one work-group a launch), "
              f"(t({t2} steps) - t({t1} steps)) / {2 * (t2 - t1)} launches:\n")
        print("| host loop | us per launch |\n|---|---|")
        for k, v in per_launch.items():
            print(f"| {k} | {v * 1e6:.2f} |")
        # }}}

        # {{{ PolyBench/GPU sizes, in double (the samples) and single precision
        rows = []
        for prec, dtype, suffix in (("double", np.float64, ""), ("float", np.float32, "_f32")):
            jac_p = getattr(mods[f"jacobi_2d{suffix}_cl"], "jacobi_2d")
            fdtd_p = getattr(mods[f"fdtd_2d{suffix}_cl"], "fdtd_2d")
            tol = dict(rtol=1e-12, atol=1e-9) if prec == "double" else dict(rtol=1e-4, atol=1e-3)
            n, steps = (200, 20) if args.quick else (1000, 20)
            a, b = jacobi_init(n, dtype)
            da, db = cla.to_device(queue, a), cla.to_device(queue, b)
            jac_p(steps, n, da, db, queue=queue)
            ra, rb = jacobi_numpy(steps, a, b)
            ok = np.allclose(da.get(), ra, **tol) and np.allclose(db.get(), rb, **tol)
            if prec == "double":   # the same operations in the same order: equal
                ok = np.array_equal(da.get(), ra) and np.array_equal(db.get(), rb)
            row = {"kernel": "jacobi-2d", "precision": prec, "sizes": f"n={n} tsteps={steps}",
                   "launches": 2 * steps, "checked": bool(ok),
                   "python_s": median_time(lambda: jac_p(steps, n, da, db, queue=queue), queue,
                                           rep)}
            if args.fortran and prec == "double":
                row["fortran_s"] = run_fortran(args.fortran, ["jacobi", n, steps], rep)
            if args.cuda:
                row["cuda_s"] = run_cuda(Path(args.cuda) / f"jacobi2D_{prec}", rep)
            rows.append(row)

            fict, ex, ey, hz = fdtd_init(200, 160, 30, dtype)
            dex, dey, dhz = (cla.to_device(queue, x) for x in (ex, ey, hz))
            fdtd_p(30, 200, 160, cla.to_device(queue, fict), dex, dey, dhz, queue=queue)
            ref = fdtd_numpy(fict, ex, ey, hz)
            ok = all(np.allclose(d.get(), r, **tol) for d, r in zip((dex, dey, dhz), ref, strict=True))
            nx, ny, tmax = (256, 256, 20) if args.quick else (2048, 2048, 500)
            fict, ex, ey, hz = fdtd_init(nx, ny, tmax, dtype)
            dfict = cla.to_device(queue, fict)
            dex, dey, dhz = (cla.to_device(queue, x) for x in (ex, ey, hz))
            few = max(3, rep // 2)
            row = {"kernel": "fdtd-2d", "precision": prec,
                   "sizes": f"nx={nx} ny={ny} tmax={tmax}", "launches": 3 * tmax,
                   "checked": bool(ok),
                   "python_s": median_time(lambda: fdtd_p(tmax, nx, ny, dfict, dex, dey, dhz,
                                                          queue=queue), queue, few)}
            if args.fortran and prec == "double":
                row["fortran_s"] = run_fortran(args.fortran, ["fdtd", nx, ny, tmax], few)
            if args.cuda:
                row["cuda_s"] = run_cuda(Path(args.cuda) / f"fdtd2d_{prec}", few)
            rows.append(row)
        results["polybench"] = rows
        # }}}

    print("\nPolyBench/GPU sizes (ms; ratio = f2loopy / PolyBench/GPU's CUDA in the same "
          "precision):\n")
    print("| kernel | precision | sizes | launches | checked | Python glue | Fortran glue | "
          "CUDA | Python / CUDA | Fortran / CUDA |")
    print("|---|---|---|---|---|---|---|---|---|---|")

    def ms(x):
        return "-" if x is None else f"{x * 1e3:.3f}"

    def ratio(x, y):
        return "-" if x is None or not y else f"{x / y:.2f}"
    for r in rows:
        cu = r.get("cuda_s")
        print(f"| {r['kernel']} | {r['precision']} | {r['sizes']} | {r['launches']} | "
              f"{'yes' if r['checked'] else 'NO'} | {ms(r['python_s'])} | "
              f"{ms(r.get('fortran_s'))} | {ms(cu)} | "
              f"{ratio(r['python_s'], cu)} | {ratio(r.get('fortran_s'), cu)} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0 if all(r["checked"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
