"""Empirical tuning: tunable(...) in scripts, the search, the tuning record,
`f2loopy tune` on PoCL at a small size, and `translate` using the record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_util import f2loopy

from f2loopy.diagnostics import F2LoopyError
from f2loopy.diagnostics import ScriptError
from f2loopy.directives.tunables import (
    TunableError,
    TunableRegistry,
    check_assignment,
    check_choices,
    check_value,
    format_assignment,
)
from f2loopy.pipeline import translate_file, translate_text
from f2loopy.tuning_record import (
    RecordError,
    find_entry,
    read_record,
    record_path,
    store_entry,
)
from f2loopy.tune.search import Search

REPO = Path(__file__).resolve().parents[2]

# {{{ values

def test_values_are_literals_only():
    assert check_value(8) == 8 and check_value(True) is True and check_value(0.5) == 0.5
    assert check_value("vec") == "vec"
    assert check_value([4, "l_0"]) == (4, "l_0")
    for bad, why in [("a b", "identifier"), ("__import__('os')", "identifier"),
                     ("x;y", "identifier"), (float("nan"), "finite"), (None, "not None"),
                     ({"a": 1}, "not dict"), (((1,),), "not tuple"), (2 ** 60, "too large"),
                     ("x" * 65, "identifier")]:
        with pytest.raises(TunableError):
            check_value(bad)
    with pytest.raises(TunableError, match="is given twice"):
        check_choices([8, 16, 8])
    # 1, 1.0 and True are different choices
    assert check_choices([1, 1.0, True]) == (1, 1.0, True)
    with pytest.raises(TunableError, match="the choices of a tunable are a non-empty list"):
        check_choices([])


def test_registry_hands_out_recorded_or_first_choice():
    r = TunableRegistry({"tile": 16})
    assert r.tunable("tile", [8, 16, 32]) == 16
    assert r.tunable("alias", [True, False]) is True
    assert r.declarations() == {"tile": [8, 16, 32], "alias": [True, False]}
    with pytest.raises(TunableError, match="declared twice with different choices"):
        r.tunable("tile", [8, 16])
    with pytest.raises(TunableError, match="the value 5 given for tunable 'tile' is not one "
                                           "of its choices"):
        TunableRegistry({"tile": 5}).tunable("tile", [8, 16])
    assert format_assignment({"tile": 16, "mode": "vec", "p": (1, 2)}) == \
        "tile=16, mode='vec', p=(1, 2)"
    with pytest.raises(TunableError, match="no tunable named 'x'"):
        check_assignment({"x": 1}, {"tile": (8,)})

# }}}


# {{{ search

def test_exhaustive_search_visits_every_point_default_first():
    s = Search({"a": (1, 2, 3), "b": (True, False)}, budget=6)
    seen = []
    while (step := s.next()) is not None:
        point, values = step
        seen.append(values)
        s.report(point, float(values["a"]) + (0.5 if values["b"] else 0.0))
    assert s.strategy == "exhaustive"
    assert seen[0] == {"a": 1, "b": True}
    assert len(seen) == 6 and len({tuple(v.items()) for v in seen}) == 6
    assert s.values(s.best()) == {"a": 1, "b": False}


def test_budgeted_search_stays_in_budget_and_descends_greedily():
    space = {"x": tuple(range(10)), "y": tuple(range(10)), "z": (0, 1)}

    def cost(v):                          # best at x=7, y=2, z=1
        return abs(v["x"] - 7) + abs(v["y"] - 2) + (1 - v["z"]) + 1.0

    s = Search(space, budget=40, seed=3)
    seen = []
    while (step := s.next()) is not None:
        point, values = step
        seen.append(point)
        s.report(point, None if values["x"] == 9 else cost(values))   # x=9: "refused"
    assert s.strategy == "budgeted (40 of 200)"
    assert len(seen) == 40 and len(set(seen)) == 40
    assert seen[0] == (0, 0, 0)
    assert s.values(s.best()) == {"x": 7, "y": 2, "z": 1}

# }}}


# {{{ scripts

SCALE = """\
subroutine scale(n, a, x)
  implicit none
  integer n, i
  real a, x(n)
  do i = 1, n
    x(i) = a * x(i) + 1.0
  end do
end subroutine

