"""``f2loopy bench``: time every checkpoint of a file's transformation script.

For each checkpoint (``checkpoint("level 3")`` in the script; the final result
if there are none) the kernel is built and run on the chosen OpenCL device:
a few warm-up launches, then batches of launches until at least ``min_time``
seconds have been timed (as in the Loo.py paper); the reported time is the
median per launch over the batches.  GFLOP/s and GB/s come from the static
counts (:mod:`f2loopy.bench.statistics`).  Results are checked against the
original Fortran built with gfortran when it is available, else against the
first checkpoint on the same device (the table says which).
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics as pystats
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from f2loopy.diagnostics import F2LoopyError
from f2loopy.escape import csv_cell
from f2loopy.ir.folding import tdiv
from f2loopy.bench.launches import launch_geometry  # noqa: F401 - used by tune, benchmarks
from f2loopy.glue.layout import relaid, unrelaid


@dataclass
class BenchRow:
    label: str
    time_ms: float | None
    speedup: float | None
    gflops: float | None          # GFLOP/s
    gbytes: float | None          # GB/s
    flop: int
    bytes: int
    ok: bool | None
    max_rel_error: float | None
    note: str = ""


@dataclass
class BenchReport:
    file: str
    device: str
    sizes: dict
    defines: dict
    reference: str
    rows: list = field(default_factory=list)
    fortran_ms: float | None = None
    fortran_flags: str = ""
    fortran_threads: int | None = None   # OpenMP threads the gfortran reference ran with
    fortran_threads_why: str = ""
    compulsory_bytes: int | None = None
    translate_s: float | None = None
    bandwidth_gbs: float | None = None
    bandwidth_measured: bool = False     # by a copy kernel in the same run

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    def to_csv(self) -> str:
        """The table as CSV (the csv module quotes; labels, which a script
        chose, are :func:`~f2loopy.escape.csv_cell` s)."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["level", "time_ms", "speedup", "gflops", "gbytes_per_s", "gflop",
                         "gbyte", "correct", "max_rel_error"])
        for r in self.rows:
            writer.writerow([csv_cell(r.label)] + [_fmt(x) for x in (
                r.time_ms, r.speedup, r.gflops, r.gbytes, r.flop / 1e9, r.bytes / 1e9,
                r.ok, r.max_rel_error)])
        if self.fortran_ms is not None:
            threads = ("" if self.fortran_threads is None
                       else f", {self.fortran_threads} OpenMP thread(s)")
            writer.writerow([csv_cell(f"gfortran {self.fortran_flags}{threads}"),
                             f"{self.fortran_ms:.6g}"] + [""] * 7)
        return out.getvalue()

    def to_text(self) -> str:
        out = [f"{self.file} on {self.device}",
               "sizes: " + ", ".join(f"{k}={v}" for k, v in {**self.defines,
                                                            **self.sizes}.items()),
               f"correctness checked against {self.reference}", ""]
        out.append(f"{'level':<10} {'time (ms)':>10} {'speedup':>8} {'GFLOP/s':>9} "
                   f"{'GB/s':>8} {'GFLOP':>8} {'GB':>8}  ok")
        for r in self.rows:
            out.append(f"{r.label:<10} {_num(r.time_ms, 4):>10} {_num(r.speedup, 3):>8} "
                       f"{_num(r.gflops, 4):>9} {_num(r.gbytes, 4):>8} {r.flop / 1e9:>8.4g} "
                       f"{r.bytes / 1e9:>8.4g}  {_mark(r)}")
        if self.fortran_ms is not None:
            threads = ("" if self.fortran_threads is None else
                       f", {self.fortran_threads} OpenMP thread"
                       f"{'s' if self.fortran_threads != 1 else ''}: {self.fortran_threads_why}")
            out.append(f"{'gfortran':<10} {_num(self.fortran_ms, 4):>10}   ({self.fortran_flags}"
                       f"{threads}; same machine, same run)")
            last = self.rows[-1] if self.rows else None
            if last and last.time_ms:
                out.append(f"last level vs gfortran: {self.fortran_ms / last.time_ms:.3g}x "
                           "faster" if self.fortran_ms > last.time_ms else
                           f"last level vs gfortran: {last.time_ms / self.fortran_ms:.3g}x slower")
        if self.compulsory_bytes:
            out.append(f"compulsory traffic: {self.compulsory_bytes / 1e9:.4g} GB")
            if self.bandwidth_gbs and self.rows and self.rows[-1].time_ms:
                limit_ms = self.compulsory_bytes / (self.bandwidth_gbs * 1e9) * 1e3
                frac = limit_ms / self.rows[-1].time_ms
                how = " (float4 copy, measured in this run)" if self.bandwidth_measured else ""
                out.append(f"bandwidth limit at {self.bandwidth_gbs:.4g} GB/s{how}: "
                           f"{limit_ms:.4g} ms; "
                           f"last level reaches {frac:.1%} of it "
                           f"({self.rows[-1].time_ms / limit_ms:.3g}x the limit)")
        if self.translate_s is not None:
            out.append(f"translation with the script, all checkpoints generated: "
                       f"{self.translate_s:.3g} s")
        return "\n".join(out) + "\n"


