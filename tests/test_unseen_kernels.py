"""Kernels of real projects nobody had tried (issue 27): generic interfaces
that only seemed to write a size, dummies sized by module variables, ..."""

from __future__ import annotations

import numpy as np

from f2loopy.frontend import parse_fortran
from util import needs_gfortran, run_both

# {{{ a call through a generic name writes what its specific writes (cause 9)

SET_TO_SCALAR = """module setm
  implicit none
  interface set_to_scalar
    module procedure set_1d, set_2d
  end interface
contains
  subroutine set_1d(ni, array, val)
    integer, intent(in) :: ni
    real(8), intent(out) :: array(ni)
    real(8), intent(in) :: val
    array = val
  end subroutine
  subroutine set_2d(ni, nj, array, val)
    integer, intent(in) :: ni, nj
    real(8), intent(out) :: array(ni, nj)
    real(8), intent(in) :: val
    array = val
  end subroutine
end module
subroutine init(ni, nj, a, b)
  use setm
  implicit none
  integer, intent(in) :: ni, nj
  real(8), intent(out) :: a(ni, nj), b(ni)
  call set_to_scalar(ni, nj, a, 1.5d0)
  call set_to_scalar(ni, b, val=-2d0)
end subroutine
"""


def test_a_generic_call_writes_only_what_a_fitting_specific_writes():
    k = parse_fortran(SET_TO_SCALAR, "s.f90")["init"]
    assert [a.name for a in k.args] == ["ni", "nj", "a", "b"]
    assert tuple(map(str, k.arg_dict["a"].shape)) == ("ni", "nj")
    assert [i.assignee_var_names() for i in k.instructions] == [("a",), ("b",)]


@needs_gfortran
def test_a_generic_call_matches_gfortran(tmp_path, cl_queue):
    run_both(SET_TO_SCALAR, "init", [5, 3, np.zeros((5, 3), order="F"), np.zeros(5)],
             tmp_path, cl_queue)

# }}}
