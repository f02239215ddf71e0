"""Message dummies through the Fortran glue (issue 27, CCPP physics): the
glue assigns the caller's ``errmsg`` the text the kernel chose, padded or cut
to the caller's length as Fortran's assignment does, and leaves it alone
where the kernel assigned none; compared with the original built by gfortran
in the same program."""

import pytest

from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain, translate

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


SCHEME = """module adjust_scheme
  implicit none
  character(len=*), parameter :: myname = 'adjust_run'
contains
  subroutine adjust_run(im, dt, t, errmsg, errflg)
    integer, intent(in) :: im
    real(8), intent(in) :: dt
    real(8), intent(inout) :: t(im)
    character(len=*), intent(out) :: errmsg
    integer, intent(out) :: errflg
    integer :: i
    errmsg = ''
    errflg = 0
    if (dt <= 0.0d0) then
      errmsg = myname // ': bad time step'
      errflg = 1
      return
    end if
    do i = 1, im
      if (t(i) < 0.0d0) then
        errmsg = 'adjust_run: negative "temperature"'
        errflg = 2
      end if
      t(i) = t(i) * dt
    end do
  end subroutine adjust_run

  subroutine note_run(im, t, errmsg)
    integer, intent(in) :: im
    real(8), intent(in) :: t(im)
    character(len=*), intent(inout) :: errmsg
    if (im > 0) then
      if (t(1) > 1.0d0) errmsg = 'note_run: hot'
    end if
  end subroutine note_run

  subroutine short_run(n, errmsg)
    integer, intent(in) :: n
    character(len=6), intent(out) :: errmsg
    errmsg = 'short'
    if (n > 3) errmsg = 'short_run: too large'
  end subroutine short_run
end module adjust_scheme
"""

MAIN = """
program main
  use checks
  use adjust_scheme
  use adjust_run_cl_mod
  use note_run_cl_mod
  use short_run_cl_mod
  implicit none
  real(8) :: t1(4), t2(4)
  character(len=64) :: m1, m2
  character(len=8) :: s1, s2
  integer :: f1, f2
  t1 = [1d0, -2d0, 3d0, 4d0]
  t2 = t1
  m1 = 'entry'
  m2 = 'entry'
  call adjust_run(4, 0.5d0, t1, m1, f1)
  call adjust_run_cl(4, 0.5d0, t2, m2, f2)
  call check(m1 == m2 .and. m2 == 'adjust_run: negative "temperature"', "message in a loop")
  call check(f1 == f2 .and. all(t1 == t2), "flag and data")
  call adjust_run(4, 0.0d0, t1, m1, f1)
  call adjust_run_cl(4, 0.0d0, t2, m2, f2)
  call check(m1 == m2 .and. m2 == 'adjust_run: bad time step', "named constant // literal")
  t1 = 1d0
  t2 = 1d0
  call adjust_run(4, 0.5d0, t1, m1, f1)
  call adjust_run_cl(4, 0.5d0, t2, m2, f2)
  call check(m1 == m2 .and. len_trim(m2) == 0 .and. f2 == 0, "no error: blank")
  call adjust_run(4, 0.0d0, t1, s1, f1)
  call adjust_run_cl(4, 0.0d0, t2, s2, f2)
  call check(s1 == s2 .and. s2 == 'adjust_r', "cut to the caller's length")
  m1 = 'kept'
  m2 = 'kept'
  call note_run(1, t1, m1)
  call note_run_cl(1, t2, m2)
  call check(m1 == m2 .and. m2 == 'kept', "inout: not assigned, kept")
  t1 = 2d0
  t2 = 2d0
  call note_run(1, t1, m1)
  call note_run_cl(1, t2, m2)
  call check(m1 == m2 .and. m2 == 'note_run: hot', "inout: assigned")
  m1 = 'a caller''s longer text'
  m2 = m1
  call short_run(5, m1)
  call short_run_cl(5, m2)
  call check(m1 == m2 .and. m2 == 'short_er''s longer text', "declared length: so many")
  call done()
end program
"""


def test_messages_through_the_fortran_glue(tmp_path, runtime):
    sources = translate(tmp_path, "adjust", SCHEME)
    c_text = (tmp_path / "adjust_cl.c").read_text()
    # the C glue gives the texts for C callers
    assert '    "adjust_run: negative \\"temperature\\"",' in c_text
    assert "_adjust_run_errmsg(int code)" in c_text
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, MAIN), 8)
