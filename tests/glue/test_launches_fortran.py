"""The Fortran glue (and the C runtime under it) of kernels split at global
barriers: the launches of a two-phase kernel and of a time-stepped stencil
(host loop), built with gfortran against the runtime and compared with the
original Fortran in the same program; arrays uploaded once per call or
device-resident across calls."""

from __future__ import annotations

import pytest

from fortran_util import (
    assert_all_ok, build_runtime, compile_and_run, glue_from_kernels, needs_toolchain)
from launch_util import JACOBI, TWO_PHASE, _jacobi_split, _norm1_split

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran,
              pytest.mark.differential]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


NORM1_MAIN = """
program main
  use checks
  use norm1_cl_mod
  implicit none
  integer, parameter :: n = 37
  double precision :: x(n), y1(n), y2(n), s1, s2
  integer :: i, st
  x = [(sin(dble(i)), i = 1, n)]
  s1 = 5; s2 = 5; y1 = 0; y2 = 0
  call norm1(n, x, y1, s1)
  call norm1_cl(n, x, y2, s2, st)
  call check(st == F2L_OK, "status")
  call check(abs(s1 - s2) <= 1d-12 * abs(s1), "s, written by the first launch")
  call check(maxval(abs(y1 - y2)) <= 1d-12, "y, from the second launch reading s and inv")
  call f2l_upload(y2)
  y2 = 0
  call norm1_cl(n, x, y2, s2, st)
  call check(st == F2L_OK .and. all(y2 == 0), "a resident y stays on the device")
  call f2l_download(y2)
  call check(maxval(abs(y1 - y2)) <= 1d-12, "and holds the result")
  call done()
end program
"""


def test_two_phase_kernel_through_the_fortran_glue(tmp_path, runtime):
    sources = glue_from_kernels(tmp_path, "norm1", TWO_PHASE, [_norm1_split()])
    glue = sources[2].read_text()
    assert glue.count("call f2l_c%launch_kernel(") == 2
    assert "call f2l_c%complete()" in glue
    proc = compile_and_run(tmp_path, runtime, sources, NORM1_MAIN)
    assert_all_ok(proc, 5)


JACOBI_MAIN = """
program main
  use checks
  use jac_cl_mod
  implicit none
  integer, parameter :: n = 50
  double precision :: a1(n), b1(n), a2(n), b2(n)
  integer :: i, st
  a1 = [(cos(dble(i)), i = 1, n)]; b1 = 0; a2 = a1; b2 = b1
  call jac(7, n, a1, b1)
  call jac_cl(7, n, a2, b2, st)
  call check(st == F2L_OK, "status")
  call check(maxval(abs(a1 - a2)) <= 1d-12 .and. maxval(abs(b1 - b2)) <= 1d-12, &
             "7 steps on the host loop")
  call jac_cl(0, n, a2, b2, st)
  call check(st == F2L_OK .and. maxval(abs(a1 - a2)) <= 1d-12, "no step")
  call f2l_upload(a2); call f2l_upload(b2)
  do i = 1, 3
    call jac(2, n, a1, b1)
    call jac_cl(2, n, a2, b2)
  end do
  call f2l_download(a2); call f2l_download(b2)
  call check(maxval(abs(a1 - a2)) <= 1d-12 .and. maxval(abs(b1 - b2)) <= 1d-12, &
             "device-resident across calls")
  call done()
end program
"""


def test_time_stepped_stencil_through_the_fortran_glue(tmp_path, runtime):
    sources = glue_from_kernels(tmp_path, "jac", JACOBI, [_jacobi_split(8)])
    glue = sources[2].read_text()
    assert "do f2l_hostloop_t = 1_c_int64_t, f2l_tsteps" in glue
    proc = compile_and_run(tmp_path, runtime, sources, JACOBI_MAIN)
    assert_all_ok(proc, 4)