def _fmt(x):
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def _num(x, digits):
    return "-" if x is None else f"{x:.{digits}g}"


def _mark(r: BenchRow) -> str:
    if r.ok is None:
        return "?"
    return "✓" if r.ok else f"✗ (max rel. error {r.max_rel_error:.2g})"


# {{{ inputs

def make_inputs(kernel, sizes: dict, seed: int = 0) -> list:
    """Random arguments for *kernel* (the Fortran argument list): reals in
    [0.5, 1.5] (safe under pow, log, sqrt and division), integers in [1, 4]."""
    from f2loopy.ir.expressions import substitute
    from f2loopy.ir.folding import evaluate_constant
    from f2loopy.ir.kernel import ArrayArg
    rng = np.random.default_rng(seed)
    values = dict(sizes)
    for a in kernel.args:
        if a.fixed_value is not None:
            values[a.name] = a.fixed_value
    args: list = []
    for a in kernel.args:
        dt = np.dtype(a.dtype)
        if isinstance(a, ArrayArg):
            shape_src = a.fortran_layout.shape if a.fortran_layout is not None else a.shape
            shape = []
            for s in shape_src:
                if s is None:
                    raise F2LoopyError(f"argument '{a.name}' has an assumed size; give its "
                                       "length")
                shape.append(int(evaluate_constant(substitute(s, values))))
            if dt.kind in "iu":
                arr = rng.integers(1, 5, size=shape).astype(dt)
            elif dt.kind == "c":
                arr = (rng.uniform(0.5, 1.5, shape) + 1j * rng.uniform(0.5, 1.5, shape)
                       ).astype(dt)
            elif dt.kind == "b":
                arr = rng.integers(0, 2, size=shape).astype(bool)
            else:
                arr = rng.uniform(0.5, 1.5, shape).astype(dt)
            args.append(np.asfortranarray(arr))
        else:
            if a.name in values:
                v = values[a.name]
            elif dt.kind in "iu":
                raise F2LoopyError(f"give a size for '{a.name}' (--size {a.name}=...)")
            else:
                v = rng.uniform(0.5, 1.5)
            args.append(dt.type(v) if dt.kind != "b" else bool(v))
    return args

# }}}


def time_launches(queue, knl, gsize, lsize, min_time, warmup):
    import pyopencl as cl
    for _ in range(warmup):
        cl.enqueue_nd_range_kernel(queue, knl, gsize, lsize)
    queue.finish()
    # calibrate a batch of about 10 ms
    t0 = time.perf_counter()
    cl.enqueue_nd_range_kernel(queue, knl, gsize, lsize)
    queue.finish()
    one = max(time.perf_counter() - t0, 1e-6)
    batch = max(1, int(0.01 / one))
    per_launch: list[float] = []
    total = 0.0
    while total < min_time or len(per_launch) < 3:
        t0 = time.perf_counter()
        for _ in range(batch):
            cl.enqueue_nd_range_kernel(queue, knl, gsize, lsize)
        queue.finish()
        dt = time.perf_counter() - t0
        total += dt
        per_launch.append(dt / batch)
    return pystats.median(per_launch) * 1e3


