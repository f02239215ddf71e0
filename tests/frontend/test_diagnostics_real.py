"""Diagnostics found on real code (issue 16): no error without a location
(``FILE:0:1``), no "dummy argument has no type" after its declaration was
refused, and ``show`` lists the body's unsupported statements even when a
declaration failed first."""

from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.frontend import parse_fortran

MODULE_REFUSED = """module m
  implicit none
  integer, parameter :: n = 4
  real, asynchronous :: work(n)
end module m

subroutine s(x)
  use m
  implicit none
  real x(n)
  real t(n)
  x(1) = 1
  t(1) = work(1)
end subroutine
"""

DECLARATION_REFUSED = """subroutine s(side, d, x, n)
  implicit none
  character*(*) side
  type(foo) :: d
  integer n
  real x(n)
  x(1) = 1
  write(10,*) 'hello'
  open(10)
end subroutine
"""


def _show(tmp_path, text):
    path = tmp_path / "t.f90"
    path.write_text(text)
    res = CliRunner().invoke(main, ["show", str(path)])
    assert res.exit_code == 1
    return str(path), res.stderr.splitlines()


def test_every_error_has_a_location_and_a_source_line(tmp_path):
    where, lines = _show(tmp_path, MODULE_REFUSED)
    heads = [k for k, line in enumerate(lines) if ": error: " in line]
    assert heads and lines[heads[0]] == (
        f"{where}:4:9: error: attribute 'asynchronous' is not supported")
    for k in heads:
        assert ":0:" not in lines[k].split(": error:")[0]
        assert lines[k + 1].startswith("    ")          # the source line follows


def test_refused_declaration_does_not_make_a_dummy_untyped(tmp_path):
    where, lines = _show(tmp_path, DECLARATION_REFUSED)
    heads = [line for line in lines if ": error: " in line]
    assert heads == [
        f"{where}:4:8: error: type 'foo' is not defined (define it in this unit or in a module "
        "the unit uses)",
        f"{where}:8:3: error: 'write(10,*) 'hello'' cannot be translated: a kernel prints only "
        "list-directed output to the screen (write(*,*), write(6,*) or print *), or output with a "
     "constant format of simple edit descriptors (a, i, f, e, es, g, l, x, /), of scalars and "
        "constant text, with OpenCL printf (write the values to an argument and print them "
        "after the call)",
        f"{where}:9:3: error: 'open' statements are not supported (kernels cannot do I/O)",
    ]


def test_assumed_length_character_dummy_has_a_type():
    knl = parse_fortran("subroutine s(side, x)\n  character*(*) side\n  real x\n"
                        "  if (side == 'L') x = 1\nend subroutine\n", "t.f90")[0]
    assert knl.arg_dict["side"].role.character
