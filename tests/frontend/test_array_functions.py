"""Array-valued functions (issue 27, cause 8): ``function twice(n, x)
result(y)`` with ``y(n)``, called from a kernel (inlined, its result a
temporary array) and as a kernel (the Python glue returns a new array)."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.ir.roles import Result
from util import farray, needs_gfortran, run_both, translate_and_load

CALLED = """module vec
  implicit none
contains
  function twice(n, x) result(y)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n)
    real(8) :: y(n)
    y = 2 * x
  end function
  function corners(a) result(c)
    real(8), intent(in) :: a(4, 3)
    real(8) :: c(2)
    c(1) = a(1, 1) + a(4, 3)
    c(2) = a(4, 1) - a(1, 3)
  end function
  subroutine combine(n, a, b, m)
    integer, intent(in) :: n
    real(8), intent(in) :: a(n)
    real(8), intent(inout) :: b(n)
    real(8), intent(in) :: m(4, 3)
    b = twice(n, a) + 1 - b
    b(1:2) = b(1:2) + corners(m)
    b(n) = b(n) + sum(twice(n, a))
  end subroutine
end module
"""


def test_an_array_result_is_a_temporary_of_the_declared_bounds():
    k = parse_fortran(CALLED, "v.f90")["combine"]
    temps = {n: (t.shape, t.address_space and str(t.address_space))
             for n, t in k.temporaries.items() if "result" in n}
    assert {n: (tuple(map(str, s)), sp) for n, (s, sp) in temps.items()} == {
        "twice_result": (("n",), "global"), "corners_result": (("2",), None),
        "twice_result_1": (("n",), "global")}


@pytest.mark.parametrize("body, message", [
    ("    x = twice(n, a)\n", "v.f90:{line}:9: error: array-valued function 'twice' is used in "
     "a scalar expression (use it in an array expression, e.g. assign it to an array)"),
    ("    k = n + 1\n    b(1:k) = twice(k, a)\n", "v.f90:{line}:14: error: the bounds of the "
     "result of 'twice' depend on 'k', which is not a scalar argument the kernel leaves "
     "unchanged (the result is device memory the host allocates for each call: pass sizes the "
     "kernel takes as arguments, or give the result constant bounds)"),
])
def test_array_results_that_cannot_be_are_located_errors(body, message):
    head = CALLED.split("  subroutine combine")[0]
    source = head + ("  subroutine user(n, a, b, x)\n    integer, intent(in) :: n\n"
                     "    real(8), intent(in) :: a(n)\n    real(8) :: b(n), x\n"
                     "    integer :: k\n" + body + "  end subroutine\nend module\n")
    line = head.count("\n") + 5 + body.count("\n")
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "v.f90")
    assert e.value.format().splitlines()[0] == message.format(line=line)


@needs_gfortran
def test_called_array_functions_match_gfortran(tmp_path, cl_queue):
    run_both(CALLED, "combine", [7, farray(7, np.float64, seed=1), farray(7, np.float64, seed=2),
                                 farray((4, 3), np.float64, seed=3)], tmp_path, cl_queue)


KERNEL = """function scaled(n, x, s) result(y)
  integer, intent(in) :: n
  real(8), intent(in) :: x(n), s
  real(8) :: y(0:n-1)
  integer :: i
  do i = 0, n - 1
    y(i) = s * x(i + 1) + i
  end do
end function
"""


def test_an_array_valued_function_as_a_kernel_returns_a_new_array(tmp_path, cl_queue):
    k = parse_fortran(KERNEL, "f.f90")["scaled"]
    assert k.result_arg.name == "y" and isinstance(k.result_arg.role, Result)
    assert tuple(map(str, k.result_arg.shape)) == ("n",)
    assert [a.name for a in k.fortran_args] == ["n", "x", "s"]
    glue, _ = translate_and_load(KERNEL, tmp_path)
    x = np.linspace(0, 1, 5)
    y = glue.scaled(5, x, 3.0, queue=cl_queue)
    assert isinstance(y, np.ndarray) and y.shape == (5,) and y.dtype == np.float64
    assert y.flags.f_contiguous and np.array_equal(y, 3.0 * x + np.arange(5))
    assert glue.scaled(0, np.zeros(0), 1.0, queue=cl_queue).shape == (0,)
