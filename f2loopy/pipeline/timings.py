"""Wall-clock and CPU seconds per stage of a translation (``f2loopy
translate --timings``).

A :class:`StageTimes` collects ``(stage, seconds)`` rows in the order the
stages ran; a stage that runs twice (the lookup of a module in two files)
adds up.  Beside each stage's wall-clock seconds it keeps its CPU seconds
(this process's and those of the child processes that ended in it: the
sandbox's), which say more than wall time on a busy machine.  The rows are
plain data, so that a worker process of ``-j N`` can send them back with the
file's outcome.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager


def cpu_seconds() -> float:
    """CPU seconds (user and system) of this process and of its children
    that ended (and were waited for) so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class StageTimes:
    """Seconds spent in each stage, in first-run order."""

    def __init__(self) -> None:
        self._seconds: dict[str, float] = {}
        self._cpu: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as stage *name* (also when it raises)."""
        start, cpu = time.perf_counter(), cpu_seconds()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - start, cpu_seconds() - cpu)

    def add(self, name: str, seconds: float, cpu: float | None = None) -> None:
        self._seconds[name] = self._seconds.get(name, 0.0) + max(0.0, float(seconds))
        if cpu is not None:
            self._cpu[name] = self._cpu.get(name, 0.0) + max(0.0, float(cpu))

    def rows(self) -> list[tuple[str, float]]:
        """``(stage, wall-clock seconds)``, in first-run order."""
        return list(self._seconds.items())

    def cpu_rows(self) -> list[tuple[str, float]]:
        """``(stage, CPU seconds)`` of the stages whose CPU time is known."""
        return list(self._cpu.items())

    def __bool__(self) -> bool:
        return bool(self._seconds)


def timings_table(title: str, rows: list[tuple[str, float]], total: float | None = None,
                  cpu: list[tuple[str, float]] | None = None) -> str:
    """The rows as an aligned table (seconds with three decimals, and each
    stage's share of *total*, the whole command's wall-clock time, if given;
    then the CPU seconds of the stages *cpu* has, marked ``cpu``)."""
    width = max([len(name) for name, _ in rows] + [len("total")])
    lines = [title]
    whole = total if total is not None else sum(s for _, s in rows)
    cpu_of = dict(cpu or ())
    for name, seconds in rows:
        share = f"  {100.0 * seconds / whole:5.1f}%" if whole > 0 else ""
        used = f"  {cpu_of[name]:8.3f} cpu" if name in cpu_of else ""
        lines.append(f"  {name:<{width}}  {seconds:8.3f}{share}{used}")
    if total is not None:
        rest = total - sum(s for _, s in rows)
        if rest > 0.0005:
            lines.append(f"  {'other':<{width}}  {rest:8.3f}  {100.0 * rest / whole:5.1f}%"
                         if whole > 0 else f"  {'other':<{width}}  {rest:8.3f}")
        used = f"  {cpu_of['total']:8.3f} cpu" if "total" in cpu_of else ""
        lines.append(f"  {'total':<{width}}  {total:8.3f}{used}")
    return "\n".join(lines)
