"""Auto's reduction plan over many work-groups (issue 25): each group's
partials (an extreme: its value and first location) to global scratch
arrays, a second launch in which one group combines them; one group where
the loop has at most one group's trips whatever the sizes.  Plan summaries,
launches and group counts, the generated code's shape, and the translations
against gfortran with sizes that need several groups (ties across groups,
zero trips, fewer trips than one group, 2-D nests, two nests), through
``check`` (the Python glue) and the Fortran glue."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from f2loopy.analysis.reductions import reduction_nests
from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.diagnostics import TransformError
from f2loopy.frontend import parse_fortran
from f2loopy.transform.auto import plan_auto
from f2loopy.transform.parallel_reduction import parallel_reduction

from fortran_util import (
    assert_all_ok, build_runtime, compile_and_run, glue_from_kernels, needs_toolchain)
from transform_util import KeptCode
from util import needs_gfortran
from test_auto_reductions import SOURCE

FIXED = """\
subroutine fixed(a, b, s, t)
  implicit none
  double precision, intent(in) :: a(100), b(200)
  double precision, intent(inout) :: s, t
  integer :: i
  do i = 1, 100
    s = s + a(i)
  end do
end subroutine fixed

subroutine fixed2(a, b, s, t)
  implicit none
  double precision, intent(in) :: a(100), b(200)
  double precision, intent(inout) :: s, t
  integer :: i
  do i = 1, 200
    t = t + b(i)
  end do
end subroutine fixed2

subroutine wide(m, a, s)
  implicit none
  integer, intent(in) :: m
  double precision, intent(in) :: a(200, m)
  double precision, intent(inout) :: s
  integer :: i, j
  do j = 1, m
    do i = 1, 200
      s = s + a(i, j)
    end do
  end do
end subroutine wide

subroutine rows3(n, a, s)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n, 3)
  double precision, intent(inout) :: s
  integer :: i, j
  do j = 1, 3
    do i = 1, n
      s = s + a(i, j)
    end do
  end do
end subroutine rows3

subroutine pre(n, a, y, x, s)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n), y
  double precision, intent(inout) :: s, x
  integer :: i
  x = 2.0d0 * y + x
  do i = 1, n
    s = s + a(i) * x
  end do
