"""OPTIONAL dummy arguments through the Fortran glue (issue 27, cause 8): an
absent optional is passed on as absent; compared with the original built by
gfortran in the same program."""

import pytest

from shared_kernels import OPTIONAL_SCALING
from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain, translate

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


SCALE = OPTIONAL_SCALING


MAIN = """
program main
  use checks
  use scaling
  use scale_add_cl_mod
  implicit none
  integer, parameter :: n = 6
  real(8) :: x(n), y1(n), y2(n), sh(n)
  integer :: c1, c2, i
  do i = 1, n
    x(i) = 0.5d0 * i
    sh(i) = 1d0 / i
  end do
  y1 = 1; y2 = 1
  call scale_add(n, x, y1)
  call scale_add_cl(n, x, y2)
  call check(all(y1 == y2), "all absent")
  call scale_add(n, x, y1, 3d0)
  call scale_add_cl(n, x, y2, 3d0)
  call check(all(y1 == y2), "factor")
  c1 = -1; c2 = -1
  call scale_add(n, x, y1, shift=sh, count=c1)
  call scale_add_cl(n, x, y2, shift=sh, count=c2)
  call check(all(y1 == y2) .and. c1 == n .and. c2 == n, "shift and count")
  call scale_add(n, x, y1, -2d0, sh)
  call scale_add_cl(n, x, y2, -2d0, sh)
  call check(all(y1 == y2), "factor and shift")
  call done()
end program
"""


def test_optional_arguments_through_the_fortran_glue(tmp_path, runtime):
    sources = translate(tmp_path, "scaling", SCALE)
    glue = sources[2].read_text()
    assert "real(c_double), dimension(..), intent(in), contiguous, target, optional :: " \
        "shift\n" in glue
    assert "    if (present(factor)) f2l_o_factor = factor\n" in glue
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, MAIN), 4)
