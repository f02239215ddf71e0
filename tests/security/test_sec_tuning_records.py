"""Tuning records (``FILE.tune.json``, issue 14 round 2) come with
downloaded code: untrusted input that chooses among the script's own
tunable choices.  A record must not hang ``translate``, leak what it links
to, carry values that are not literals among the declared choices, or change
what is generated without saying so.
"""

from __future__ import annotations

import json
import os

import pytest

from f2loopy.tuning_record import record_path, source_hash
from security_util import (
    CANARY, SAXPY, assert_safe, files_in, invoke, run_cli, terminal_is_clean)

TUNED = SAXPY + """\
!$loopy begin
! knl, = parse_fortran(SOURCE, FILENAME)
! t = tunable("tile", [4, 8])
! knl = split_iname(knl, "i", t, outer_tag="g.0", inner_tag="l.0")
! RESULT = [knl]
!$loopy end
"""


def record(values, device="dev", text=TUNED):
    return json.dumps({"f2loopy_tuning_record": 1, "entries": [
        {"source_sha256": source_hash(text), "defines": {}, "transform": None,
         "device": device, "sizes": {}, "values": values}]})


@pytest.fixture
def work(tmp_path):
    (tmp_path / "t.f90").write_text(TUNED)
    return tmp_path


@pytest.mark.parametrize("kind", ["fifo", "dev_stdin", "dev_zero", "proc_environ", "folder"])
@pytest.mark.usefixtures("python_process")
def test_special_record_files(work, kind):
    """Before: a FIFO named t.f90.tune.json hung translate for ever."""
    rec = record_path(work / "t.f90")
    if kind == "fifo":
        os.mkfifo(rec)
    elif kind == "folder":
        rec.mkdir()
    else:
        rec.symlink_to({"dev_stdin": "/dev/stdin", "dev_zero": "/dev/zero",
                        "proc_environ": "/proc/self/environ"}[kind])
    proc = run_cli(["translate", "t.f90"], work, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"{rec.name}:1:1: error: {rec.name} is not a usable "
                                  "tuning record"), proc.stderr
    assert files_in(work) == ["t.f90", rec.name]
    rec.unlink() if rec.is_symlink() or rec.is_fifo() else rec.rmdir()
    assert_safe(work, proc.stdout, proc.stderr)


@pytest.mark.parametrize("content, why", [
    # (a well-formed record: the recipe runs, in the sandbox, to declare its choices)
    pytest.param(record({"tile": 1 << 20}), "not one of its choices",
                 marks=pytest.mark.sandbox),
    (record({"tile": "__import__('os').system('touch SENTINEL')"}), "must be an identifier"),
    (record({"tile": {"__class__": 1}}), "tunable values are int"),
    (record({"tile": [4] * 17}), "at most 16 items"),
    (record({"ti-le": 4}), "must be an identifier"),
    (" " * (1 << 20) + "{}", "larger than"),
    ("[" * 100000 + "]" * 100000, "invalid JSON"),
])
def test_hostile_record_values(work, content, why):
    record_path(work / "t.f90").write_text(content)
    result = invoke(["translate", "t.f90"], work)
    assert result.exit_code == 1 and why in result.stderr, result.stderr
    assert files_in(work) == ["t.f90", "t.f90.tune.json"]
    assert_safe(work, result.stdout, result.stderr)


@pytest.mark.usefixtures("sandbox_process")
def test_a_record_never_changes_the_output_silently(work):
    """A matching record is announced (with its device name made printable);
    --no-tuning gives the untuned output."""
    record_path(work / "t.f90").write_text(record({"tile": 8}, device="GPU\x1b]0;x\x07\u202e"))
    result = invoke(["translate", "t.f90"], work)
    assert result.exit_code == 0, result.stderr
    assert "using the tuned choices tile=8 from t.f90.tune.json" in result.stderr
    assert "reqd_work_group_size(8, 1, 1)" in (work / "t.cl").read_text()
    assert terminal_is_clean(result.stderr)
    result = invoke(["translate", "--no-tuning", "t.f90"], work)
    assert result.exit_code == 0 and "tuned" not in result.stderr
    assert "reqd_work_group_size(4, 1, 1)" in (work / "t.cl").read_text()
    assert CANARY not in result.stderr
