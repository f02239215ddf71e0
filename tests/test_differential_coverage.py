"""Fortran coverage (issue 3): every construct family, run on PoCL and compared
with gfortran.

Each case is a whole Fortran file (free or fixed form), the subroutine to run
and its arguments.  Tolerances are those of :mod:`test_differential_core`.
"""

import numpy as np
import pytest

from util import farray, needs_gfortran, run_both

pytestmark = needs_gfortran

CASES = {}


def case(name, source, make_args, *, sub=None, filename="k.f90", **kw):
    CASES[name] = (source, make_args, sub, filename, kw)


def zeros(shape, dtype=np.float32):
    return np.zeros(shape, dtype=dtype, order="F")


def ints(shape, low, high, seed):
    return farray(shape, np.int32, seed=seed, low=low, high=high)


# {{{ fixed form

case("fixed_form_daxpy", """\
c     A legacy BLAS-like kernel in fixed form: labels, continuation lines,
c     comments in column 1, text after column 72 and an early return.
      subroutine daxpy(n, da, dx, incx, dy)
      double precision dx(*), dy(*), da
      integer i, incx, n
*     nothing to do for empty vectors
      if (n .le. 0) return
      do 10 i = 1, n
         dy(i) = dy(i) +
     &           da*dx(i)
   10 continue
      do 20 i = n, 1, -1
         dy(i) = dy(i) * 2.0d0 + dble(incx)                             ignored
   20 continue
      return
      end
""", lambda: [13, 0.5, farray(13, np.float64, seed=1), 1, farray(13, np.float64, seed=2)],
     filename="k.f")

case("fixed_form_implicit_data_shared_labels", """\
      SUBROUTINE SMOOTH(N, M, A, B)
      DIMENSION A(N, M), B(N, M), W(3)
      DATA W /0.25, 0.5, 0.25/
      DO 100 J = 1, M
      DO 100 I = 2, N - 1
         B(I, J) = W(1)*A(I-1, J) + W(2)*A(I, J)
     1           + W(3)*A(I+1, J)
  100 CONTINUE
      END
""", lambda: [9, 4, farray((9, 4), seed=3), zeros((9, 4))], filename="k.f")

case("fixed_form_statement_function_and_goto_free_logic", """\
      subroutine poly(n, x, y)
      implicit double precision (a-h, o-z)
      dimension x(n), y(n)
      p(t) = 1.0d0 + t*(0.5d0 + t*0.25d0)
      do 5 k = 1, n
         if (x(k) .gt. 0.0d0) then
            y(k) = p(x(k))
         else
            y(k) = -p(-x(k))
         endif
    5 continue
      end
""", lambda: [11, farray(11, np.float64, seed=4, low=-2, high=2), zeros(11, np.float64)],
     filename="k.f")

# }}}

# {{{ several units, modules, functions, calls

case("call_with_column_sections", """
subroutine axpy_col(n, a, x, y)
  implicit none
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = y(i) + a * x(i)
  end do
end subroutine

subroutine update(n, m, u, v)
  implicit none
  integer n, m, j
  real u(n, m), v(n, m)
  do j = 1, m
    call axpy_col(n, 0.5, u(:, j), v(:, j))
    call axpy_col(n - 1, real(j), u(2, j), v(1, j))
  end do
end subroutine
""", lambda: [6, 4, farray((6, 4), seed=5), farray((6, 4), seed=6)], sub="update")

case("call_element_and_scalar_out_arguments", """
subroutine minmax3(a, b, c, lo, hi)
  implicit none
  real a, b, c, lo, hi
  lo = min(a, b, c)
  hi = max(a, b, c)
end subroutine

subroutine ranges(n, x, lo, hi, spread)
  implicit none
  integer n, i
  real x(3, n), lo(n), hi(n), spread
  spread = 0.0
  do i = 1, n
    call minmax3(x(1, i), x(2, i), x(3, i), lo(i), hi(i))
    spread = max(spread, hi(i) - lo(i))
  end do
end subroutine
""", lambda: [7, farray((3, 7), seed=7), zeros(7), zeros(7), np.float32(0)], sub="ranges")

case("call_multidimensional_block", """
subroutine scale_block(np, q, s)
  implicit none
  integer np, k, j
  real q(np, 3), s
  do j = 1, 3
    do k = 1, np
      q(k, j) = q(k, j) * s + j
    end do
  end do
end subroutine

subroutine all_elements(ne, np, q)
  implicit none
  integer ne, np, e
  real q(np, 3, ne)
  do e = 1, ne
    call scale_block(np, q(1, 1, e), real(e))
  end do
end subroutine
""", lambda: [4, 5, farray((5, 3, 4), seed=8)], sub="all_elements")

