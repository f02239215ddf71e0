"""``f2loopy check`` on small kernels of the shapes that real projects'
check runs failed on (issue 27): a bottom index read through ``max`` and a
guard, a branch on an exact zero of masked differences, an integer mask
tested against 0, a ``select case`` on named constants.  Each passes with
every statement covered, without --range or --size."""

from __future__ import annotations

from check_util import check_text, needs_check

pytestmark = needs_check

BOTTOM = """\
module column_grid
  implicit none
  integer :: nz
  integer, allocatable :: kbot(:)
  real(8), allocatable :: dzw(:)
end module

module bottom_ops
  use column_grid
  implicit none
contains
  subroutine to_wgrid(n, diss, diss_w)
    integer, intent(in) :: n
    real(8), intent(in) :: diss(n, nz)
    real(8), intent(inout) :: diss_w(n, nz)
    integer :: i, k, ks
    do i = 1, n - 1
      ks = max(kbot(i), kbot(i+1))
      if (ks > 0) then
        k = ks; diss_w(i,k) = 0.5d0*(diss(i,k) + diss(i,k+1)) + diss(i,k)*dzw(max(1,k-1))/dzw(k)
        do k = ks + 1, nz - 1
          diss_w(i,k) = 0.5d0*(diss(i,k) + diss(i,k+1))
        end do
        k = nz; diss_w(i,k) = diss(i,k)
      end if
    end do
  end subroutine
end module
"""

LIMITER = """\
module limiter
  implicit none
contains
  subroutine limited_flux(n, mask, q, flux)
    integer, intent(in) :: n
    real(8), intent(in) :: mask(n), q(n)
    real(8), intent(inout) :: flux(n)
    real(8) :: r
    integer :: i
    do i = 2, n - 1
      r = (q(i+1) - q(i)) * mask(i)
      if (r == 0d0) then
        flux(i) = q(i)
      else
        flux(i) = q(i) + (q(i) - q(i-1)) * mask(i-1) / r
      end if
    end do
  end subroutine
end module
"""

CELLS = """\
module cells
  implicit none
  integer, parameter :: lower = -1, upper = 1
contains
  subroutine relax(n, side, obstacle, f)
    integer, intent(in) :: n, side
    integer, intent(in) :: obstacle(n)
    real(8), intent(inout) :: f(n)
    integer :: i, i1, i2
    select case (side)
    case (lower)
      i1 = 1
      i2 = n / 2
    case (upper)
      i1 = n / 2 + 1
      i2 = n
    case default
      stop 'bad side'
    end select
    do i = i1, i2
      if (obstacle(i) == 0) then
        f(i) = 0.5d0 * f(i)
      else
        f(i) = -f(i)
      end if
    end do
  end subroutine
end module
"""


def _passes(tmp_path, text, name):
    _, res = check_text(tmp_path, text, name=name)
    assert res.exit_code == 0, res.output
    assert "NOT COVERED" not in res.output and "never ran" not in res.output, res.output
    return res.output


def test_a_bottom_index_through_max_and_a_guard(tmp_path):
    _passes(tmp_path, BOTTOM, "bottom.f90")


def test_a_branch_on_an_exact_zero_is_reached_with_zeros(tmp_path):
    out = _passes(tmp_path, LIMITER, "limiter.f90")
    assert "covered with signed values, many exactly 0 or 1" in out, out


def test_an_integer_mask_and_a_select_case_on_named_constants(tmp_path):
    _passes(tmp_path, CELLS, "cells.f90")
