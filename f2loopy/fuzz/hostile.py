"""Hostile-input fuzzing: every input must end in success or a located
diagnostic, never a traceback, a hang or a partial output (issue 9, part 3).

:func:`run_input` translates one input in-process (``translate_text`` and
``write_outputs`` into an empty directory) and classifies the outcome:

``ok``
    translated; exactly the four outputs were written, complete.
``diagnostic``
    an :class:`~f2loopy.diagnostics.F2LoopyError` with a source span, and
    nothing written.
``unlocated``
    an F2LoopyError without a span (the user is not told where).
``traceback``
    any other exception (an internal error).
``partial``
    something was left in the output directory after an error, or an output
    is missing or differs after success.

:func:`run_cli` does the same through the ``f2loopy translate`` command in a
subprocess (exit status 0 with outputs, or 1 with a located message on
stderr and nothing written; never a traceback, never another status).

:class:`HostileFuzzer` runs inputs ``(seed, 0..count-1)`` in worker
processes and kills a worker whose input runs past the time limit (a
``hang``), then carries on with a fresh worker.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FAILURES = ("unlocated", "traceback", "partial", "hang", "cli")

_LOCATED = re.compile(r"^[^\n]*:\d+:\d+: error: ", re.M)


@dataclass
class Outcome:
    index: int
    filename: str
    kind: str
    detail: str = ""
    text: str = ""

    @property
    def failed(self) -> bool:
        return self.kind in FAILURES


def make_input(seed: int, index: int, corpus_items):
    """The input number *index* of run *seed*: ``(filename, text, options)``."""
    from f2loopy.fuzz.mutate import mutate
    rng = random.Random(f"hostile:{seed}:{index}")
    name, text = rng.choice(corpus_items)
    text = mutate(rng, text, corpus_items)
    options = {"defines": {"Nq": 4} if rng.random() < 0.7 else {},
               "collect_errors": rng.random() < 0.2}
    return name, text, options


def _signature(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in tb if "f2loopy" in f.filename] or tb
    last = frames[-1] if frames else None
    where = f"{Path(last.filename).name}:{last.lineno} {last.name}" if last else "?"
    return f"{type(exc).__name__} at {where}"


def run_input(text: str, filename: str, outdir: Path, *, defines=None,
              collect_errors=False) -> tuple:
    """Translate *text* in-process into the empty directory *outdir*;
    returns ``(kind, detail)``."""
    from f2loopy.diagnostics import F2LoopyError
    from f2loopy.pipeline import translate_text, write_outputs
    path = outdir / filename
    try:
        result = translate_text(text, path, defines=defines, collect_errors=collect_errors)
        written = write_outputs(result.outputs)
    except F2LoopyError as exc:
        try:
            message = exc.format()
        except Exception as fexc:  # noqa: BLE001 - formatting must not fail either
            return "traceback", f"{_signature(fexc)} (formatting the diagnostic)\n" + \
                "".join(traceback.format_exception(fexc))
        left = sorted(p.name for p in outdir.iterdir())
        if left:
            return "partial", f"files left after an error: {left}\n{message}"
        if exc.span is None or not _LOCATED.search(message):
            return "unlocated", message
        return "diagnostic", message.splitlines()[0]
    except RecursionError as exc:
        return "traceback", f"{_signature(exc)}\n" + "".join(
            traceback.format_exception(exc)[-6:])
    except Exception as exc:  # noqa: BLE001 - the finding
        return "traceback", f"{_signature(exc)}\n" + "".join(traceback.format_exception(exc))
    expected = {Path(p).name: t for p, t in result.outputs.items()}
    present = sorted(p.name for p in outdir.iterdir())
    if present != sorted(expected) or len(expected) != 4 or len(written) != 4:
        return "partial", f"outputs {present}, expected {sorted(expected)}"
    for name, t in expected.items():
        if (outdir / name).read_text(encoding="utf-8") != t:
            return "partial", f"{name} differs from the translation's text"
    return "ok", ""


def run_cli(text: str, filename: str, workdir: Path, *, defines=None,
            timeout: float = 60.0) -> tuple:
    """The same through ``f2loopy translate`` in a subprocess."""
    src_dir = workdir / "src"
    out_dir = workdir / "out"
    src_dir.mkdir(parents=True, exist_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    src = src_dir / filename
    src.write_bytes(text.encode("utf-8", errors="surrogateescape"))
    # (runs the command line as a user does: a process, not an import)
    cmd = [sys.executable, "-m", "f2loopy.cli",  # layers: not an import
           "translate", "-o", str(out_dir), str(src)]
    for k, v in (defines or {}).items():
        cmd[4:4] = ["-D", f"{k}={v}"]
    env = dict(os.environ)
    env["F2LOOPY_CACHE_DIR"] = str(workdir / "cache")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              errors="replace")
    except subprocess.TimeoutExpired:
        return "hang", f"the command ran longer than {timeout:g} s"
    out = sorted(p.name for p in out_dir.iterdir())
    stderr = proc.stderr
    if "Traceback" in stderr or "internal error" in stderr:
        return "cli", f"exit {proc.returncode}\n{stderr[-3000:]}"
    if proc.returncode == 0:
        stem = filename.split(".")[0]
        want = sorted([f"{stem}.cl", f"{stem}_cl.py", f"{stem}_cl.f90", f"{stem}_cl.c"])
        if out != want:
            return "partial", f"exit 0 but outputs {out}"
        return "ok", ""
    if proc.returncode == 1:
        if out:
            return "partial", f"exit 1 but outputs {out}\n{stderr[-2000:]}"
        if not _LOCATED.search(stderr):
            return "unlocated", stderr[-2000:]
        return "diagnostic", stderr.splitlines()[0] if stderr else ""
    return "cli", f"exit status {proc.returncode}\n{stderr[-3000:]}"


# {{{ workers

def _worker(conn, seed, indices, cli_every, timeout):
    """Run inputs *indices*; report ("start", i) and ("done", Outcome) on *conn*."""
    os.environ.setdefault("F2LOOPY_SCRIPT_CPU_LIMIT", "2")
    os.environ.setdefault("F2LOOPY_SCRIPT_WALL_LIMIT", "5")
    os.environ.setdefault("F2LOOPY_SCRIPT_MEMORY_LIMIT", "512")
    try:
        os.nice(5)
    except OSError:
        pass
    from f2loopy.fuzz.mutate import corpus
    items = corpus()
    base = Path(tempfile.mkdtemp(prefix="f2loopy-hostile-"))
    try:
        for i in indices:
            conn.send(("start", i))
            name, text, options = make_input(seed, i, items)
            work = base / str(i)
            work.mkdir()
            try:
                if cli_every and i % cli_every == 0:
                    kind, detail = run_cli(text, name, work, defines=options["defines"],
                                           timeout=timeout * 0.8)
                else:
                    kind, detail = run_input(text, name, work, **options)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            failed = kind in FAILURES
            conn.send(("done", Outcome(i, name, kind, detail, text if failed else "")))
    finally:
        shutil.rmtree(base, ignore_errors=True)
        conn.send(("exit", None))


@dataclass
class _Worker:
    """A worker process of :class:`HostileFuzzer` and the input it is on."""
    proc: Any                   # a multiprocessing context's Process
    conn: Any                   # the parent's end of its pipe
    current: int | None = None  # the index of the input it works on
    since: float = 0.0          # when it started that input (time.monotonic)


class HostileFuzzer:
    """Runs inputs ``0..count-1`` of *seed* on *jobs* worker processes."""

    def __init__(self, seed: int, count: int, *, jobs: int = 2, timeout: float = 30.0,
                 cli_every: int = 0, start: int = 0):
        self.seed = seed
        self.indices = list(range(start, start + count))
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.cli_every = cli_every

    def run(self, on_outcome=None):
        ctx = multiprocessing.get_context("fork")
        queues = [self.indices[k::self.jobs] for k in range(self.jobs)]
        workers: dict[int, _Worker] = {}

        def spawn(k):
            if not queues[k]:
                return
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(child, self.seed, list(queues[k]),
                                                     self.cli_every, self.timeout),
                               daemon=True)
            proc.start()
            child.close()
            workers[k] = _Worker(proc, parent)

        for k in range(self.jobs):
            spawn(k)
        items = None
        while workers:
            conns = {w.conn: k for k, w in workers.items()}
            ready = [c for c in conns if c.poll(0)]
            if not ready:
                ready, _, _ = select.select(list(conns), [], [], 0.5)
            for c in ready:
                k = conns[c]
                try:
                    msg, value = c.recv()
                except (EOFError, OSError):
                    msg, value = "died", None
                w = workers[k]
                if msg == "start":
                    w.current, w.since = value, time.monotonic()
                elif msg == "done":
                    queues[k].remove(value.index)
                    w.current = None
                    if on_outcome:
                        on_outcome(value)
                elif msg in ("exit", "died"):
                    if msg == "died" and w.current is not None:
                        # the worker died inside an input: that input crashed the process
                        items = items or _corpus()
                        name, text, _ = make_input(self.seed, w.current, items)
                        queues[k].remove(w.current)
                        if on_outcome:
                            on_outcome(Outcome(w.current, name, "traceback",
                                               "the worker process died", text))
                    w.proc.join(timeout=5)
                    del workers[k]
                    if msg == "died":
                        spawn(k)
            now = time.monotonic()
            for k, w in list(workers.items()):
                if w.current is not None and now - w.since > self.timeout:
                    w.proc.kill()
                    w.proc.join()
                    items = items or _corpus()
                    name, text, _ = make_input(self.seed, w.current, items)
                    queues[k].remove(w.current)
                    if on_outcome:
                        on_outcome(Outcome(w.current, name, "hang",
                                           f"no result after {self.timeout:g} s", text))
                    del workers[k]
                    spawn(k)


def _corpus():
    from f2loopy.fuzz.mutate import corpus
    return corpus()

# }}}
