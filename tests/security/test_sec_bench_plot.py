"""bench --plot (issue 14, round 2): level labels come from a script's
checkpoints and the title from the file name; matplotlib must draw them as
plain text.  Before: a label with a malformed ``$...$`` raised ValueError
from the mathtext parser after the whole benchmark ran, a user's
``text.usetex: True`` handed labels to LaTeX (``\\input`` of any file), and
two rows with the same label were drawn as one bar."""

from __future__ import annotations

import pytest

from f2loopy.bench.plot import plot_report
from f2loopy.bench.run import BenchReport, BenchRow

matplotlib = pytest.importorskip("matplotlib")

LABELS = ["$\\frac{$", "\\input{/etc/passwd}$x^{2", "$" * 40, "same", "same",
          "a\x1b[2J\u202e$\\mathdefault{"]


def row(label, t):
    return BenchRow(label, t, 1.5, None, None, 0, 0, True, None)


@pytest.mark.parametrize("usetex", [False, True])
def test_hostile_labels_are_plain_text(tmp_path, usetex):
    report = BenchReport(file="$\\sqrt{$.f90", device="dev $x$", sizes={}, defines={},
                         reference="gfortran", rows=[row(s, k + 1.0)
                                                     for k, s in enumerate(LABELS)])
    with matplotlib.rc_context({"text.usetex": usetex}):
        plot_report(report, tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_rows_with_the_same_label_are_separate_bars(tmp_path, monkeypatch):
    import matplotlib.axes
    drawn = {}
    original = matplotlib.axes.Axes.bar

    def spy(self, x, height, *a, **k):
        drawn["n"] = len(list(height))
        drawn["x"] = list(x)
        return original(self, x, height, *a, **k)

    monkeypatch.setattr(matplotlib.axes.Axes, "bar", spy)
    report = BenchReport(file="f.f90", device="d", sizes={}, defines={}, reference="",
                         rows=[row("same", 1.0), row("same", 2.0)])
    plot_report(report, tmp_path / "p.png")
    assert drawn == {"n": 2, "x": [0, 1]}