case("module_parameters_functions_and_use", """
module physics
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  real(kind=dp), parameter :: gamma = 1.4_dp, half = 0.5_dp
contains
  pure function pressure(rho, e) result(pr)
    real(dp), intent(in) :: rho, e
    real(dp) :: pr
    pr = (gamma - 1.0_dp) * rho * e
  end function pressure

  subroutine energy(n, rho, u, e, p)
    integer, intent(in) :: n
    real(dp), intent(in) :: rho(n), u(n)
    real(dp), intent(inout) :: e(n)
    real(dp), intent(out) :: p(n)
    integer :: i
    do i = 1, n
      e(i) = e(i) + half * u(i)**2
      p(i) = pressure(rho(i), e(i))
    end do
  end subroutine energy
end module physics

subroutine sound(n, rho, p, c)
  use physics, only: dp, g => gamma
  implicit none
  integer n, i
  real(dp) rho(n), p(n), c(n)
  do i = 1, n
    c(i) = sqrt(g * p(i) / rho(i))
  end do
end subroutine
""", lambda: [9, farray(9, np.float64, seed=9, low=0.5, high=2),
              farray(9, np.float64, seed=10), farray(9, np.float64, seed=11, low=1, high=2),
              zeros(9, np.float64)], sub="energy")

case("module_subroutine_used_from_outside", """
module m
  implicit none
  real, parameter :: weights(3) = (/ 0.25, 0.5, 0.25 /)
contains
  real function wsum(a, b, c)
    real a, b, c
    wsum = weights(1) * a + weights(2) * b + weights(3) * c
  end function
end module m

subroutine filt(n, x, y)
  use m
  implicit none
  integer n, i
  real x(n), y(n)
  y(1) = x(1)
  y(n) = x(n)
  do i = 2, n - 1
    y(i) = wsum(x(i - 1), x(i), x(i + 1))
  end do
end subroutine
""", lambda: [12, farray(12, seed=12), zeros(12)], sub="filt")

case("functions_multi_statement_and_nested", """
integer function clampi(i, lo, hi)
  implicit none
  integer i, lo, hi
  clampi = i
  if (i < lo) clampi = lo
  if (i > hi) clampi = hi
end function

real function lookup(n, t, x)
  implicit none
  integer n, clampi, k
  real t(n), x
  k = clampi(int(x), 1, n)
  lookup = t(k)
end function

subroutine interp(n, t, m, x, y)
  implicit none
  integer n, m, i
  real t(n), x(m), y(m), lookup
  do i = 1, m
    y(i) = lookup(n, t, x(i)) + lookup(n, t, x(i) + 1.0)
  end do
end subroutine
""", lambda: [6, farray(6, seed=13), 20, farray(20, seed=14, low=-3, high=9), zeros(20)],
     sub="interp")

case("function_with_early_return_and_loop", """
real*8 function first_negative(n, x)
  implicit none
  integer n, i
  real*8 x(n)
  first_negative = 0.0d0
  do i = 1, n
    if (x(i) < 0.0d0) then
      first_negative = dble(i)
      return
    end if
  end do
end function

subroutine scan_rows(n, m, a, pos)
  implicit none
  integer n, m, j
  real*8 a(n, m), pos(m), first_negative
  do j = 1, m
    pos(j) = first_negative(n, a(1, j))
  end do
end subroutine
""", lambda: [5, 6, farray((5, 6), np.float64, seed=15, low=-0.3, high=1),
              zeros(6, np.float64)], sub="scan_rows")

case("call_keywords_expressions_and_chains", """
module clipping
  implicit none
contains
  subroutine clip(x, lo, hi)
    real*8 x, lo, hi
    x = max(lo, min(hi, x))
  end subroutine

  subroutine clip_all(n, v, bound)
    integer n, i
    real*8 v(n), bound
    do i = 1, n
      call clip(v(i), hi=bound, lo=-bound / 2)
    end do
  end subroutine
end module

subroutine process(n, v, w, bound)
  use clipping
  implicit none
  integer n
  real*8 v(n), w(n), bound
  call clip_all(n, v, bound * 2.0d0)
  call clip_all(n - 1, w(2), bound)
  call clip(w(1), 0.0d0, 0.5d0)
end subroutine
""", lambda: [10, farray(10, np.float64, seed=50, low=-3, high=3),
              farray(10, np.float64, seed=51, low=-3, high=3), 0.75], sub="process")

case("logical_array_through_call_and_early_return_in_loop", """
subroutine mark(n, x, flag, last)
  implicit none
  integer n, i, last
  real x(n)
  logical flag(n)
  last = 0
  do i = 1, n
    flag(i) = x(i) > 0.0
    if (x(i) > 0.9) then
      last = i
      return
    end if
  end do
  last = -1
end subroutine

subroutine mark_rows(n, m, x, flags, lasts)
  implicit none
  integer n, m, j
  real x(n, m)
  logical flags(n, m)
  integer lasts(m)
  flags = .false.
  do j = 1, m
    call mark(n, x(:, j), flags(:, j), lasts(j))
  end do
end subroutine
""", lambda: [8, 6, farray((8, 6), seed=52), np.zeros((8, 6), np.int32, order="F"),
              np.zeros(6, np.int32)], sub="mark_rows")

