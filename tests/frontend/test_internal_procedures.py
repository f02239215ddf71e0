"""Internal procedures (``contains`` inside a subroutine, issue 16): inlined
where they are called, also from loops and from each other; the host's
variables they use without passing them (host association) are bound to the
host's own, read and written."""

import numpy as np
import pytest

from f2loopy.diagnostics import F2LoopyError, UnsupportedFeatureError
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


#: internal procedures that read and write their host's dummy arguments and
#: locals without passing them (host association), also from each other and
#: sizing a local array by a host dummy
HOSTED = """
subroutine relax(n, m, a, b, w, total)
  implicit none
  integer, intent(in) :: n, m
  real(8), intent(inout) :: a(n, m)
  real(8), intent(in) :: b(n)
  real(8), intent(in) :: w
  real(8), intent(out) :: total
  integer, parameter :: nmax = 16
  integer :: i, j, sweeps
  real(8) :: scale
  scale = w
  total = 0
  sweeps = 0
  do j = 1, m
    do i = 1, n
      a(i, j) = smooth(i, j)
      call tally(a(i, j))
    end do
  end do
  call finish
contains
  real(8) function smooth(k, l)
    integer, intent(in) :: k, l
    smooth = scale * a(k, l) + (1 - scale) * b(k)
  end function
  subroutine tally(v)
    real(8), intent(in) :: v
    total = total + v
    if (v > 1) scale = scale * 0.5d0
  end subroutine
  subroutine finish
    real(8) :: col(nmax)
    integer :: k
    do k = 1, n
      col(k) = a(k, m) * 2
    end do
    sweeps = sweeps + 1
    a(:, 1) = col(1:n) + sweeps
    call tally(col(1))
  end subroutine
end subroutine
"""


def test_host_variables_are_bound_to_the_hosts():
    k = parse_fortran(HOSTED, "h.f90")["relax"]
    text = [str(i.assignee) + " = " + str(i.expression) for i in k.instructions]
    assert "smooth_1 = scale*a[i, j] + (1 + (-1)*scale)*b[i]" in text
    assert "total = total + a[i, j]" in text
    assert "scale = scale*0.5" in text
    # host locals stay the host's (no copies), a local of 'finish' is its own
    assert {"scale", "sweeps"} <= set(k.temporaries)
    assert any(t.startswith("col") for t in k.temporaries)
    assert [a.name for a in k.args] == ["n", "m", "a", "b", "w", "total"]


@needs_gfortran
def test_host_association_against_gfortran(tmp_path, cl_queue):
    a = np.asfortranarray(farray((6, 4), np.float64, seed=7, low=0.0, high=2.0))
    run_both(HOSTED, "relax", [6, 4, a, farray(6, np.float64, seed=8), np.float64(0.75),
                               np.float64(0.0)], tmp_path, cl_queue)


#: an internal procedure reading the host's loop variable (the iteration it
#: is called in) and accumulating into a host argument
LOOP_HOST = """
subroutine hl(n, x, y)
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  real(8), intent(out) :: y
  integer :: i
  y = 0
  do i = 1, n
    call put
  end do
  y = y + i
contains
  subroutine put
    x(i) = x(i) * i
    y = y + x(i)
  end subroutine
end subroutine
"""


@needs_gfortran
def test_host_loop_variable_is_the_iteration(tmp_path, cl_queue):
    from f2loopy.verify.check import check_source
    path = tmp_path / "hl.f90"
    path.write_text(LOOP_HOST)
    report = check_source(LOOP_HOST, path, queue=cl_queue)
    assert report.passed, report.format()
    assert [o.name for c in report.checks for o in c.outputs] == ["x", "y"]


@pytest.mark.parametrize("body, message", [
    ("""  type t
    real :: v
  end type
  type(t) :: p
  p%v = 1
  call g
contains
  subroutine g
    p%v = x(1)
  end subroutine
""", "h.f90:13:5: error: internal procedure 'g' uses 'p' of its host 's' (derived-type "
     "variables of the host are not supported)"),
    ("""  call g
contains
  subroutine g
    x(1) = 2
  end subroutine
""", "h.f90:5:8: error: internal procedure 'g' assigns 'x' of its host 's', which is an "
     "intent(in) argument"),
])
def test_host_association_limits_are_located(body, message):
    src = ("subroutine s(n, x)\n  implicit none\n  integer, intent(in) :: n\n"
           "  real, intent(in) :: x(n)\n" + body + "end subroutine\n")
    with pytest.raises(F2LoopyError) as info:
        parse_fortran(src, "h.f90")
    assert info.value.format().splitlines()[0] == message


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


#: a dummy array whose bounds are the host's variables (red team of issue
#: 25): they were bound after the dummy arrays, so ``zz(m, n)`` read fresh,
#: never assigned copies ``m_1``, ``n_1`` (a wrong answer); a host scalar the
#: callee changes is also one that an actual argument (``k + 1``) reads
HOST_BOUNDS = """
subroutine hb(m, n, a, b, k)
  implicit none
  integer, intent(in) :: m, n
  real(8), intent(in) :: a(m, n)
  real(8), intent(out) :: b(m, n)
  integer, intent(inout) :: k
  real(8) :: z(m, n)
  call inner(z, a, b, k + 1)
contains
  subroutine inner(zz, x, y, kk)
    real(8), intent(inout) :: zz(m, n)
    real(8), intent(in) :: x(m, n)
    real(8), intent(out) :: y(m, n)
    integer, intent(in) :: kk
    integer :: i, j
    do j = 1, n
      do i = 1, m
        zz(i, j) = x(i, j) * kk
        y(i, j) = zz(i, j) + k
        k = k + 1
      end do
    end do
  end subroutine
end subroutine
"""


def test_dummy_bounds_read_the_hosts_variables():
    k = parse_fortran(HOST_BOUNDS, "hb.f90")["hb"]
    assert not any(t.startswith(("m_", "n_")) for t in k.temporaries), sorted(k.temporaries)
    text = [str(i.assignee) + " = " + str(i.expression) for i in k.instructions]
    assert any(t.startswith("kk_arg = k + 1") for t in text), text


@needs_gfortran
def test_dummy_bounds_of_the_host_against_gfortran(tmp_path, cl_queue):
    a = np.asfortranarray(farray((3, 5), np.float64, seed=3, low=0.0, high=2.0))
    run_both(HOST_BOUNDS, "hb", [3, 5, a, zeros((3, 5), np.float64), np.int32(2)],
             tmp_path, cl_queue)
