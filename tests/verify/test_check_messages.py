"""``f2loopy check`` compares the text of a message argument (a character
dummy the kernel assigns, CCPP's ``errmsg``) with the one gfortran's build of
the original leaves (issue 27)."""

from __future__ import annotations

from f2loopy.verify.check import check_source
from check_util import needs_check

SCHEME = """\
subroutine scale_run(n, x, errmsg, errflg)
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  character(len=*), intent(out) :: errmsg
  integer, intent(out) :: errflg
  integer :: i
  errmsg = ''
  errflg = 0
  if (n > 0) then
    errmsg = 'scale_run: ' // 'scaled'
    errflg = 1
  end if
  do i = 1, n
    x(i) = 3.0d0 * x(i)
  end do
end subroutine
"""


@needs_check
def test_check_compares_the_message(tmp_path):
    path = tmp_path / "scale.f90"
    path.write_text(SCHEME)
    report = check_source(SCHEME, path)
    assert report.passed, report.format()
    (kc,) = report.checks
    assert [o.name for o in kc.outputs] == ["x", "errmsg", "errflg"]
    assert "  errmsg character(len=64)  same text  ok" in report.format()


@needs_check
def test_check_fails_on_a_wrong_message(tmp_path):
    # the kernel's assignment of the text removed: the glue leaves '' where
    # the original assigned 'scale_run: scaled'
    src = SCHEME + """!$loopy begin
! (k,) = parse_fortran(SOURCE, FILENAME)
! RESULT = [remove_instructions(k, {"errmsg_1"})]
!$loopy end
"""
    path = tmp_path / "scale.f90"
    path.write_text(src)
    report = check_source(src, path)
    (kc,) = report.checks
    assert {o.name: o.passed for o in kc.outputs} == {"x": True, "errmsg": False,
                                                       "errflg": True}
    assert "the text differs: got '', expected 'scale_run: scaled'" in report.format()
