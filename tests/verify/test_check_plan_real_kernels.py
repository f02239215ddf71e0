"""The input plan of ``f2loopy check`` on shapes of real kernels (issue 27):
an ocean model's bottom index (``ks = max(kbot(i), kbot(i+1)); if (ks > 0)
then; k = ks; d(i,k+1) ...``), subscripts through temporaries assigned more
than once, an array viewed by sequence association that overruns with the
drawn sizes, the values tried for flags (``select case`` on named constants,
integer masks tested against constants) and data with many exact zeros.
Unit tier: the plan as facts, no compiler."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.frontend import parse_fortran
from f2loopy.verify import shared_data
from f2loopy.verify.coverage import _case_values, compared_arrays, compared_values
from f2loopy.verify.input_plan import InputPlan, ValueRange
from f2loopy.verify.inputs import InputError, plan_inputs
from f2loopy.verify.module_extents import plan_extents_last
from f2loopy.verify.subscripts import _array_accesses

#: the bottom cell of each column from a module array; 0 is land, which the
#: guard skips; the cell above the bottom and dzw(max(1,k-1)) are read
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


def _kernel(src, name, path="k.f90"):
    return [k for k in parse_fortran(src, path).kernels if k.name == name]


def test_a_bottom_index_through_max_and_a_guard_gets_its_range():
    ks = _kernel(BOTTOM, "to_wgrid")
    for seed in range(3):
        plan = plan_extents_last(ks, assumptions=[k.assumptions for k in ks],
                                 given=shared_data.allocation_given(ks), seed=seed)
        r, v = plan.ranges["kbot"], plan.values
        # levels 1..nz-1 (the cell above is read) that dzw has, and 0: the
        # guard skips land
        top = min(v["nz"] - 1, v["dzw_n1"], v["diss_n2"] if "diss_n2" in v else v["nz"])
        assert (r.lo, r.hi) == (0, top), (r, v)
        drawn = plan.generate(seed)["kbot"]
        assert drawn.min() >= 0 and drawn.max() <= top


def test_a_subscript_is_seen_through_the_assignment_that_reaches_it():
    (k,) = _kernel(BOTTOM, "to_wgrid")
    seen = {str(a.index) for a in _array_accesses(k) if a.array == "diss_w" and a.axis == 1}
    # k = ks (then k = nz after the loop): each read sees its own assignment
    assert seen == {"max(kbot[i], kbot[i + 1])", "k", "nz"}


LOOP_CARRIED = """\
subroutine pack_pos(n, x, out)
  integer, intent(in) :: n
  real, intent(in) :: x(n)
  real, intent(inout) :: out(n)
  integer :: i, m
  m = 1
  do i = 1, n
    out(m) = x(i)
    m = m + 1
  end do
end subroutine
"""


def test_an_assignment_a_later_one_in_the_loop_replaces_is_not_forwarded():
    (k,) = _kernel(LOOP_CARRIED, "pack_pos")
    (acc,) = [a for a in _array_accesses(k) if a.array == "out"]
    assert not acc.forwarded and str(acc.index) == "m"


RESHAPE = """\
subroutine smooth(is_, ie_, n, a)
  integer, intent(in) :: is_, ie_, n
  real(8), intent(inout) :: a(is_:ie_, n)
  call halve(1, ie_ - is_ + 2, n, a)
end subroutine

subroutine halve(lo, hi, n, b)
  integer, intent(in) :: lo, hi, n
  real(8), intent(inout) :: b(lo:hi, n)
  integer :: i, j
  do j = 1, n
    do i = lo, hi
      b(i, j) = 0.5d0 * b(i, j)
    end do
  end do
end subroutine
"""


def test_an_array_viewed_longer_than_it_is_is_an_input_error():
    ks = _kernel(RESHAPE, "smooth", "s.f90")
    with pytest.raises(InputError) as err:
        plan_inputs(ks, assumptions=[k.assumptions for k in ks], seed=0)
    msg = str(err.value)
    assert msg.startswith("s.f90:13:7: error: "), msg
    assert "the original reaches past the end of 'a' with the sizes drawn (is_=" in msg, msg
    assert msg.splitlines()[0].endswith(
        "its subscript multiplies or divides sizes (as where a procedure views an array with "
        "other extents), which the check cannot choose sizes for; give sizes with --size or "
        "--range for which it stays in bounds"), msg


FLAGS = """\
module hs_update
  implicit none
  integer, parameter :: lt = -1, gt = 1
contains
  subroutine update(n, j_range, cell, x)
    integer, intent(in) :: n, j_range
    integer, intent(in) :: cell(n)
    real, intent(inout) :: x(n)
    integer :: i
    select case (j_range)
    case (lt)
      x(1) = 0
    case (gt, 5:7)
      x(n) = 0
    end select
    do i = 1, n
      if (cell(i) == 0) x(i) = 1
      if (cell(i) .eq. 2) x(i) = 2
    end do
  end subroutine
end module
"""


def test_flags_are_drawn_from_the_case_values_and_masks_from_the_constants():
    assert _case_values(FLAGS, "j_range") == [-1, 1, 5, 7]
    assert _case_values(FLAGS, "n") == []
    ks = _kernel(FLAGS, "update")
    flags = {v for r in range(40) for v in compared_values(FLAGS, ks, r, 0, set()).values()}
    assert flags == {-1, 1, 5, 7}
    masks = [compared_arrays(FLAGS, ks, r, 0, set()) for r in range(20)]
    assert {str(m) for m in masks} == {"{}", "{'cell': (0.0, 3.0)}"}
    # (given by the user: left alone)
    assert all(compared_arrays(FLAGS, ks, r, 0, {"cell"}) == {} for r in range(20))


def test_data_with_many_zeros_and_ones():
    ks = _kernel(FLAGS, "update")
    plan = plan_inputs(ks, seed=0, given={"n": 300})
    assert isinstance(plan, InputPlan)
    x = plan.generate(3, style="zeros")["x"]
    zeros, ones = np.mean(x == 0), np.mean(x == 1)
    assert 0.25 < zeros < 0.42 and 0.25 < ones < 0.42, (zeros, ones)
    assert np.all(np.abs(x) <= 1.5)
    # the ranges the plan decided stay: only free data change
    plan.ranges["cell"] = ValueRange(4, 4)
    assert set(plan.generate(3, style="zeros")["cell"]) == {4}


def test_each_step_of_a_plan_in_steps_has_its_own_isl_budget():
    import islpy as isl

    from f2loopy.ir.work_limit import IslQuotaExceeded, isl_operation_limit, next_step_budget
    box = isl.Set("[n] -> { [i, j] : 0 <= i < n and 0 <= j < n and i + j < 3n }")

    def work():
        s = box
        for k in range(30):
            s = (s | isl.Set(f"[n] -> {{ [i, j] : i = {k} + j }}")).coalesce()
        return s
    next_step_budget()           # (outside a limit: nothing)
    with pytest.raises(IslQuotaExceeded):
        with isl_operation_limit(2000):
            try:
                work()
            except isl.Error:
                pass
            next_step_budget()   # the first step ran out: its results are not used
    with isl_operation_limit(10**6):
        work()
        next_step_budget()
        work()
