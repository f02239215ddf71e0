"""The paper's levels on one GPU: f2loopy beside loopy, and a tuned level 8
against the bandwidth limit, all in one run (issue 19).

Times, on the OpenCL device that ``PYTHONPATH``/``PYOPENCL_CTX`` select:

* a float4 copy (the bandwidth limit: the compulsory traffic of the kernel,
  every array element read or written once, at the copy's GB/s);
* f2loopy's code for the chosen levels of ``samples/numa_volume/volume.f90``
  (the paper's script as printed; no tuning record);
* loopy's code for the same levels, if ``--loopy FILE`` names the JSON that
  ``benchmarks/loopy_paper_kernels.py`` wrote (loopy's kernels, generated on
  any machine);
* the final kernel of ``--tuned FILE`` as ``f2loopy translate`` makes it (with
  its tuning record, e.g. ``volume_tunable.f90`` after ``f2loopy tune``).

Every kernel runs on the same input values (f2loopy's layout of them; loopy's
kernels of a level get the bytes of f2loopy's kernel of that level, since the
script gives both the same layout).  Each f2loopy kernel's result is compared
with level 1's (Fortran order), each loopy kernel's raw result with f2loopy's
of the same level.  Timing: warm-up, batches of back-to-back launches for at
least ``--min-time`` s, median batch; ``--rounds`` rounds over all kernels,
median of the rounds.  Run::

    python3 benchmarks/paper_gpu.py -D Nq=8 --size Ne=6910 --loopy loopy.json \\
        --tuned samples/numa_volume/volume_tunable.f90 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
PAPER = REPO / "samples" / "numa_volume" / "volume.f90"


class F2Kernel:
    """An f2loopy kernel built, with its device buffers and raw host bytes."""

    def __init__(self, label, gk, inputs, sizes, queue):
        import pyopencl as cl

        from f2loopy.bench.run import device_args, launch_geometry
        from f2loopy.codegen import join_program
        from f2loopy.glue.layout import relaid
        from f2loopy.glue.python import slowest_first
        self.label, self.gk, self.queue = label, gk, queue
        self.args = [inputs[a.name] if a.name in inputs else getattr(a, "fixed_value", None)
                     for a in gk.kernel.args]
        prg = cl.Program(queue.context, join_program([gk])).build(options=list(gk.build_options))
        self.knl = cl.Kernel(prg, gk.c_name)
        values = {**sizes, **{a.name: a.fixed_value for a in gk.kernel.args
                              if getattr(a, "fixed_value", None) is not None}}
        self.gsize, self.lsize = launch_geometry(gk, values)
        self.host_bytes = {}          # name -> bytes as the kernel reads them
        for ka, value in zip(gk.arguments, self.args, strict=True):
            if ka.kind != "array":
                continue
            arr = value
            layout = getattr(ka.ir_arg, "fortran_layout", None)
            if layout is not None:
                arr = relaid(arr, layout.splits, slowest_first(ka.ir_arg))
            # memory order, as pyopencl copies a host buffer
            self.host_bytes[ka.name] = arr.tobytes(order="A")
        self.bufs = device_args(gk, self.args, queue)
        self.knl.set_args(*self.bufs)

    def raw_output(self, name):
        """Run once on fresh copies of the inputs; the raw bytes of *name*."""
        import pyopencl as cl

        from f2loopy.bench.run import device_args
        bufs = device_args(self.gk, self.args, self.queue)
        self.knl.set_args(*bufs)
        cl.enqueue_nd_range_kernel(self.queue, self.knl, self.gsize, self.lsize)
        names = [ka.name for ka in self.gk.arguments if ka.kind != "fixed"]
        out = np.empty(len(self.host_bytes[name]), dtype=np.uint8)
        cl.enqueue_copy(self.queue, out, bufs[names.index(name)])
        self.queue.finish()
        self.knl.set_args(*self.bufs)
        return out

    def fortran_outputs(self):
        from f2loopy.bench.run import run_once
        outs = run_once(self.gk, self.knl, self.args, self.queue, self.gsize, self.lsize)
        self.knl.set_args(*self.bufs)
        return outs

    def time(self, min_time):
        from f2loopy.bench.run import time_launches
        return time_launches(self.queue, self.knl, self.gsize, self.lsize, min_time, 3)


class LoopyKernel:
    """One of loopy's kernels from the JSON, on the bytes of an f2loopy kernel."""

    def __init__(self, label, entry, like: F2Kernel, queue):
        import pyopencl as cl
        self.label, self.queue = label, queue
        prg = cl.Program(queue.context, entry["source"]).build()
        self.knl = cl.Kernel(prg, entry["name"])
        self.gsize, self.lsize = tuple(entry["global_size"]), tuple(entry["local_size"])
        self.entry, self.like = entry, like
        self.notes = entry.get("notes", [])
        self.bufs = self._buffers()
        self.knl.set_args(*self.bufs)

    def _buffers(self):
        import pyopencl as cl
        mf = cl.mem_flags
        out = []
        for a in self.entry["args"]:
            if a["kind"] == "scalar":
                out.append(np.dtype(a["dtype"]).type(a["value"]))
                continue
            data = self.like.host_bytes.get(a["name"])
            if data is None or len(data) != a["nbytes"]:
                raise SystemExit(f"loopy's {self.label}: argument {a['name']} has no f2loopy "
                                 "buffer of its size (different layouts?)")
            out.append(cl.Buffer(self.queue.context, mf.READ_WRITE | mf.COPY_HOST_PTR,
                                 hostbuf=np.frombuffer(data, dtype=np.uint8).copy()))
        return out

    def raw_output(self, name):
        import pyopencl as cl
        bufs = self._buffers()
        self.knl.set_args(*bufs)
        cl.enqueue_nd_range_kernel(self.queue, self.knl, self.gsize, self.lsize)
        k = [a["name"] for a in self.entry["args"]].index(name)
        out = np.empty(self.entry["args"][k]["nbytes"], dtype=np.uint8)
        cl.enqueue_copy(self.queue, out, bufs[k])
        self.queue.finish()
        self.knl.set_args(*self.bufs)
        return out

    def time(self, min_time):
        from f2loopy.bench.run import time_launches
        return time_launches(self.queue, self.knl, self.gsize, self.lsize, min_time, 3)


