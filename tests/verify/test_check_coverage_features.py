"""f2loopy check on the Fortran of issue 27's new coverage: optional
arguments are checked (the harness passes them all), allocatable module
arrays are allocated by the harness, kernels the harness cannot drive
(array-valued functions) are 'not checked' with the reason, never an
internal error."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from util import needs_gfortran

pytestmark = [needs_gfortran, pytest.mark.differential]

OPTIONAL = """module scaling
  implicit none
contains
  subroutine scale_add(n, x, y, factor)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n)
    real(8), intent(inout) :: y(n)
    real(8), intent(in), optional :: factor
    if (present(factor)) then
      y = y + factor * x
    else
      y = y + x
    end if
  end subroutine
end module
"""
BEYOND = """module fields
  implicit none
  real(8), allocatable :: u(:)
contains
  subroutine bump()
    if (allocated(u)) u = u + 1
  end subroutine
  function twice(n, x) result(y)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n)
    real(8) :: y(n)
    y = 2 * x
  end function
end module
"""


def _check(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return CliRunner().invoke(main, ["check", str(path)])


def test_optional_arguments_are_checked_present(tmp_path):
    """The harness passes every optional argument: the kernel matches, and
    the branch for an absent one is reported as never run."""
    res = _check(tmp_path, "scaling.f90", OPTIONAL)
    lines = res.output.splitlines()
    assert res.exit_code == 1, res.output
    assert lines[1:3] == ["scale_add", lines[2]] and lines[2].strip().startswith("y(4) float64")
    assert lines[2].endswith("ok")
    assert f"  {tmp_path / 'scaling.f90'}:12: y = y + x" in lines
    assert lines[-1].startswith("NOT COVERED: 1 statement(s) never ran")


def test_kernels_beyond_a_harness_are_not_checked_with_the_reason(tmp_path):
    res = _check(tmp_path, "fields.f90", BEYOND)
    assert res.exit_code == 0, res.output
    notes = [line.strip() for line in res.output.splitlines() if "not checked" in line]
    # (an allocatable module array is allocated by the harness now, issue 27)
    assert notes == [
        "not checked: 'twice' is an array-valued function, whose value the harness cannot "
        "store (compare it through the glue)"]
    assert any(line.strip().startswith("fields.u(") and line.endswith("ok")
               for line in res.output.splitlines()), res.output