_COPY_KERNEL = """
__kernel void f2l_copy(__global const float4 *restrict src, __global float4 *restrict dst)
{
    size_t i = get_global_id(0);
    dst[i] = src[i];
}
"""


def measure_copy_bandwidth(queue, *, nbytes: int | None = None, min_time: float = 0.3) -> float:
    """GB/s of a float4 device-to-device copy (bytes read plus bytes
    written per second), the usual measure of attainable memory bandwidth.

    *nbytes* is the size of each of the two buffers: by default 256 MiB, or
    less where the device allows smaller allocations.
    """
    import pyopencl as cl
    dev = queue.device
    if nbytes is None:
        nbytes = min(256 << 20, dev.max_mem_alloc_size // 2, dev.global_mem_size // 4)
    n = max(1, nbytes // 16)
    lsize = 256 if dev.max_work_group_size >= 256 else dev.max_work_group_size
    n -= n % lsize
    mf = cl.mem_flags
    src = cl.Buffer(queue.context, mf.READ_ONLY, 16 * n)
    dst = cl.Buffer(queue.context, mf.WRITE_ONLY, 16 * n)
    cl.enqueue_fill_buffer(queue, src, np.float32(1), 0, 16 * n)
    knl = cl.Program(queue.context, _COPY_KERNEL).build().f2l_copy
    knl.set_args(src, dst)
    ms = time_launches(queue, knl, (n,), (lsize,), min_time, 3)
    return 2 * 16 * n / (ms * 1e-3) / 1e9


def device_args(gk, host_args, queue):
    """Device buffers for the kernel's OpenCL arguments (layouts converted)."""
    import pyopencl as cl
    from f2loopy.glue.python import slowest_first
    bufs = []
    mf = cl.mem_flags
    for ka, value in zip(gk.arguments, host_args, strict=True):
        if ka.kind == "fixed":
            continue
        if ka.kind == "value":
            bufs.append(np.dtype(ka.dtype).type(value))
            continue
        if ka.kind == "scalar_ref":
            arr = np.array([value], dtype=ka.dtype)
        else:
            arr = value
            layout = ka.ir_arg.fortran_layout
            if layout is not None:
                arr = relaid(arr, layout.splits, slowest_first(ka.ir_arg))
            if arr.dtype == np.bool_:
                arr = arr.astype(np.int32)
        bufs.append(cl.Buffer(queue.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=arr))
    if gk.scratch:
        from f2loopy.glue.pyexpr import py_int_expr
        values = {ka.name: v for ka, v in zip(gk.arguments, host_args, strict=True)
                  if not hasattr(v, "shape") or np.ndim(v) == 0}
        values.update({a.name: a.fixed_value for a in gk.kernel.args
                       if a.fixed_value is not None})
        for sb in gk.scratch:
            n = int(eval(py_int_expr(sb.elements),  # noqa: S307 - our own expression
                         {"_tdiv": tdiv, "min": min, "max": max}, values))
            bufs.append(cl.Buffer(queue.context, mf.READ_WRITE, size=max(1, n * sb.itemsize)))
    return bufs


def run_bench(path, *, defines=None, sizes=None, min_time=0.3, warmup=3, seed=0,
              queue=None, fortran=True, bandwidth_gbs=None, build_options=None,
              progress=None, transform=None, include_dirs=(),
              kernel: str | None = None, cpp: bool | None = None,
              default_real_kind: int = 4) -> BenchReport:
    """Translate *path*, then build, check against the reference and time each
    stage's kernel (the script's checkpoints and its result) on *queue*.
    *default_real_kind* 8: gfortran's ``-fdefault-real-8 -fdefault-double-8``,
    for the translation and the gfortran reference."""
    import pyopencl as cl

    from f2loopy.pipeline import TranslateOptions, translate_file
    defines = dict(defines or {})
    sizes = dict(sizes or {})
    t0 = time.perf_counter()
    result = translate_file(path, TranslateOptions(defines=defines, transform=transform,
                                                   include_dirs=include_dirs, cpp=cpp,
                                                   default_real_kind=default_real_kind))
    stages = _bench_stages(result, kernel, path)
    # the translation's code of every stage (a script's: the sandbox child's)
    transformed = result.transformed
    if transformed is None:             # (translated here, never from the cache)
        raise RuntimeError("bench: the translation has no transformed kernels")
    generated = [(label, [transformed.code_of(k) for k in ks]) for label, ks in stages]
    translate_s = time.perf_counter() - t0
    if queue is None:
        ctx = cl.create_some_context(interactive=False)
        queue = cl.CommandQueue(ctx)
    device = queue.device.name.strip()
    measured = bandwidth_gbs == "measure"
    if measured:
        bandwidth_gbs = measure_copy_bandwidth(queue, min_time=min_time)
    report = BenchReport(str(path), device, sizes, defines, "", translate_s=translate_s,
                         bandwidth_gbs=bandwidth_gbs, bandwidth_measured=measured)

    ref_outputs = _reference_outputs(report, result, stages[0][1][0], sizes, seed, fortran,
                                     default_real_kind)
    for label, gks in generated:
        if len(gks) != 1:
            raise F2LoopyError(f"checkpoint '{label}' has {len(gks)} kernels "
                               f"({', '.join(g.kernel.name for g in gks)}); bench times one "
                               "kernel per checkpoint: choose one with --kernel NAME")
        if progress:
            progress(label)
        row, outputs = _bench_row(label, gks[0], queue, sizes, seed, build_options, ref_outputs,
                                  min_time, warmup)
        if ref_outputs is None:
            ref_outputs = outputs
        report.rows.append(row)
    base = report.rows[0].time_ms if report.rows else None
    for r in report.rows:
        r.speedup = base / r.time_ms if base and r.time_ms else None
    try:
        report.compulsory_bytes = scale_compulsory(stages[-1][1][0], sizes)
    except Exception:           # counting is informative only
        report.compulsory_bytes = None
    return report


def _bench_stages(result, kernel: str | None, path) -> list:
    """The (label, kernels) stages bench times: the script's checkpoints and
    its result, only *kernel*'s where one is named."""
    stages = list(result.checkpoints)
    if not stages or list(stages[-1][1]) != list(result.kernels):
        # the script's result, unless its last checkpoint is that kernel already
        stages.append(("final", list(result.kernels)))
    if kernel is not None:
        # one kernel of a file that holds several: the script still sees them all
        names = sorted({k.name for _, ks in stages for k in ks})
        stages = [(label, [k for k in ks if k.name.lower() == kernel.lower()])
                  for label, ks in stages]
        stages = [(label, ks) for label, ks in stages if ks]
        if not stages:
            raise F2LoopyError(f"--kernel {ascii(kernel)[1:-1]}: no kernel of that name in {path} "
                               f"(its kernels: {', '.join(names)})")
    return stages


def _reference_outputs(report: BenchReport, result, first_kernel, sizes, seed, fortran,
                       real_kind: int = 4):
    """The reference outputs: gfortran's run of the original subroutines
    (recorded in *report*), else None (the first stage becomes the reference)."""
    original = None
    host_args = make_inputs(first_kernel, sizes, seed)
    if fortran:
        try:
            original = _fortran_reference(result, first_kernel, host_args, real_kind)
        except F2LoopyError as exc:
            report.reference = f"the first checkpoint on this device (gfortran: {exc.message})"
    if original is not None:
        ref_outputs, report.fortran_ms, report.fortran_flags = original
        report.fortran_threads, report.fortran_threads_why = openmp_threads(
            Path(result.source_path).read_text(encoding="utf-8", errors="replace"))
        report.reference = "the original Fortran built with gfortran"
        return ref_outputs
    if not report.reference:
        report.reference = "the first checkpoint on this device"
    return None


def _bench_row(label, gk, queue, sizes, seed, build_options, ref_outputs, min_time, warmup):
    """Build one stage's kernel, check it once against *ref_outputs* (itself
    when None) and time it: its row and its outputs."""
    import pyopencl as cl

    from f2loopy.bench.statistics import kernel_statistics
    from f2loopy.codegen import join_program
    options = list(build_options if build_options is not None else gk.build_options)
    values = {**sizes, **{a.name: a.fixed_value for a in gk.kernel.args
                          if a.fixed_value is not None}}
    if gk.specialized:
        # compiled per value of these arguments (runtime specialisation)
        from f2loopy.codegen import specialization_options
        missing = [n for n, _ in gk.specialized if n not in values]
        if missing:
            raise F2LoopyError(f"kernel '{gk.kernel.name}' is compiled per value of "
                               f"'{missing[0]}': give it with --size {missing[0]}=N")
        options += list(specialization_options(gk.specialized, values))
    prg = cl.Program(queue.context, join_program([gk])).build(options=options)
    args = make_inputs(gk.kernel, sizes, seed)
    from f2loopy.bench.launches import launcher, time_calls
    # correctness: one run on fresh inputs through the glue's layout handling
    bufs = device_args(gk, args, queue)
    launcher(gk, prg, bufs, values, queue)(queue)
    queue.finish()
    outputs = read_outputs(gk, bufs, args, queue)
    ok, err = _compare(outputs, outputs if ref_outputs is None else ref_outputs)
    # timing
    bufs = device_args(gk, args, queue)
    ms = time_calls(queue, launcher(gk, prg, bufs, values, queue), min_time, warmup)
    st = kernel_statistics(gk.kernel, sizes, formulas=False)
    return BenchRow(label, ms, None, st.flops / (ms * 1e-3) / 1e9, st.bytes / (ms * 1e-3) / 1e9,
                    st.flops, st.bytes, ok, err), outputs


def scale_compulsory(kernel, sizes):
    """Compulsory bytes at *sizes*, from exact counts at small sizes (the count
    is a polynomial of degree at most 3 in each size)."""
    from fractions import Fraction

    from f2loopy.bench.statistics import compulsory_bytes
    names = list(sizes)
    if not names:
        return compulsory_bytes(kernel, {})
    if len(names) > 1:
        return compulsory_bytes(kernel, sizes)
    n = names[0]
    xs = [1, 2, 3, 4]
    ys = [compulsory_bytes(kernel, {n: x}) for x in xs]
    x = sizes[n]
    total = Fraction(0)
    for i, xi in enumerate(xs):
        term = Fraction(ys[i])
        for j, xj in enumerate(xs):
            if j != i:
                term *= Fraction(x - xj, xi - xj)
        total += term
    return int(total)


def run_once(gk, knl, args, queue, gsize, lsize):
    import pyopencl as cl
    bufs = device_args(gk, args, queue)
    knl.set_args(*bufs)
    if all(g > 0 for g in gsize):
        cl.enqueue_nd_range_kernel(queue, knl, gsize, lsize)
    queue.finish()
    return read_outputs(gk, bufs, args, queue)


def read_outputs(gk, bufs, args, queue) -> dict:
    """The values of the arguments *gk* writes, from its buffers *bufs*
    (:func:`device_args`) after a run on the host arguments *args*."""
    import pyopencl as cl
    outputs = {}
    k = 0
    from f2loopy.glue.python import slowest_first
    for ka, value in zip(gk.arguments, args, strict=True):
        if ka.kind == "fixed":
            continue
        buf = bufs[k]
        k += 1
        if not ka.written:
            continue
        if ka.kind == "scalar_ref":
            host = np.empty(1, dtype=ka.dtype)
            cl.enqueue_copy(queue, host, buf)
            outputs[ka.name] = host[0]
            continue
        layout = ka.ir_arg.fortran_layout
        if layout is not None:
            perm = slowest_first(ka.ir_arg)
            dev = np.empty(relaid(value, layout.splits, perm).shape, dtype=ka.dtype)
            cl.enqueue_copy(queue, dev, buf)
            host = np.empty_like(value)
            unrelaid(dev, host, layout.splits, perm)
        else:
            host = np.empty_like(value if value.dtype != np.bool_ else value.astype(np.int32))
            cl.enqueue_copy(queue, host, buf)
        outputs[ka.name] = host
    queue.finish()
    return outputs


def _compare(got: dict, want: dict):
    worst = 0.0
    for name, w in want.items():
        g = got.get(name)
        if g is None:
            continue
        w_a = np.asarray(w, dtype=np.float64) if np.asarray(w).dtype.kind != "c" else \
            np.asarray(w)
        g_a = np.asarray(g).astype(w_a.dtype)
        scale = float(np.max(np.abs(w_a))) if w_a.size else 0.0
        if not np.all(np.isfinite(g_a)) and np.all(np.isfinite(w_a)):
            return False, math.inf
        err = float(np.max(np.abs(g_a - w_a))) / scale if scale else \
            float(np.max(np.abs(g_a - w_a), initial=0.0))
        worst = max(worst, err)
    tol = 1e-4 if any(np.asarray(w).dtype in (np.float32, np.complex64)
                      for w in want.values()) else 1e-10
    return worst <= tol, worst


def openmp_threads(fortran_text: str, environ=None) -> tuple[int, str]:
    """How many OpenMP threads the reference built with ``-fopenmp`` runs
    on, and why: one where the file has no ``!$omp`` directive (nothing runs
    in parallel), else ``OMP_NUM_THREADS`` when set, else gfortran's default,
    one per CPU this process may use."""
    import os
    import re
    environ = os.environ if environ is None else environ
    if not re.search(r"^[ \t]*!\$omp", fortran_text, re.IGNORECASE | re.MULTILINE):
        return 1, "the file has no !$omp directive"
    value = environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if value.isdigit() and 0 < int(value) < 100000:
        return int(value), "OMP_NUM_THREADS"
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus, "one per CPU (OMP_NUM_THREADS unset)"


def _fortran_reference(result, kernel, host_args, real_kind: int = 4):
    """Outputs and time of the original subroutines (gfortran -O3
    -march=native -fopenmp) on *host_args*, called in sequence for a fused
    kernel."""
    import copy
    import shutil

    from f2loopy.frontend import parse_fortran
    from f2loopy.verify.fortran import FortranLibrary
    if shutil.which("gfortran") is None:
        raise F2LoopyError("gfortran not found")
    from f2loopy.regular_files import read_regular_text
    name = Path(result.source_path).name.replace(".floopy", ".f90")
    pp = result.parsed.preprocessed if result.parsed is not None else None
    if pp is not None:
        # as the translation read it (-cpp, -D): built as the preprocessed text
        text = pp.text
        name = Path(name).stem + Path(name).suffix.lower()
    else:
        try:
            text = read_regular_text(result.source_path)
        except OSError as exc:
            raise F2LoopyError(f"cannot read {result.source_path}: {exc.strerror or exc}") \
                from None
    tu = parse_fortran(text, str(result.source_path), default_real_kind=real_kind)
    names = _original_sequence(kernel.name, tu.keys())
    from f2loopy.kind_flags import kind_flags
    flags = ("-O3", "-march=native", "-fopenmp", *kind_flags(real_kind))
    lib = FortranLibrary(text, tu.kernels, filename=name, flags=flags)
    by_name = {a.name: v for a, v in zip(kernel.args, host_args, strict=True)}

    def call_all(values):
        for n in names:
            k = tu[n]
            args = [values[a.name] for a in k.fortran_args]
            out = lib.call(n, args)
            for a, v in zip(k.fortran_args, out, strict=True):
                if not hasattr(v, "shape") or v.shape == ():
                    values[a.name] = v
        return values

    values = call_all(copy.deepcopy(by_name))
    outputs = {}
    written = set().union(*(tu[n].written_variables() for n in names))
    for a in kernel.args:
        if a.name in written:
            outputs[a.name] = values[a.name]
    # timing: repeat for at least 0.3 s
    reps, total, times = 0, 0.0, []
    work = copy.deepcopy(by_name)
    while total < 0.3 or reps < 3:
        t0 = time.perf_counter()
        call_all(work)
        dt = time.perf_counter() - t0
        times.append(dt)
        total += dt
        reps += 1
    return outputs, pystats.median(times) * 1e3, " ".join(flags)


def _original_sequence(name: str, originals) -> list[str]:
    """The original subroutines a (possibly fused) kernel stands for."""
    originals = list(originals)
    if name in originals:
        return [name]
    # fuse_kernels names the result a_b_c after its parts
    for k in range(2, len(originals) + 1):
        for combo in _sequences(originals, k):
            if "_".join(combo) == name:
                return list(combo)
    raise F2LoopyError(f"cannot tell which original subroutines kernel '{name}' stands for")


def _sequences(items, k):
    import itertools
    return itertools.permutations(items, k)
