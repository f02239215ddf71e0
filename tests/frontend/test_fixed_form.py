"""Fixed-form sources (issue 3): column rules, comments, continuation, and the
``!$loopy`` directives written as fixed-form comments."""

import numpy as np
import pytest

from f2loopy import parse_fortran
from util import farray, needs_gfortran, run_both, translate_and_load

TAGGED = """\
c     comment lines start with c, C, * or !
C$loopy begin tagged: update
      subroutine scal(n, a, x)
      real a, x(n)
      do 10 i = 1, n
         x(i) = a *
     1          x(i)
   10 continue
C$loopy end tagged: update
*     done
      end
"""


def test_tags_in_fixed_form():
    (knl,) = parse_fortran(TAGGED, "scal.f")
    assert [sorted(insn.tags) for insn in knl.instructions] == [["update"]]
    assert knl.instructions[0].span.line == 6


SCRIPT = """\
      subroutine twice(n, x)
      real x(n)
      do i = 1, n
         x(i) = 2*x(i)
      end do
      end
C$loopy begin
C     (k,) = parse_fortran(SOURCE, FILENAME)
C     k = split_iname(k, "i", 4, outer_tag="g.0", inner_tag="l.0")
C     RESULT = [k]
C$loopy end
"""


def test_transformation_script_in_fixed_form(tmp_path, cl_queue):
    module, result = translate_and_load(SCRIPT, tmp_path, filename="twice.f")
    (knl,) = result.kernels
    assert {str(t) for t in knl.iname_tags.values()} >= {"g.0", "l.0"}
    x = farray(10, seed=1)
    module.twice(10, x, queue=cl_queue)
    assert np.allclose(x, 2 * farray(10, seed=1))


def test_columns_beyond_72_and_tabs_and_continuation_digits():
    src = ("      subroutine t(n, a)\n"
           "\treal a(n)\n"
           + "      do 10 i = 1,".ljust(72) + "ignored\n"
           + "     &  n\n"
           + "\t   a(i) = 2*a(i) +\n"
           "     2      1.0\n"
           "   10\tcontinue\n"
           "      end\n")
    (knl,) = parse_fortran(src, "t.f")
    assert str(knl.domains[0]) == "[n] -> { [i] : 0 < i <= n }"
    assert len(knl.instructions) == 1
    assert knl.instructions[0].span.line == 5


@needs_gfortran
def test_fixed_form_columns_match_gfortran(tmp_path, cl_queue):
    src = ("      subroutine seq(n, a)\n"
           "      real a(n)\n"
           "      do 10 i = 1, n\n"
           + "         a(i) = a(i) + 1.0".ljust(72) + "2.0\n"
           + "   10 continue\n"
           "      end\n")
    # gfortran, like f2loopy, ignores the '2.0' past column 72
    run_both(src, "seq", [7, farray(7, seed=2)], tmp_path, cl_queue, filename="seq.f")


@pytest.mark.parametrize("name", ["k.f", "k.F", "k.for", "k.f77"])
def test_fixed_form_by_suffix(name):
    (knl,) = parse_fortran("      subroutine s(x)\n      x = 1\n      end\n", name)
    assert knl.name == "s"


BANG_COMMENTS = """\
      subroutine bang(n, a, flag)
      integer n
      character flag
      double precision a(n)
      integer i
*     Reference LAPACK indents comments with '!' between statements
         ! a whole-line comment that starts in column 10
      do 10 i = 1, n    ! a comment after code
         !a( i ) = 0   (commented-out code)
         if( flag .eq. '!' ) then
            a( i ) = 2*a( i ) ! the '!' above is a character
         else if( flag .eq. "'" ) then
            a( i ) = a( i ) +
     $               1  ! a comment on a continuation line
         end if
   10 continue
      end
"""


def test_bang_comments_after_column_one():
    (knl,) = parse_fortran(BANG_COMMENTS, "bang.f")
    assert len(knl.instructions) == 2
    assert [i.span.line for i in knl.instructions] == [11, 13]