case("call_sequence_association_across_columns", """
subroutine fill(nn, x, v)
  implicit none
  integer nn, k
  real x(*), v
  do k = 1, nn
    x(k) = v + k
  end do
end subroutine

subroutine scale2(nr, nc, w, s)
  implicit none
  integer nr, nc, i, j
  real w(nr, nc), s
  do j = 1, nc
    do i = 1, nr
      w(i, j) = w(i, j) * s + i - j
    end do
  end do
end subroutine

subroutine reshape_calls(n, m, a, b)
  implicit none
  integer n, m
  real a(n, m), b(n * m)
  call fill(n * m, a, 1.0)
  call fill(n + 2, a(n - 1, 2), -5.0)
  call scale2(m, n, a, 0.5)
  call scale2(2, n * m / 2, b, 3.0)
end subroutine
""", lambda: [5, 4, zeros((5, 4)), farray(20, seed=61)], sub="reshape_calls")

case("call_arguments_evaluated_at_the_call", """
subroutine bump(v, k, x)
  implicit none
  integer v, k
  real x
  k = k + 10
  x = x + v * 100 + k
end subroutine

subroutine evaluation_order(n, a, r)
  implicit none
  integer n, k, i
  real a(n), r(n)
  do i = 1, n
    k = i
    call bump(k + 1, k, a(k))
    r(i) = k
  end do
end subroutine
""", lambda: [30, farray(30, seed=62), zeros(30)], sub="evaluation_order")

case("module_with_access_statements_and_save", """
module scaling
  implicit none
  private
  public :: scale_all
  save
  integer, parameter, public :: dp = kind(1.0d0)
  real(dp), parameter, private :: factor = 2.0_dp
contains
  subroutine scale_all(n, a)
    integer, intent(in) :: n
    real(dp), intent(inout) :: a(n)
    a = a * factor + 1.0_dp
  end subroutine scale_all
end module scaling
""", lambda: [6, farray(6, np.float64, seed=67)])

# }}}

# {{{ declarations

case("intrinsic_modules_kind_constants", """
module prec
  use, intrinsic :: iso_fortran_env, only: wp => real64, int64
  implicit none
  real(wp), parameter :: half = 0.5_wp
end module prec

subroutine kinds_from_intrinsic_modules(n, x, y, c, k)
  use prec
  use iso_c_binding, only: c_float, c_int
  implicit none
  integer(c_int), intent(in) :: n
  real(wp), intent(in) :: x(n)
  real(wp), intent(inout) :: y(n)
  real(c_float), intent(out) :: c(n)
  integer(int64), intent(out) :: k(n)
  integer :: i
  do i = 1, n
    y(i) = half*x(i) + y(i)
    c(i) = real(y(i), c_float)
    k(i) = int(i, int64) * 4000000000_int64
  end do
end subroutine
""", lambda: [9, farray(9, np.float64, seed=60), farray(9, np.float64, seed=61), zeros(9),
              np.zeros(9, np.int64)], sub="kinds_from_intrinsic_modules")

case("implicit_statement_and_default_typing", """
subroutine implicit_kinds(n, a, k)
  implicit real*8 (a-h), integer*8 (k)
  dimension a(n), k(n)
  do i = 1, n
    b = a(i) * 3
    a(i) = b / 7 + 0.1
    k(i) = k(i) * 3000000000_8 + i
  end do
end subroutine
""", lambda: [8, farray(8, np.float64, seed=16), farray(8, np.int64, seed=17, low=-5, high=5)])

case("kinds_and_parameters", """
subroutine kinds(n, x, y, z)
  implicit none
  integer, parameter :: sp = kind(1.0), dp = selected_real_kind(15)
  integer, parameter :: nmax = 2 * 3 + 1
  real(kind=sp) :: x(n)
  real(dp) :: y(n)
  double precision :: z(nmax)
  real(8) :: c
  real*4 :: s
  integer :: i, n
  parameter (c = 1.0_dp / 3.0_dp, s = 1.0e0 / 3.0)
  do i = 1, n
    y(i) = x(i) * c + s
  end do
  do i = 1, nmax
    z(i) = c * i + 1.0d-1
  end do
end subroutine
""", lambda: [10, farray(10, seed=18), zeros(10, np.float64), zeros(7, np.float64)])

case("lower_bounds_dimension_statement_assumed_size", """
subroutine bounds(n, a, b, c)
  implicit none
  integer n, i, j
  real a, b, c
  dimension a(-1:1, 0:n), b(0:*), c(n/2 + 1)
  do j = 0, n
    do i = -1, 1
      a(i, j) = a(i, j) * i + j
    end do
    b(j) = a(0, j) + a(1, j)
  end do
  do i = 1, n / 2 + 1
    c(i) = b(2 * (i - 1))
  end do
end subroutine
""", lambda: [7, farray((3, 8), seed=19), zeros(8), zeros(4)])

