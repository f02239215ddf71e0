"""Statements fparser cannot parse get a compiler's precision (issue 17): the
unclosed parenthesis, the unmatched one, the unterminated string, and valid
Fortran 2018 that is not supported rather than a "syntax error"."""

import pytest

from f2loopy import FortranError, UnsupportedFeatureError, parse_fortran
from f2loopy.frontend.syntax_hints import explain

BODY = "subroutine s(n, x)\n  integer n, i\n  real x(n)\n{}\nend subroutine\n"


@pytest.mark.parametrize("stmt, first, caret", [
    ("  x(1) = (x(2) + 1", "t.f90:4:10: error: syntax error: missing ')' (the '(' here is not "
     "closed)", "         ^"),
    ("  call foo(x(1), n", "t.f90:4:11: error: syntax error: missing ')' (the '(' here is not "
     "closed)", "          ^"),
    ("  x(1) = x(2) + 1)", "t.f90:4:18: error: syntax error: unmatched ')'",
     "                 ^"),
    ("  x(1) = [1.0, 2.0", "t.f90:4:10: error: syntax error: missing ']' (the '[' here is not "
     "closed)", "         ^"),
    ("  x(1) = len('abc)", "t.f90:4:14: error: syntax error: unterminated character string",
     "             ^"),
])
def test_unbalanced_statements_are_located(stmt, first, caret):
    with pytest.raises(FortranError) as err:
        parse_fortran(BODY.format(stmt), "t.f90")
    lines = err.value.format().splitlines()
    assert lines[0] == first
    assert lines[1] == "    " + stmt
    assert lines[2] == "    " + caret


def test_assumed_rank_is_not_supported_rather_than_a_syntax_error():
    src = "subroutine s(x)\n  real, dimension(..) :: x\nend subroutine\n"
    with pytest.raises(UnsupportedFeatureError) as err:
        parse_fortran(src, "t.f90")
    assert err.value.format().splitlines() == [
        "t.f90:2:18: error: assumed-rank arrays (dimension(..), Fortran 2018) are not supported",
        "      real, dimension(..) :: x", "                     ^~~~"]


def test_what_is_not_a_cause():
    assert explain("  x = 'it''s (fine'  ! a ( in a comment") is None
    assert explain("  call f(a, &") is None              # continued on the next line
    assert explain("  x = y +* 2") is None               # plain syntax error
    # fixed form: columns 7-72 only
    assert explain("      x = (1" + " " * 60 + "ignored)", fixed_form=True)[2] == 11
