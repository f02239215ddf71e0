"""Hostile-input fuzzing (issue 9, part 3): mutated Fortran files and
directive blocks end in success or a located diagnostic, never a traceback,
a hang or a partial output.  CI runs a fixed-seed slice; scripts/
fuzz_hostile.py runs any number."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from f2loopy.fuzz.hostile import HostileFuzzer, make_input, run_cli, run_input
from f2loopy.fuzz.mutate import corpus, mutate

# a fuzzing campaign: minutes
pytestmark = pytest.mark.slow

VALID = """subroutine s(n, a, b)
  integer n, i
  real a(n), b(n)
  do i = 1, n
    b(i) = a(i) * 2.0
  end do
end subroutine
"""


@pytest.fixture(scope="module")
def items():
    return corpus(n_generated=6)


def test_corpus_has_every_kind_of_source(items):
    names = [n for n, _ in items]
    assert any(n.endswith(".f") for n in names) and any(n.endswith(".floopy") for n in names)
    assert any("!$loopy begin" in t for _, t in items)
    assert sum(n.startswith("hostile") for n in names) >= 20


def test_mutations_are_deterministic_and_change_the_text(items):
    a = [mutate(random.Random(k), VALID, items) for k in range(50)]
    b = [mutate(random.Random(k), VALID, items) for k in range(50)]
    assert a == b
    assert sum(t != VALID for t in a) >= 45
    assert make_input(3, 17, items) == make_input(3, 17, items)


def test_run_input_classifies(tmp_path):
    (tmp_path / "a").mkdir()
    assert run_input(VALID, "s.f90", tmp_path / "a") == ("ok", "")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [
        "s.cl", "s_cl.c", "s_cl.f90", "s_cl.py"]
    (tmp_path / "b").mkdir()
    kind, detail = run_input(VALID.replace("do i", "do while (i"), "s.f90", tmp_path / "b")
    assert kind == "diagnostic" and detail.startswith(str(tmp_path / "b" / "s.f90") + ":4:")
    assert list((tmp_path / "b").iterdir()) == []


def test_cli_slice_exit_status_and_no_partial_output(tmp_path):
    assert run_cli(VALID, "s.f90", tmp_path / "ok")[0] == "ok"
    kind, detail = run_cli(VALID.replace("real a(n)", "real a(n"), "s.f90", tmp_path / "bad")
    assert kind == "diagnostic", detail
    assert list((tmp_path / "bad" / "out").iterdir()) == []


def test_deep_nesting_with_a_syntax_error_is_fast(tmp_path):
    path = Path(__file__).resolve().parents[1] / "regressions" / "hostile_deep_nesting_syntax_error.f90"
    t0 = time.monotonic()
    kind, detail = run_input(path.read_text(), path.name, tmp_path)
    assert kind == "diagnostic" and ":47:3: error: syntax error" in detail
    assert time.monotonic() - t0 < 20


def test_hostile_slice():
    """The CI slice: 400 inputs of seed 0 (every 40th through the CLI)."""
    outcomes = []
    HostileFuzzer(0, 400, jobs=2, timeout=60, cli_every=40).run(outcomes.append)
    assert len(outcomes) == 400
    failed = [o for o in outcomes if o.failed]
    assert not failed, "\n\n".join(f"input {o.index} ({o.filename}): {o.kind}\n{o.detail}"
                                   for o in failed[:3])
    kinds = {o.kind for o in outcomes}
    assert {"ok", "diagnostic"} <= kinds
