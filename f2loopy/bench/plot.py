"""A PNG plot of a bench report (time per level), with matplotlib."""

from __future__ import annotations

from f2loopy.diagnostics import F2LoopyError


def plot_report(report, path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise F2LoopyError("--plot needs matplotlib (pip install matplotlib)") from None
    with plain_text(matplotlib):
        _draw(plt, report, path)


def plain_text(matplotlib):
    """A context in which matplotlib draws every text as it is: labels and
    file names are text a script or a download chose, never parsed as
    mathtext (a malformed '$...$' aborted the plot after the whole run) nor
    handed to LaTeX (a user's matplotlibrc with text.usetex would let
    '\\input{~/.ssh/id_rsa}' into the PNG).  ``bench --plot`` and ``tune
    --plot`` draw in it."""
    safe = {"text.usetex": False}
    if "text.parse_math" in matplotlib.rcParams:
        safe["text.parse_math"] = False
    return matplotlib.rc_context(safe)


def _draw(plt, report, path) -> None:
    labels = [r.label for r in report.rows]
    times = [r.time_ms or 0.0 for r in report.rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    # bars by position: two rows with the same label stay two bars
    positions = list(range(len(labels)))
    bars = ax.bar(positions, times,
                  color=["#4c72b0" if r.ok else "#c44e52" for r in report.rows])
    ax.set_xticks(positions, labels)
    for b, r in zip(bars, report.rows, strict=True):
        if r.speedup:
            ax.annotate(f"{r.speedup:.2g}x", (b.get_x() + b.get_width() / 2, b.get_height()),
                        ha="center", va="bottom", fontsize=8)
    if report.fortran_ms:
        ax.axhline(report.fortran_ms, color="gray", linestyle="--",
                   label=f"gfortran ({report.fortran_flags})")
        ax.legend()
    ax.set_ylabel("time per launch (ms)")
    ax.set_title(f"{report.file} on {report.device}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
