"""Constant array initializers computed element by element: a scalar times
an array constructor (``sqrt(1.0/3.0)*[...]``: the orientations of a
molecular-dynamics code), a constructor divided by a constant (quadrature
weights ``[1.0, 4.0, 1.0]/6.0``), named constant arrays in arithmetic, and
such expressions inside ``reshape`` and inside another constructor."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran

TABLES = """module tables
  implicit none
  real, dimension(3,4), parameter :: e0 = reshape(sqrt(1.0/3.0)*[ &
       &  1.0,  1.0,  1.0,    1.0, -1.0, -1.0,  &
       & -1.0,  1.0, -1.0,   -1.0, -1.0,  1.0 ],[3,4])
  real(8), parameter :: w(3) = [1.0d0, 4.0d0, 1.0d0]/6.0d0
  integer, parameter :: base(2, 2) = reshape([1, 2, 3, 4], [2, 2])
  integer, parameter :: twice(2, 2) = 2*base + 1
  integer, parameter :: half(4) = -([1, 2, 3, 4]/2)
  real, parameter :: nested(3) = [[1.0, 2.0]*2.0, 0.5]
contains
  subroutine smooth(n, x, y)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n)
    real(8), intent(out) :: y(n)
    integer :: i
    y = 0
    do i = 2, n - 1
      y(i) = w(1)*x(i-1) + w(2)*x(i) + w(3)*x(i+1) + e0(1, 2) + e0(3, 4) &
           + twice(2, 1) + half(3) + nested(2)
    end do
  end subroutine
end module
"""


def test_tables_computed_element_by_element():
    k = parse_fortran(TABLES, "tables.f90")["smooth"]
    t = {n: v.initializer for n, v in k.temporaries.items()}
    third = np.sqrt(np.float32(1.0) / np.float32(3.0))
    assert t["e0"].dtype == np.float32 and t["e0"].shape == (3, 4)
    assert t["e0"][0, 1] == third and t["e0"][2, 3] == third and t["e0"][1, 1] == -third
    assert np.array_equal(t["w"], np.array([1.0, 4.0, 1.0]) / 6.0)
    assert t["w"].dtype == np.float64
    assert np.array_equal(t["twice"], np.array([[3, 7], [5, 9]], dtype=np.int32))
    # integer division of each element, then the sign
    assert list(t["half"]) == [0, -1, -1, -2]
    assert list(t["nested"]) == [2.0, 4.0, 0.5] and t["nested"].dtype == np.float32


@pytest.mark.parametrize("decl, use, message", [
    ("integer, parameter :: a(3) = [1, 2, 3] + [1, 2]", "a(1)",
     "the arrays of the initializer of 'a' do not conform (shapes (3), (2))"),
    ("integer, parameter :: b(2, 2) = reshape([1, 2, 3, 4], [2, 2])\n"
     "  integer, parameter :: c(4) = b*[1, 2, 3, 4]", "c(1)",
     "the arrays of the initializer of 'c' do not conform (shapes (2, 2), (4))"),
    ("integer, parameter :: d(3) = [1, 2]*2", "d(1)",
     "'d' has 3 elements but 2 values are given"),
    # (an elemental function of an array: not computed)
    ("real, parameter :: e(2) = sqrt([1.0, 4.0])", "e(2)",
     "array constructors are not supported here"),
])
def test_tables_that_cannot_be_computed_are_located_errors(decl, use, message):
    src = f"""module m
  implicit none
  {decl}
contains
  subroutine s(x)
    real, intent(out) :: x
    x = {use}
  end subroutine
end module
"""
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "m.f90")
    assert info.value.message == message
    assert info.value.span is not None and info.value.span.line >= 3


@pytest.mark.usefixtures("gfortran", "opencl_device")
def test_tables_match_gfortran(tmp_path):
    (tmp_path / "tables.f90").write_text(TABLES)
    res = CliRunner().invoke(main, ["check", str(tmp_path / "tables.f90")])
    assert res.exit_code == 0, res.output
    assert "y(" in res.output and res.output.rstrip().endswith(
        "1 output(s) of 1 kernel(s) match the original Fortran")
