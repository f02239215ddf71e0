#!/usr/bin/env python3
"""Digests of the code f2loopy generates for a fixed corpus, to show that a
change keeps generated code byte-identical (or to see exactly which outputs a
change altered on purpose).

The corpus is every Fortran file under ``samples/`` and ``tests/regressions/``
(each translated with its own folder and an ``include/`` beside it on the
search path).  Each input gives one line per output file, ``INPUT OUTPUT
SHA256``, or ``INPUT error: FIRST LINE`` when the translation stops at a
diagnostic, so two runs compare with ``diff``::

    python3 scripts/generated_digest.py > /tmp/before.txt
    ... change the code ...
    python3 scripts/generated_digest.py > /tmp/after.txt
    diff /tmp/before.txt /tmp/after.txt

The code that runs is the ``f2loopy`` that ``python3 -m f2loopy.cli`` finds
(set ``PYTHONPATH`` to compare two checkouts).  The translation cache is off.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = {".f90", ".f", ".F90", ".F", ".f95", ".f03"}
#: extra options of inputs that need them (folder relative to the root -> arguments)
OPTIONS = {"samples/numa_volume": ["-D", "Nq=8"]}


def corpus(root: Path) -> list[Path]:
    """The inputs, in a stable order."""
    found: list[Path] = []
    for folder in (root / "samples", root / "tests" / "regressions"):
        found.extend(p for p in folder.rglob("*") if p.suffix in SUFFIXES and p.is_file())
    return sorted(found)


def digest_one(path: Path, root: Path) -> list[str]:
    """The digest lines of one input."""
    rel = path.relative_to(root).as_posix()
    with tempfile.TemporaryDirectory(prefix="f2l-digest-") as out:
        cmd = [sys.executable, "-m", "f2loopy.cli", "translate", "-o", out, "-I", str(path.parent)]
        if (path.parent / "include").is_dir():
            cmd += ["-I", str(path.parent / "include")]
        cmd += OPTIONS.get(path.parent.relative_to(root).as_posix(), [])
        env = dict(os.environ, F2LOOPY_NO_CACHE="1")
        proc = subprocess.run([*cmd, str(path)], capture_output=True, text=True, env=env,
                              cwd=tempfile.gettempdir(), timeout=600)
        if proc.returncode != 0:
            first = (proc.stderr.strip().splitlines() or ["(no message)"])[0]
            first = first.replace(str(root), "<root>")
            return [f"{rel} error: {first}"]
        lines = []
        for produced in sorted(Path(out).rglob("*")):
            if produced.is_file():
                # the glue names its source by its path: the checkout's folder goes,
                # so that two checkouts (worktrees) of one commit give one digest
                data = produced.read_bytes().replace(str(root).encode(), b"<root>")
                sha = hashlib.sha256(data).hexdigest()
                lines.append(f"{rel} {produced.relative_to(out).as_posix()} {sha}")
        return lines or [f"{rel} (no output)"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="translations at once (default 2)")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the checkout whose samples and regressions are the corpus")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for lines in pool.map(lambda p: digest_one(p, root), corpus(root)):
            print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
