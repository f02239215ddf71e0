"""Work arrays through the Fortran glue (issue 27): a kernel that inlines a
procedure with an automatic work array, and a ``save, allocatable`` scratch
array, called several times (other sizes, then the same) from a Fortran
program, against the original built by gfortran in the same program (the
glue's C part allocates the scratch buffers for each launch)."""

import pytest

from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain, translate

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


WORK = """module smoothing
  implicit none
  integer :: nx = 4, ny = 3
contains
  subroutine blur(n, a)
    integer, intent(in) :: n
    real(8), intent(inout) :: a(n)
    real(8) :: w(0:n+1)
    integer :: i
    w(0) = 0
    w(n+1) = 0
    w(1:n) = a
    do i = 1, n
      a(i) = 0.25d0 * w(i-1) + 0.5d0 * w(i) + 0.25d0 * w(i+1)
    end do
  end subroutine
  subroutine rows(f)
    real(8), intent(inout) :: f(nx, ny)
    real(8), save, allocatable :: t(:)
    integer :: i, j
    if (allocated(t) .and. any(shape(t) /= (/nx/))) deallocate(t)
    if (.not. allocated(t)) then
      allocate(t(nx))
      t = 0
    end if
    do j = 1, ny
      do i = 1, nx
        t(i) = f(i, j) * j
      end do
      call blur(nx, t)
      do i = 1, nx
        f(i, j) = t(i)
      end do
    end do
  end subroutine
end module
"""
MAIN = """
program main
  use checks
  use smoothing
  use rows_cl_mod
  implicit none
  real(8), allocatable :: a(:, :), b(:, :)
  integer :: call_no, i, j
  do call_no = 1, 3
    if (call_no == 2) then
      nx = 6
      ny = 5
    end if
    allocate(a(nx, ny), b(nx, ny))
    do j = 1, ny
      do i = 1, nx
        a(i, j) = sin(1d0 * (i + 3 * j + call_no))
      end do
    end do
    b = a
    call rows(a)
    call rows_cl(b)
    call check(all(abs(a - b) <= 1d-14), "rows")
    deallocate(a, b)
  end do
  call done()
end program
"""


def test_work_arrays_through_the_fortran_glue(tmp_path, runtime):
    sources = translate(tmp_path, "work", WORK)
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, MAIN), 3)
