"""Fortran coverage (issue 3): fixed form, program units and calls,
declarations, run on PoCL and compared with gfortran (statements and
expressions: :mod:`test_differential_statements`; the array language:
:mod:`test_differential_arrays`).

Each case is a whole Fortran file (free or fixed form), the subroutine to run
and its arguments.  Tolerances are those of :mod:`test_differential_core`.
"""

import numpy as np
import pytest

from util import farray, needs_gfortran, run_case, zeros

pytestmark = needs_gfortran

CASES = {}


def case(name, source, make_args, *, sub=None, filename="k.f90", **kw):
    CASES[name] = (source, make_args, sub, filename, kw)


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

case("reshaped_and_implied_do_parameter_tables", """
subroutine tables(n, u, v)
  implicit none
  integer n, i, j, k
  real u(n, 3), v(n, 3)
  integer, parameter :: perm(2, 3) = reshape([(2*i, i = 1, 6)], [2, 3], order=[2, 1])
  real, parameter :: w2(2) = (/ 1.5, -2.0 /)
  real, parameter :: w(7) = [w2, (0.5*k, k = 1, 3), (real(k), k = 9, 5, -4)]
  real, parameter :: pad(2, 3) = reshape((/ 1.0, 2.0 /), (/ 2, 3 /), pad=(/ 7.0, 8.0, 9.0 /))
  do j = 1, 3
    do i = 1, n
      v(i, j) = u(i, j) * w(mod(i, 7) + 1) + perm(mod(i, 2) + 1, j) - pad(2, j)
    end do
  end do
end subroutine
""", lambda: [9, farray((9, 3), seed=23), zeros((9, 3))])

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


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_gfortran(name, tmp_path, cl_queue):
    run_case(CASES[name], tmp_path, cl_queue)


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
    from test_differential_arrays import CASES as ARRAY_CASES
    from test_differential_statements import CASES as STATEMENT_CASES
    assert len(CASES) + len(ARRAY_CASES) + len(STATEMENT_CASES) >= 40