def test_bang_in_column_six_continues_a_line():
    src = ("      subroutine c6(n, a)\n"
           "      real a(n)\n"
           "      do i = 1,\n"
           "     ! n\n"
           "         a(i) = 1\n"
           "      end do\n"
           "      end\n")
    (knl,) = parse_fortran(src, "c6.f")
    assert str(knl.domains[0]) == "[n] -> { [i] : 0 < i <= n }"


@needs_gfortran
@pytest.mark.parametrize("flag", ["!", "'", "x"])
def test_bang_comments_match_gfortran(tmp_path, cl_queue, flag):
    run_both(BANG_COMMENTS, "bang", [5, farray(5, np.float64, seed=3), flag],
             tmp_path, cl_queue, filename="bang.f")


# construct names in fixed form (issue 27: a column-physics scheme's '.f'
# file with 'ruc_have_2m: if (...) then' gave a syntax error, gfortran reads it)
NAMED_CONSTRUCTS = """\
      module named_sfc
      implicit none
      contains
      subroutine named_sfc_run(im, km, have_2m, flux, t, q, t2m)
      integer, intent(in) :: im, km
      logical, intent(in) :: have_2m
      real(8), intent(in) :: flux(im), t(im, km)
      real(8), intent(out) :: q(im), t2m(im)
      integer :: i, k, m
      columns: do i = 1, im
         q(i) = 0.d0
         have2m: if (.not.have_2m) then
            t2m(i) = t(i, 1) - flux(i)
         else have2m
            t2m(i) = t(i, 1)
         end if have2m
         levels : do k = 1, km
            if (t(i, k) < 0.d0) cycle levels
            if (t(i, k) > 9.d0) exit levels
            q(i) = q(i) + t(i, k)
         end do levels
         m = mod(i, 3)
         pick: select case (m)
         case (0) pick
            q(i) = -q(i)
         case default pick
            q(i) = q(i) + 1.d0
         end select pick
      end do columns
      end subroutine named_sfc_run
      end module named_sfc
"""


def test_construct_names_in_fixed_form():
    (knl,) = parse_fortran(NAMED_CONSTRUCTS, "named_sfc.f")
    assert knl.name == "named_sfc_run"
    assert {str(d) for d in knl.domains} >= {"[im] -> { [i] : 0 < i <= im }"}


@pytest.mark.parametrize("line, expected", [
    ("lab1: if (c) then", ("lab1", "if (c) then")),
    ("ruc_have_2m : if(.not.have_2m) then", ("ruc_have_2m", "if(.not.have_2m) then")),
    ("outer:do k = 1, n", ("outer", "do k = 1, n")),
    # no construct name: declarations, substrings, sections stay as they are
    ("real :: x", (None, "real :: x")),
    ("integer:: n", (None, "integer:: n")),
    ("a(1:2) = b(3:4)", (None, "a(1:2) = b(3:4)")),
    ("s = t(:n)", (None, "s = t(:n)")),
    ("x = 1", (None, "x = 1")),
])
def test_split_construct_name(line, expected):
    from f2loopy.frontend.fixed_reader import split_construct_name
    assert split_construct_name(line) == expected


def test_construct_name_without_statement_is_a_syntax_error():
    from f2loopy import FortranError
    src = ("      subroutine s(x)\n"
           "      real x\n"
           "      lab: \n"
           "      x = 1\n"
           "      end\n")
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "s.f")
    assert "syntax error" in str(info.value)


@needs_gfortran
@pytest.mark.parametrize("have_2m", [False, True])
def test_construct_names_in_fixed_form_match_gfortran(tmp_path, cl_queue, have_2m):
    im, km = 7, 5
    t = farray((im, km), np.float64, seed=4) * 12 - 2
    run_both(NAMED_CONSTRUCTS, "named_sfc_run",
             [im, km, have_2m, farray(im, np.float64, seed=5), t,
              np.zeros(im, order="F"), np.zeros(im, order="F")],
             tmp_path, cl_queue, filename="named_sfc.f")
