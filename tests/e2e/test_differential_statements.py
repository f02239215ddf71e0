"""Fortran coverage (issue 3), statements and expressions: loops, select
case, cycle, loop variables, Fortran's integer and real arithmetic and the
intrinsics, run on PoCL and compared with gfortran (as in
:mod:`test_differential_coverage`)."""

import numpy as np
import pytest

from util import farray, ints, needs_gfortran, run_case, zeros

pytestmark = needs_gfortran

CASES = {}


def case(name, source, make_args, *, sub=None, filename="k.f90", **kw):
    CASES[name] = (source, make_args, sub, filename, kw)


# {{{ statements

case("negative_steps_keep_order", """
subroutine prefix_rev(n, a, s)
  implicit none
  integer n, i, j
  real*8 a(n), s(n)
  s(n) = a(n)
  do i = n - 1, 1, -1
    s(i) = s(i + 1) + a(i)
  end do
  do j = n, 1, -3
    s(j) = s(j) * 2
  end do
end subroutine
""", lambda: [11, farray(11, np.float64, seed=27), zeros(11, np.float64)])

case("trip_counts_negative_and_empty", """
subroutine trips(n, m, cnt)
  implicit none
  integer n, m, i, k
  integer cnt(8)
  cnt = 0
  do i = n, m
    cnt(1) = cnt(1) + 1
  end do
  do i = m, n, -1
    cnt(2) = cnt(2) + 1
  end do
  do i = n, m, -2
    cnt(3) = cnt(3) + 1
  end do
  do i = 10, 1, -4
    cnt(4) = cnt(4) + i
  end do
  do i = 1, 10, 4
    cnt(5) = cnt(5) + i
  end do
  do i = 5, 4
    cnt(6) = cnt(6) + 1
  end do
  do i = m, n, 3
    cnt(7) = cnt(7) + 1
  end do
  do k = -n, -m, -1
    cnt(8) = cnt(8) + k
  end do
end subroutine
""", lambda: [3, 9, np.zeros(8, np.int32)])

case("do_concurrent_with_mask", """
subroutine relu2(n, m, a, b)
  implicit none
  integer n, m, i, j
  real a(n, m), b(n, m)
  do concurrent (j = 1:m, i = 1:n, a(i, j) > 0.0)
    b(i, j) = a(i, j) * 2.0
  end do
  do concurrent (i = 1:n:2)
    b(i, 1) = -1.0
  end do
end subroutine
""", lambda: [7, 3, farray((7, 3), seed=28), zeros((7, 3))])

case("select_case_ranges_lists_default", """
subroutine classify(n, k, code)
  implicit none
  integer n, i
  integer k(n), code(n)
  do i = 1, n
    select case (k(i))
    case (:-3)
      code(i) = -1
    case (0, 2, 4)
      code(i) = 10
    case (5:7)
      code(i) = 20 + k(i)
    case (8:)
      code(i) = 30
    case default
      code(i) = 0
    end select
  end do
end subroutine
""", lambda: [40, ints(40, -6, 10, 29), np.zeros(40, np.int32)])

case("select_case_on_expression_changed_in_branch", """
subroutine steps(n, k)
  implicit none
  integer n, i
  integer k(n)
  do i = 1, n
    select case (mod(k(i), 3))
    case (0)
      k(i) = k(i) + 1
    case (1)
      k(i) = k(i) * 10
    case default
      k(i) = -k(i)
    end select
  end do
end subroutine
""", lambda: [25, ints(25, -9, 9, 30)])

case("cycle_plain_and_named", """
subroutine skip(n, m, a, s)
  implicit none
  integer n, m, i, j
  real a(n, m), s(m)
  outer: do j = 1, m
    s(j) = 0.0
    do i = 1, n
      if (a(i, j) < -0.8) cycle outer
      if (a(i, j) < 0.0) cycle
      s(j) = s(j) + a(i, j)
    end do
    s(j) = s(j) * 2.0
  end do outer
end subroutine
""", lambda: [6, 9, farray((6, 9), seed=31), zeros(9)])

case("one_line_if_and_else_if_chains", """
subroutine piecewise(n, x, y)
  implicit none
  integer n, i
  real*8 x(n), y(n)
  do i = 1, n
    y(i) = 0.0d0
    if (x(i) > 0.5d0) y(i) = 1.0d0
    if (x(i) < -0.5d0) then
      y(i) = -1.0d0
    else if (x(i) < 0.0d0) then
      y(i) = x(i) * 2
    else if (x(i) <= 0.5d0) then
      y(i) = x(i) ** 2
    end if
  end do
end subroutine
""", lambda: [50, farray(50, np.float64, seed=32), zeros(50, np.float64)])

