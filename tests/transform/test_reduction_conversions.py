"""Updates of an accumulator that the frontend wraps in a conversion (the
kinds differ): a reduction only where converting at every step gives what
any other order gives (red team of issue 25).  ``s = s + a(i)`` with an
integer ``s`` and a real ``a`` truncates at every step (``int(-5 + 0.7)``
is ``-4``, ``-5 + int(0.7)`` is ``-5``): auto's reduction plan and
:func:`accumulation_to_reduction` must leave it sequential."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from f2loopy.analysis.reductions import reduction_nests
from f2loopy.cli import main
from f2loopy.diagnostics import TransformError
from f2loopy.frontend import parse_fortran
from f2loopy.transform.reduction import accumulation_to_reduction

from util import needs_gfortran

SOURCE = """\
subroutine trunc(n, a, s, p)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n)
  integer, intent(inout) :: s, p
  integer :: i
  do i = 1, n
    s = s + a(i)
    p = p * a(i)
  end do
end subroutine trunc

subroutine narrowmax(n, ib, s)
  implicit none
  integer, intent(in) :: n
  integer(kind=8), intent(in) :: ib(n)
  integer, intent(inout) :: s
  integer :: i
  do i = 1, n
    s = max(s, ib(i))
  end do
end subroutine narrowmax

subroutine kinds(n, ib, a, s, r)
  implicit none
  integer, intent(in) :: n
  integer(kind=8), intent(in) :: ib(n)
  double precision, intent(in) :: a(n)
  integer, intent(inout) :: s
  real, intent(inout) :: r
  integer :: i
  do i = 1, n
    s = s + ib(i)
    r = r + a(i)
  end do
end subroutine kinds
"""


def test_truncating_updates_are_no_reduction():
    units = parse_fortran(SOURCE, "conv.f90")
    (nest,) = reduction_nests(units["trunc"])
    assert nest.reason == ("line 9 converts every update of 'p' from real(8) to integer: in "
                           "another order the result differs")
    (nest,) = reduction_nests(units["narrowmax"])
    assert nest.reason == ("line 20 converts every update of 's' from integer(8) to integer: "
                           "in another order the result differs")
    (nest,) = reduction_nests(units["kinds"])
    assert nest.reason == ""
    assert [(a.name, a.op) for a in nest.accumulators] == [("r", "sum"), ("s", "sum")]


def test_accumulation_to_reduction_refuses_truncation():
    k = parse_fortran(SOURCE, "conv.f90")["trunc"]
    with pytest.raises(TransformError) as exc:
        accumulation_to_reduction(k, "writes:s")
    assert "is not an accumulation of the form s = s + ..." in exc.value.message


@needs_gfortran
@pytest.mark.opencl
def test_check_against_gfortran(tmp_path):
    path = tmp_path / "conv.f90"
    path.write_text(SOURCE)
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "--size", "n=300",
                                    "--range", "a=-0.5:2.5", "--range", "p=1:1",
                                    "--range", "ib=-5000000000:5000000000", str(path)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output and "MISMATCH" not in res.output
