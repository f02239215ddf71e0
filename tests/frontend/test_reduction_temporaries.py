"""The result of ``sum(..., dim=)`` (and ``maxloc``/``minloc`` along a
dimension) over sections whose length is a variable the kernel sets (issue 27:
the Allen-Tildesley ``milcshake_a``, ``k = n - 1`` then ``sum(rij_old(:,
1:k-1) * rij_new(:, 2:k), dim=1)``): its temporary takes the extent of an
array whose section it reduces, which bounds the section's length."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from util import farray, needs_gfortran, run_both

CHAIN = """subroutine tridiag ( n, rij_old, rij_new, dl, dd, du, best, bond )
  implicit none
  integer, intent(in) :: n
  real, intent(in) :: rij_old(3, n), rij_new(3, n), bond
  real, intent(out) :: dl(n), dd(n), du(n)
  integer, intent(out) :: best(3)
  integer :: k
  k = n - 1
  dl(1:k-1) = -2.0*sum ( rij_old(:,1:k-1)*rij_new(:,2:k),   dim=1 )
  dd(1:k)   =  2.0*sum ( rij_old(:,1:k)  *rij_new(:,1:k),   dim=1 ) / 0.5
  du(1:k-1) = -2.0*sum ( rij_old(:,2:k)  *rij_new(:,1:k-1), dim=1 ) + bond
  best = maxloc ( rij_new(:,1:k), dim=2 )
end subroutine
"""


def test_the_temporary_takes_the_extent_of_the_reduced_array():
    k = parse_fortran(CHAIN, "c.f90")["tridiag"]
    shapes = {n: (tuple(map(str, t.shape)), str(t.address_space))
              for n, t in k.temporaries.items() if n.endswith("result") or "result_" in n
              and "ubound" not in n}
    assert shapes == {"sum_result": (("n",), "global"), "sum_result_1": (("n",), "global"),
                      "sum_result_2": (("n",), "global"), "maxloc_result": (("3",), "None"),
                      "maxloc_value_result": (("3",), "None")}


def test_a_length_nothing_bounds_is_a_located_error():
    source = CHAIN.replace("  best = maxloc", "  dd(1:k) = sum(spread(dl(1:k), 2, 3), dim=2)\n"
                                               "  best = maxloc")
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "c.f90")
    assert e.value.format().splitlines()[0] == (
        "c.f90:12:13: error: the result of 'sum' needs a temporary array whose size "
        "depends on 'k', which the kernel changes")


@needs_gfortran
def test_reductions_along_a_dimension_match_gfortran(tmp_path, cl_queue):
    n = 7
    run_both(CHAIN, "tridiag", [n, farray((3, n), np.float32, seed=1),
                                farray((3, n), np.float32, seed=2), np.zeros(n, np.float32),
                                np.zeros(n, np.float32), np.zeros(n, np.float32),
                                np.zeros(3, np.int32), 1.5], tmp_path, cl_queue, rtol=1e-5)
