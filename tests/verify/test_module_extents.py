"""``f2loopy check`` on kernels over allocatable module arrays indexed by module
variables (issue 27, an ocean model's ``u(i,j,k)`` looped over ``do j =
js_pe, je_pe``): when deciding every size at once is too much isl work, the
index variables are decided first and the arrays' extents after them, so
that the subscripts' ranges lie inside the arrays' bounds."""

from __future__ import annotations

import pytest

from f2loopy.frontend import parse_fortran
from f2loopy.verify import shared_data
from f2loopy.verify.module_extents import (
    module_extent_names, plan_extents_last, planners_for, too_complex)
from check_util import needs_check

#: the ocean model's shape: grid bounds of this process as module variables,
#: fields as allocatable module arrays, a stencil over the inner points
GRID = """\
module grid
  implicit none
  integer :: is_pe, ie_pe, js_pe, je_pe, nz
  real*8, allocatable, dimension(:,:,:) :: u, masku, flux
  real*8, allocatable, dimension(:) :: dxt, dzt
end module grid

subroutine east_flux
  use grid
  implicit none
  integer :: i, j, k
  do k = 1, nz
    do j = js_pe, je_pe
      do i = is_pe - 1, ie_pe
        flux(i, j, k) = masku(i, j, k) * (u(i + 1, j, k) - u(i, j, k)) / dxt(i) * dzt(k)
      end do
    end do
  end do
end subroutine east_flux
"""


def _kernels():
    return [k for k in parse_fortran(GRID, "grid.f90").kernels if k.name == "east_flux"]


def test_the_extents_are_decided_after_the_index_variables():
    ks = _kernels()
    assert module_extent_names(ks) == {"u_n1", "u_n2", "u_n3", "masku_n1", "masku_n2",
                                       "masku_n3", "flux_n1", "flux_n2", "flux_n3",
                                       "dxt_n1", "dzt_n1"}
    for seed in range(4):
        v = plan_extents_last(ks, assumptions=[k.assumptions for k in ks],
                              given=shared_data.allocation_given(ks), seed=seed).values
        # every loop runs, and every subscript lies inside its array (lower bounds 1)
        assert v["is_pe"] - 1 >= 1 and v["is_pe"] - 1 <= v["ie_pe"], v
        assert 1 <= v["js_pe"] <= v["je_pe"] and v["nz"] >= 1, v
        assert v["ie_pe"] + 1 <= v["u_n1"], v
        assert v["ie_pe"] <= min(v["masku_n1"], v["flux_n1"], v["dxt_n1"]), v
        assert v["je_pe"] <= min(v["u_n2"], v["masku_n2"], v["flux_n2"]), v
        assert v["nz"] <= min(v["u_n3"], v["masku_n3"], v["flux_n3"], v["dzt_n1"]), v


def test_a_given_size_is_kept_and_a_bad_one_is_refused_located():
    from f2loopy.verify.inputs import InputError
    ks = _kernels()
    given = {**shared_data.allocation_given(ks), "ie_pe": 6, "u_n1": 9}
    v = plan_extents_last(ks, assumptions=[k.assumptions for k in ks], given=given).values
    assert v["ie_pe"] == 6 and v["u_n1"] == 9 and v["flux_n1"] >= 6
    # a given extent that no choice of the others keeps in bounds: refused, located
    given.update(is_pe=3, js_pe=1, je_pe=3, nz=2, u_n1=6)
    with pytest.raises(InputError) as info:
        plan_extents_last(ks, assumptions=[k.assumptions for k in ks], given=given)
    assert info.value.format().splitlines()[0] == (
        "grid.f90:15:9: error: with ie_pe=6, is_pe=3, je_pe=3, js_pe=1, nz=2, u_n1=6, "
        "'u(i + 1, j, k)' (grid.f90:15:9) goes out of bounds of 'u'")


def test_the_fallback_is_remembered_for_the_coverage_rounds():
    ks = _kernels()
    key = ("grid.f90", ("east_flux",))

    def first(*args, **kwargs):     # (stands for plan_inputs)
        raise AssertionError
    assert planners_for(key, ks, first) == [first, plan_extents_last]
    too_complex(key)
    assert planners_for(key, ks, first) == [plan_extents_last]
    plain = [k for k in parse_fortran("subroutine s(n, x)\n  integer n\n  real x(n)\n"
                                      "  x = 1\nend subroutine\n", "s.f90").kernels]
    assert planners_for(("s.f90", ("s",)), plain, first) == [first]


@needs_check
def test_check_passes_where_the_joint_plan_is_too_complex(tmp_path, monkeypatch):
    """The joint planning's isl budget exhausted (as for the ocean model's
    twenty arrays; here the first planner is made to give up at once): the
    check draws the extents after the index variables and compares against
    gfortran."""
    from f2loopy.ir.work_limit import IslQuotaExceeded
    from f2loopy.verify import check

    def exhausted(*args, **kwargs):
        raise IslQuotaExceeded("isl's operation limit was reached")
    monkeypatch.setattr(check, "plan_inputs", exhausted)
    from check_util import check_text
    path, res = check_text(tmp_path, GRID, name="grid.f90")
    assert res.exit_code == 0, res.output
    assert "grid.flux(" in res.output and "ok" in res.output, res.output


#: pyOM2's upwind advection: masks as statement functions of a module array
UPWIND = """\
subroutine upwind(n, a, var)
  use grid
  implicit none
  integer, intent(in) :: n
  real*8, intent(inout) :: a(n), var(n)
  integer :: i, j, k
  real*8 :: masktr
  masktr(i, j, k) = masku(i + 1, j, k) * masku(i, j, k)
  do i = 1, n - 1
    a(i) = masktr(i, 1, 1) * var(i)
  end do
end subroutine upwind
"""


def test_statement_function_lines_are_not_statements_to_cover():
    """gcov lists a statement function's line but never runs it (it is
    expanded where it is used): the coverage check must not ask for it."""
    from f2loopy.verify.coverage import required_lines
    text = GRID.split("subroutine east_flux")[0] + UPWIND
    k = parse_fortran(text, "up.f90")["upwind"]
    first = text.splitlines().index("subroutine upwind(n, a, var)") + 1
    counts = {first + 7: 0, first + 8: 5, first + 9: 0}
    assert required_lines(text, k, first, first + 11, counts) == {
        first + 8: "do i = 1, n - 1", first + 9: "a(i) = masktr(i, 1, 1) * var(i)"}
