"""Fortran ``include`` lines resolved as gfortran resolves them (issue 26,
item 3): the including file's folder first, then the ``-I`` folders; a
missing file is a located error; an absolute path is confined like the
others; the included files are inputs (depfiles); an error in an included
line points at that file.  Before, fparser opened them from the current
folder (a stale 'params.h' there won), kept a missing one as a statement
that a module dropped, and read any absolute path."""

import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.pipeline import translate_text

KERN = """module kern
  include 'params.h'
contains
  subroutine scale(n, x)
    integer n, i
    real x(n)
    do i = 1, n
      x(i) = g * x(i)
    end do
  end subroutine
end module
"""
USER = """subroutine s2(n, x)
  use kern
  integer n
  real x(n)
  call scale(n, x)
end subroutine
"""


def _code(result):
    return "".join(t for p, t in result.outputs.items() if str(p).endswith(".cl"))


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A module in lib/ including params.h from lib/; a decoy params.h in
    the current folder and in hdr/ (an -I folder after lib/)."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "hdr").mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "lib" / "kern.f90").write_text(KERN)
    (tmp_path / "lib" / "params.h").write_text("  real, parameter :: g = 7.0\n")
    (tmp_path / "hdr" / "params.h").write_text("  real, parameter :: g = 3.0\n")
    (tmp_path / "work" / "params.h").write_text("  real, parameter :: g = 5.0\n")
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path


def test_module_on_the_path_includes_from_its_own_folder(tree):
    result = translate_text(USER, tree / "work" / "s2.f90",
                            include_dirs=[str(tree / "hdr"), str(tree / "lib")])
    assert "7.0f * x" in _code(result)
    assert tree / "lib" / "params.h" in result.inputs


def test_main_file_includes_from_its_folder_then_the_path(tree):
    main = tree / "lib" / "kern.f90"
    result = translate_text(main.read_text(), main, include_dirs=[str(tree / "hdr")])
    assert "7.0f * x" in _code(result)
    (tree / "lib" / "params.h").unlink()
    result = translate_text(main.read_text(), main, include_dirs=[str(tree / "hdr")])
    assert "3.0f * x" in _code(result)
    assert tree / "hdr" / "params.h" in result.inputs
    # a params.h created in lib/ would be found first: the depfile names it
    assert str(tree / "lib" / "params.h") in map(str, result.absent)


def test_missing_include_is_a_located_error(tree):
    (tree / "lib" / "params.h").unlink()
    main = tree / "lib" / "kern.f90"
    with pytest.raises(FortranError) as info:
        translate_text(main.read_text(), main)
    assert info.value.format().splitlines()[0] == (
        f"{main}:2:3: error: include 'params.h': no such file in {tree / 'lib'}")


def test_missing_include_of_a_module_on_the_path_is_a_located_error(tree):
    (tree / "lib" / "params.h").unlink()
    with pytest.raises(FortranError) as info:
        translate_text(USER, tree / "work" / "s2.f90", include_dirs=[str(tree / "lib")])
    assert info.value.format().splitlines()[0] == (
        f"{tree / 'lib' / 'kern.f90'}:2:3: error: include 'params.h': no such file in "
        f"{tree / 'lib'}, {tree / 'lib'}")


def test_absolute_include_outside_the_folders_is_refused(tree, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.h"
    outside.write_text("  real, parameter :: g = 1.0\n")
    main = tree / "lib" / "kern.f90"
    text = KERN.replace("'params.h'", f"'{outside}'")
    with pytest.raises(FortranError) as info:
        translate_text(text, main)
    assert info.value.format().splitlines()[0].startswith(
        f"{main}:2:3: error: include '{outside}' reaches ")
    inside = tree / "lib" / "params.h"
    result = translate_text(KERN.replace("'params.h'", f'"{inside}"'), main)
    assert "7.0f * x" in _code(result)


def test_error_in_an_included_line_points_at_it(tree):
    (tree / "lib" / "params.h").write_text("  real, parameter :: g = 7.0\n"
                                           "  real, parameter :: h = g +\n")
    main = tree / "lib" / "kern.f90"
    with pytest.raises(FortranError) as info:
        translate_text(main.read_text(), main)
    assert info.value.format().splitlines()[0].startswith(f"{tree / 'lib' / 'params.h'}:2:")


def test_nested_include_from_the_included_files_folder(tree):
    (tree / "hdr" / "inner").mkdir()
    (tree / "hdr" / "inner" / "g.h").write_text("  real, parameter :: g = 9.0\n")
    (tree / "hdr" / "outer.h").write_text("  include 'inner/g.h'\n")
    main = tree / "lib" / "kern.f90"
    text = KERN.replace("'params.h'", "'outer.h'")
    result = translate_text(text, main, include_dirs=[str(tree / "hdr")])
    assert "9.0f * x" in _code(result)
    assert {tree / "hdr" / "outer.h", tree / "hdr" / "inner" / "g.h"} <= set(result.inputs)


def test_include_that_includes_itself(tree):
    (tree / "lib" / "params.h").write_text("  include 'params.h'\n")
    main = tree / "lib" / "kern.f90"
    with pytest.raises(FortranError) as info:
        translate_text(main.read_text(), main)
    assert "includes itself" in info.value.format().splitlines()[0]


def test_missing_include_exits_1_and_writes_nothing(tmp_path):
    from click.testing import CliRunner

    from f2loopy.cli import main
    path = tmp_path / "t.f90"
    path.write_text("subroutine s(x)\n  real x\n  include 'common.inc'\n  x = 1\n"
                    "end subroutine\n")
    result = CliRunner().invoke(main, ["translate", str(path)])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[:3] == [
        f"{path}:3:3: error: include 'common.inc': no such file in {tmp_path}",
        "      include 'common.inc'", "      ^~~~~~~"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.f90"]
