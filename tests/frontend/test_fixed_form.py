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