end subroutine pre
"""


@pytest.fixture(scope="module")
def units():
    return parse_fortran(SOURCE, "reds.f90")


@pytest.fixture(scope="module")
def fixed():
    return parse_fortran(FIXED, "fixed.f90")


@pytest.mark.codegen
def test_group_counts_and_launches(units, fixed):
    kept = KeptCode()
    # a loop of at most one group's trips whatever the sizes: one group,
    # one launch; more: as many groups as chunks, then one; a run-time
    # count: 32 groups (the plan before the pair, reduction_groups=32)
    out = plan_auto(fixed["fixed"], group_size=128, verify=kept)
    assert out.tags == {"i": "l.0 (one group of 128)"}
    assert kept.of(out.kernel).device_code.count("__kernel void") == 1
    out = plan_auto(fixed["fixed2"], group_size=128, verify=kept)
    assert out.tags == {"i": "g.0/l.0 (2 groups of 128, then one)"}
    out = plan_auto(fixed["fixed2"], group_size=128, verify=kept,
                    reduction_groups=128)
    assert out.tags == {"i": "g.0/l.0 (128 groups of 128, then one)"}
    out = plan_auto(units["sums"], group_size=32, verify=kept, reduction_groups=32)
    assert out.summary() == (
        "auto: kernel 'sums': plan reduction, i -> g.0/l.0 (32 groups of 32, then one); "
        "parallel reduction of big (max), cnt (sum), s (sum), t (sum)")
    assert kept.of(out.kernel).device_code.count("__kernel void") == 2
    # two nests: the second (reading the first's results) starts a launch
    out = plan_auto(units["twonests"], group_size=32, verify=kept,
                    reduction_groups=32)
    assert out.tags == {x: "g.0/l.0 (32 groups of 32, then one)" for x in ("i", "i_1")}
    assert kept.of(out.kernel).device_code.count("__kernel void") == 4
    # (by default g0 x g1 groups: see test_groups_of_the_plan)
    out = plan_auto(units["twonests"], group_size=32, verify=kept)
    assert kept.of(out.kernel).device_code.count("__kernel void") == 4
    # a scalar argument stored before the nest and read in it: its own launch
    out = plan_auto(fixed["pre"], group_size=32, verify=kept)
    code = kept.of(out.kernel).device_code
    assert out.plan == "reduction" and code.count("__kernel void") == 3


def test_groups_of_the_plan(units, fixed):
    # by default 8 x 128 groups: the chunks of the innermost reduction loop
    # on g.0, the next loop out on g.1; an axis whose loop has fewer chunks
    # or trips whatever the sizes gets that many, the other the rest of the
    # 1024; a nest of one loop all 1024 along the chunks
    def tags(knl, **kw):
        return plan_auto(knl, **kw).tags
    assert tags(units["plainmin"]) == {
        "j": "g.1 (128 groups)", "i": "g.0/l.0 (8 groups of 128; 1024, then one)"}
    assert tags(fixed["wide"]) == {
        "j": "g.1 (512 groups)", "i": "g.0/l.0 (2 groups of 128; 1024, then one)"}
    assert tags(fixed["rows3"]) == {
        "j": "g.1 (3 groups)", "i": "g.0/l.0 (341 groups of 128; 1023, then one)"}
    assert tags(fixed["pre"]) == {"i": "g.0/l.0 (1024 groups of 128, then one)"}
    assert tags(fixed["wide"], reduction_groups=(4, 2)) == {
        "j": "g.1 (4 groups)", "i": "g.0/l.0 (2 groups of 128; 8, then one)"}
    # one number: groups along the chunks only (1: one group, one launch)
    assert tags(units["plainmin"], reduction_groups=128) == {
        "i": "g.0/l.0 (128 groups of 128, then one)"}
    assert tags(units["plainmin"], reduction_groups=1) == {"i": "l.0 (one group of 128)"}
    (nest,) = reduction_nests(fixed["pre"])
    with pytest.raises(TransformError, match=r"groups \(2, 2\): the nest of loop 'i' has "
                       "one reduction loop, so no second axis of groups"):
        parallel_reduction(fixed["pre"], nest, lanes=32, groups=(2, 2))


def test_combining_group_loops_over_more_partials_than_work_items(units):
    knl = units["minloc2"]
    for nest in reduction_nests(knl):
        knl = parallel_reduction(knl, nest, lanes=4, groups=(3, 7))
    gen = generate_code(knl)
    first, second = gen.launches
    # 3 x 7 groups (whatever the sizes: every scratch element is written),
    # rows j round-robin over g.1, chunks of i over g.0
    assert str(first.grid.num_groups[0]).endswith(", 3)") and \
        str(first.grid.num_groups[1]).endswith(", 7)")
    assert [(b.name, b.elements) for b in first.scratch][:2] == [
        ("vmax_groups", 21), ("j_vmax_groups", 21)]
    assert "ia[4 * i_group + i_inner + 12 * i_outer_outer + n * (j_group + 7 * j_outer)]" \
        in first.device_code
    assert "vmin_groups[group + 3 * group_rows] = vmin_extreme;" in first.device_code
    # one group of 4 combines the 21 partials: each work-item first keeps the
    # first extreme of its partials in 6 rounds of one loop (a better value,
    # or an equal one at an earlier place; a round past the last group takes
    # nothing and reads nothing), then the trees keep the first location
    code = second.device_code
    assert "reqd_work_group_size(4, 1, 1)" in code
    assert code.count("for (int groups_round = 0; groups_round <= 5; ++groups_round)") == 1
    assert "vmin_group_take = lane_groups + 4 * groups_round < 21 && (vmin_groups[4 * " \
        "groups_round + lane_groups] < vmin_group_part || vmin_groups[4 * groups_round + " \
        "lane_groups] == vmin_group_part && (j_vmin_groups[4 * groups_round + lane_groups] < " \
        "j_vmin_part_group || j_vmin_groups[4 * groups_round + lane_groups] == " \
        "j_vmin_part_group && i_vmin_groups[4 * groups_round + lane_groups] < " \
        "i_vmin_part_group));" in code
    assert "if (vmin_group_take)" in code
    assert "vmin_group_part == vmin_extreme_1 && j_vmin_part_group == j_vmin_first_1" in code
    assert "vmin[0] = vmin_extreme_1" in code


def test_generated_code_of_a_located_minimum(units):
    knl = units["minloc2"]
    for nest in reduction_nests(knl):
        knl = parallel_reduction(knl, nest, lanes=64, groups=16)
    code = generate_code(knl).device_code
    first, second = code.split("__kernel void")[1:]
    assert "reqd_work_group_size(64, 1, 1)" in first
    assert "reqd_work_group_size(16, 1, 1)" in second
    # chunks of 64 round-robin over the 16 groups (coalesced loads)
    assert "ia[64 * i_group + i_inner + 1024 * i_outer_outer + n * (j - 1)]" in first
    # each group's minimum and its first location to the scratch arrays
    for a in ("vmin_groups[group] = vmin_extreme;", "i_vmin_groups[group] = i_vmin_first;",
              "j_vmin_groups[group] = j_vmin_first;"):
        assert a in first
    # one group reads them and keeps the first of equal minima
    for a in ("vmin_group_part = vmin_groups[lane_groups];",
              "j_vmin_part_group = j_vmin_groups[lane_groups];",
              "vmin_group_part == vmin_extreme_1 && j_vmin_part_group == j_vmin_first_1"):
        assert a in second
    assert "vmin[0] = vmin_extreme_1" in second and "vmin[0] = vmin_extreme" not in first


def test_groups_option(units):
    (nest,) = reduction_nests(units["sums"])
    for bad in (0, 65537, True, (2, 0), (300, 300), (1, 2, 3), [2, 2]):
        with pytest.raises(TransformError, match=r"parallel_reduction: groups is an integer "
                           r"from 1 to 65536 or a pair of them whose product is at most "
                           r"that, not "):
            parallel_reduction(units["sums"], nest, lanes=64, groups=bad)
    for bad in (0, (8, 0), "8x128", (1024, 1024)):
        with pytest.raises(TransformError, match=r"auto: reduction_groups is a number of "
                           r"groups or a pair of them \(at most 65536 in all\), not "):
            plan_auto(units["sums"], reduction_groups=bad)


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("n,m", [(5000, 2), (0, 3)])
def test_check_against_gfortran(tmp_path, n, m):
    # (test_auto_reductions checks fewer trips than one group, 300 and 7)
    path = tmp_path / "reds.f90"
    path.write_text(SOURCE)
    # small integers: the extremes occur many times, in many groups
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "--size", f"n={n}",
                                    "--size", f"m={m}", "--range", "ia=-5:5", str(path)])
    assert "FAIL" not in res.output
    assert sum(line.endswith("  ok") for line in res.output.splitlines()) == 20, res.output
    if n:
        assert res.exit_code == 0 and "NOT COVERED" not in res.output, res.output
    else:
        # zero trips: equal outputs, the loops' statements never ran
        assert res.exit_code == 1 and "NOT COVERED" in res.output, res.output


MAIN = """
program main
  use checks
  use minloc2_cl_mod
  use sums_cl_mod
  use locarr_cl_mod
  implicit none
  integer, parameter :: n = 3000, m = 2, n2 = 45, m2 = 5
  integer :: ia(n, m), i, j, st
  integer :: vmin1, imin1, jmin1, imax1, vmin2, imin2, jmin2, imax2
  double precision :: vmax1, vmax2
  double precision :: a2(n2, m2), s1, s2, t1, t2, big1, big2, x1, x2
  integer :: ia2(n2, m2), w2(n2, m2), cnt1, cnt2, tag1, tag2
  do j = 1, m
    do i = 1, n
      ia(i, j) = mod(i * 7 + j * 13, 11) + 3
    end do
  end do
  ia(2900, 1) = -4
  ia(2950, 1) = -4
  ia(100, 2) = -4
  call minloc2(n, m, ia, vmin1, imin1, jmin1, vmax1, imax1)
  call minloc2_cl(n, m, ia, vmin2, imin2, jmin2, vmax2, imax2, st)
  call check(st == F2L_OK, "status")
  call check(vmin1 == vmin2 .and. imin1 == imin2 .and. jmin1 == jmin2, "first minimum")
  call check(vmax1 == vmax2 .and. imax1 == imax2, "first maximum")
  ! 3 x 7 and 5 x 3 groups of 4 (rows on g.1; more groups than work-items
  ! combine them, in rounds past the last group too): sums, an integer
  ! count, a maximum, a located maximum with ties in many groups, groups
  ! without rows
  do j = 1, m2
    do i = 1, n2
      a2(i, j) = dble(mod(i * 5 + j * 3, 7)) - 2.5d0
      ia2(i, j) = mod(i + 2 * j, 5) - 2
      w2(i, j) = 100 * j + i
    end do
  end do
  s1 = 1.5d0
  s2 = 1.5d0
  call sums(n2, m2, a2, ia2, s1, t1, cnt1, big1)
  call sums_cl(n2, m2, a2, ia2, s2, t2, cnt2, big2, st)
  call check(st == F2L_OK .and. abs(s1 - s2) <= 1d-12 * abs(s1) .and. &
             abs(t1 - t2) <= 1d-12 * abs(t1), "sums over 21 groups")
  call check(cnt1 == cnt2 .and. big1 == big2, "count and maximum over 21 groups")
  x1 = -1d30
  x2 = -1d30
  call locarr(n2, 2, a2, w2, x1, tag1)
  call locarr_cl(n2, 2, a2, w2, x2, tag2, st)
  call check(st == F2L_OK .and. x1 == x2 .and. tag1 == tag2, "first maximum over 15 groups")
  call done()
end program
"""


@needs_toolchain
@pytest.mark.opencl
@pytest.mark.gfortran
@pytest.mark.differential
def test_fortran_glue_runs_both_launches(tmp_path, units):
    runtime = build_runtime(tmp_path)
    kernels = []
    for name, lanes, groups in (("minloc2", 32, 32), ("sums", 4, (3, 7)),
                                ("locarr", 4, (5, 3))):
        knl = units[name]
        for nest in reduction_nests(knl):
            knl = parallel_reduction(knl, nest, lanes=lanes, groups=groups)
        kernels.append(knl)
    sources = glue_from_kernels(tmp_path, "reds", SOURCE, kernels)
    assert sources[2].read_text().count("call f2l_c%launch_kernel(") == 6
    proc = compile_and_run(tmp_path, runtime, sources, MAIN)
    assert_all_ok(proc, 6)
