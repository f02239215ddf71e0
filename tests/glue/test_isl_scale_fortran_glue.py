"""Kernels whose isl work used to exceed the operation limit (issue 27 item
12), run through the Fortran glue against the original built by gfortran in
the same program: an ocean model's friction kernel on allocatable module
arrays with a halo-sized automatic array (its assumptions are now plain
equalities of the allocatable extents), and a LAPACK-style estimator whose
loops all work on one WORK array (its dependences now skip accesses of
statements already ordered before)."""

import pytest

from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain, translate

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


OCEAN = """module ocean
  implicit none
  integer :: is_pe = 1, ie_pe = 5, js_pe = 1, je_pe = 4, onx = 2, nz = 3
  real(8), allocatable :: flux(:,:,:), du(:,:,:), mask(:,:,:), visc(:,:,:), heat(:,:,:)
contains
  subroutine friction(dz)
    real(8), intent(in) :: dz
    integer :: i, j, k
    real(8) :: work(is_pe-onx:ie_pe+onx, js_pe-onx:je_pe+onx, nz)
    do k = 1, nz - 1
      do j = js_pe - 1, je_pe
        do i = is_pe - 1, ie_pe
          flux(i,j,k) = 0.5d0 * (visc(i,j,k) + visc(i+1,j,k)) * mask(i,j,k+1) * mask(i,j,k)
        end do
      end do
    end do
    flux(:,:,nz) = 0d0
    k = 1; du(:,:,k) = flux(:,:,k) / dz * mask(:,:,k)
    do k = 2, nz
      du(:,:,k) = (flux(:,:,k) - flux(:,:,k-1)) / dz * mask(:,:,k)
    end do
    work = 0.5d0 * visc
    work(:,:,nz) = 0.0
    heat = heat + work
  end subroutine
end module
"""
OCEAN_MAIN = """
program main
  use checks
  use ocean
  use friction_cl_mod
  implicit none
  real(8), allocatable :: f0(:,:,:), d0(:,:,:), h0(:,:,:), f1(:,:,:)
  integer :: i, j, k
  allocate(flux(-1:7, -1:6, 3), du(-1:7, -1:6, 3), mask(-1:7, -1:6, 3), &
           visc(-1:7, -1:6, 3), heat(-1:7, -1:6, 3))
  do k = 1, 3
    do j = -1, 6
      do i = -1, 7
        mask(i,j,k) = merge(1d0, 0d0, mod(i + 2*j + k, 5) /= 0)
        visc(i,j,k) = 0.25d0 * i - 0.5d0 * j + k
        heat(i,j,k) = 1d0 / (3 + i + j + k)
        flux(i,j,k) = -1d0
        du(i,j,k) = -2d0
      end do
    end do
  end do
  f0 = flux; d0 = du; h0 = heat
  call friction(0.5d0)
  ! the original's results in f0, d0, h0; the inputs again in flux, du, heat
  f1 = flux; flux = f0; f0 = f1
  f1 = du; du = d0; d0 = f1
  f1 = heat; heat = h0; h0 = f1
  call friction_cl(0.5d0)
  call check(all(flux == f0), "flux")
  call check(all(du == d0), "du")
  call check(all(abs(heat - h0) <= 1d-12 * abs(h0)), "heat")
  call done()
end program
"""


def test_friction_on_allocatable_module_arrays(tmp_path, runtime):
    sources = translate(tmp_path, "ocean", OCEAN)
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, OCEAN_MAIN), 3)


ESTIMATE = """module estimator
  implicit none
contains
  subroutine estimate(n, work, x, est)
    integer, intent(in) :: n
    double precision, intent(inout) :: work(3*n), x(n)
    double precision, intent(out) :: est
    integer :: i, j, pass
    do pass = 1, 3
      do i = 1, n
        work(n + i) = x(i) * pass
      end do
      do j = 1, n
        do i = j, n
          work(i) = work(i) + work(n + j) * x(i)
        end do
      end do
      do i = 2, n, 2
        work(2*n + i) = work(i - 1) - work(n + i)
      end do
      do i = 1, n
        x(i) = work(i) / (1 + abs(work(2*n + i)))
      end do
    end do
    est = 0
    do i = 1, 3*n
      est = est + abs(work(i))
    end do
  end subroutine
end module
"""
ESTIMATE_MAIN = """
program main
  use checks
  use estimator
  use estimate_cl_mod
  implicit none
  integer, parameter :: n = 9
  double precision :: w1(3*n), w2(3*n), x1(n), x2(n), e1, e2
  integer :: i
  do i = 1, 3*n
    w1(i) = 0.125d0 * i
  end do
  do i = 1, n
    x1(i) = 1d0 / i
  end do
  w2 = w1; x2 = x1
  call estimate(n, w1, x1, e1)
  call estimate_cl(n, w2, x2, e2)
  call check(all(abs(w1 - w2) <= 1d-12 * max(1d0, abs(w1))), "work")
  call check(all(abs(x1 - x2) <= 1d-12 * max(1d0, abs(x1))), "x")
  call check(abs(e1 - e2) <= 1d-12 * abs(e1), "estimate")
  call done()
end program
"""


def test_loops_on_one_work_array_keep_their_order(tmp_path, runtime):
    sources = translate(tmp_path, "estimator", ESTIMATE)
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, ESTIMATE_MAIN), 3)
