"""Every ``use`` is resolved or is a located error naming the module and
where it was looked for (issue 26, item 2): a ``use`` of a missing module in
a module's specification was dropped, so that without ``implicit none`` a
kernel read an uninitialised local in place of the module's variable (and
exited 0), and with it said "'g' has no type"."""

import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.pipeline import translate_text

BODY = """contains
  subroutine scale(n, x)
    integer n, i
    real x(n)
    do i = 1, n
      x(i) = g * x(i)
    end do
  end subroutine
end module
"""

NO_PATH = ("module 'consts' is not defined in this file and no search path was given "
           "(name the file that defines it on the command line, or its directory with "
           "-I DIR)")


def _error(text, name="kern.f90", **kw):
    with pytest.raises(FortranError) as info:
        translate_text(text, name, **kw)
    return info.value.format().splitlines()


@pytest.mark.parametrize("implicit", ["", "  implicit none\n"])
def test_missing_module_used_by_a_module_is_a_located_error(implicit):
    lines = _error(f"module kern\n  use consts\n{implicit}{BODY}")
    assert lines[0] == f"kern.f90:2:7: error: {NO_PATH}"


def test_missing_module_names_the_directories_searched(tmp_path):
    (tmp_path / "other.f90").write_text("module other\n  real :: h = 1\nend module\n")
    lines = _error("module kern\n  use consts\n" + BODY, include_dirs=[str(tmp_path)])
    assert lines[0] == ("kern.f90:2:7: error: module 'consts' is not defined in this file "
                        f"nor in the Fortran sources searched ({tmp_path})")


def test_missing_module_behind_a_module_of_the_file():
    """A subroutine that uses a module of the file, which uses a missing one
    (whose 'g' it would see through the first)."""
    text = ("module kern\n  use consts\nend module\n"
            "subroutine scale(n, x)\n  use kern\n  integer n, i\n  real x(n)\n"
            "  do i = 1, n\n    x(i) = g * x(i)\n  end do\nend subroutine\n")
    lines = _error(text)
    assert lines[0] == f"kern.f90:2:7: error: {NO_PATH}"


def test_missing_only_entity_of_a_module_used_by_a_module():
    text = ("module consts\n  real :: h = 2\nend module\n"
            "module kern\n  use consts, only: g\n" + BODY)
    lines = _error(text)
    assert lines[0] == "kern.f90:5:21: error: module 'consts' has no public entity 'g'"


def test_module_found_on_the_path_is_used(tmp_path):
    (tmp_path / "consts.f90").write_text("module consts\n  real, parameter :: g = 9.5\n"
                                         "end module\n")
    result = translate_text("module kern\n  use consts\n" + BODY, "kern.f90",
                            include_dirs=[str(tmp_path)])
    code = "".join(t for p, t in result.outputs.items() if str(p).endswith(".cl"))
    assert "9.5f" in code
    assert str(tmp_path / "consts.f90") in {str(p) for p in result.inputs}
