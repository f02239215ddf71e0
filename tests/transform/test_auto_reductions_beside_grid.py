"""Reduction nests beside loop nests that use the grid (issue 25): under a
grid plan each reduction nest runs over many work-groups in launches of its
own (a grid nest before it, or after a global barrier after it), where it
ran sequentially in one work-item before; one followed by a grid nest in the
same launch stays sequential with a note.  Plan summaries, launch counts,
and the translations against gfortran through ``check``."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.frontend import parse_fortran
from f2loopy.transform.auto import plan_auto
from f2loopy.transform.auto_launches import split_for_auto

from transform_util import KeptCode
from util import needs_gfortran

SOURCE = """\
subroutine gridsum(n, m, a, b, s)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  double precision, intent(out) :: b(n, m), s
  integer :: i, j
  do j = 1, m
    do i = 1, n
      b(i, j) = 2.0d0 * a(i, j) - 1.0d0
    end do
  end do
  s = 0.0d0
  do j = 1, m
    do i = 1, n
      s = s + b(i, j)
    end do
  end do
end subroutine gridsum

subroutine normalise(n, m, a, b, s, vmax, imax, jmax)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  double precision, intent(out) :: b(n, m), s, vmax
  integer, intent(out) :: imax, jmax
  integer :: i, j
  s = 0.0d0
  vmax = -1.0d30
  imax = 0
  jmax = 0
  do j = 1, m
    do i = 1, n
      s = s + a(i, j)
      if (aint(4.0d0 * a(i, j)) > vmax) then
        vmax = aint(4.0d0 * a(i, j))
        imax = i
        jmax = j
      end if
    end do
  end do
  do j = 1, m
    do i = 1, n
      b(i, j) = a(i, j) / s
    end do
  end do
end subroutine normalise

subroutine sumthen(n, m, a, c, s)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  double precision, intent(out) :: c(n, m)
  double precision, intent(inout) :: s
  integer :: i, j
  do j = 1, m
    do i = 1, n
      s = s + a(i, j) * a(i, j)
    end do
  end do
  do j = 1, m
    do i = 1, n
      c(i, j) = 3.0d0 * a(i, j)
    end do
  end do
end subroutine sumthen
"""


@pytest.fixture(scope="module")
def units():
    return parse_fortran(SOURCE, "beside.f90")


@pytest.mark.codegen
def test_plans_and_launches(units):
    kept = KeptCode()
    # (the recipe's way: global barriers between nests that exchange data)
    out = plan_auto(split_for_auto(units["gridsum"]), verify=kept)
    assert out.summary() == (
        "auto: kernel 'gridsum': plan grid, j -> g.1/l.1, i -> g.0/l.0, j_1 -> g.1 (128 "
        "groups), i_1 -> g.0/l.0 (8 groups of 128; 1024, then one); parallel reduction of "
        "s (sum)")
    # the grid, the groups' partials, the combining group
    assert kept.of(out.kernel).device_code.count("__kernel void") == 3
    out = plan_auto(split_for_auto(units["normalise"]), verify=kept)
    assert out.tags == {"j_1": "g.1/l.1", "i_1": "g.0/l.0", "j": "g.1 (128 groups)",
                        "i": "g.0/l.0 (8 groups of 128; 1024, then one)"}
    assert out.reductions == ("vmax (max, located: imax, jmax)", "s (sum)")
    assert kept.of(out.kernel).device_code.count("__kernel void") == 4
    # a grid nest after it that exchanges nothing with it: the combining
    # launch ends with a global barrier of its own
    out = plan_auto(units["sumthen"], verify=kept)
    assert out.summary() == (
        "auto: kernel 'sumthen': plan grid, j_1 -> g.1/l.1, i_1 -> g.0/l.0, j -> g.1 (128 "
        "groups), i -> g.0/l.0 (8 groups of 128; 1024, then one); parallel reduction of "
        "s (sum)")
    code = kept.of(out.kernel).device_code
    assert code.count("__kernel void") == 3 and "sumthen_phase3" in code


@needs_gfortran
@pytest.mark.opencl
def test_check_against_gfortran(tmp_path):
    path = tmp_path / "beside.f90"
    path.write_text(SOURCE)
    # the maximum of aint(4 a) occurs many times: the first location counts
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "--size", "n=300",
                                    "--size", "m=7", str(path)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output and "NOT COVERED" not in res.output
