#!/usr/bin/env python3
"""Differential fuzzing of f2loopy against gfortran (issue 9, part 2).

Generates random Fortran programs (f2loopy.fuzz.progen), applies random
transformations, translates them, runs them on OpenCL and compares with the
same Fortran built by gfortran.  A failing program is shrunk and saved as a
regression test (tests/regressions/, run by tests/e2e/test_regressions.py).

    python3 scripts/fuzz_differential.py --seed 0 --count 2000 --jobs 2
    python3 scripts/fuzz_differential.py --seed 1234 --count 1 -v    # one program, shown

Exit status 1 if a bug (mismatch, kernel that does not build or run, internal
error, a program that does not finish within --timeout seconds) was found.
Programs run in worker processes; one that hangs (a generated kernel looping
forever) is killed and reported, and its worker replaced.

A campaign split over two machines (gfortran on one, the OpenCL device on the
other, which has no gfortran): ``--record-references DIR`` runs only the
gfortran side and writes each program's inputs and results to
``DIR/<variant>/<seed>.npz`` (variant ``transforms`` or ``plain``); then
``--reference-dir DIR`` on the other machine regenerates the same programs,
translates and runs them on its OpenCL device and compares with the recorded
results (f2loopy.verify.recorded: refused unless the program and its inputs
are bit for bit the ones recorded; such a program counts as ``no-record``).
Seeds without a recording are skipped as ``no-record``.  Found programs are
saved unshrunk in a replay (shrinking needs gfortran): reproduce them where
gfortran runs.  ``--results FILE`` writes every outcome as a JSON line.

    nice python3 scripts/fuzz_differential.py --seed 0 --count 3000 --record-references refs
    python3 scripts/fuzz_differential.py --seed 0 --count 3000 --jobs 16 --reference-dir refs \
        --results out.jsonl
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import multiprocessing.connection
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_QUEUE = None


def _worker_init():
    os.environ.setdefault("PYOPENCL_COMPILER_OUTPUT", "0")
    try:
        if os.nice(0) < 5:      # (below the parent's when it runs at normal priority)
            os.nice(5)
    except OSError:
        pass


def _queue():
    global _QUEUE
    if _QUEUE is None:
        from f2loopy.verify.runs import cl_queue
        _QUEUE = cl_queue()
    return _QUEUE


def record_path(folder, seed: int, transforms: bool) -> Path:
    """Where the recorded references of program *seed* go."""
    return Path(folder) / ("transforms" if transforms else "plain") / f"{seed}.npz"


def run_one(task):
    seed, opts = task
    from f2loopy.fuzz.fuzz import record_seed, regression_text, run_seed, shrink_outcome
    from f2loopy.verify.recorded import RecordedReferences
    t0 = time.monotonic()
    transforms = not opts["no_transforms"]
    recorded = None
    if opts["record"]:
        recorded = RecordedReferences(record_path(opts["record"], seed, transforms),
                                      mode="record")
    elif opts["replay"]:
        where = record_path(opts["replay"], seed, transforms)
        if not where.is_file():
            return _lost(task, "no-record", f"no recorded references {where}")
        recorded = RecordedReferences(where, mode="replay")
    if opts["record"]:
        outcome = record_seed(seed, transforms=transforms, recorded=recorded)
    else:
        outcome = run_seed(seed, transforms=transforms, queue=_queue(), recorded=recorded)
    saved = None
    text = None
    if outcome.is_bug:
        program = outcome.program
        if not opts["no_shrink"] and recorded is None:
            try:
                program = shrink_outcome(outcome, queue=_queue())
            except Exception as exc:  # noqa: BLE001 - keep the unshrunk program
                print(f"seed {seed}: shrinking failed: {exc}", file=sys.stderr)
        text = regression_text(outcome, program)
        if opts["save"]:
            out = Path(opts["save"])
            out.mkdir(parents=True, exist_ok=True)
            saved = out / f"fuzz_{seed}.f90"
            saved.write_text(text)
    elif outcome.kind not in ("pass", "recorded") and opts["triage"]:
        out = Path(opts["triage"])
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{outcome.kind}_{seed}.f90").write_text(
            regression_text(outcome, outcome.program))
    return {"seed": seed, "kind": outcome.kind, "dropped": len(outcome.dropped),
            "transforms": len(outcome.program.transforms) if outcome.program else 0,
            "detail": outcome.detail, "saved": str(saved) if saved else None,
            "source": outcome.program.render() if opts["verbose"] and outcome.program else None,
            "regression": text, "time": time.monotonic() - t0}


def _serve(conn):
    """A worker process: run the tasks sent on *conn*, answer each."""
    _worker_init()
    while True:
        task = conn.recv()
        if task is None:
            return
        conn.send(run_one(task))


def run_all(tasks, jobs: int, timeout: float):
    """Results of *tasks* (in completion order) from *jobs* worker processes; a
    task running longer than *timeout* seconds yields a 'hang' result and its
    worker is replaced."""
    ctx = multiprocessing.get_context("fork")
    pending = list(reversed(tasks))
    workers = {}          # connection -> (process, task, start time)

    def start():
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        proc.start()
        child.close()
        return parent, proc

    idle = [start() for _ in range(max(1, jobs))]
    try:
        while pending or workers:
            while idle and pending:
                conn, proc = idle.pop()
                task = pending.pop()
                conn.send(task)
                workers[conn] = (proc, task, time.monotonic())
            ready = multiprocessing.connection.wait(list(workers), timeout=1.0)
            for conn in ready:
                proc, task, _ = workers.pop(conn)
                try:
                    yield conn.recv()
                except EOFError:       # the worker died (a crash in the OpenCL driver)
                    proc.join()
                    yield _lost(task, "crash", f"the worker process died (exit code "
                                               f"{proc.exitcode})")
                    idle.append(start())
                    continue
                idle.append((conn, proc))
            now = time.monotonic()
            for conn, (proc, task, t0) in list(workers.items()):
                if now - t0 > timeout:
                    proc.kill()
                    proc.join()
                    del workers[conn]
                    yield _lost(task, "hang", f"did not finish within {timeout:g} s")
                    idle.append(start())
    finally:
        for conn, proc in idle:
            try:
                conn.send(None)
            except OSError:
                pass
        for proc, _, _ in workers.values():
            proc.kill()


def _lost(task, kind, detail):
    seed, _ = task
    return {"seed": seed, "kind": kind, "dropped": 0, "transforms": 0, "detail": detail,
            "saved": None, "source": None, "regression": None, "time": 0.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--count", type=int, default=100, help="number of programs")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds a program may take (translation, both runs, shrinking)")
    ap.add_argument("--no-transforms", action="store_true",
                    help="translate the programs without transformation scripts")
    ap.add_argument("--no-shrink", action="store_true", help="save failing programs as found")
    ap.add_argument("--save", default=str(ROOT / "tests" / "regressions"),
                    help="where failing programs go (default tests/regressions; '' for "
                         "nowhere)")
    ap.add_argument("--triage", default="",
                    help="also save programs refused or without inputs here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every program")
    split = ap.add_mutually_exclusive_group()
    split.add_argument("--record-references", metavar="DIR", default="",
                       help="run only gfortran: write each program's inputs and results "
                            "under DIR (nothing runs on OpenCL)")
    split.add_argument("--reference-dir", metavar="DIR", default="",
                       help="compare with the results recorded under DIR instead of "
                            "running gfortran")
    ap.add_argument("--results", metavar="FILE", default="",
                    help="write every outcome (seed, kind, detail) as a JSON line to FILE")
    args = ap.parse_args(argv)
    opts = {"no_transforms": args.no_transforms, "no_shrink": args.no_shrink,
            "save": args.save, "triage": args.triage, "verbose": args.verbose,
            "record": args.record_references, "replay": args.reference_dir}
    tasks = [(s, opts) for s in range(args.seed, args.seed + args.count)]
    counts = collections.Counter()
    bugs = []
    others = collections.defaultdict(list)     # kind -> seeds neither passing nor bugs
    dropped = transformed = 0
    t0 = time.monotonic()
    results = run_all(tasks, args.jobs, args.timeout)
    log = open(args.results, "w") if args.results else None   # noqa: SIM115 - closed below
    try:
        for k, r in enumerate(results, 1):
            if log is not None:
                log.write(json.dumps({"seed": r["seed"], "kind": r["kind"],
                                      "transforms": r["transforms"],
                                      "detail": "" if r["kind"] == "pass" else r["detail"],
                                      "regression": r["regression"]}) + "\n")
                log.flush()
            counts[r["kind"]] += 1
            dropped += r["dropped"]
            transformed += r["transforms"] > 0
            if r["source"]:
                print(r["source"])
            if r["kind"] in ("mismatch", "kernel-error", "internal", "hang", "crash"):
                bugs.append(r)
                print(f"seed {r['seed']}: {r['kind']}" +
                      (f" (saved {r['saved']})" if r["saved"] else ""), flush=True)
                if args.verbose or not r["saved"]:
                    print(r["regression"] or r["detail"])
            elif r["kind"] not in ("pass", "recorded"):
                others[r["kind"]].append(r["seed"])
                if args.verbose:
                    print(f"seed {r['seed']}: {r['kind']}\n{r['detail']}")
            if k % 50 == 0 or k == len(tasks):
                el = time.monotonic() - t0
                print(f"[{k}/{len(tasks)}] {dict(counts)} {el:.0f} s", flush=True)
    finally:
        results.close()
        if log is not None:
            log.close()
    el = time.monotonic() - t0
    print(f"seeds {args.seed}..{args.seed + args.count - 1}: {sum(counts.values())} programs "
          f"in {el:.0f} s; {dict(sorted(counts.items()))}; {transformed} ran with "
          f"transformations, {dropped} refused transformations dropped")
    for kind, seeds in sorted(others.items()):
        print(f"{kind} at seeds: " + ", ".join(map(str, sorted(seeds))))
    if bugs:
        print("bugs at seeds: " + ", ".join(f"{b['seed']} ({b['kind']})" for b in bugs))
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