def _rel_error(got, want) -> float:
    g = np.asarray(got, dtype=np.float64)
    w = np.asarray(want, dtype=np.float64)
    if not np.all(np.isfinite(g)):
        return float("inf")
    scale = float(np.max(np.abs(w))) or 1.0
    return float(np.max(np.abs(g - w))) / scale


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=INT")
    ap.add_argument("--size", action="append", default=[], metavar="NAME=INT")
    ap.add_argument("--levels", nargs="*", default=["level 1", "level 5", "level 7", "level 8"])
    ap.add_argument("--loopy", default=None, help="JSON from loopy_paper_kernels.py")
    ap.add_argument("--tuned", default=None, help="a file translated with its tuning record")
    ap.add_argument("--min-time", type=float, default=0.4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", dest="json_out", default=None)
    opts = ap.parse_args(argv)
    import pyopencl as cl

    from f2loopy.bench.run import scale_compulsory, make_inputs, measure_copy_bandwidth
    from f2loopy.codegen import generate_code
    from f2loopy.pipeline import translate_file
    defines = {k: int(v) for k, v in (d.split("=", 1) for d in opts.defines)}
    sizes = {k: int(v) for k, v in (d.split("=", 1) for d in opts.size)}
    queue = cl.CommandQueue(cl.create_some_context(interactive=False))
    device = f"{queue.device.name.strip()} ({queue.device.platform.name.strip()})"

    paper = translate_file(PAPER, defines=defines, tuning=False)
    cps = dict(paper.checkpoints)
    first = cps[opts.levels[0]][0]
    inputs = dict(zip([a.name for a in first.args], make_inputs(first, sizes, seed=0), strict=True))
    rows = []                  # (group, label, kernel object)
    f2 = {}
    for label in opts.levels:
        f2[label] = F2Kernel(label, generate_code(cps[label][0]), inputs, sizes, queue)
        rows.append(("f2loopy", label, f2[label]))
    tuned_note = None
    if opts.tuned:
        tuned = translate_file(opts.tuned, defines=defines)
        tuned_note = "; ".join(tuned.notes) or "no tuning record matched: untuned"
        rows.append(("f2loopy", "level 8 tuned",
                     F2Kernel("level 8 tuned", tuned.generated[0], inputs, sizes, queue)))
    lp_data = None
    if opts.loopy:
        lp_data = json.loads(Path(opts.loopy).read_text())
        for label in opts.levels:
            if label in lp_data["levels"]:
                rows.append(("loopy", label,
                             LoopyKernel(label, lp_data["levels"][label], f2[label], queue)))

    # correctness
    ref = f2[opts.levels[0]].fortran_outputs()["rhsq"]
    errors = {}
    for group, label, k in rows:
        if group == "f2loopy":
            errors[(group, label)] = _rel_error(k.fortran_outputs()["rhsq"], ref)
        else:
            want = np.frombuffer(f2[label].raw_output("rhsq").tobytes(), dtype=np.float32)
            got = np.frombuffer(k.raw_output("rhsq").tobytes(), dtype=np.float32)
            errors[(group, label)] = _rel_error(got, want)

    bandwidth = measure_copy_bandwidth(queue, min_time=opts.min_time)
    times = {(g, lab): [] for g, lab, _ in rows}
    for _ in range(opts.rounds):
        for g, lab, k in rows:
            times[(g, lab)].append(k.time(opts.min_time))
    med = {key: statistics.median(v) for key, v in times.items()}
    compulsory = scale_compulsory(cps[opts.levels[-1]][0], sizes)
    limit_ms = compulsory / (bandwidth * 1e9) * 1e3

    labels = list(opts.levels) + (["level 8 tuned"] if opts.tuned else [])
    lines = [(f"device: {device}; sizes {sizes}, defines {defines}; medians of "
              f"{opts.rounds} rounds of >= {opts.min_time} s of launches"),
             (f"bandwidth limit: float4 copy {bandwidth:.0f} GB/s, compulsory traffic "
              f"{compulsory / 1e9:.4f} GB -> {limit_ms:.4f} ms")]
    if lp_data:
        lines.append(f"loopy {lp_data['loopy_version']} kernels from {opts.loopy}")
    if tuned_note:
        lines.append(f"tuned: {tuned_note}")
    header = (f"{'level':<15} {'loopy (ms)':>11} {'f2loopy (ms)':>13} {'f2l/loopy':>10} "
              f"{'x limit':>8} {'rel err f2l':>12} {'rel err loopy':>14}")
    lines += [header, "-" * len(header)]
    out_rows = []
    for lab in labels:
        lt = med.get(("loopy", lab))
        ft = med[("f2loopy", lab)]
        le = errors.get(("loopy", lab))
        fe = errors[("f2loopy", lab)]
        lines.append(f"{lab:<15} {'-' if lt is None else f'{lt:.4f}':>11} {ft:>13.4f} "
                     f"{'-' if lt is None else f'{ft / lt:.3f}':>10} {ft / limit_ms:>8.3f} "
                     f"{fe:>12.2e} {'-' if le is None else f'{le:.2e}':>14}")
        out_rows.append({"level": lab, "loopy_ms": lt, "f2loopy_ms": ft,
                         "loopy_rel_error": le, "f2loopy_rel_error": fe,
                         "f2loopy_times": times[("f2loopy", lab)],
                         "loopy_times": times.get(("loopy", lab))})
    if lp_data:
        for lab in opts.levels:
            notes = lp_data["levels"].get(lab, {}).get("notes")
            if notes:
                lines.append(f"loopy {lab}: {'; '.join(notes)}")
    text = "\n".join(lines)
    print(text)
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps({
            "device": device, "sizes": sizes, "defines": defines, "bandwidth_gbs": bandwidth,
            "compulsory_bytes": compulsory, "limit_ms": limit_ms, "tuned": tuned_note,
            "rows": out_rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
