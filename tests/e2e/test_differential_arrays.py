"""Fortran coverage (issue 3), the array language: array syntax, ``where``,
assumed-shape arguments, the array intrinsics (reductions with ``mask=`` and
``dim=``, ``matmul``, ``transpose``, ``maxloc``, ``cshift``, ``spread``...) and
array constructors, run on PoCL and compared with gfortran (as in
:mod:`test_differential_coverage`)."""

import numpy as np
import pytest

from util import farray, ints, needs_gfortran, run_case, zeros

pytestmark = needs_gfortran

CASES = {}


def case(name, source, make_args, *, sub=None, filename="k.f90", **kw):
    CASES[name] = (source, make_args, sub, filename, kw)


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


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_gfortran(name, tmp_path, cl_queue):
    run_case(CASES[name], tmp_path, cl_queue)
