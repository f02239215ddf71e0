"""Unsupported or wrong Fortran: exact located messages, exit code 1, nothing written."""


import pytest
from cli_util import f2loopy     # the command in this process

from f2loopy import FortranError, UnsupportedFeatureError, parse_fortran

TEMPLATE = """subroutine s(n, a, x)
  implicit none
  integer n
  real a(n), x
  {stmt}
end subroutine
"""

# (statement, expected first line of the diagnostic, expected caret line)
UNSUPPORTED = [
    ("print '(z8.3)', x", "t.f90:5:3: error: edit descriptor 'z8.3' in 'print '(z8.3)', x' cannot be translated: a kernel "
     "prints only list-directed output to the screen (write(*,*), write(6,*) or print *), or output with a "
     "constant format of simple edit descriptors (a, i, f, e, es, g, l, x, /), of "
     "scalars and constant text, with OpenCL printf (write the values to an argument and "
     "print them after the call)", "^~~~~"),
    ("write(10,*) x", "t.f90:5:3: error: 'write(10,*) x' cannot be translated: a kernel "
     "prints only list-directed output to the screen (write(*,*), write(6,*) or print *), or output with a "
     "constant format of simple edit descriptors (a, i, f, e, es, g, l, x, /), of "
     "scalars and constant text, with OpenCL printf (write the values to an argument and "
     "print them after the call)", "^~~~~"),
    ("read(*,*) x", "t.f90:5:3: error: 'read' statements are not supported (kernels cannot do "
     "I/O)", "^~~~"),
    ("goto 10", "t.f90:5:3: error: 'goto 10' does not jump to a later statement of the same "
     "or an enclosing block (only such a forward goto is supported)", "^~~~"),
    ("if (x > 1) goto 10", "t.f90:5:14: error: 'goto 10' does not jump to a later statement of "
     "the same or an enclosing block (only such a forward goto is supported)", None),
    ("goto (10, 20) n", "t.f90:5:3: error: 'goto 10' does not jump to a later statement of "
     "the same or an enclosing block (only such a forward goto is supported)", "^~~~"),
    ("rewind(10)", "t.f90:5:3: error: 'rewind' is not supported", "^~~~~~"),
    ("stop n", "t.f90:5:8: error: only a constant text or number can be a stop code in a "
     "kernel", "^"),
    ("x = x // 'a'", "t.f90:5:9: error: character concatenation is not supported", "^~"),
    ("where (a > 0) a = a(1:n:n)", "t.f90:5:25: error: the stride of an array section "
     "must be a constant", "^"),
    ("forall (i=1:n) a(i) = 0", "t.f90:5:3: error: 'forall' statements are not supported "
     "(use 'do concurrent')", "^~~~~~"),
    ("call ext(x)", "t.f90:5:8: error: subroutine 'ext' is not defined in this file and no "
     "search path was given (name the file that defines it on the command line, or its "
     "directory with -I DIR)", "^~~"),
]

ERRORS = [
    ("x = y", "t.f90:5:7: error: 'y' has no type (implicit none is in effect; declare it)"),
    ("x = a(1, 2)", "t.f90:5:7: error: 'a' has 1 dimension(s) but 2 subscript(s) are given"),
    ("x = .true.", "t.f90:5:3: error: cannot assign a logical value to a numeric variable or "
     "vice versa"),
    ("x = a(1.5)", "t.f90:5:9: error: subscript of 'a' must be an integer"),
    ("x = sqrt(n)", "t.f90:5:7: error: argument of 'sqrt' must be real or complex, not integer"),
    ("n = n / 0", "t.f90:5:7: error: integer division by zero"),
    ("x = mod(n)", "t.f90:5:3: error: syntax error"),
    ("x = foo(1)", "t.f90:5:7: error: 'foo' is neither an array nor a known function"),
    ("x = foo(1.5, 2)", "t.f90:5:7: error: function 'foo' is not known"),
    ("x = max(a(1))", "t.f90:5:3: error: syntax error"),
    ("x = = 1", "t.f90:5:3: error: syntax error"),
]


def _diag(stmt):
    src = TEMPLATE.format(stmt=stmt)
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "t.f90")
    return info.value


@pytest.mark.parametrize("stmt, first, caret", UNSUPPORTED)
def test_unsupported_construct_message(stmt, first, caret):
    err = _diag(stmt)
    assert isinstance(err, UnsupportedFeatureError)
    lines = err.format().splitlines()
    assert lines[0] == first
    assert lines[1] == "    " + TEMPLATE.format(stmt=stmt).splitlines()[4]
    if caret is not None:
        assert lines[2].strip() == caret


@pytest.mark.parametrize("stmt, first", ERRORS)
def test_error_message(stmt, first):
    assert _diag(stmt).format().splitlines()[0] == first


@pytest.mark.parametrize("stmt, first, caret", UNSUPPORTED[:6] + [UNSUPPORTED[9]])
def test_cli_exit_code_and_nothing_written(stmt, first, caret, tmp_path):
    path = tmp_path / "t.f90"
    path.write_text(TEMPLATE.format(stmt=stmt))
    proc = f2loopy("translate", "t.f90", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == first
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.f90"]


def test_mismatched_end_name():
    with pytest.raises(FortranError) as info:
        parse_fortran("subroutine f(a)\n  real :: a\n  a = 1\nend subroutine g\n", "t.f90")
    assert info.value.format().splitlines()[0] == \
        "t.f90:4:16: error: END statement names 'g' but the subroutine is called 'f'"


def test_loop_variable_outside_its_loop_is_a_variable_of_its_own():
    # after the loop, i is n + 1 (first value past the last iteration); a loop
    # variable nothing reads after its loop leaves no trace
    src = ("subroutine s(n, a)\n  integer n, i\n  real a(n)\n  do i = 1, n\n    a(i) = 0\n"
           "  end do\n  a(1) = i\n  do i = 1, n\n    a(i) = a(i) + 1\n  end do\nend\n")
    k = parse_fortran(src, "t.f90").kernels[0]
    assert set(k.temporaries) == {"i_value"} and set(k.all_inames()) == {"i", "i_1"}
    assignments = [str(i.expression) for i in k.instructions if i.assignee_name == "i_value"]
    assert assignments == ["max(0, n) + 1", "max(0, n) + 1"]


def test_directive_errors():
    src = "subroutine s(a)\n  real a\n  !$loopy begin tagged: t1\n  a = 1\nend\n"
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "t.f90")
    assert str(info.value).splitlines()[0] == ("t.f90:3:25: error: tagged region 't1' is never "
                                               "closed with '!$loopy end tagged: t1'")
    src = "subroutine s(a)\n  real a\n  !$loopy frobnicate\n  a = 1\nend\n"
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "t.f90")
    assert "unknown '!$loopy' directive 'frobnicate'" in str(info.value)


def test_loop_to_the_largest_integer_translates():
    # after 'do i = 1, 2147483647' i would not fit in an integer: left undefined
    # (it raised OverflowError: fuzz_hostile.py seed 12, input 6492)
    src = ("subroutine s(n, a)\n  integer n, i\n  real a(n)\n  do i = 1, 2147483647\n"
           "    a(i) = 0\n  end do\nend\n")
    k = parse_fortran(src, "t.f90").kernels[0]
    assert not k.temporaries