!$loopy begin
! knl, = parse_fortran(SOURCE, FILENAME)
! knl = fix_parameters(knl, n=96)
! t = tunable("tile", [4, 8, 0])
! if tunable("version", ["original", "changed"]) == "changed":
!     knl, = parse_fortran(SOURCE.replace("+ 1.0", "+ 2.0"), FILENAME)
!     knl = fix_parameters(knl, n=96)
! knl = split_iname(knl, "i", t, outer_tag="g.0", inner_tag="l.0")
! RESULT = [knl]
!$loopy end
"""


@pytest.mark.usefixtures("sandbox_process")
def test_script_declares_tunables_and_receives_values(tmp_path):
    path = tmp_path / "scale.f90"
    r = translate_text(SCALE, path)
    assert r.tunables == {"tile": (4, 8, 0), "version": ("original", "changed")}
    assert "get_local_size(0) == 4" in r.outputs[tmp_path / "scale.cl"] or \
        "reqd_work_group_size(4, 1, 1)" in r.outputs[tmp_path / "scale.cl"]
    r8 = translate_text(SCALE, path, tunables={"tile": 8})
    assert "reqd_work_group_size(8, 1, 1)" in r8.outputs[tmp_path / "scale.cl"]


@pytest.mark.usefixtures("sandbox_process")
def test_tunable_errors_are_located(tmp_path):
    path = tmp_path / "scale.f90"
    with pytest.raises(ScriptError) as info:
        translate_text(SCALE, path, tunables={"tile": 5})
    assert info.value.format().splitlines()[0] == (
        f"{path}:13:7: error: TunableError: the value 5 given for tunable 'tile' is not one "
        "of its choices")
    bad = SCALE.replace('tunable("tile", [4, 8, 0])', 'tunable("tile", ["a b"])')
    with pytest.raises(ScriptError, match="a tunable string value must be an identifier"):
        translate_text(bad, path)
    with pytest.raises(TunableError, match="a tunable's name must be an identifier"):
        translate_text(SCALE, path, tunables={"ti-le": 4})

# }}}


# {{{ records

def test_record_round_trip_and_content_matching(tmp_path):
    src = tmp_path / "scale.f90"
    src.write_text(SCALE)
    assert record_path(src) == tmp_path / "scale.f90.tune.json"
    store_entry(src, SCALE, defines={"Nq": 8}, transform=None, device="Dev\x1b[31m A",
                sizes={"n": 96}, values={"tile": 8, "p": (1, "a")}, measurements={"time_ms": 1.5})
    (e,) = read_record(record_path(src))
    assert e.device == "Dev?[31m A" and e.values == {"tile": 8, "p": (1, "a")}
    assert find_entry(src, SCALE, {"Nq": 8}, None)[0] is not None
    assert find_entry(src, SCALE, {"Nq": 4}, None)[0] is None          # other -D values
    assert find_entry(src, SCALE + "\n", {"Nq": 8}, None)[0] is None   # edited file
    # same key replaces, another device adds; entries of an older content are dropped
    store_entry(src, SCALE, defines={"Nq": 8}, transform=None, device="Dev\x1b[31m A",
                sizes={"n": 96}, values={"tile": 4}, measurements={})
    store_entry(src, SCALE, defines={"Nq": 8}, transform=None, device="B", sizes={"n": 96},
                values={"tile": 0}, measurements={})
    assert [e.values["tile"] for e in read_record(record_path(src))] == [4, 0]
    store_entry(src, SCALE + "\n", defines={}, transform=None, device="B", sizes={},
                values={"tile": 8}, measurements={})
    assert len(read_record(record_path(src))) == 1


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("content, why", [
    ("{", "invalid JSON"),
    ('{"f2loopy_tuning_record": 2, "entries": []}', "unknown format"),
    (('{"f2loopy_tuning_record": 1, "entries": [{"source_sha256": "' + "0" * 64 + '", '
      '"device": "d", "values": {"tile": "__import__(\'os\')"}}]}'),
     "a tunable string value must be an identifier"),
    (('{"f2loopy_tuning_record": 1, "entries": [{"source_sha256": "x", "device": "d", '
      '"values": {}}]}'), "bad source_sha256"),
])
def test_hostile_records_are_refused(tmp_path, content, why):
    src = tmp_path / "scale.f90"
    src.write_text(SCALE)
    record_path(src).write_text(content)
    with pytest.raises(RecordError) as info:
        translate_file(src)
    assert why in info.value.message
    assert info.value.format().startswith(f"{record_path(src)}:1:1: error: ")
    assert translate_file(src, tuning=False).outputs      # --no-tuning ignores it

# }}}


# {{{ tune on the CPU

def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "f2loopy.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def test_tune_checks_times_records_and_translate_uses_it(tmp_path, cl_queue):
    from f2loopy.tune.command import run_tune
    src = tmp_path / "scale.f90"
    src.write_text(SCALE)
    lines = []
    report = run_tune(src, min_time=0.01, warmup=1, queue=cl_queue, progress=lines.append)
    assert report.strategy == "exhaustive" and len(report.variants) == 6
    status = {(v.values["tile"], v.values["version"]): v.status for v in report.variants}
    # tile 0 is refused by split_iname; the changed source is caught by the check
    assert status == {(4, "original"): "ok", (8, "original"): "ok", (0, "original"): "refused",
                      (4, "changed"): "wrong", (8, "changed"): "wrong",
                      (0, "changed"): "refused"}
    assert report.best.values["version"] == "original" and report.best.time_ms > 0
    assert report.default.values == {"tile": 4, "version": "original"}
    assert len(lines) == 6 and lines[0].startswith("[1/6] tile=4, version='original'")
    wrong = next(v for v in report.variants if v.status == "wrong")
    assert wrong.message.startswith("x(") and "differs from the untransformed kernel" in \
        wrong.message
    text = report.to_text()
    assert "6 of 6 variants (exhaustive), 2 timed, 2 refused by a transform, 2 wrong" in text
    (entry,) = read_record(record_path(src))
    assert entry.values == report.best.values
    assert json.loads(record_path(src).read_text())["entries"][0]["variants"][4] == {
        "values": {"tile": 0, "version": "original"}, "status": "refused", "time_ms": None}

    # translate uses the record and says so; --no-tuning does not
    proc = _cli("translate", "scale.f90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    best = report.best.values["tile"]
    assert proc.stderr.startswith(
        f"f2loopy: note: scale.f90: using the tuned choices tile={best}, version='original' "
        "from scale.f90.tune.json (measured on ")
    assert f"reqd_work_group_size({best}, 1, 1)" in (tmp_path / "scale.cl").read_text()
    proc = _cli("translate", "--no-tuning", "scale.f90", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "reqd_work_group_size(4, 1, 1)" in (tmp_path / "scale.cl").read_text()


def test_tune_command_without_tunables(tmp_path):
    src = tmp_path / "plain.f90"
    src.write_text(SCALE.split("!$loopy")[0])
    proc = f2loopy("tune", "plain.f90", cwd=tmp_path)      # in this process (cli_util)
    assert proc.returncode == 1
    assert proc.stderr.startswith("plain.f90:1:1: error: plain.f90 declares no tunable "
                                  "choices")
    assert not record_path(src).exists()

# }}}


@pytest.mark.usefixtures("sandbox_process")
def test_recipes_declare_tunables(tmp_path):
    src = tmp_path / "scale.f90"
    src.write_text(SCALE.split("!$loopy")[0])
    r = translate_text(src.read_text(), src, transform="gpu_tiling")
    assert r.tunables == {"tile": (16, 8, 32)}
    assert "reqd_work_group_size(16, 1, 1)" in r.outputs[tmp_path / "scale.cl"]
    r = translate_text(src.read_text(), src, transform="gpu_tiling", tunables={"tile": 32})
    assert "reqd_work_group_size(32, 1, 1)" in r.outputs[tmp_path / "scale.cl"]
    # an explicit option is no tunable
    r = translate_text(src.read_text(), src, transform="gpu_tiling", defines={"tile": 8})
    assert r.tunables == {}
    assert "reqd_work_group_size(8, 1, 1)" in r.outputs[tmp_path / "scale.cl"]


def test_tune_needs_the_sizes_it_times_at(tmp_path, cl_queue):
    from f2loopy.tune.command import run_tune
    src = tmp_path / "scale.f90"
    src.write_text(SCALE.replace("! knl = fix_parameters(knl, n=96)\n", "", 1))
    with pytest.raises(F2LoopyError, match=r"give a size for 'n' \(--size n=\.\.\.\)"):
        run_tune(src, min_time=0.01, queue=cl_queue)
    assert not record_path(src).exists()


@pytest.mark.usefixtures("gfortran")
def test_check_uses_the_tuned_choices(tmp_path, cl_queue):
    from f2loopy.verify.check import check_file
    src = tmp_path / "scale.f90"
    src.write_text(SCALE)
    store_entry(src, SCALE, defines={}, transform=None, device="d", sizes={},
                values={"tile": 8, "version": "changed"}, measurements={})
    report = check_file(src, queue=cl_queue)
    assert not report.passed          # the recorded (wrong) variant is what gets checked
    record_path(src).unlink()
    assert check_file(src, queue=cl_queue).passed
