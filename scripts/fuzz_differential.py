#!/usr/bin/env python3
"""Differential fuzzing of f2loopy against gfortran (issue 9, part 2).

Generates random Fortran programs (f2loopy.verify.progen), applies random
transformations, translates them, runs them on OpenCL and compares with the
same Fortran built by gfortran.  A failing program is shrunk and saved as a
regression test (tests/regressions/, run by tests/test_regressions.py).

    python3 scripts/fuzz_differential.py --seed 0 --count 2000 --jobs 2
    python3 scripts/fuzz_differential.py --seed 1234 --count 1 -v    # one program, shown

Exit status 1 if a bug (mismatch, kernel that does not build or run, internal
error) was found.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
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
        os.nice(5)
    except OSError:
        pass


def _queue():
    global _QUEUE
    if _QUEUE is None:
        from f2loopy.verify.check import _cl_queue
        _QUEUE = _cl_queue()
    return _QUEUE


def run_one(task):
    seed, opts = task
    from f2loopy.verify.fuzz import regression_text, run_seed, shrink_outcome
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--count", type=int, default=100, help="number of programs")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
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
    if args.jobs > 1:
        ctx = multiprocessing.get_context("fork")
        pool = ctx.Pool(args.jobs, initializer=_worker_init)
        results = pool.imap_unordered(run_one, tasks, chunksize=1)
    else:
        _worker_init()
        pool = None
        results = map(run_one, tasks)
    try:
        for k, r in enumerate(results, 1):
            counts[r["kind"]] += 1
            dropped += r["dropped"]
            transformed += r["transforms"] > 0
            if r["source"]:
                print(r["source"])
            if r["kind"] in ("mismatch", "kernel-error", "internal"):
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
        if pool is not None:
            pool.terminate()
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
