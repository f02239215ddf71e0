"""Allocatable module arrays through the Fortran glue (issue 27, cause 1): the
caller allocates in Fortran (also with lower bounds other than 1) and the
glue uses the module's own allocation; compared with the original built by
gfortran in the same program."""

import pytest

from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain, translate

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


FIELDS = """module fields
  implicit none
  double precision, allocatable :: u(:,:)
  real(8) :: scale = 2d0
contains
  subroutine smooth(count)
    integer, intent(out) :: count
    integer :: i, j
    count = -1
    if (.not. allocated(u)) return
    count = 0
    do j = lbound(u, 2), ubound(u, 2)
      do i = lbound(u, 1) + 1, ubound(u, 1)
        u(i, j) = u(i, j) * scale + u(i - 1, j) + j
        count = count + 1
      end do
    end do
  end subroutine
end module
"""
MAIN = """
program main
  use checks
  use fields
  use smooth_cl_mod
  implicit none
  double precision, allocatable :: ref(:,:)
  integer :: c1, c2, i, j
  call smooth(c1)
  call smooth_cl(c2)
  call check(c1 == -1 .and. c2 == -1, "unallocated")
  allocate(u(0:6, -1:3))
  do j = -1, 3
    do i = 0, 6
      u(i, j) = 0.5d0 * i - j
    end do
  end do
  ref = u
  call smooth(c1)
  call move_alloc(u, ref)
  allocate(u(0:6, -1:3))
  do j = -1, 3
    do i = 0, 6
      u(i, j) = 0.5d0 * i - j
    end do
  end do
  call smooth_cl(c2)
  call check(c1 == 30 .and. c2 == 30, "count")
  call check(all(u == ref), "u with lower bounds 0 and -1")
  call check(lbound(u, 1) == 0 .and. lbound(u, 2) == -1, "bounds kept")
  deallocate(u)
  call smooth_cl(c2)
  call check(c2 == -1, "deallocated")
  call done()
end program
"""


def test_allocatable_module_array_through_the_fortran_glue(tmp_path, runtime):
    sources = translate(tmp_path, "fields", FIELDS)
    glue = sources[2].read_text()
    assert "real(c_double), dimension(:, :), allocatable, intent(inout), target :: " \
        "f2l_arg_u" in glue
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, MAIN), 5)


PARTICLES = """module particles
  implicit none
  integer :: natoms = 0
  real(8), pointer :: rx(:) => null(), vx(:) => null()
contains
  subroutine drift(moved)
    integer, intent(out) :: moved
    integer :: i
    moved = -1
    if (.not. associated(rx)) return
    moved = 0
    do i = 1, natoms
      rx(i) = rx(i) + 0.25d0 * vx(i)
      moved = moved + 1
    end do
  end subroutine
end module
"""
PARTICLES_MAIN = """
program main
  use checks
  use particles
  use drift_cl_mod
  implicit none
  real(8), target :: pos(6), pos_ref(6), vel(6)
  integer :: c1, c2, i
  call drift(c1)
  call drift_cl(c2)
  call check(c1 == -1 .and. c2 == -1, "not associated")
  do i = 1, 6
    pos(i) = i
    vel(i) = 2 * i - 3
  end do
  pos_ref = pos
  natoms = 6
  rx => pos_ref
  vx => vel
  call drift(c1)
  rx => pos
  call drift_cl(c2)
  call check(c1 == 6 .and. c2 == 6, "count")
  call check(all(pos == pos_ref), "rx through the pointer")
  call done()
end program
"""


def test_module_pointer_array_through_the_fortran_glue(tmp_path, runtime):
    sources = translate(tmp_path, "particles", PARTICLES)
    glue = sources[2].read_text()
    assert "real(c_double), dimension(:), pointer, intent(in) :: f2l_arg_rx" in glue
    assert "associated(f2l_arg_rx)" in glue and "is_contiguous(f2l_arg_rx)" in glue
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, PARTICLES_MAIN), 3)
