"""``f2loopy tune FILE``: time the variants of a file's tunable choices on an
OpenCL device, check each against the untransformed kernel, record the best.

Every variant is the file's script run (in the sandbox) with one assignment of
its ``tunable(...)`` values; all variants are timed in this one process (one
OpenCL context, one set of drawn inputs).  A variant's outcome is one of:

* ``ok``: translated, matches the untransformed kernel, timed;
* ``refused``: a transformation (or code generation) refused it, e.g. a tile
  size that does not divide a fixed loop length: skipped and counted;
* ``wrong``: it ran but its results differ (never chosen);
* ``failed``: it did not build or run on the device (never chosen).

The fastest ``ok`` variant goes into ``FILE.tune.json``
(:mod:`f2loopy.tuning_record`), which ``f2loopy translate`` then uses.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from f2loopy.diagnostics import F2LoopyError, SourceSpan
from f2loopy.directives.tunables import format_assignment, to_json
from f2loopy.pipeline import Parsed, TranslateOptions
from f2loopy.tune.search import Search, space_size

if TYPE_CHECKING:
    from f2loopy.tune.measure import Reference


@dataclass
class Variant:
    values: dict
    status: str                      # ok | refused | wrong | failed
    time_ms: float | None = None
    max_error: float | None = None
    message: str = ""


@dataclass
class TuneReport:
    file: str
    device: str
    sizes: dict
    verify_sizes: dict
    space: dict
    strategy: str
    variants: list = field(default_factory=list)
    best: Variant | None = None
    default: Variant | None = None
    record: str | None = None
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(v.status == status for v in self.variants)

    def to_text(self) -> str:
        lines = [(f"{self.file} on {self.device}: {len(self.variants)} of "
                  f"{space_size(self.space)} variants ({self.strategy}), "
                  f"{self.count('ok')} timed, {self.count('refused')} refused by a transform, "
                  f"{self.count('wrong')} wrong, {self.count('failed')} failed; "
                  f"{self.seconds:.1f} s")]
        width = max([len(format_assignment(v.values)) for v in self.variants] + [10])
        for v in sorted(self.variants, key=lambda v: (v.time_ms is None, v.time_ms or 0)):
            t = f"{v.time_ms:10.4f} ms" if v.time_ms is not None else f"{'-':>13}"
            mark = " <- best" if v is self.best else (" (default)" if v is self.default else "")
            lines.append(f"  {format_assignment(v.values):<{width}} {t}  {v.status}{mark}")
        if self.best is not None and self.default is not None and \
                self.default.time_ms and self.best.time_ms:
            lines.append(f"best: {format_assignment(self.best.values)}, "
                         f"{self.default.time_ms / self.best.time_ms:.3g}x the default's speed")
        if self.record:
            lines.append(f"recorded in {self.record}; 'f2loopy translate' uses it")
        return "\n".join(lines)


def _read(path: Path) -> str:
    from f2loopy.regular_files import read_regular_text
    try:        # a regular file, bounded: not a FIFO or /dev/zero of a downloaded tree
        return read_regular_text(path)
    except OSError as exc:
        raise F2LoopyError(f"cannot read {path}: {exc.strerror or exc}") from None


def _one_line(text: str, limit: int = 300) -> str:
    first = str(text).strip().splitlines()[0] if str(text).strip() else ""
    return first[:limit]


def run_tune(path, *, defines=None, transform=None, sizes=None, verify_sizes=None,
             budget: int = 64, seed: int = 0, min_time: float = 0.3, warmup: int = 3,
             queue=None, progress=None, store: bool = True, tolerances=None,
             include_dirs=(), cpp: bool | None = None,
             default_real_kind: int = 4) -> TuneReport:
    """Tune *path* (see the module docstring); *progress* is called with a line
    of text per variant.  *include_dirs* (``-I``): where the modules and
    procedures the file uses are looked up; *cpp*: ``-cpp`` (True) or
    ``-nocpp`` (False), as for ``f2loopy translate``; *default_real_kind* 8:
    ``-fdefault-real-8 -fdefault-double-8``."""
    from f2loopy.pipeline import TranslateOptions, translate_text
    from f2loopy.tune.measure import Reference, device_label
    from f2loopy.tuning_record import check_record_name, store_entry
    path = Path(path)
    if store:
        check_record_name(path)     # before the run, not after it
    text = _read(path)
    defines = dict(defines or {})
    sizes = dict(sizes or {})
    verify_sizes = dict(verify_sizes) if verify_sizes else dict(sizes)
    t_start = time.perf_counter()
    include_dirs = tuple(include_dirs)
    options = TranslateOptions(defines=defines, transform=transform, checkpoints=False,
                               include_dirs=include_dirs, cpp=cpp,
                               default_real_kind=default_real_kind)
    # parsed once: every variant is the script run again on these kernels
    first = translate_text(text, path, options)
    parsed = first.parsed
    if parsed is None:      # (a translation that parsed nothing has no tunables either)
        raise F2LoopyError(f"{path.name}: nothing to tune", SourceSpan(str(path), 1))
    space = dict(first.tunables)
    if not space:
        raise F2LoopyError(f"{path.name} declares no tunable choices: call "
                           "tunable(\"name\", [choices]) in its script or recipe",
                           SourceSpan(str(path), 1))
    if queue is None:
        import pyopencl as cl
        try:
            queue = cl.CommandQueue(cl.create_some_context(interactive=False))
        except Exception as exc:  # noqa: BLE001 - any OpenCL set-up failure
            raise F2LoopyError(f"no OpenCL device to tune on: {exc}") from None
    search = Search(space, budget=budget, seed=seed)
    report = TuneReport(str(path), device_label(queue), sizes, verify_sizes, space,
                        search.strategy)
    reference = Reference(text, path, queue, verify_sizes, seed=seed, tolerances=tolerances,
                          include_dirs=include_dirs, originals=parsed.kernels)
    try:
        while True:
            step = search.next()
            if step is None:
                break
            point, values = step
            v = _measure(values, first if not report.variants else None, _Context(
                parsed, options, reference, queue, sizes, seed, min_time, warmup))
            report.variants.append(v)
            search.report(point, v.time_ms if v.status == "ok" else None)
            if progress is not None:
                t = f"{v.time_ms:.4f} ms" if v.time_ms is not None else "-"
                extra = f": {v.message}" if v.message else ""
                progress(f"[{len(report.variants)}/{min(search.budget, search.size)}] "
                         f"{format_assignment(values)}  {t}  {v.status}{extra}")
    finally:
        reference.close()
    report.default = report.variants[0] if report.variants else None
    ok = [v for v in report.variants if v.status == "ok"]
    report.seconds = time.perf_counter() - t_start
    if not ok:
        raise F2LoopyError(f"no variant of {path.name} could be timed and checked "
                           f"({report.count('refused')} refused, {report.count('wrong')} "
                           f"wrong, {report.count('failed')} failed)", SourceSpan(str(path), 1))
    report.best = min(ok, key=lambda v: v.time_ms)
    if store:
        d = report.default
        measurements = {
            "time_ms": report.best.time_ms,
            "default_ms": d.time_ms if d is not None and d.status == "ok" else None,
            "verify_sizes": verify_sizes,
            "search": search.strategy, "space_size": search.size,
            "variants": [{"values": {k: to_json(x) for k, x in v.values.items()},
                          "status": v.status, "time_ms": v.time_ms}
                         for v in report.variants],
        }
        report.record = str(store_entry(path, text, defines=defines, transform=transform,
                                        device=report.device, sizes=sizes,
                                        values=report.best.values,
                                        measurements=measurements))
    return report


@dataclass
class _Context:
    parsed: Parsed                  # the file, parsed once
    options: TranslateOptions       # how it is translated (tunables aside)
    reference: Reference
    queue: object
    sizes: dict
    seed: int
    min_time: float
    warmup: int
    include_dirs: tuple = ()


def _measure(values: dict, ready, c: _Context) -> Variant:
    """Translate (unless *ready*), check and time one variant."""
    from f2loopy.pipeline import translate_parsed
    from f2loopy.tune.measure import VariantFailure, time_variant
    try:
        result = ready if ready is not None else translate_parsed(
            c.parsed, c.options.replace(tunables=values))
    except F2LoopyError as exc:
        return Variant(values, "refused", message=_one_line(exc.message))
    try:
        check = c.reference.check(result)
    except VariantFailure as exc:
        return Variant(values, "failed", message=_one_line(exc.message))
    except Exception as exc:  # noqa: BLE001 - the generated code failed to build or run
        return Variant(values, "failed", message=_one_line(f"{type(exc).__name__}: {exc}"))
    if not check.ok:
        return Variant(values, "wrong", max_error=check.max_error, message=check.message)
    try:
        ms = time_variant(result, c.queue, c.sizes, seed=c.seed, min_time=c.min_time,
                          warmup=c.warmup)
    except F2LoopyError:
        raise                  # e.g. a size to time at is missing: no variant would do
    except Exception as exc:  # noqa: BLE001 - the device refused the launch
        return Variant(values, "failed", message=_one_line(f"{type(exc).__name__}: {exc}"))
    return Variant(values, "ok", ms, check.max_error)


def plot_tune(report: TuneReport, path) -> None:
    """A PNG bar chart of the time of every variant (matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise F2LoopyError("--plot needs matplotlib (pip install matplotlib)") from None
    from f2loopy.bench.plot import plain_text
    with plain_text(matplotlib):     # the file's name is shown, never parsed as mathtext
        _draw(plt, report, path)


def _draw(plt, report: TuneReport, path) -> None:
    vs = report.variants
    labels = [format_assignment(v.values) for v in vs]
    times = [v.time_ms or 0.0 for v in vs]
    colors = ["#55a868" if v is report.best else "#4c72b0" if v.status == "ok" else "#c44e52"
              for v in vs]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(vs) + 2), 4.5))
    ax.bar(range(len(vs)), times, color=colors)
    for k, v in enumerate(vs):
        if v.status != "ok":
            ax.annotate(v.status, (k, 0), ha="center", va="bottom", rotation=90, fontsize=7)
    ax.set_xticks(range(len(vs)))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("time per run (ms)")
    ax.set_title(f"{Path(report.file).name} on {report.device}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