case("automatic_arrays_work_space", """
subroutine thomas(n, a, b, c, d, x)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: a(2:n), b(n), c(n-1)
  real(8), intent(inout) :: d(n)
  real(8), intent(out) :: x(n)
  real(8) :: cp(n), m
  integer :: i
  cp(1) = c(1)/b(1)
  d(1) = d(1)/b(1)
  do i = 2, n - 1
    m = b(i) - a(i)*cp(i-1)
    cp(i) = c(i)/m
    d(i) = (d(i) - a(i)*d(i-1))/m
  end do
  d(n) = (d(n) - a(n)*d(n-1))/(b(n) - a(n)*cp(n-1))
  x(n) = d(n)
  do i = n - 1, 1, -1
    x(i) = d(i) - cp(i)*x(i+1)
  end do
end subroutine

""", lambda: [9, farray(8, np.float64, seed=80), farray(9, np.float64, seed=81, low=4, high=5),
              farray(8, np.float64, seed=82), farray(9, np.float64, seed=83),
              zeros(9, np.float64)], sub="thomas")

case("automatic_arrays_two_dimensional_with_lower_bounds", """
subroutine smooth2(n, m, a, b)
  implicit none
  integer, intent(in) :: n, m
  real, intent(in) :: a(n, m)
  real, intent(out) :: b(n, m)
  real :: w(0:n+1, m), tot(m)
  integer :: i, j
  w(0, :) = 0.0
  w(n+1, :) = 0.0
  w(1:n, :) = a
  do j = 1, m
    tot(j) = 0.0
    do i = 1, n
      b(i, j) = 0.25*w(i-1, j) + 0.5*w(i, j) + 0.25*w(i+1, j)
      tot(j) = tot(j) + b(i, j)
    end do
    b(:, j) = b(:, j) - tot(j)/n
  end do
end subroutine
""", lambda: [7, 4, farray((7, 4), seed=84), zeros((7, 4))], sub="smooth2")

case("parameter_array_table_and_local_arrays", """
subroutine stencil5(n, u, v)
  implicit none
  integer n, i, k
  real u(n), v(n)
  real, parameter :: c(-2:2) = (/ -1.0/12, 4.0/3, -2.5, 4.0/3, -1.0/12 /)
  integer, parameter :: offs(5) = [-2, -1, 0, 1, 2]
  real acc(5)
  do i = 3, n - 2
    do k = 1, 5
      acc(k) = c(offs(k)) * u(i + offs(k))
    end do
    v(i) = acc(1) + acc(2) + acc(3) + acc(4) + acc(5)
  end do
end subroutine
""", lambda: [14, farray(14, seed=20), zeros(14)])

case("data_statements_and_initialised_tables", """
subroutine gauss(n, x, y)
  implicit none
  integer n, i, q
  real*8 x(n), y(n)
  real*8 pts(3), wts(3), scale
  data pts /-0.7745966692414834d0, 0.0d0, 0.7745966692414834d0/
  data wts(1), wts(2), wts(3) /0.5555555555555556d0, 0.8888888888888888d0, &
       0.5555555555555556d0/, scale /0.5d0/
  do i = 1, n
    y(i) = 0.0d0
    do q = 1, 3
      y(i) = y(i) + wts(q) * cos(x(i) * pts(q)) * scale
    end do
  end do
end subroutine
""", lambda: [9, farray(9, np.float64, seed=21), zeros(9, np.float64)])

case("logical_scalars_and_arrays", """
subroutine flags(n, x, mask, count)
  implicit none
  integer n, i, count
  real x(n)
  logical mask(n), big
  logical, parameter :: strict = .true.
  count = 0
  do i = 1, n
    big = x(i) > 0.5
    mask(i) = big .or. (x(i) < -0.5 .and. strict)
    if (mask(i) .neqv. big) count = count + 1
    if (.not. mask(i)) x(i) = 0.0
  end do
end subroutine
""", lambda: [30, farray(30, seed=22), np.zeros(30, np.int32), 0])

case("complex_arithmetic", """
subroutine zops(n, z, w, r, s)
  implicit none
  integer n, i
  complex*16 z(n), w(n)
  complex*8 c
  real*8 r(n, 3)
  real*4 s(n)
  do i = 1, n
    w(i) = z(i) * conjg(z(i)) + cmplx(1.0d0, dble(i), kind=8) / (z(i) + (2.0d0, 0.5d0))
    r(i, 1) = abs(z(i))
    r(i, 2) = aimag(w(i))
    r(i, 3) = real(z(i) ** 3)
    c = cmplx(real(z(i)), 1.0)
    s(i) = real(c * c - (0.0, 1.0))
  end do
end subroutine
""", lambda: [9, (farray(9, np.float64, seed=23) + 1j * farray(9, np.float64, seed=24)),
              np.zeros(9, np.complex128), zeros((9, 3), np.float64), zeros(9)])

