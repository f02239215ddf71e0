"""Wall-clock seconds per stage of a translation (``f2loopy translate --timings``).

A :class:`StageTimes` collects ``(stage, seconds)`` rows in the order the
stages ran; a stage that runs twice (the lookup of a module in two files)
adds up.  The rows are plain data, so that a worker process of ``-j N`` can
send them back with the file's outcome.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class StageTimes:
    """Seconds spent in each stage, in first-run order."""

    def __init__(self) -> None:
        self._seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as stage *name* (also when it raises)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - start)

    def add(self, name: str, seconds: float) -> None:
        self._seconds[name] = self._seconds.get(name, 0.0) + max(0.0, float(seconds))

    def rows(self) -> list[tuple[str, float]]:
        return list(self._seconds.items())

    def __bool__(self) -> bool:
        return bool(self._seconds)


def timings_table(title: str, rows: list[tuple[str, float]], total: float | None = None) -> str:
    """The rows as an aligned table (seconds with three decimals, and each
    stage's share of *total*, the whole command's wall-clock time, if given)."""
    width = max([len(name) for name, _ in rows] + [len("total")])
    lines = [title]
    whole = total if total is not None else sum(s for _, s in rows)
    for name, seconds in rows:
        share = f"  {100.0 * seconds / whole:5.1f}%" if whole > 0 else ""
        lines.append(f"  {name:<{width}}  {seconds:8.3f}{share}")
    if total is not None:
        rest = total - sum(s for _, s in rows)
        if rest > 0.0005:
            lines.append(f"  {'other':<{width}}  {rest:8.3f}  {100.0 * rest / whole:5.1f}%"
                         if whole > 0 else f"  {'other':<{width}}  {rest:8.3f}")
        lines.append(f"  {'total':<{width}}  {total:8.3f}")
    return "\n".join(lines)
