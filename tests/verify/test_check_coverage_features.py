"""f2loopy check on the Fortran of issue 27's new coverage: optional
arguments are checked (the harness passes them all), allocatable module
arrays are allocated by the harness, kernels the harness cannot drive
(array-valued functions outside modules) are 'not checked' with the reason,
never an internal error; a module's array-valued function is checked."""

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


def test_optional_arguments_are_checked_present(tmp_path, monkeypatch):
    """The harness passes every optional argument: the kernel matches, and
    the branch for an absent one is reported as never run.  The file is
    translated once, and its reference compiled once: every round of inputs
    checks the same code against the same original."""
    import subprocess

    import f2loopy.pipeline as pipeline
    translations = []
    real = pipeline.translate_text

    def counting(*args, **kwargs):
        translations.append(args[1])
        return real(*args, **kwargs)
    monkeypatch.setattr(pipeline, "translate_text", counting)
    builds = []
    real_run = subprocess.run

    def counting_run(cmd, *args, **kwargs):
        if isinstance(cmd, list) and "-shared" in cmd and any(
                str(c).endswith("original.f90") for c in cmd):
            builds.append(cmd)
        return real_run(cmd, *args, **kwargs)
    monkeypatch.setattr(subprocess, "run", counting_run)
    res = _check(tmp_path, "scaling.f90", OPTIONAL)
    assert "signed values" in res.output and len(translations) == 1, res.output
    assert len(builds) == 1, len(builds)
    lines = res.output.splitlines()
    assert res.exit_code == 1, res.output
    assert lines[1:3] == ["scale_add", lines[2]] and lines[2].strip().startswith("y(4) float64")
    assert lines[2].endswith("ok")
    assert f"  {tmp_path / 'scaling.f90'}:12: y = y + x" in lines
    assert lines[-1].startswith("NOT COVERED: 1 statement(s) never ran")


QUATERNIONS = """module quaternions
  implicit none
contains
  function quat_product(a, b) result(c)
    real, dimension(0:3) :: c
    real, dimension(0:3), intent(in) :: a, b
    c(0) = a(0)*b(0) - a(1)*b(1) - a(2)*b(2) - a(3)*b(3)
    c(1) = a(1)*b(0) + a(0)*b(1) - a(3)*b(2) + a(2)*b(3)
    c(2) = a(2)*b(0) + a(3)*b(1) + a(0)*b(2) - a(1)*b(3)
    c(3) = a(3)*b(0) - a(2)*b(1) + a(1)*b(2) + a(0)*b(3)
  end function
end module
function halves(n, x) result(y)
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  real(8) :: y(n)
  y = x / 2
end function
"""


def test_array_valued_functions_of_modules_are_checked(tmp_path):
    """A module's array-valued function is run both ways and its value
    compared (declared bounds: y(n), c(0:3)); one outside a module, which
    the harness cannot call without an interface, is 'not checked' with the
    reason."""
    res = _check(tmp_path, "fields.f90", BEYOND)
    assert res.exit_code == 0, res.output
    assert "not checked" not in res.output
    lines = [line.strip() for line in res.output.splitlines()]
    assert any(line.startswith("y(") and "float64" in line and line.endswith("ok")
               for line in lines), res.output
    # (an allocatable module array is allocated by the harness now, issue 27)
    assert any(line.startswith("fields.u(") and line.endswith("ok") for line in lines), \
        res.output
    res = _check(tmp_path, "quaternions.f90", QUATERNIONS)
    assert res.exit_code == 0, res.output
    lines = [line.strip() for line in res.output.splitlines()]
    assert any(line.startswith("c(4) float32") and line.endswith("ok") for line in lines), \
        res.output
    assert [line for line in lines if "not checked" in line] == [
        "not checked: 'halves' is an array-valued function outside a module, which the "
        "harness cannot call without an interface (compare it through the glue)"]


# {{{ coverage rounds with signed data (issue 27: limiters, upwind schemes)

UPWIND = """module upwind
  implicit none
contains
  subroutine upwind_flux(n, u, q, f)
    integer, intent(in) :: n
    real(8), intent(in) :: u(n), q(0:n)
    real(8), intent(out) :: f(n)
    integer :: i
    do i = 1, n
      if (u(i) >= 0) then
        f(i) = u(i) * q(i - 1)
      else
        f(i) = u(i) * q(i)
      end if
    end do
  end subroutine
end module
"""
# a scan parallelized with a race, reached only for a negative s: the
# default rounds never run it, a signed round must report the race
RACE_WHEN_NEGATIVE = """subroutine scan(n, s, x, y)
  implicit none
  integer n, i
  real s, x(n), y(n), acc
  acc = 0
  if (s < -0.25) then
    do i = 1, n
      acc = acc + x(i)
      y(i) = acc
    end do
  end if
end subroutine
!$loopy begin
! (k,) = parse_fortran(SOURCE, FILENAME)
! k = set_options(k, check_races=False)
! bad = split_iname(k, "i", 4, outer_tag="g.0", inner_tag="l.0")
! RESULT = [bad]
!$loopy end
"""


def test_signed_rounds_cover_the_branch_of_negative_data(tmp_path):
    """u >= 0 on every default round (data from 0.5..1.5): the upwind
    branch for u < 0 is covered by a round of signed values, and says so."""
    res = _check(tmp_path, "upwind.f90", UPWIND)
    assert res.exit_code == 0, res.output
    (note,) = [ln for ln in res.output.splitlines() if ln.startswith("note: covered with")]
    assert note.startswith("note: covered with signed values (seed ")
    assert note.endswith("): 1 statement(s), line(s) 13")
    assert "signed values" in res.output.split("inputs (seed ")[-1]
    assert "NOT COVERED" not in res.output and "ok: " in res.output


def test_a_mismatch_in_a_signed_round_is_a_mismatch(tmp_path):
    res = _check(tmp_path, "scan.f90", RACE_WHEN_NEGATIVE)
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    (bad,) = [ln for ln in lines if ln.startswith("inputs (") and "MISMATCH" in ln]
    assert ", signed values" in bad and bad.endswith("MISMATCH in scan")
    assert lines[-1] == "MISMATCH: 1 of 1 kernel(s) differ from the original Fortran: scan"
    assert "Traceback" not in res.output

# }}}


@pytest.mark.parametrize("name, text", [
    ("stencil.f90", "subroutine stencil(n, h, g)\n  integer n\n  real(8) h(n), g(n)\n"
     "  g(1) = 0\n  g(2:n-1) = h(2:n-1) + &\n     h(1:n-2)\n  g(n) = 0\nend subroutine\n"),
    ("stencil.f", "      subroutine stencil(n, h, g)\n      integer n\n      real*8 h(n), g(n)\n"
     "      g(1) = 0\n      g(2:n-1) = h(2:n-1) +\n     &   h(1:n-2)\n      g(n) = 0\n"
     "      end\n"),
])
def test_a_statement_continued_over_lines_is_covered(tmp_path, name, text):
    """Before: gcov counts such a statement on its last line, and the check
    called it never run (Burkardt's fd1d_heat_explicit: NOT COVERED on
    every input)."""
    res = _check(tmp_path, name, text)
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1].startswith("ok: 1 output(s) of 1 kernel(s) match")
