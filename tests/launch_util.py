"""Kernels split at global barriers that the launch tests share (transform/,
glue/): a two-phase norm and a time-stepped Jacobi stencil, split."""

from __future__ import annotations

from f2loopy.frontend import parse_fortran
from f2loopy.transform import add_global_barrier, add_global_barriers_between_nests, split_iname

# two phases: a sum every work-item needs, then a scaling; the sum is a
# scalar argument (written by the first launch, read by the second) and
# a local scalar carries a value from the first launch to the second
TWO_PHASE = """subroutine norm1(n, x, y, s)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y(n)
  double precision, intent(inout) :: s
  double precision :: inv
  integer :: i
  s = 0.0d0
  do i = 1, n
    s = s + abs(x(i))
  end do
  inv = 1.0d0 / s
  do i = 1, n
    y(i) = x(i) * inv - s / n
  end do
end subroutine norm1
"""

JACOBI = """subroutine jac(tsteps, n, a, b)
  implicit none
  integer, intent(in) :: tsteps, n
  double precision, intent(inout) :: a(n), b(n)
  integer :: t, i
  do t = 1, tsteps
    do i = 2, n - 1
      b(i) = (a(i - 1) + a(i) + a(i + 1)) / 3.0d0
    end do
    do i = 2, n - 1
      a(i) = (b(i - 1) + b(i) + b(i + 1)) / 3.0d0
    end do
  end do
end subroutine jac
"""


def _k(src, name=None):
    tu = parse_fortran(src, "t.f90")
    return tu[name] if name else tu.kernels[0]


def _ids(kernel):
    return [i.id for i in kernel.instructions]


def _norm1_split():
    k = _k(TWO_PHASE)
    ids = _ids(k)          # s=0, s=s+.., inv=.., y=..
    k = add_global_barrier(k, after=f"id:{ids[2]}", before=f"id:{ids[3]}")
    return split_iname(k, "i_1", 16, outer_tag="g.0", inner_tag="l.0")


def _jacobi_split(tile=16):
    k = add_global_barriers_between_nests(_k(JACOBI), host_loops=["t"])
    k = split_iname(k, "i", tile, outer_tag="g.0", inner_tag="l.0")
    return split_iname(k, "i_1", tile, outer_tag="g.0", inner_tag="l.0")
