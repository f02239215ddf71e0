"""An array-valued function as a kernel through the Fortran glue (issue 27):
``scaled_cl(n, x, s)`` returns the array, compared with the original built by
gfortran in the same program."""

import pytest

from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain, translate

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


SCALED = """module scaling
  implicit none
contains
  function scaled(n, x, s) result(y)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n), s
    real(8) :: y(0:n-1)
    integer :: i
    do i = 0, n - 1
      y(i) = s * x(i + 1) + i
    end do
  end function
end module
"""
MAIN = """
program main
  use checks
  use scaling
  use scaled_cl_mod
  implicit none
  real(8) :: x(5), a(5), b(5)
  integer :: i
  do i = 1, 5
    x(i) = 0.25d0 * i
  end do
  a = scaled(5, x, 3d0)
  b = scaled_cl(5, x, 3d0)
  call check(all(a == b), "scaled")
  call check(size(scaled_cl(2, x, 1d0)) == 2, "size of the result")
  call done()
end program
"""


def test_array_valued_function_through_the_fortran_glue(tmp_path, runtime):
    sources = translate(tmp_path, "scaling", SCALED)
    assert "    real(c_double) :: f2l_value(0:n - 1)\n" in sources[2].read_text()
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, MAIN), 2)
