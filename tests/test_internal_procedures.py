"""Internal procedures (``contains`` inside a subroutine, issue 16): inlined
where they are called, also from loops and from each other; a variable of the
host used inside one (host association) is refused with its location."""

import numpy as np
import pytest

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend import parse_fortran
from util import farray, needs_gfortran, run_both, zeros

SMOOTH = """
subroutine smooth(n, x, y, alpha)
  implicit none
  integer n, i
  real x(n), y(n), alpha
  do i = 2, n - 1
    y(i) = blend(x(i - 1), x(i), x(i + 1), alpha)
    call clip(y(i), 1.5)
  end do
contains
  pure real function blend(a, b, c, w)
    real, intent(in) :: a, b, c, w
    blend = w * b + (1 - w) * half(a + c)
  end function
  pure real function half(s)
    real, intent(in) :: s
    half = 0.5 * s
  end function
  subroutine clip(v, top)
    real, intent(inout) :: v
    real, intent(in) :: top
    if (v > top) v = top
  end subroutine
end subroutine

subroutine other(n, x)
  implicit none
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = twice(x(i))
  end do
contains
  real function twice(v)
    real v
    twice = 2 * v
  end function
end subroutine
"""


@needs_gfortran
@pytest.mark.parametrize("sub, make", [
    ("smooth", lambda: [9, farray(9, seed=3, low=-2, high=2), zeros(9), np.float32(0.25)]),
    ("other", lambda: [5, farray(5, seed=4)]),
])
def test_against_gfortran(sub, make, tmp_path, cl_queue):
    run_both(SMOOTH, sub, make(), tmp_path, cl_queue)


def test_internal_procedures_are_no_kernels():
    assert parse_fortran(SMOOTH, "s.f90").keys() == ["smooth", "other"]


def test_host_association_is_refused():
    src = """subroutine s(n, x)
  implicit none
  integer n, i
  real x(n), scale
  scale = 2
  do i = 1, n
    x(i) = f(x(i))
  end do
contains
  real function f(v)
    real v
    f = scale * v
  end function
end subroutine
"""
    with pytest.raises(UnsupportedFeatureError) as info:
        parse_fortran(src, "t.f90")
    lines = info.value.format().splitlines()
    assert lines[0] == ("t.f90:12:9: error: internal procedure 'f' uses 'scale' of its host "
                        "'s' (host association is not supported: pass it as an argument)")
    assert lines[2].strip() == "^~~~~"


ELEMENTAL = """
module helpers
contains
  elemental real function soft(x, w)
    real, intent(in) :: x, w
    real :: t
    real, parameter :: half = 0.5
    t = x * w
    soft = t / (1.0 + abs(t)) + half
  end function
  elemental real function branchy(x)
    real, intent(in) :: x
    if (x > 0) then
      branchy = x
    else
      branchy = 0
    end if
  end function
end module

subroutine apply(n, m, a, b, c)
  use helpers
  implicit none
  integer n, m
  real a(n, m), b(n, m), c(n)
  b = soft(a, 2.0)
  c = soft(a(:, 1), a(:, m)) - 1
  b(1, :) = soft(b(1, :), 3.0)
  c(2) = soft(c(1), 0.5)
end subroutine
"""


@needs_gfortran
def test_elemental_function_on_arrays_and_sections(tmp_path, cl_queue):
    run_both(ELEMENTAL, "apply", [4, 3, farray((4, 3), seed=8, low=-3, high=3),
                                  zeros((4, 3)), zeros(4)], tmp_path, cl_queue)


def test_elemental_function_with_control_flow_is_refused():
    src = ELEMENTAL.replace("  c(2) = soft(c(1), 0.5)\n", "  c = branchy(c)\n")
    with pytest.raises(UnsupportedFeatureError) as info:
        parse_fortran(src, "t.f90")
    assert info.value.format().splitlines()[0] == (
        "t.f90:13:5: error: elemental function 'branchy' applied to arrays: only a body of "
        "scalar assignments can be expanded in an array expression (write a loop)")