case("complex_single_functions", """
subroutine zfun(n, z, w)
  implicit none
  integer n, i
  complex z(n), w(n, 4)
  do i = 1, n
    w(i, 1) = sqrt(z(i))
    w(i, 2) = exp(z(i)) - z(i) * 2
    w(i, 3) = z(i) / (1.0 + abs(z(i)))
    w(i, 4) = cmplx(aimag(z(i)), real(z(i))) ** 2
  end do
end subroutine
""", lambda: [12, (farray(12, seed=25) + 1j * farray(12, seed=26)).astype(np.complex64),
              np.zeros((12, 4), np.complex64, order="F")], ulps=16)

case("data_repeat_counts_and_parameter_statement_arrays", """
subroutine tables(n, x, y)
  implicit none
  integer n, i
  real x(n), y(n)
  real ones(4), mix(6)
  integer perm(3)
  parameter (perm = (/ 3, 1, 2 /))
  data ones /4*1.0/, mix /2*0.5, 3*-1.0, 2.0/
  do i = 1, n
    y(i) = x(i) * ones(mod(i, 4) + 1) + mix(mod(i, 6) + 1) * perm(mod(i, 3) + 1)
  end do
end subroutine
""", lambda: [13, farray(13, seed=53), zeros(13)])

case("complex_scalar_arguments_and_comparison", """
subroutine zscal(n, alpha, z, beta, same)
  implicit none
  integer n, i, same
  complex*16 alpha, beta, z(n)
  same = 0
  do i = 1, n
    if (z(i) == alpha) same = same + 1
    z(i) = alpha * z(i) - dcmplx(0.5d0, dble(i))
    if (z(i) /= z(i)) same = -100
  end do
  beta = z(1) + z(n)
end subroutine
""", lambda: [7, np.complex128(0.5 - 1.5j), np.asfortranarray(np.array(
    [0.5 - 1.5j, 1 + 1j, 0.5 - 1.5j, -2j, 3, 0.25 + 0.5j, 1j], np.complex128)),
    np.complex128(0), 0])

case("size_bounds_and_numeric_inquiry", """
subroutine inquire_shapes(n, a, r)
  implicit none
  integer n
  real*8 a(0:n, -2:2), r(8)
  r(1) = size(a)
  r(2) = size(a, 2) + lbound(a, 2) * 10 + ubound(a, 1) * 100
  r(3) = huge(1.0d0) / 1.0d300
  r(4) = epsilon(1.0d0) * 1.0d16 + epsilon(1.0) * 1.0e7
  r(5) = tiny(1.0) * 1.0e38
  r(6) = huge(n)
  r(7) = sum(a(lbound(a, 1):ubound(a, 1), 0))
  r(8) = size(a(:, 1)) + 0 * n
end subroutine
""", lambda: [4, farray((5, 5), np.float64, seed=54), zeros(8, np.float64)])

case("real_to_integer_kinds", """
subroutine to_int(n, x, k8, k4)
  implicit none
  integer n, i
  real*8 x(n)
  integer*8 k8(n, 3)
  integer k4(n, 2)
  do i = 1, n
    k8(i, 1) = int(x(i) * 1.0d9, 8)
    k8(i, 2) = nint(x(i) * 1.0d9, kind=8)
    k8(i, 3) = floor(x(i), 8) + ceiling(x(i), kind=8)
    k4(i, 1) = int(x(i)) + int(-x(i))
    k4(i, 2) = idint(x(i) * 3) - ifix(real(x(i)))
  end do
end subroutine
""", lambda: [12, farray(12, np.float64, seed=55, low=-9, high=9),
              np.zeros((12, 3), np.int64, order="F"), np.zeros((12, 2), np.int32, order="F")])

case("complex_functions_kinds_and_powers", """
subroutine zmore(n, z, c, w)
  implicit none
  integer n, i
  complex*16 z(n), w(n, 6)
  complex c(n)
  real*8 t
  do i = 1, n
    t = dble(i) / n
    w(i, 1) = log(z(i)) + sin(z(i)) * cos(z(i))
    w(i, 2) = z(i) ** (-2) + z(i) ** 0.5d0 + z(i) ** c(i)
    w(i, 3) = -z(i) + t * z(i) - 2 * z(i) + c(i)
    w(i, 4) = z(i) / cmplx(0.1d0, 3.0d0, kind=8) + (1.0d0, -2.0d0) / z(i)
    w(i, 5) = c(i) * 2.5d0 + dcmplx(t)
    w(i, 6) = cmplx(real(c(i)) * t, aimag(z(i)), 8) + conjg(c(i))
    c(i) = z(i) * c(i)
  end do
end subroutine
""", lambda: [10, (farray(10, np.float64, seed=63, low=0.2, high=2)
                   + 1j * farray(10, np.float64, seed=64)),
              (farray(10, seed=65) + 1j * farray(10, seed=66)).astype(np.complex64),
              np.zeros((10, 6), np.complex128, order="F")])

