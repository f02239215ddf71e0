import numpy as np

from util import farray, needs_gfortran, run_both

SAXPY = """
subroutine saxpy(n, a, x, y)
  implicit none
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a*x(i) + y(i)
  end do
end subroutine
"""


@needs_gfortran
def test_saxpy_matches_gfortran(tmp_path, cl_queue):
    n = 100
    run_both(SAXPY, "saxpy", [n, np.float32(2.5), farray(n, seed=1), farray(n, seed=2)],
             tmp_path, cl_queue)
