"""The code of a script's kernels made by two children side by side (issue
24): one makes the code without the value-flow check of the race analysis,
the other runs that check alone; together they give what one run gives
(the same code, the same first error)."""

from __future__ import annotations

import mmap
import os
import struct
import time

import pytest

import f2loopy
from f2loopy.codegen import barriers
from f2loopy.codegen.barriers import FlowsChecked, flow_check, flow_check_passed
from f2loopy.diagnostics import RaceError
from f2loopy.directives import child_codegen
from f2loopy.directives.child_codegen import (
    check_all_flows, lower_all, lower_script_kernels, merge_flow_checks)
from f2loopy.directives.lockdown import Limits

#: a private temporary set and used in each iteration: code, no error
SCALE = """subroutine scale(n, a, b)
  integer n, i
  real a(n), b(n), t
  do i = 1, n
    t = 2.0 * a(i)
    b(i) = t + 1.0
  end do
end
"""

#: 'last' carries a value from one iteration of i to the next: the
#: value-flow check refuses i as a parallel loop
LATEST = """subroutine latest(n, a, pos)
  integer n, i, last
  real a(n)
  integer pos(n)
  last = 0
  do i = 1, n
    if (a(i) < 0.5) then
      last = i
    end if
    pos(i) = last
  end do
end
"""

#: as LATEST, and every work-item writes s(1): the check of the pairs of
#: accesses (before the value-flow check) refuses it first
BOTH = """subroutine both(n, a, pos, s)
  integer n, i, last
  real a(n), s(1)
  integer pos(n)
  last = 0
  do i = 1, n
    s(1) = a(i)
    if (a(i) < 0.5) then
      last = i
    end if
    pos(i) = last
  end do
end
"""

SOURCES = {"scale": SCALE, "latest": LATEST, "both": BOTH}


def _kernel(name: str, tags: str = "i:l.0"):
    """A fresh kernel object (code generation remembers kernels by identity)."""
    return f2loopy.tag_inames(f2loopy.parse_fortran(SOURCES[name], "t.f90").kernels[0], tags)


def _without_marks(items: list) -> list:
    return [{k: v for k, v in item.items() if k != "after_flows"} for item in items]


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize("tags", ["i:l.0", "i:g.0"])
def test_the_two_halves_give_what_one_run_gives(name, tags):
    whole = lower_all([_kernel(name, tags)])
    halves = merge_flow_checks(lower_all([_kernel(name, tags)], flows="skip"),
                               check_all_flows([_kernel(name, tags)]))
    assert _without_marks(halves) == whole
    if name == "scale":
        assert "code" in whole[0]
    else:
        # (BOTH: the pairs' error, found before the value-flow check)
        expected = "race on 's'" if name == "both" else "iname 'i' is tagged"
        assert expected in whole[0]["error"]["message"]


def test_each_half_does_its_part_only(monkeypatch):
    # the check alone: stopped where it passed, no code made after it
    def no_emission(*args, **kwargs):
        raise AssertionError("code emitted in the check's child")

    monkeypatch.setattr(barriers, "_place", no_emission)
    with flow_check("only"), pytest.raises(FlowsChecked):
        f2loopy.generate_code(_kernel("scale"))
    assert check_all_flows([_kernel("scale")]) == [None]
    (error,) = check_all_flows([_kernel("latest")])
    assert error["class"] == "RaceError" and "would not arrive" in error["message"]
    monkeypatch.undo()
    # the code without the check: LATEST's error is not its to find
    with flow_check("skip"):
        gk = f2loopy.generate_code(_kernel("latest"))
        assert flow_check_passed()
    assert "pos[" in gk.device_code
    (item,) = lower_all([_kernel("both")], flows="skip")
    assert item["after_flows"] is False         # the pairs' error comes before the check
    with pytest.raises(RaceError, match="would not arrive"):
        f2loopy.generate_code(_kernel("latest"))    # and inline, as always
    # code made without the check is not remembered as the kernel's
    k = _kernel("latest")
    assert "code" in lower_all([k], flows="skip")[0]
    with pytest.raises(RaceError, match="would not arrive"):
        f2loopy.generate_code(k)


def test_flow_check_mode_is_checked_and_restored():
    with pytest.raises(ValueError, match="unknown flow-check mode"):
        with flow_check("sometimes"):
            pass
    with pytest.raises(RuntimeError):
        with flow_check("only"):
            raise RuntimeError
    assert barriers._FLOWS["mode"] == "inline"


@pytest.mark.parametrize("flow, item, merged", [
    (None, {"code": 1}, {"code": 1}),
    ({"m": "flow"}, {"code": 1}, {"error": {"m": "flow"}}),
    ({"m": "flow"}, {"error": {"m": "later"}, "after_flows": True}, {"error": {"m": "flow"}}),
    ({"m": "flow"}, {"error": {"m": "earlier"}, "after_flows": False},
     {"error": {"m": "earlier"}, "after_flows": False}),
    ({"m": "flow"}, {"error": {"m": "phased"}}, {"error": {"m": "phased"}}),
])
def test_merge_keeps_the_order_of_one_run(flow, item, merged):
    assert merge_flow_checks([item], [flow]) == [merged]


def _outcome(code, kernel):
    try:
        return code.code(kernel).device_code
    except RaceError as exc:
        return exc.format()


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_children_side_by_side_and_alone_agree(name, monkeypatch):
    outcomes = []
    for together in (True, False):
        monkeypatch.setattr(child_codegen, "side_by_side", lambda together=together: together)
        k = _kernel(name)
        outcomes.append(_outcome(lower_script_kernels([k], Limits.from_environment()), k))
    assert outcomes[0] == outcomes[1]
    assert ("__kernel" in outcomes[0]) == (name == "scale")


@pytest.mark.usefixtures("sandbox_process")
def test_children_run_at_the_same_time():
    """Each child waits (bounded) for the other to have started: forked one
    after the other's end, neither would see the other."""
    from f2loopy.directives.sandbox import run_in_children
    shared = mmap.mmap(-1, 16)

    def body(me: int, other: int):
        def run(fd):
            struct.pack_into("q", shared, 8 * me, 1)
            deadline = time.monotonic() + 20.0
            while struct.unpack_from("q", shared, 8 * other)[0] == 0 and \
                    time.monotonic() < deadline:
                time.sleep(0.005)
            seen = struct.unpack_from("q", shared, 8 * other)[0]
            os.write(fd, b"saw" if seen else b"alone")
            os._exit(0)
        return run

    answers = run_in_children([body(0, 1), body(1, 0)], Limits(wall_s=60.0))
    assert [a.text for a in answers] == ["saw", "saw"]


def test_side_by_side_only_where_a_cpu_is_free(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.7, 0.5, 0.5))
    assert child_codegen.side_by_side()
    monkeypatch.setattr(os, "getloadavg", lambda: (2.5, 2.0, 2.0))
    assert not child_codegen.side_by_side()
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert not child_codegen.side_by_side()