case("complex_and_logical_tables_and_plain_copies", """
subroutine tables_zl(n, z, w, d, e, flags)
  implicit none
  integer n, i
  complex z(n), w(n)
  double complex d(n), e(n)
  integer flags(n)
  complex, parameter :: tab(2) = (/ (1.0, 2.0), (3.0, -4.0) /)
  logical, parameter :: odd(4) = (/ .true., .false., .true., .false. /)
  double complex dz(2)
  data dz /(0.5d0, -0.25d0), (2.0d0, 1.0d0)/
  do i = 1, n
    w(i) = z(i)
    e(i) = d(i)
    if (odd(mod(i - 1, 4) + 1)) w(i) = tab(mod(i, 2) + 1)
    if (i > n - 2) e(i) = dz(i - n + 2)
    flags(i) = 0
    if (odd(mod(i, 4) + 1)) flags(i) = 1
  end do
end subroutine
""", lambda: [7, (farray(7, seed=68) + 1j * farray(7, seed=69)).astype(np.complex64),
              np.zeros(7, np.complex64), (farray(7, np.float64, seed=70) + 0.5j),
              np.zeros(7, np.complex128), np.zeros(7, np.int32)])

# }}}

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

case("array_syntax_sections_and_whole_arrays", """
subroutine arrays(n, m, a, b, c)
  implicit none
  integer n, m, j
  real a(n, m), b(n, m), c(n)
  b = 0.0
  do j = 1, m
    b(:, j) = a(:, j) * 2 + c
  end do
  c(1:n:2) = -1.0
  c(2:n:2) = a(2:n:2, 1) + a(2:n:2, m)
  b(n:1:-1, 1) = a(:, 2)
  b(2:n-1, m) = 0.5 * (a(1:n-2, m) + a(3:n, m))
end subroutine
""", lambda: [7, 3, farray((7, 3), seed=33), zeros((7, 3)), farray(7, seed=34)])

case("array_syntax_overlapping_shifts", """
subroutine shifts(n, a, b, c)
  implicit none
  integer n
  real a(n), b(n), c(n, 2)
  a(2:n) = a(1:n-1)
  b(1:n-1) = b(2:n) + b(1:n-1)
  c(:, 2) = c(:, 1) + c(:, 2)
  c(2:n, 1) = c(1:n-1, 1) * 2
end subroutine
""", lambda: [9, farray(9, seed=35), farray(9, seed=36), farray((9, 2), seed=37)])

case("array_syntax_through_a_temporary", """
subroutine both_ways(n, m, a, b, c, d)
  implicit none
  integer n, m, j
  real a(n), b(n, m), c(6, 4)
  double precision d(0:n)
  ! reads on both sides of the element assigned: no loop order works, the
  ! right-hand side goes through a temporary (sized by n, or constant)
  a(2:n-1) = 0.5 * a(2:n-1) + 0.25 * (a(1:n-2) + a(3:n))
  do j = 1, m
    b(n:1:-1, j) = b(:, j) + b(n:1:-1, j) * 0.5
  end do
  c(:, 4:1:-1) = c(:, 1:4) + 1.0
  c(2:6:2, 1) = c(1:5:2, 1) + c(3:5, 1)
  b(2:n, 2:m) = b(1:n-1, 1:m-1) + b(2:n, 2:m)
  d(1:n) = d(0:n-1) + d(1:n) * d(n:1:-1)
end subroutine
""", lambda: [9, 3, farray(9, seed=38), farray((9, 3), seed=39), farray((6, 4), seed=40),
              farray(10, np.float64, seed=41)])

case("assumed_shape_arguments_and_inquiry", """
module grids
  implicit none
contains
  subroutine relax(u, f, w, res)
    real(8), intent(inout) :: u(0:, :)
    real(8), intent(in) :: f(:, :)
    real(8), intent(in) :: w
    real(8), intent(out) :: res
    integer :: i, j
    res = 0
    do j = lbound(u, 2), size(u, 2)
      do i = 1, ubound(u, 1) - 1
        u(i, j) = (1 - w) * u(i, j) + w * (u(i - 1, j) + u(i + 1, j) + f(i, j)) / 2
      end do
      res = max(res, maxval(abs(u(1:size(f, 1), j))))
    end do
  end subroutine
end module
""", lambda: [farray((9, 4), np.float64, seed=96), farray((7, 4), np.float64, seed=97),
              0.6, 0.0])

case("assumed_shape_dummies_of_called_procedures_take_sections", """
module vec_ops
  implicit none
contains
  subroutine axpy(x, y, s)
    real, intent(in) :: x(:)
    real, intent(inout) :: y(:)
    real, intent(in) :: s
    integer :: i
    do i = 1, size(x)
      y(i) = y(i) + s * x(i)
    end do
  end subroutine
  real function weighted(v)
    real, intent(in) :: v(0:)
    integer :: i
    weighted = 0
    do i = 0, ubound(v, 1)
      weighted = weighted + v(i) * (i + 1)
    end do
  end function
  subroutine driver(n, m, a, b, t)
    integer, intent(in) :: n, m
    real, intent(inout) :: a(n, m), b(m, n)
    real, intent(out) :: t(m)
    integer :: j
    do j = 1, m
      call axpy(a(:, j), b(j, :), 2.0)
      call axpy(a(n:1:-1, j), b(j, :), 0.5)
      t(j) = weighted(b(j, 1:n:2))
    end do
    call axpy(a(1, :), t, 1.0)
    call axpy(x=t(m:1:-1), y=a(2, :), s=-1.0)
  end subroutine
end module
""", lambda: [6, 5, farray((6, 5), seed=98), farray((5, 6), seed=99), zeros(5)], sub="driver")

