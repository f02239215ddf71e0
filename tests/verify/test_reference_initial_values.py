"""The gfortran reference of the differential tests (``tests/util.py``'s
``run_both``, :meth:`FortranLibrary.call`) starts module variables with an
initial value where the program does: ``real(8) :: grav = 9.81d0`` is 9.81
on the first call, as in the Python glue (it ran as 0 before)."""

from __future__ import annotations

import numpy as np
import pytest

from util import fortran_reference, needs_gfortran, run_both

GRAVITY = """module phys
  implicit none
  real(8) :: grav = 9.81d0
  integer :: nwave(2) = (/ 3, 5 /)
contains
  subroutine wave_speed(n, h, c)
    integer, intent(in) :: n
    real(8), intent(in) :: h(n)
    real(8), intent(out) :: c(n)
    c = sqrt(grav * h) + nwave(2) - nwave(1)
  end subroutine
end module
"""


@needs_gfortran
@pytest.mark.differential
def test_reference_sees_module_initial_values():
    ref = fortran_reference(GRAVITY, "phys.f90")
    h = np.asfortranarray([1.0, 4.0, 0.25])
    c = np.zeros(3, order="F")
    ref.call("wave_speed", [3, h, c])
    np.testing.assert_allclose(c, np.sqrt(9.81 * h) + 2, rtol=1e-14)


@pytest.mark.differential
def test_run_both_agrees_on_module_initial_values(tmp_path, cl_queue):
    h = np.asfortranarray([1.0, 4.0, 0.25])
    cl, ref = run_both(GRAVITY, "wave_speed", [3, h, np.zeros(3, order="F")], tmp_path,
                       cl_queue, filename="phys.f90")
    np.testing.assert_allclose(ref[2], np.sqrt(9.81 * h) + 2, rtol=1e-14)
