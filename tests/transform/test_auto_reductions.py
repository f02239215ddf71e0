"""Parallel reductions into scalars under ``--transform auto`` (issue 25,
CloverLeaf's field_summary and calc_dt): which nests the ``reduction`` plan
runs in one work-group, the located reason where a nest stays sequential,
the generated code's shape, and the translations against gfortran (sums
reassociated: check's float64 tolerance; extremes and their locations,
with many ties, exactly)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from f2loopy.analysis.reductions import reduction_nests
from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.frontend import parse_fortran
from f2loopy.transform.auto import plan_auto
from f2loopy.transform.parallel_reduction import parallel_reduction
from f2loopy.diagnostics import TransformError

from transform_util import KeptCode
from util import needs_gfortran

SOURCE = """\
subroutine sums(n, m, a, ia, s, t, cnt, big)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  integer, intent(in) :: ia(n, m)
  double precision, intent(inout) :: s
  double precision, intent(out) :: t, big
  integer, intent(out) :: cnt
  integer :: i, j
  t = 0.0d0
  cnt = 0
  big = -1.0d30
  do j = 1, m
    do i = 1, n
      s = s + a(i, j)
      t = t - 2.0d0 * a(i, j) * a(i, j)
      if (ia(i, j) > 0) cnt = cnt + 1
      big = max(big, a(i, j) * ia(i, j))
    end do
  end do
end subroutine sums

subroutine minloc2(n, m, ia, vmin, imin, jmin, vmax, imax)
  implicit none
  integer, intent(in) :: n, m
  integer, intent(in) :: ia(n, m)
  integer, intent(out) :: vmin, imin, jmin, imax
  double precision, intent(out) :: vmax
  double precision :: e
  integer :: i, j, v
  vmin = 100
  imin = -1
  jmin = -1
  vmax = -1.0d0
  imax = 0
  do j = 1, m
    do i = 1, n
      v = mod(abs(ia(i, j)), 3)
      if (v < vmin) then
        vmin = v
        imin = i
        jmin = j
      end if
      e = dble(mod(abs(ia(i, j)), 4))
      if (e > vmax) then
        vmax = e
        imax = i + 10 * j
      end if
    end do
  end do
end subroutine minloc2

subroutine plainmin(n, m, a, s)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  double precision, intent(inout) :: s
  integer :: i, j
  do j = 1, m
    do i = 1, n
      if (a(i, j) < s) s = a(i, j)
    end do
  end do
end subroutine plainmin

subroutine readinside(n, m, a, b, s)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  double precision, intent(out) :: b(n, m)
  double precision, intent(inout) :: s
  integer :: i, j
  do j = 1, m
    do i = 1, n
      s = s + a(i, j)
      b(i, j) = s
    end do
  end do
end subroutine readinside

subroutine lastmin(n, m, a, s, il)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  double precision, intent(inout) :: s
  integer, intent(out) :: il
  integer :: i, j
  il = 0
  do j = 1, m
    do i = 1, n
      if (a(i, j) <= s) then
        s = a(i, j)
        il = i
      end if
    end do
  end do
end subroutine lastmin

subroutine twonests(n, m, a, mean, dev, lo, iloc)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  double precision, intent(out) :: mean, dev, lo
  integer, intent(out) :: iloc
  double precision :: s, t, mn, c
  integer :: i, j, il
  s = 0.0d0
  mn = 1.0d30
  il = 0
  do j = 1, m
    do i = 1, n
      s = s + a(i, j)
      if (a(i, j) < mn) then
        mn = a(i, j)
        il = i + n * (j - 1)
      end if
    end do
  end do
  c = s / dble(n * m)
  mean = c
  t = 0.0d0
  do j = 1, m
    do i = 1, n
      t = t + (a(i, j) - c)**2 + mn
    end do
  end do
  dev = t
  lo = mn
  iloc = il
end subroutine twonests