case("reductions_with_mask_and_dim_count_any_all", """
subroutine reds(n, m, a, b, m1, s, v, w, anyneg, allpos, cnt, p)
  implicit none
  integer, intent(in) :: n, m
  real, intent(in) :: a(n, m), b(m, n)
  logical, intent(in) :: m1(n, m)
  real, intent(out) :: s, v(m), w(n)
  logical, intent(out) :: anyneg, allpos
  integer, intent(out) :: cnt, p(m)
  integer :: j
  s = sum(a, mask=a > 0.0) + product(a(1:2, 1), m1(1:2, 1)) + maxval(a, m1) &
      - minval(b, mask=b < 0.5) + sum(a(:, 1), dim=1)
  v = sum(a, dim=1) + maxval(b, 2, mask=b > 0.0) + minval(b(:, 2:n:2), dim=2)
  do j = 1, n
    w(j) = sum(b(:, j), b(:, j) > 0.0) + count(m1(j, :))
  end do
  anyneg = any(a < -0.9)
  allpos = all(b > -0.95)
  cnt = count(m1) + count(a > 0.5 .and. m1)
  p = count(a > 0.0, dim=1) + count(b < 0.0, 2)
end subroutine
""", lambda: [5, 6, farray((5, 6), seed=100), farray((6, 5), seed=101),
              farray((5, 6), np.int32, seed=102, low=0, high=1), 0.0, zeros(6),
              zeros(5), False, False, 0, np.zeros(6, np.int32)])

case("matmul_and_transpose", """
subroutine sem(nq, ne, d, x, y, c, s)
  implicit none
  integer, intent(in) :: nq, ne
  double precision, intent(in) :: d(nq, nq), x(nq, ne)
  double precision, intent(inout) :: y(nq, ne), c(nq, nq)
  double precision, intent(out) :: s(ne)
  integer :: e
  do e = 1, ne
    y(:, e) = y(:, e) + matmul(d, x(:, e))
    s(e) = sum(matmul(transpose(d), y(:, e))) + dot_product(x(:, e), matmul(x(:, e), d))
  end do
  c = matmul(c, c)
  c = transpose(c) - 2 * transpose(matmul(d(:, 1:2), transpose(d(1:nq, nq-1:nq))))
end subroutine
""", lambda: [4, 7, farray((4, 4), np.float64, seed=103), farray((4, 7), np.float64, seed=104),
              farray((4, 7), np.float64, seed=105), farray((4, 4), np.float64, seed=106),
              zeros(7, np.float64)])

case("array_constructors_locations_shifts_norm2", """
subroutine misc(n, m, a, u, b, k, l, p, lap, x)
  implicit none
  integer, intent(in) :: n, m
  real, intent(inout) :: a(n)
  real, intent(in) :: u(n, m)
  real, intent(out) :: b(n), lap(n, m), x
  integer, intent(out) :: k(m), l(n), p(2)
  integer :: i
  a(1:3) = (/ 1.5, -2.0, a(n) /) * 2
  b = [(i * 0.5, i = 1, n)] + [(a(i), i = n, 1, -1)]
  x = norm2(a) + sum([(a(i)**2, i = 1, n, 2)]) + dot_product([1.0, 2.0], a(1:2))
  k = maxloc(u, 1)
  l = minloc(u, dim=2, mask=u > 0.0)
  p = maxloc(u)
  p(1) = p(1) + maxloc(abs(a(2:n)), 1) + minloc(a, 1, mask=a > 5.0)
  lap = cshift(u, 1, 1) + cshift(u, -1, 1) + cshift(u, 1, dim=2) + eoshift(u, -1, 2.0, 2) &
        - 4 * u
end subroutine
""", lambda: [7, 5, farray(7, seed=107), farray((7, 5), seed=108), zeros(7), np.zeros(5, np.int32),
              np.zeros(7, np.int32), np.zeros(2, np.int32), zeros((7, 5)), 0.0])

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

case("special_functions_and_spread", """
subroutine special(n, m, a, d, b, c, x)
  implicit none
  integer, intent(in) :: n, m
  real, intent(in) :: a(n)
  double precision, intent(in) :: d(m)
  real, intent(out) :: b(n), c(n, m), x
  b = erf(a) + erfc(a) * 0.5 + gamma(abs(a) + 1.0) + log_gamma(abs(a) + 2.0) &
      + asinh(a) + atanh(a * 0.5) + acosh(abs(a) + 1.5) + hypot(a, 2.0 * a)
  c = spread(a, 2, m) * real(spread(derf(d), 1, n)) + spread(spread(x, 1, n), 2, m) * 0
  x = erf(0.5) + gamma(3.0) + sum(spread(a(1:2), dim=1, ncopies=3))
end subroutine
""", lambda: [6, 5, farray(6, seed=110), farray(5, np.float64, seed=111), zeros(6),
              zeros((6, 5)), 0.0])

