"""Generic interfaces of modules (``interface NAME; module procedure A, B``):
each call resolves to the specific procedure whose dummy arguments match in
type, kind and rank, as gfortran resolves it; what cannot be resolved is a
located error."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from util import farray, needs_gfortran, run_both

MODULE = """\
module generic_mod
  implicit none
  interface is_nan
    module procedure sisnan, disnan
  end interface
  interface scale
    module procedure scale_scalar, scale_vector
  end interface
contains
  logical function sisnan(x)
    real, intent(in) :: x
    sisnan = x /= x
  end function
  logical function disnan(x)
    real(8), intent(in) :: x
    disnan = x /= x
  end function
  subroutine scale_scalar(a, s)
    real(8), intent(inout) :: a
    real(8), intent(in) :: s
    a = a * s
  end subroutine
  subroutine scale_vector(v, s)
    real(8), intent(inout) :: v(:)
    real(8), intent(in) :: s
    integer :: i
    do i = 1, size(v)
      v(i) = v(i) * s + 1
    end do
  end subroutine
end module
"""

KERNEL = """\
subroutine k(n, x, y, flags)
  use generic_mod
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  real, intent(in) :: y(n)
  integer, intent(out) :: flags(n)
  integer :: i
  do i = 1, n
    flags(i) = 0
    if (is_nan(x(i))) flags(i) = 1
    if (is_nan(y(i))) flags(i) = flags(i) + 2
    call scale(x(i), 2d0)
  end do
  call scale(x(1:n:2), 3d0)
end subroutine
"""


def test_each_call_inlines_the_matching_specific():
    knl = parse_fortran(MODULE + KERNEL, "k.f90")["k"]
    assert {"disnan", "sisnan"} <= set(knl.temporaries)
    assert knl.temporaries["disnan"].dtype == np.bool_
    # the rank-1 call runs scale_vector's loop over the section
    assert any("+ 1" in str(i.expression) for i in knl.instructions)


@pytest.mark.parametrize("call, message", [
    ("flags(1) = merge(1, 0, is_nan(n))",
     "no specific procedure of generic 'is_nan' takes (integer(4) scalar); it has "
     "sisnan(real(4) scalar); disnan(real(8) scalar)"),
    ("call scale(x, 2)",
     "no specific procedure of generic 'scale' takes (real(8) rank-1 array, integer(4) "
     "scalar); it has scale_scalar(real(8) scalar, real(8) scalar); scale_vector(real(8) "
     "rank-1 array, real(8) scalar)"),
    ("call scale(s=2d0, a=x(1))", None),
])
def test_no_matching_specific_is_a_located_error(call, message):
    src = MODULE + KERNEL.replace("  call scale(x(1:n:2), 3d0)\n", f"  {call}\n")
    if message is None:                  # keyword arguments select by name
        parse_fortran(src, "k.f90")["k"]
        return
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "k.f90")
    assert e.value.message == message
    assert e.value.span.line == MODULE.count("\n") + 15


def test_an_argument_that_calls_a_function_is_refused():
    src = MODULE + KERNEL.replace("is_nan(y(i))", "is_nan(real(twice(x(i))))").replace(
        "end subroutine\n", "contains\n  real(8) function twice(a)\n    real(8) a\n"
        "    twice = 2*a\n  end function\nend subroutine\n")
    with pytest.raises(FortranError, match="an argument of generic 'is_nan' that calls a "
                                           "procedure is not supported"):
        parse_fortran(src, "k.f90")


def test_generic_interface_outside_a_module_is_refused():
    src = ("subroutine s(x)\n  real x\n  interface g\n    subroutine a(y)\n      real y\n"
           "    end subroutine\n  end interface\n  x = 1\nend subroutine\n")
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "s.f90")
    assert e.value.message == ("generic interfaces and operators are not supported (only "
                               "generic names declared in a module are)")


@needs_gfortran
def test_generics_match_gfortran(tmp_path, cl_queue):
    n = 7
    x = farray(n, np.float64, seed=1)
    x[3] = np.nan
    y = farray(n, np.float32, seed=2)
    y[5] = np.nan
    run_both(MODULE + KERNEL, "k", [n, x, y, np.zeros(n, np.int32)], tmp_path, cl_queue)


# a generic named like an intrinsic adds specifics to it (red team): a call
# that no specific takes is the intrinsic, as gfortran resolves it (it was
# "no specific procedure of generic 'abs' takes (real(8) scalar)")
EXTENDS_ABS = """module gam
  implicit none
  interface abs
    module procedure tenfold
  end interface
contains
  integer(8) function tenfold(x)
    integer(8), intent(in) :: x
    tenfold = x * 10_8
  end function
end module gam
subroutine gabs(n, a, k)
  use gam
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: a(n)
  integer(8), intent(inout) :: k(n)
  integer :: i
  do i = 1, n
    a(i) = abs(a(i)) + abs(-2)
    k(i) = abs(k(i))
  end do
end subroutine gabs
"""


@needs_gfortran
def test_a_generic_extends_the_intrinsic_of_its_name(tmp_path, cl_queue):
    run_both(EXTENDS_ABS, "gabs", [5, farray(5, np.float64, seed=3),
                                   np.array([-3, 4, -5, 6, 0], np.int64)], tmp_path, cl_queue)


# specifics that differ only by kind, the kinds from another module renamed on
# 'use' (swapped: here 'sp' is the double kind), literals of those kinds
KIND_SWAP = """module kinds2
  implicit none
  integer, parameter :: wp = selected_real_kind(15, 307)
  integer, parameter :: sp = kind(1.0)
end module kinds2
module ops2
  use kinds2, only: rk => wp, sp
  implicit none
  interface tw
    module procedure tw_s, tw_d
  end interface
contains
  real(sp) function tw_s(x)
    real(sp), intent(in) :: x
    tw_s = x + 1.0
  end function
  real(rk) function tw_d(x)
    real(rk), intent(in) :: x
    tw_d = x + 2.0_rk
  end function
end module ops2
subroutine gen3(n, a, b)
  use kinds2, only: sp => wp, wp => sp
  use ops2, only: tw
  implicit none
  integer, intent(in) :: n
  real(sp), intent(inout) :: a(n)
  real(wp), intent(inout) :: b(n)
  integer :: i
  do i = 1, n
    a(i) = tw(a(i)) + tw(1.0_sp) * 10 + tw(1.0_wp) * 100 + tw(b(i) * 1.0_sp) * 1000
    b(i) = tw(b(i)) + tw(2.0_wp) * 10
  end do
end subroutine gen3
"""


@needs_gfortran
def test_specifics_that_differ_by_a_renamed_kind(tmp_path, cl_queue):
    run_both(KIND_SWAP, "gen3", [5, farray(5, np.float64, seed=4), farray(5, np.float32, seed=5)],
             tmp_path, cl_queue)
