"""``size``/``lbound``/``ubound`` of a dummy in the bounds of another array
(issue 27: the Allen-Tildesley ``outer_product_2``, whose result is declared
``real :: c(size(a), size(b))`` with assumed-shape ``a`` and ``b``): the
extents are the kernel arguments that hold the dummies' extents."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from util import farray, needs_gfortran, run_both, translate_and_load

MATHS = """module maths
  implicit none
contains
  function outer_product_2 ( a, b ) result ( c )
    real, dimension(:), intent(in) :: a, b
    real, dimension(size(a),size(b)) :: c
    integer :: i, j
    do j = 1, size(b)
       do i = 1, size(a)
          c(i,j) = a(i) * b(j)
       end do
    end do
  end function outer_product_2
  subroutine spread_sum ( a, s )
    real, dimension(:, 0:), intent(in) :: a
    real, intent(out) :: s
    real :: w(size(a, 1), lbound(a, 2):ubound(a, 2)), v(size(a))
    w = 2 * a
    v = 1
    s = sum(w) + sum(v)
  end subroutine spread_sum
  subroutine combine ( n, m, x, y, z )
    integer, intent(in) :: n, m
    real, intent(in) :: x(n), y(m)
    real, intent(inout) :: z(n, m)
    z = z + outer_product_2(x, y)
    z(1, :) = z(1, :) + sum(outer_product_2(x(2:n), y), dim=1)
  end subroutine combine
end module
"""


#: the module without the caller (a function another unit calls is inlined there)
ALONE = MATHS.split("  subroutine combine")[0] + "end module\n"


def test_size_in_a_bound_is_the_extent_argument():
    tu = parse_fortran(ALONE, "m.f90")
    k = tu["outer_product_2"]
    assert tuple(map(str, k.result_arg.shape)) == ("max(0, a_n1)", "max(0, b_n1)")
    assert sorted(a.name for a in k.args) == ["a", "a_n1", "b", "b_n1", "c"]
    k = tu["spread_sum"]
    shapes = {n: tuple(map(str, t.shape)) for n, t in k.temporaries.items()}
    assert (shapes["w"], shapes["v"]) == (("max(0, a_n1)", "a_n2"),
                                          ("max(0, a_n1)*max(0, a_n2)",))


def test_other_array_intrinsics_in_a_bound_are_located_errors():
    source = ALONE.replace("v(size(a))", "v(count(a > 0))")
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "m.f90")
    assert e.value.format().splitlines()[0] == (
        "m.f90:17:57: error: intrinsic 'count' is not supported here")


def test_outer_product_through_the_glue(tmp_path, cl_queue):
    glue, _ = translate_and_load(ALONE, tmp_path)
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    b = np.array([0.5, -1.0], dtype=np.float32)
    c = glue.outer_product_2(a, b, queue=cl_queue)
    assert c.shape == (3, 2) and c.dtype == np.float32 and np.array_equal(c, np.outer(a, b))
    a2 = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert glue.spread_sum(a2, 0.0, queue=cl_queue) == pytest.approx(2 * a2.sum() + 12)


@needs_gfortran
def test_inlined_outer_products_match_gfortran(tmp_path, cl_queue):
    run_both(MATHS, "combine", [5, 4, farray(5, np.float32, seed=1), farray(4, np.float32, seed=2),
                                farray((5, 4), np.float32, seed=3)], tmp_path, cl_queue)