subroutine locarr(n, m, a, w, s, tag)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  integer, intent(in) :: w(n, m)
  double precision, intent(inout) :: s
  integer, intent(out) :: tag
  integer :: i, j
  tag = -1
  do j = 1, m
    do i = 1, n
      if (a(i, j) > s) then
        s = a(i, j)
        tag = w(i, j) + j
      end if
    end do
  end do
end subroutine locarr
"""


@pytest.fixture(scope="module")
def units():
    return parse_fortran(SOURCE, "reds.f90")


def test_accumulators_and_their_forms(units):
    (nest,) = reduction_nests(units["sums"])
    assert (nest.outer, nest.loops, nest.reason) == ("j", ("j", "i"), "")
    # a difference, a count under a condition, a maximum; s keeps its value in
    assert [(a.name, a.op, a.locations) for a in nest.accumulators] == [
        ("big", "max", ()), ("cnt", "sum", ()), ("s", "sum", ()), ("t", "sum", ())]
    (nest,) = reduction_nests(units["minloc2"])
    assert [(a.name, a.op, a.locations) for a in nest.accumulators] == [
        ("vmax", "max", (("imax", "imax_1"),)),
        ("vmin", "min", (("imin", "imin_1"), ("jmin", "jmin_1")))]
    # the location may read an input array at the extreme's indices
    (nest,) = reduction_nests(units["locarr"])
    assert [(a.name, a.op, a.locations) for a in nest.accumulators] == [
        ("s", "max", (("tag", "tag_1"),))]
    (nest,) = reduction_nests(units["plainmin"])
    assert [(a.name, a.op, a.condition) for a in nest.accumulators] == [("s", "min", "s")]


@pytest.mark.codegen
def test_local_accumulators_read_by_a_later_nest(units):
    kept = KeptCode()
    # s and mn (with its location il) are local variables: every work-item
    # of the combining group computes the result, which the second nest (in
    # a launch of its own) reads: code generation keeps it in global memory
    # across the launches, stored once
    out = plan_auto(units["twonests"], verify=kept)
    assert out.summary() == (
        "auto: kernel 'twonests': plan reduction, j -> g.1 (128 groups), i -> g.0/l.0 "
        "(8 groups of 128; 1024, then one), j_1 -> g.1 (128 groups), i_1 -> g.0/l.0 "
        "(8 groups of 128; 1024, then one); parallel reduction of mn (min, located: il), "
        "s (sum), t (sum)")
    code = kept.of(out.kernel).device_code
    assert "if (lane0_l0 == 0 && mn_better)" in code and "mn_better = mn_extreme_1 < mn[0];" \
        in code


def test_reasons_where_a_nest_stays_sequential(units):
    (nest,) = reduction_nests(units["readinside"])
    assert nest.reason == "'s' is read elsewhere in the nest (line 76)"
    (nest,) = reduction_nests(units["lastmin"])
    assert nest.reason == ("the comparison on line 91 keeps the last of equal values of 's' "
                           "(use < or >)")
    out = plan_auto(units["readinside"], verify=generate_code)
    assert out.plan == "sequential"
    assert out.notes == ("loop 'j' carries a dependence on 's' (lines 75 and 75)",
                         "loop 'i' carries a dependence on 's' (lines 75 and 75)",
                         "loop nest 'j' is no parallel reduction: 's' is read elsewhere in "
                         "the nest (line 76)")
    with pytest.raises(TransformError, match="read elsewhere in the nest"):
        parallel_reduction(units["readinside"], nest_of(units, "readinside"), lanes=64)


def nest_of(units, name):
    return reduction_nests(units[name])[0]


@pytest.mark.codegen
def test_plan_and_generated_code(units):
    kept = KeptCode()
    out = plan_auto(units["minloc2"], group_size=64, verify=kept)
    assert out.summary() == (
        "auto: kernel 'minloc2': plan reduction, j -> g.1 (128 groups), i -> g.0/l.0 "
        "(8 groups of 64; 1024, then one); parallel reduction of vmax (max, located: imax), "
        "vmin (min, located: imin, jmin)")
    # one group (the shape within a group is the same with several)
    knl = units["minloc2"]
    for nest in reduction_nests(knl):
        knl = parallel_reduction(knl, nest, lanes=64)
    code = generate_code(knl).device_code
    assert "reqd_work_group_size(64, 1, 1)" in code
    # each work-item's first extreme and where, then the group's trees
    # (an equal value at an earlier place wins too: the first place is kept
    # whatever order the work-item's loops run in)
    assert ("cond = v < vmin_part || v == vmin_part && (j < j_vmin_part || j == j_vmin_part "
            "&& 1 + i_inner + 64 * i_outer < i_vmin_part);") in code
    assert "acc_lane_4[lane] = vmin_part == vmin_extreme ? j_vmin_part : 2147483647;" in code
    assert "vmin_part == vmin_extreme && j_vmin_part == j_vmin_first ? i_vmin_part" in code
    assert "if (lane_first == 0 && vmin_better)" in code
    out = plan_auto(units["sums"], verify=kept)
    assert out.plan == "reduction" and out.tags == {
        "j": "g.1 (128 groups)", "i": "g.0/l.0 (8 groups of 128; 1024, then one)"}
    code = kept.of(out.kernel).device_code
    # per group: the trees, then the group's partial to its scratch element;
    # the second launch: one group of 128 combines the 1024 partials, each
    # work-item first 8 of them in one loop (all accumulators), then the trees
    first, second = code.split("__kernel void", 2)[1:]
    assert first.count("__local double acc_lane") == 3 and "__local int acc_lane" in first
    assert "reqd_work_group_size(128, 1, 1)))" in second and "sums_phase2(" in second
    for v in ("s", "t", "big", "cnt"):
        assert f"{v}_groups[group + 8 * group_rows] = acc_lane" in first
    assert second.count("for (int groups_round = 0; groups_round <= 7; ++groups_round)") == 1
    assert "cnt_group_part = cnt_group_part + cnt_groups[128 * groups_round + lane_groups];" \
        in second and "__local int acc_lane_groups_1[128];" in second
    assert "s[0] = s[0] + acc_lane_groups" in second and "s[0] =" not in first


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("n,m", [(300, 5), (7, 3)])
def test_check_against_gfortran(tmp_path, n, m):
    path = tmp_path / "reds.f90"
    path.write_text(SOURCE)
    # small integers: the minimum and maximum occur many times (ties)
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "--size", f"n={n}",
                                    "--size", f"m={m}", "--range", "ia=-5:5", str(path)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output and "NOT COVERED" not in res.output


MIXED = """\
subroutine mixed(n, a, s, m, il, b)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n)
  double precision, intent(inout) :: s, m
  integer, intent(inout) :: il
  double precision, intent(out) :: b(n)
  logical :: c
  integer :: i
  do i = 1, n
    s = s + a(i)
    s = max(s, a(i))
  end do
  do i = 1, n
    c = a(i) < m
    if (c) m = a(i)
    if (c) il = i
    b(i) = il
  end do
  do i = 1, n
    c = a(i) < m
    if (c) m = a(i)
    if (c) il = int(m)
  end do
  do i = 1, n
    if (a(i) < il) il = a(i)
  end do
end subroutine mixed
"""


def test_reasons_of_mixed_forms():
    (knl,) = parse_fortran(MIXED, "mixed.f90")
    assert [(n.outer, n.reason) for n in reduction_nests(knl)] == [
        ("i", "'s' is updated with different operations (lines 11, 12)"),
        ("i_1", "'il' is used elsewhere in the nest (line 17)"),
        ("i_2", "line 23 records a value computed in the nest, not a function of the loop "
                "indices"),
        # the store converts: the values kept are not the values compared
        ("i_3", "line 26 compares 'il' with a value of another type")]


def test_one_group_runs_the_whole_kernel(units):
    from f2loopy.transform.iname import tag_inames
    nest = reduction_nests(units["twonests"])[0]
    knl = tag_inames(units["twonests"], {"i_1": "g.0"})
    with pytest.raises(TransformError, match="loop 'i_1' is already mapped to g.0; the "
                       "reduction runs in one work-group over l.0"):
        parallel_reduction(knl, nest, lanes=32)
