"""Command-line options real projects build with (issue 27): ``-D`` macro
names with a leading underscore, ``-ffree-form``/``-ffixed-form``, ``--kernel``."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from f2loopy.cli import _parse_defines, main
from util import needs_gfortran

UNDERSCORE = """subroutine fill(n, x)
  integer n, i
  real(8) x(n)
  do i = 1, n
    x(i) = _SCALE * i + __OFFSET
  end do
end subroutine
"""


def f2loopy(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "f2loopy.cli", *args], cwd=cwd,
                          capture_output=True, text=True)


# {{{ -D names with a leading underscore (cause 4)

def test_leading_underscore_macro_names_are_accepted():
    assert _parse_defines(["_NX=100", "__OFFSET=2", "_=1"]) == {"_NX": 100, "__OFFSET": 2,
                                                                "_": 1}
    for bad in ("1X=1", "a-b=1", "=1", "x.y=2", "_" * 64 + "=1"):
        with pytest.raises(click.BadParameter):
            _parse_defines([bad])


def test_leading_underscore_names_are_macros_not_script_variables(tmp_path):
    from f2loopy.directives.lockdown import Guard
    from f2loopy.directives.namespace import ScriptContext
    ctx = ScriptContext(Guard(()), source="", filename="u.F90", recipes={}, base_unit=None,
                        run_code=None, defines={"_SCALE": 3, "__builtins__": 1, "tile": 8})
    g = ctx.make_globals()
    assert g["tile"] == 8 and "_SCALE" not in g and g["__builtins__"] != 1
    src = tmp_path / "u.F90"
    src.write_text(UNDERSCORE + "!$loopy begin\n! k, = parse_fortran(SOURCE, FILENAME)\n"
                   "! print(tile)\n! RESULT = k\n!$loopy end\n")
    result = CliRunner().invoke(main, ["translate", "-D_SCALE=3", "-D", "__OFFSET=2",
                                       "-D", "tile=8", "-o", str(tmp_path / "out"), str(src)])
    assert result.exit_code == 0, result.output
    assert result.output == "8\n"
    code = (tmp_path / "out" / "u.cl").read_text()
    assert "3 * " in code and "+ 2" in code


@needs_gfortran
@pytest.mark.gfortran
def test_leading_underscore_macros_check_against_gfortran(tmp_path):
    pytest.importorskip("pyopencl")
    src = tmp_path / "u.F90"
    src.write_text(UNDERSCORE)
    proc = f2loopy("check", "-D_SCALE=3", "-D", "__OFFSET=2", "--size", "n=40", str(src))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "x(40) float64  max |error| 0  ok" in proc.stdout

# }}}