case("where_statements_constructs_elsewhere_nested", """
subroutine wheres(n, m, a, b, c, k, d)
  implicit none
  integer, intent(in) :: n, m
  real, intent(inout) :: a(n, m), b(n, m)
  real, intent(inout) :: c(n)
  integer, intent(inout) :: k(n)
  integer, intent(in) :: d(n)
  integer :: j
  where (a > 0.5) a = a - 0.5
  where (d /= 0) k = k / d
  where (c(2:n) > c(1:n-1)) c(2:n) = c(1:n-1) * 2.0
  do j = 1, m
    where (a(:, j) < 0.2)
      b(:, j) = -b(:, j)
    elsewhere (a(:, j) < 0.4)
      b(:, j) = 0.0
      a(:, j) = 1.0
    elsewhere
      b(:, j) = b(:, j) + a(:, j)
    end where
  end do
  where (b > sum(b) / (n*m))
    where (a > 0.3)
      a = 2*a
      b = 0
    elsewhere
      b = 1
    end where
  end where
end subroutine
""", lambda: [9, 4, farray((9, 4), seed=90, low=0, high=1), farray((9, 4), seed=91),
              farray(9, seed=92), ints(9, -50, 50, 93), ints(9, -2, 2, 94)])

case("where_mask_changed_by_the_construct", """
subroutine clip_positive(n, a, b)
  implicit none
  integer, intent(in) :: n
  real, intent(inout) :: a(n)
  real, intent(out) :: b(n)
  where (a < 0.0)
    a = 0.0
    b = -1.0
  elsewhere
    b = sqrt(a)
  end where
end subroutine
""", lambda: [20, farray(20, seed=95), zeros(20)])

case("array_reductions", """
subroutine reduce(n, m, a, b, r)
  implicit none
  integer n, m, j
  real*8 a(n, m), b(n), r(m, 5)
  do j = 1, m
    r(j, 1) = sum(a(:, j))
    r(j, 2) = product(a(1:3, j) + 1.0d0)
    r(j, 3) = maxval(a(:, j)) - minval(a(2:n, j))
    r(j, 4) = dot_product(a(:, j), b)
    r(j, 5) = sum(a(:, j) * b) / size(a, 1) + sum(a(1:0, j))
  end do
end subroutine
""", lambda: [6, 4, farray((6, 4), np.float64, seed=38), farray(6, np.float64, seed=39),
              zeros((4, 5), np.float64)])

case("reductions_integer_and_empty", """
subroutine ireduce(n, k, out)
  implicit none
  integer n
  integer k(n), out(6)
  out(1) = sum(k)
  out(2) = maxval(k)
  out(3) = minval(k(2:n-1))
  out(4) = maxval(k(n:1))
  out(5) = product(k(1:3))
  out(6) = dot_product(k(1:n:2), k(2:n:2))
end subroutine
""", lambda: [8, ints(8, -9, 9, 40), np.zeros(6, np.int32)])

case("array_syntax_two_dimensional_and_broadcast", """
subroutine arr2d(n, m, a, b, c)
  implicit none
  integer n, m
  real*8 a(n, m), b(n, m), c(0:n-1, m)
  c = a * b + 1.0d0
  a(2:3, :) = 0.0d0
  b(:, 2:m) = b(:, 1:m-1) + c(:, 2:m)
  c(0, :) = sqrt(abs(b(n, :))) + sum(a)
end subroutine
""", lambda: [5, 4, farray((5, 4), np.float64, seed=56), farray((5, 4), np.float64, seed=57),
              zeros((5, 4), np.float64)])

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
    source, make_args, sub, filename, kw = CASES[name]
    from f2loopy.frontend import parse_fortran
    if sub is None:
        sub = parse_fortran(source, filename).kernels[0].name
    run_both(source, sub, make_args(), tmp_path, cl_queue, filename=filename, **kw)


def test_logical_arrays_accept_numpy_bool(tmp_path, cl_queue):
    from util import translate_and_load
    src = CASES["logical_scalars_and_arrays"][0]
    module, _ = translate_and_load(src, tmp_path)
    x = farray(30, seed=22)
    mask = np.zeros(30, dtype=np.bool_)
    count = module.flags(30, x.copy(), mask, 0, queue=cl_queue)
    expected = (x > 0.5) | (x < -0.5)
    assert mask.dtype == np.bool_ and (mask == expected).all()
    as_int = np.zeros(30, dtype=np.int32)
    assert module.flags(30, x.copy(), as_int, 0, queue=cl_queue) == count
    assert (as_int == expected.astype(np.int32)).all()
    with pytest.raises(TypeError, match="must have dtype int32"):
        module.flags(30, x.copy(), np.zeros(30, np.float32), 0, queue=cl_queue)


def test_enough_cases():
    assert len(CASES) >= 40
