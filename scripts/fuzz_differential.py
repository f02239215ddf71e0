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
"""

from __future__ import annotations

import argparse
import collections
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


def run_one(task):
    seed, opts = task
    from f2loopy.fuzz.fuzz import regression_text, run_seed, shrink_outcome
    t0 = time.monotonic()
    outcome = run_seed(seed, transforms=not opts["no_transforms"], queue=_queue())
    saved = None
    text = None
    if outcome.is_bug:
        program = outcome.program
        if not opts["no_shrink"]:
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
    elif outcome.kind not in ("pass",) and opts["triage"]:
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
    args = ap.parse_args(argv)
    opts = {"no_transforms": args.no_transforms, "no_shrink": args.no_shrink,
            "save": args.save, "triage": args.triage, "verbose": args.verbose}
    tasks = [(s, opts) for s in range(args.seed, args.seed + args.count)]
    counts = collections.Counter()
    bugs = []
    others = collections.defaultdict(list)     # kind -> seeds neither passing nor bugs
    dropped = transformed = 0
    t0 = time.monotonic()
    results = run_all(tasks, args.jobs, args.timeout)
    try:
        for k, r in enumerate(results, 1):
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
            elif r["kind"] != "pass":
                others[r["kind"]].append(r["seed"])
                if args.verbose:
                    print(f"seed {r['seed']}: {r['kind']}\n{r['detail']}")
            if k % 50 == 0 or k == len(tasks):
                el = time.monotonic() - t0
                print(f"[{k}/{len(tasks)}] {dict(counts)} {el:.0f} s", flush=True)
    finally:
        results.close()
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
