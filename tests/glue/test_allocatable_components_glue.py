"""Allocatable and pointer components of derived types through the glues
(issue 27): the Python glue takes an object whose component is a
Fortran-ordered array, ``(array, lower bounds)`` or None; the Fortran glue
takes the derived-type variable and passes the component's own allocation
(lower bounds kept); compared with numpy and with the original built by
gfortran in the same program."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain, translate
from util import translate_and_load
from shared_kernels import HEAT_EVOLVE

HEAT = HEAT_EVOLVE + """
  function average(f0)
    real(dp) :: average
    type(field) :: f0
    average = -1
    if (allocated(f0%data)) then
      average = sum(f0%data(1:f0%nx, 1:f0%ny)) / (f0%nx * f0%ny)
    end if
  end function average
end module solver
"""


def _reference(d0, nx, ny, a, dt, dx):
    ref = d0.copy(order="F")
    for j in range(1, ny + 1):
        for i in range(1, nx + 1):
            ref[i, j] = d0[i, j] + a * dt * (d0[i - 1, j] - 2.0 * d0[i, j] + d0[i + 1, j]) / dx**2
    return ref


def test_python_glue_takes_components_with_their_lower_bounds(tmp_path, cl_queue):
    glue, _ = translate_and_load(HEAT, tmp_path)
    assert "an object with the components nx, ny, data (allocatable: an array, (array, lower " \
        "bounds) or None)" in glue.average.__doc__
    nx, ny = 6, 4
    rng = np.random.default_rng(3)
    d0 = np.asfortranarray(rng.random((nx + 2, ny + 2)))
    prev = SimpleNamespace(nx=nx, ny=ny, dx=0.1, data=(d0.copy(order="F"), (0, 0)))
    out = np.asfortranarray(d0.copy())
    curr = SimpleNamespace(nx=nx, ny=ny, dx=0.1, data=(out, (0, 0)))
    glue.evolve(curr, prev, 0.5, 0.01, queue=cl_queue)
    assert curr.data[0] is out                   # updated in place
    np.testing.assert_allclose(out, _reference(d0, nx, ny, 0.5, 0.01, 0.1), rtol=1e-14)
    # lower bounds 0: f0%data(1:nx, 1:ny) is d0[1:nx+1, 1:ny+1]
    assert glue.average(prev, queue=cl_queue) == pytest.approx(d0[1:nx + 1, 1:ny + 1].mean(),
                                                              rel=1e-14)
    # a plain array: lower bounds 1
    assert glue.average(SimpleNamespace(nx=nx, ny=ny, data=d0), queue=cl_queue) == \
        pytest.approx(d0[:nx, :ny].mean(), rel=1e-14)
    # None: unallocated, allocated() is false in the kernel
    assert glue.average(SimpleNamespace(nx=nx, ny=ny, data=None), queue=cl_queue) == -1
    for bad, message in [
            ((d0, (0,)), "average: allocatable component f0%data given as a tuple must be "
             "(array, lower bounds) with 2 integer lower bound(s)"),
            (np.ones(3), "average: allocatable component f0%data must have 2 dimension(s) as "
             "declared in Fortran, got 1")]:
        with pytest.raises(glue.KernelArgumentError) as e:
            glue.average(SimpleNamespace(nx=1, ny=1, data=bad), queue=cl_queue)
        assert str(e.value) == message


GRIDS = """module grids
  implicit none
  type :: grid_t
    real(8), dimension(:,:), pointer :: h => null()
  end type
  type(grid_t), pointer :: vgrid
  type(grid_t) :: ugrid
end module
module mix
  use grids
  implicit none
contains
  subroutine total(nx, ny, s)
    integer, intent(in) :: nx, ny
    real(8), intent(out) :: s
    integer :: i, j
    s = -1
    if (.not. associated(ugrid%h)) return
    s = 0
    do j = 1, ny
      do i = 1, nx
        s = s + ugrid%h(i, j) * vgrid%h(i, j)
      end do
    end do
  end subroutine
end module
"""


def test_python_glue_exposes_pointer_components_of_module_variables(tmp_path, cl_queue):
    glue, _ = translate_and_load(GRIDS, tmp_path)
    assert glue.grids.ugrid.h is None
    assert glue.total(2, 2, 0.0, queue=cl_queue) == -1
    glue.grids.ugrid.h = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    glue.grids.vgrid.h = np.asfortranarray(np.full((2, 3), 2.0))
    assert glue.total(2, 3, 0.0, queue=cl_queue) == 30.0


MAIN = """
program main
  use checks
  use grid_types
  use solver
  use evolve_cl_mod
  use average_cl_mod
  implicit none
  type(field) :: curr, prev, ref, empty
  integer :: i, j
  curr%nx = 5; curr%ny = 4; curr%dx = 0.1d0
  allocate(curr%data(0:6, 0:5))
  prev = curr
  do j = 0, 5
    do i = 0, 6
      prev%data(i, j) = 0.5d0 * i - j + 0.01d0 * i * j
    end do
  end do
  curr%data = 0
  ref = curr
  call evolve(ref, prev, 0.5d0, 0.01d0)
  call evolve_cl(curr, prev, 0.5d0, 0.01d0)
  call check(all(abs(curr%data - ref%data) <= 1d-14 * maxval(abs(ref%data))), "evolve")
  call check(lbound(curr%data, 1) == 0 .and. lbound(curr%data, 2) == 0, "bounds kept")
  call check(abs(average_cl(prev) - average(prev)) <= 1d-14, "average with lower bounds 0")
  call check(average_cl(empty) == -1d0, "unallocated")
  call done()
end program
"""


@needs_toolchain
@pytest.mark.opencl
@pytest.mark.gfortran
def test_fortran_glue_passes_the_components_allocation(tmp_path):
    runtime = build_runtime(tmp_path)
    sources = translate(tmp_path, "heat", HEAT)
    glue = sources[2].read_text()
    assert "call evolve_cl_impl(curr%nx, curr%ny, curr%dx, curr%data, prev%data, a, dt" in glue
    assert "real(c_double), dimension(:, :), allocatable, intent(inout), target :: " \
        "f2l_arg_curr_data" in glue
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, MAIN), 4)