case("loop_variables_outside_their_loops", """
subroutine lvars(n, m, x, y, k, s)
  implicit none
  integer, intent(in) :: n, m
  real, intent(inout) :: x(n)
  real, intent(out) :: y(n)
  integer, intent(out) :: k(4)
  real, intent(out) :: s
  integer :: i, j
  i = 1
  y(i) = x(1)
  do i = 2, n
    y(i) = y(i - 1) + x(i)
  end do
  k(1) = i
  do i = n, 1, -3
    y(i) = y(i) * 2
  end do
  k(2) = i
  do j = 1, m
    do i = j, n, 2
      x(i) = x(i) + 1
    end do
    k(3) = i + j
  end do
  do i = 5, 2
  end do
  k(4) = i
  s = 0
  i = 2
  do j = 1, 1
    s = s + x(i)
  end do
end subroutine
""", lambda: [9, 4, farray(9, seed=109), zeros(9), np.zeros(4, np.int32), 0.0])

case("cycle_in_do_concurrent_and_select_in_loop", """
subroutine mixed_control(n, k, v)
  implicit none
  integer n, i
  integer k(n), v(n)
  do concurrent (i = 1:n)
    if (k(i) < 0) cycle
    v(i) = k(i) * 2
  end do
  do i = n, 1, -1
    select case (k(i))
    case (0)
      cycle
    case (1:3)
      v(i) = v(i) + 100
    case default
      if (i == 1) cycle
      v(i) = v(i) - v(i - 1)
    end select
    v(i) = v(i) + 1
  end do
end subroutine
""", lambda: [20, ints(20, -3, 6, 58), ints(20, -5, 5, 59)])

case("statement_functions_several_arguments", """
subroutine sfun(n, x, y)
  implicit none
  integer n, i
  real x(n), y(n), a, b, lerp, sq
  integer j
  lerp(a, b, j) = a + (b - a) * j / 4.0
  sq(a) = a * a
  do i = 2, n
    y(i) = lerp(x(i - 1), x(i), mod(i, 5)) + sq(x(i) - 1.0)
  end do
  y(1) = sq(sq(x(1)))
end subroutine
""", lambda: [9, farray(9, seed=60), zeros(9)])

# }}}

# {{{ expressions

case("integer_division_mod_modulo_sign_negative", """
subroutine intops(n, a, b, r)
  implicit none
  integer n, i
  integer a(n), b(n), r(n, 6)
  do i = 1, n
    r(i, 1) = a(i) / b(i)
    r(i, 2) = mod(a(i), b(i))
    r(i, 3) = modulo(a(i), b(i))
    r(i, 4) = sign(a(i), b(i))
    r(i, 5) = (-a(i)) / 3 + modulo(-a(i), 4)
    r(i, 6) = isign(7, a(i)) + mod(-7, 3) + modulo(-7, 3) + (-7) / 2
  end do
end subroutine
""", lambda: [60, ints(60, -20, 20, 41),
              np.where(ints(60, -5, 5, 42) == 0, 3, ints(60, -5, 5, 42)).astype(np.int32),
              np.zeros((60, 6), np.int32, order="F")])

case("real_mod_modulo_sign_negative", """
subroutine realops(n, x, y, r)
  implicit none
  integer n, i
  real*8 x(n), y(n), r(n, 4)
  real s
  do i = 1, n
    r(i, 1) = mod(x(i), y(i))
    r(i, 2) = modulo(x(i), y(i))
    r(i, 3) = sign(x(i), y(i)) + dsign(1.5d0, -y(i))
    s = sign(2.5, real(x(i)))
    r(i, 4) = s + amod(-7.5, 2.0) + modulo(-7.5, 2.0)
  end do
end subroutine
""", lambda: [40, farray(40, np.float64, seed=43, low=-10, high=10),
              np.where(np.abs(farray(40, np.float64, seed=44, low=-3, high=3)) < 0.1, 1.0,
                       farray(40, np.float64, seed=44, low=-3, high=3)),
              zeros((40, 4), np.float64)])

case("bit_intrinsics_runtime_and_constant", """
subroutine bitops(n, a, b, s, r, l)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: a(n), b(n), s(n)
  integer, intent(out) :: r(n, 10)
  logical, intent(out) :: l(n)
  integer, parameter :: lowmask = ishft(1, 10) - 1, hi = ibset(0, 30)
  integer(8) :: w
  integer :: i
  do i = 1, n
    r(i, 1) = iand(a(i), b(i)) + ior(a(i), lowmask)
    r(i, 2) = ieor(a(i), b(i)) - not(a(i)) + hi
    r(i, 3) = ishft(a(i), s(i))
    r(i, 4) = ibset(a(i), mod(abs(s(i)), 31)) + ibclr(b(i), 3)
    r(i, 5) = shiftl(b(i), abs(s(i))) + shiftr(a(i), abs(s(i)))
    r(i, 6) = shifta(a(i), abs(s(i)))
    r(i, 7) = popcnt(a(i)) + ishft(-1, -28) + iand(-8, 255) + popcnt(-1)
    w = ishft(int(a(i), 8), 33) + ieor(int(b(i), 8), -1_8)
    r(i, 8) = int(ishft(w, -20))
    r(i, 9) = ishft(a(i), 32) + ishft(a(i), -32) + not(-1)
    r(i, 10) = merge(a(i), b(i), btest(a(i), 2))
    l(i) = btest(b(i), abs(s(i))) .neqv. merge(.true., .false., a(i) > b(i))
  end do
end subroutine
""", lambda: [40, ints(40, -100000, 100000, 70), ints(40, -100000, 100000, 71),
              ints(40, -31, 31, 72), np.zeros((40, 10), np.int32, order="F"),
              np.zeros(40, np.int32)])

