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

usage:
  cloudsc_ranks.py --data DWARF_DATA_DIR --kernel DIR_WITH_cloudsc_cl.py
                   [--ngptot 65536] [--ranks 1,2,4] [--niter 20] [--device '0:{rank}']
                   [--cuda-results FILE] [--json OUT]
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

    def barrier() -> None:
        (sync / f"ready.{a.rank}").write_text("")
        deadline = time.monotonic() + _BARRIER_TIMEOUT
        while not (sync / "go").exists():
            if time.monotonic() > deadline:
                raise SystemExit(f"rank {a.rank}: no start signal in {_BARRIER_TIMEOUT:.0f} s")
            time.sleep(0.002)

    meta = cloudsc_gpu._meta(data)
    r = cloudsc_gpu.run_variant(glue, queue, data, meta, a.count, a.niter,
                                first=a.first, barrier=barrier)
    r.update(rank=a.rank, first=a.first, count=a.count, device=queue.device.name.strip(),
             pid=os.getpid())
    Path(a.result).write_text(json.dumps(r))

# }}}


# {{{ the driver

def run_ranks(a, ranks: int) -> dict:
    """Start *ranks* processes, release them together, collect their results."""
    with tempfile.TemporaryDirectory(prefix="cloudsc_ranks_") as tmp:
        sync = Path(tmp)
        procs = []
        for r, (first, count) in enumerate(_shares(a.ngptot, ranks)):
            env = dict(os.environ, F2LOOPY_DEVICE=_device_spec(a.device, r))
            cmd = [sys.executable, str(Path(__file__).resolve()), "worker",
                   "--data", a.data, "--kernel", a.kernel, "--niter", str(a.niter),
                   "--rank", str(r), "--first", str(first), "--count", str(count),
                   "--sync", str(sync), "--result", str(sync / f"result.{r}.json")]
            procs.append(subprocess.Popen(cmd, env=env))
        deadline = time.monotonic() + _BARRIER_TIMEOUT
        while not all((sync / f"ready.{r}").exists() for r in range(ranks)):
            failed = [p.returncode for p in procs if p.poll() not in (None, 0)]
            if failed or time.monotonic() > deadline:
                for p in procs:
                    p.kill()
                raise SystemExit(f"R={ranks}: a process failed before the start "
                                 f"(exit {failed})" if failed else
                                 f"R={ranks}: not all processes ready in time")
            time.sleep(0.01)
        (sync / "go").write_text("")
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
    return {"ranks": ranks, "slowest_median_ms": slowest,
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


def main_driver(a) -> None:
    counts = [int(x) for x in a.ranks.split(",") if x]
    if not counts or any(c < 1 for c in counts):
        raise SystemExit("--ranks: a comma-separated list of positive integers")
    if max(counts) > a.ngptot:
        raise SystemExit(f"--ngptot {a.ngptot}: fewer columns than processes")
    print(f"CLOUDSC split over processes: NGPTOT {a.ngptot}, KLEV {cloudsc_gpu.NLEV}, "
          f"double, {a.niter} timed calls per process, kernel {a.kernel}")
    rows = []
    for ranks in counts:
        res = run_ranks(a, ranks)
        rows.append(res)
        print(f"R={ranks}: slowest process {res['slowest_median_ms']:.3f} ms, per process "
              f"{', '.join(f'{m:.3f}' for m in res['rank_medians_ms'])} ms; span "
              f"{res['span_ms_per_iter']:.3f} ms per call; devices {res['devices']}; worst "
              f"field {res['worst_field'][0]} rel {res['worst_field'][1]:.2e}", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps({"ngptot": a.ngptot, "niter": a.niter,
                                            "ranks": rows}, indent=1))
    table(rows, a.ngptot, _cuda_lines(a.cuda_results), a.tolerance)
    if not all(r["ok"] for r in rows):
        raise SystemExit("outputs differ from the reference")


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
        for opt in ("--rank", "--first", "--count", "--niter"):
            w.add_argument(opt, type=int, required=True)
        worker(w.parse_args(sys.argv[2:]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--kernel", required=True, help="a folder with cloudsc_cl.py")
    ap.add_argument("--ngptot", type=int, default=65536)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--niter", type=int, default=20)
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
    if a.ngptot < 1 or a.niter < 1:
        raise SystemExit("--ngptot and --niter must be positive")
    main_driver(a)


if __name__ == "__main__":
    main()
