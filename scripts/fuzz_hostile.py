#!/usr/bin/env python3
"""Hostile-input fuzzing of the translator (issue 9, part 3).

Mutates valid Fortran files and directive blocks (f2loopy.fuzz.mutate) and
checks that every input ends in success or a located diagnostic: never a
Python traceback, never a hang (--timeout per input), never a partial output.
Inputs run in-process in worker processes; every --cli-every'th one runs
through the 'f2loopy translate' command instead (exit status, stderr).

    python3 scripts/fuzz_hostile.py --seed 0 --count 20000 --jobs 2
    python3 scripts/fuzz_hostile.py --seed 0 --count 1 --start 1234 --show   # one input

Failing inputs are saved (one per distinct failure) under --save; exit status
1 if any input failed.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--start", type=int, default=0, help="first input index")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per input")
    ap.add_argument("--cli-every", type=int, default=50,
                    help="run every N-th input through the CLI (0: never)")
    ap.add_argument("--save", default="hostile-failures",
                    help="directory for failing inputs ('' for nowhere)")
    ap.add_argument("--show", action="store_true", help="print each input and outcome")
    args = ap.parse_args(argv)
    from f2loopy.fuzz.hostile import HostileFuzzer

    counts = collections.Counter()
    signatures = collections.Counter()
    failures = []
    t0 = time.monotonic()
    done = [0]

    def on_outcome(o):
        counts[o.kind] += 1
        done[0] += 1
        if args.show:
            print(f"--- input {o.index} ({o.filename}): {o.kind}\n{o.detail}")
        if o.failed:
            sig = o.detail.splitlines()[0] if o.detail else o.kind
            signatures[(o.kind, sig)] += 1
            failures.append(o)
            if signatures[(o.kind, sig)] == 1:
                print(f"input {o.index}: {o.kind}: {sig}", flush=True)
                if args.save:
                    out = Path(args.save)
                    out.mkdir(parents=True, exist_ok=True)
                    stem = f"hostile_{args.seed}_{o.index}"
                    suffix = Path(o.filename).suffix or ".f90"
                    (out / f"{stem}{suffix}").write_text(o.text, encoding="utf-8",
                                                         errors="surrogateescape")
                    (out / f"{stem}.txt").write_text(f"{o.kind}\n{o.detail}\n")
        if done[0] % 500 == 0:
            print(f"[{done[0]}/{args.count}] {dict(counts)} {time.monotonic() - t0:.0f} s",
                  flush=True)

    HostileFuzzer(args.seed, args.count, jobs=args.jobs, timeout=args.timeout,
                  cli_every=args.cli_every, start=args.start).run(on_outcome)
    el = time.monotonic() - t0
    print(f"seed {args.seed}, inputs {args.start}..{args.start + args.count - 1}: "
          f"{sum(counts.values())} in {el:.0f} s; {dict(sorted(counts.items()))}")
    if failures:
        print(f"{len(failures)} failing inputs, {len(signatures)} distinct:")
        for (kind, sig), n in signatures.most_common():
            print(f"  {n:5d}  {kind}: {sig}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
