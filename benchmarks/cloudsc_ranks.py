#!/usr/bin/env python3
"""CLOUDSC's columns split over the GPUs of one machine: throughput for 1, 2, 4 processes.

The columns of CLOUDSC are independent, so a multi-GPU run needs no
communication: process r of R takes the global columns [r*N/R, (r+1)*N/R)
of the dwarf's problem expanded to N = NGPTOT columns (column g is input
column g mod 100, as ``cloudsc_gpu.py`` expands it), runs one translated
variant's Python glue on them on its own device, and checks its 21 outputs
against the reference expanded the same way.  Each process is a plain
subprocess whose device is chosen by the glue's own rule, with
``F2LOOPY_DEVICE`` set from ``--device`` (``{rank}`` replaced by r).  The
processes prepare their data, compile and warm up, then wait at a barrier
(files in a scratch folder) so that their timed calls run at the same time.

Per R the table gives the kernel time of the slowest process (median over
the iterations of the largest kernel time among the processes, OpenCL
profiling markers around each call), the throughput N / that time in
columns per second, its efficiency against R times the one-process
throughput, and the throughput over the whole timed span (first start to
last end, host clock, PLUDE restores and host synchronisation included).
``--cuda-results FILE`` adds the dwarf's CUDA kernels on one GPU
(``shared/anchors/cloudsc_cuda``; lines ``RESULT {...}``) measured in the
same call.

``--per-rank N`` measures weak scaling instead: N columns per process
(NGPTOT = R x N), and first one process alone on each device that the
largest R uses, at N columns (the baselines: the GPUs of one machine are
not equally fast).  ``--pipelined K`` adds K calls per process with two in
flight (the glue's host work of the next call overlaps the device's work of
this one, as in a model's time loop); its time per call is the steady state
that the weak-scaling efficiencies use: t(1 process on device 0) / t(R), and
the slowest of the R devices alone / t(R).  Each process also reports its
start-up apart: preparing and uploading its data, and its first call (the
OpenCL program's build, or NVIDIA's cache of it, and a first run).

usage:
  cloudsc_ranks.py --data DWARF_DATA_DIR --kernel DIR_WITH_cloudsc_cl.py
                   [--ngptot 65536 | --per-rank 65536] [--ranks 1,2,4] [--niter 20]
                   [--pipelined 50] [--device '0:{rank}'] [--cuda-results FILE] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cloudsc_gpu  # noqa: E402

#: an F2LOOPY_DEVICE template: platform and device parts, {rank} at most once
_DEVICE = re.compile(r"[A-Za-z0-9 _.-]*(?::[A-Za-z0-9 _.-]*)?")
_BARRIER_TIMEOUT = 600.0
#: the phases at which the processes wait for each other (run_variant's)
_PHASES = ("timed", "pipelined")


def _device_spec(template: str, rank: int) -> str:
    spec = template.replace("{rank}", str(rank), 1)
    if not _DEVICE.fullmatch(spec):
        raise SystemExit(f"--device {template!r}: not PLATFORM[:DEVICE] with {{rank}}")
    return spec


def _shares(ngptot: int, ranks: int) -> list[tuple[int, int]]:
    """(first global column, number of columns) of each process: equal shares,
    the first ``ngptot % ranks`` one column larger."""
    base, extra = divmod(ngptot, ranks)
    out, first = [], 0
    for r in range(ranks):
        n = base + (1 if r < extra else 0)
        out.append((first, n))
        first += n
    return out


# {{{ one process

def worker(a) -> None:
    import pyopencl as cl
    data, kernel, sync = Path(a.data), Path(a.kernel), Path(a.sync)
    glue = cloudsc_gpu._load_glue(kernel / "cloudsc_cl.py")
    q0 = glue.rank_queue()      # the device by the glue's rule (F2LOOPY_DEVICE)
    queue = cl.CommandQueue(q0.context, q0.device,
                            properties=cl.command_queue_properties.PROFILING_ENABLE)

    def barrier(phase: str) -> None:
        if phase not in _PHASES:
            raise SystemExit(f"rank {a.rank}: unknown phase {phase!r}")
        (sync / f"ready.{phase}.{a.rank}").write_text("")
        deadline = time.monotonic() + _BARRIER_TIMEOUT
        while not (sync / f"go.{phase}").exists():
            if time.monotonic() > deadline:
                raise SystemExit(f"rank {a.rank}: no start signal in {_BARRIER_TIMEOUT:.0f} s")
            time.sleep(0.002)

    meta = cloudsc_gpu._meta(data)
    r = cloudsc_gpu.run_variant(glue, queue, data, meta, a.count, a.niter,
                                first=a.first, barrier=barrier, pipelined=a.pipelined)
    r.update(rank=a.rank, first=a.first, count=a.count, device=queue.device.name.strip(),
             pid=os.getpid())
    Path(a.result).write_text(json.dumps(r))

# }}}


# {{{ the driver

def run_ranks(a, ranks: int, ngptot: int, devices: list[int] | None = None) -> dict:
    """Start *ranks* processes on *ngptot* columns in all (process r on device
    *devices[r]*, else r), release them together, collect their results."""
    devices = devices or list(range(ranks))
    with tempfile.TemporaryDirectory(prefix="cloudsc_ranks_") as tmp:
        sync = Path(tmp)
        procs = []
        for r, (first, count) in enumerate(_shares(ngptot, ranks)):
            env = dict(os.environ, F2LOOPY_DEVICE=_device_spec(a.device, devices[r]))
            cmd = [sys.executable, str(Path(__file__).resolve()), "worker",
                   "--data", a.data, "--kernel", a.kernel, "--niter", str(a.niter),
                   "--pipelined", str(a.pipelined),
                   "--rank", str(r), "--first", str(first), "--count", str(count),
                   "--sync", str(sync), "--result", str(sync / f"result.{r}.json")]
            procs.append(subprocess.Popen(cmd, env=env))
        for phase in _PHASES[:2 if a.pipelined else 1]:
            deadline = time.monotonic() + _BARRIER_TIMEOUT
            while not all((sync / f"ready.{phase}.{r}").exists() for r in range(ranks)):
                failed = [p.returncode for p in procs if p.poll() not in (None, 0)]
                if failed or time.monotonic() > deadline:
                    for p in procs:
                        p.kill()
                    raise SystemExit(f"R={ranks}: a process failed before the start "
                                     f"(exit {failed})" if failed else
                                     f"R={ranks}: not all processes ready in time")
                time.sleep(0.01)
            (sync / f"go.{phase}").write_text("")
        codes = [p.wait() for p in procs]
        if any(codes):
            raise SystemExit(f"R={ranks}: exit codes {codes}")
        results = [json.loads((sync / f"result.{r}.json").read_text()) for r in range(ranks)]
    return aggregate(results, a.niter, a.tolerance)


def aggregate(results: list[dict], niter: int, tolerance: float) -> dict:
    """One table row from the processes' *results* (``run_variant``'s, plus
    rank, first, count, device): the median over the iterations of the
    slowest process's kernel time, the timed span per call (first start to
    last end over *niter* calls), the worst output error of all processes."""
    ranks = len(results)
    per_iter = [max(res["times_ms"][i] for res in results)
                for i in range(min(len(res["times_ms"]) for res in results))]
    slowest = sorted(per_iter)[len(per_iter) // 2]
    span = (max(res["t_end"] for res in results) - min(res["t_start"] for res in results))
    worst = max(((f, v[0]) for res in results for f, v in res["fields"].items()),
                key=lambda fv: fv[1])
    pipes = [res.get("pipelined_ms") for res in results]
    pipelined = max(pipes) if pipes and None not in pipes else None
    return {"ranks": ranks, "slowest_median_ms": slowest, "pipelined_ms": pipelined,
            "rank_pipelined_ms": pipes,
            "rank_host_ms": [res.get("host_ms") for res in results],
            "rank_prepare_s": [res.get("prepare_s") for res in results],
            "rank_first_call_s": [res.get("first_call_s") for res in results],
            "rank_medians_ms": [res["median_ms"] for res in results],
            "span_ms_per_iter": span * 1e3 / niter,
            "devices": [res["device"] for res in results],
            "shares": [(res["first"], res["count"]) for res in results],
            "worst_field": worst, "ok": worst[1] <= tolerance, "per_rank": results}


def _cuda_lines(path: str | None) -> dict:
    cuda = {}
    if path:
        for line in Path(path).read_text().splitlines():
            if line.startswith("RESULT "):
                r = json.loads(line[len("RESULT "):])
                cuda[str(r["kernel"])] = r
    return cuda


def _report(res: dict) -> None:
    def ms(values):
        return ", ".join("-" if v is None else f"{v:.3f}" for v in values)
    pipe = "" if res["pipelined_ms"] is None else \
        f"; pipelined per process {ms(res['rank_pipelined_ms'])} ms"
    print(f"R={res['ranks']}: slowest process {res['slowest_median_ms']:.3f} ms, per process "
          f"{ms(res['rank_medians_ms'])} ms{pipe}; host time of a glue call "
          f"{ms(res['rank_host_ms'])} ms; start-up: data {ms(res['rank_prepare_s'])} s, "
          f"first call {ms(res['rank_first_call_s'])} s; span "
          f"{res['span_ms_per_iter']:.3f} ms per call; devices {res['devices']}; worst "
          f"field {res['worst_field'][0]} rel {res['worst_field'][1]:.2e}", flush=True)


def main_driver(a) -> None:
    counts = [int(x) for x in a.ranks.split(",") if x]
    if not counts or any(c < 1 for c in counts):
        raise SystemExit("--ranks: a comma-separated list of positive integers")
    if a.per_rank is None and max(counts) > a.ngptot:
        raise SystemExit(f"--ngptot {a.ngptot}: fewer columns than processes")
    what = (f"{a.per_rank} columns per process" if a.per_rank is not None
            else f"NGPTOT {a.ngptot}")
    print(f"CLOUDSC split over processes: {what}, KLEV {cloudsc_gpu.NLEV}, double, "
          f"{a.niter} timed calls per process"
          f"{f' and {a.pipelined} pipelined' if a.pipelined else ''}, kernel {a.kernel}")
    rows, baselines = [], []
    if a.per_rank is not None:
        for d in range(max(counts)):
            res = run_ranks(a, 1, a.per_rank, devices=[d])
            res["baseline_device"] = d
            baselines.append(res)
            print(f"alone on device {d}: ", end="")
            _report(res)
    for ranks in counts:
        ngptot = a.ngptot if a.per_rank is None else a.per_rank * ranks
        res = run_ranks(a, ranks, ngptot)
        res["ngptot"] = ngptot
        rows.append(res)
        _report(res)
    if a.json:
        Path(a.json).write_text(json.dumps({"ngptot": a.ngptot, "per_rank": a.per_rank,
                                            "niter": a.niter, "pipelined": a.pipelined,
                                            "ranks": rows, "baselines": baselines}, indent=1))
    if a.per_rank is None:
        table(rows, a.ngptot, _cuda_lines(a.cuda_results), a.tolerance)
    else:
        weak_table(rows, baselines, a.per_rank, a.tolerance)
    if not all(r["ok"] for r in rows + baselines):
        raise SystemExit("outputs differ from the reference")


def weak_table(rows: list[dict], baselines: list[dict], per_rank: int, tolerance: float) -> None:
    """Weak scaling: *per_rank* columns per process; *baselines*: one process
    alone on each device.  Efficiencies of the pipelined time where measured,
    else of the slowest process's waited calls."""
    key = "pipelined_ms" if all(r["pipelined_ms"] is not None for r in rows + baselines) \
        else "slowest_median_ms"
    alone = [b[key] for b in baselines]
    print()
    print("| device alone | waited call, ms | pipelined, ms per call | glue host time, ms |")
    print("|---|---|---|---|")
    for b in baselines:
        pipe = "-" if b["pipelined_ms"] is None else f"{b['pipelined_ms']:.3f}"
        print(f"| {b['baseline_device']} | {b['slowest_median_ms']:.3f} | {pipe} | "
              f"{b['rank_host_ms'][0]:.3f} |")
    print()
    print(f"| processes (GPUs) | columns in all | waited call, slowest, ms | {key.split('_')[0]}"
          " ms (slowest) | columns/s | efficiency vs device 0 alone | vs the slowest of its "
          "devices alone | outputs |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = r[key]
        p = r["ranks"]
        slow = max(alone[:p]) if len(alone) >= p else None
        eff0 = f"{alone[0] / t:.1%}" if alone else "-"
        effs = "-" if slow is None else f"{slow / t:.1%}"
        ok = "21/21 match" if r["ok"] else "MISMATCH"
        print(f"| {p} | {per_rank * p} | {r['slowest_median_ms']:.3f} | {t:.3f} | "
              f"{per_rank * p / (t * 1e-3):.3e} | {eff0} | {effs} | {ok} in every process |")


def table(rows: list[dict], ngptot: int, cuda: dict, tolerance: float) -> None:
    """Print the table of *rows* (run_ranks results) and the CUDA lines."""
    one = next((r for r in rows if r["ranks"] == 1), None)
    base = ngptot / (one["slowest_median_ms"] * 1e-3) if one else None
    print()
    print("| processes (GPUs) | slowest kernel, ms | columns/s | efficiency vs 1 "
          "| columns/s over the span | outputs |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        tput = ngptot / (r["slowest_median_ms"] * 1e-3)
        eff = f"{tput / (r['ranks'] * base):.1%}" if base else "-"
        span = ngptot / (r["span_ms_per_iter"] * 1e-3)
        ok = "21/21 match" if r["ok"] else "MISMATCH"
        print(f"| {r['ranks']} | {r['slowest_median_ms']:.3f} | {tput:.3e} | {eff} "
              f"| {span:.3e} | {ok} in every process |")
    for name, c in cuda.items():
        bad = [f for f, v in c.get("fields", {}).items() if v[0] > tolerance]
        ms = float(c["median_ms"])
        rel = f"{ngptot / (ms * 1e-3) / base:.2f}x one f2loopy process" if base else "-"
        print(f"| dwarf CUDA {name}, 1 GPU | {ms:.3f} | {ngptot / (ms * 1e-3):.3e} | {rel} | - "
              f"| {'21/21 match' if not bad else 'mismatch'} |")

# }}}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        w = argparse.ArgumentParser()
        for opt in ("--data", "--kernel", "--sync", "--result"):
            w.add_argument(opt, required=True)
        for opt in ("--rank", "--first", "--count", "--niter", "--pipelined"):
            w.add_argument(opt, type=int, required=True)
        worker(w.parse_args(sys.argv[2:]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--kernel", required=True, help="a folder with cloudsc_cl.py")
    ap.add_argument("--ngptot", type=int, default=65536)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--per-rank", type=int,
                    help="weak scaling: this many columns per process (NGPTOT = R x this)")
    ap.add_argument("--niter", type=int, default=20)
    ap.add_argument("--pipelined", type=int, default=0,
                    help="also this many calls per process with two in flight")
    ap.add_argument("--device", default="0:{rank}",
                    help="F2LOOPY_DEVICE of process r, {rank} replaced by r")
    ap.add_argument("--tolerance", type=float, default=1e-9)
    ap.add_argument("--cuda-results")
    ap.add_argument("--json")
    ap.add_argument("--from-json", help="print the table of an earlier run's --json only")
    a = ap.parse_args()
    if a.from_json:
        saved = json.loads(Path(a.from_json).read_text())
        table(saved["ranks"], int(saved["ngptot"]), _cuda_lines(a.cuda_results), a.tolerance)
        return
    if a.ngptot < 1 or a.niter < 1 or (a.per_rank is not None and a.per_rank < 1) \
            or a.pipelined < 0:
        raise SystemExit("--ngptot, --per-rank and --niter must be positive, --pipelined "
                         "not negative")
    main_driver(a)


if __name__ == "__main__":
    main()