case("merge_scalar_and_array_syntax", """
subroutine minmod_slopes(n, q, slope, c)
  implicit none
  integer, intent(in) :: n
  real, intent(in) :: q(0:n+1)
  real, intent(out) :: slope(n), c(n)
  integer :: i
  real :: dl, dr
  do i = 1, n
    dl = q(i) - q(i-1)
    dr = q(i+1) - q(i)
    slope(i) = merge(0.0, sign(min(abs(dl), abs(dr)), dl), dl*dr <= 0.0)
  end do
  c = merge(q(1:n), -q(2:n+1), slope > 0.0)
  c(1) = merge(1.0, 2.0, n > 3)
end subroutine
""", lambda: [15, farray(17, seed=73), zeros(15), zeros(15)])

case("nint_halves_and_real_to_int", """
subroutine rounding(n, x, k, r)
  implicit none
  integer n, i
  real x(n), r(n, 2)
  integer k(n, 6)
  do i = 1, n
    r(i, 1) = aint(x(i))
    r(i, 2) = anint(x(i))
    k(i, 1) = nint(x(i))
    k(i, 2) = int(x(i))
    k(i, 3) = floor(x(i))
    k(i, 4) = ceiling(x(i))
    k(i, 5) = x(i)
    k(i, 6) = nint(dble(x(i)) * 2) + idnint(-2.5d0) + nint(-0.5) + int(-3.99)
  end do
end subroutine
""", lambda: [16, np.asfortranarray(np.array(
    [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 3.7, -3.7, 0.0, -0.0,
     1e6 + 0.5, -7.25, 2.75, 100.5], np.float32)), np.zeros((16, 6), np.int32, order="F"),
    zeros((16, 2))])

case("max_min_mixed_kinds", """
subroutine mixedmax(n, x, y, k, l, r, kk)
  implicit none
  integer n, i
  real*4 x(n)
  real*8 y(n), r(n, 3)
  integer*4 k(n)
  integer*8 l(n), kk(n)
  do i = 1, n
    r(i, 1) = max(x(i), y(i))
    r(i, 2) = min(x(i), y(i), 0.25)
    r(i, 3) = max(0.1, y(i))
    kk(i) = max(k(i), l(i)) + min(k(i), 3_8)
  end do
end subroutine
""", lambda: [20, farray(20, seed=45), farray(20, np.float64, seed=46), ints(20, -9, 9, 47),
              farray(20, np.int64, seed=48, low=-9, high=9), zeros((20, 3), np.float64),
              np.zeros(20, np.int64)])

case("default_kind_literals_in_double_expressions", """
subroutine literals(n, d)
  implicit none
  integer n, i
  real*8 d(n, 5)
  real*8 x
  x = 0.1
  do i = 1, n
    d(i, 1) = x
    d(i, 2) = 0.1 * i
    d(i, 3) = 0.1d0 * i
    d(i, 4) = 1.0 / 3.0 + 1.0d0 / 3
    d(i, 5) = 2.0_8 ** (-i) + 1.1e0 * 1.1d0
  end do
end subroutine
""", lambda: [5, zeros((5, 5), np.float64)], ulps=0, rtol=0)

case("powers_and_intrinsics_mixed", """
subroutine mathmix(n, x, y)
  implicit none
  integer n, i
  real*8 x(n), y(n, 6)
  do i = 1, n
    y(i, 1) = atan2(x(i), 1.0d0 + i) + atan(x(i))
    y(i, 2) = x(i) ** 2.5d0 + abs(x(i)) ** (-i)
    y(i, 3) = dim(x(i), 0.5d0) + log10(1.0d0 + x(i) ** 2)
    y(i, 4) = sinh(x(i)) + cosh(x(i)) - tanh(x(i))
    y(i, 5) = asin(x(i) / 2) + acos(x(i) / 3) + tan(x(i) / 4)
    y(i, 6) = dble(float(i)) + dfloat(i) / 2 + real(i, 8) / 3
  end do
end subroutine
""", lambda: [12, farray(12, np.float64, seed=49, low=0.1, high=1.5),
              zeros((12, 6), np.float64)], ulps=8)

# }}}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_gfortran(name, tmp_path, cl_queue):
    run_case(CASES[name], tmp_path, cl_queue)
