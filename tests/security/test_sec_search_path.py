"""The module search path (``-I DIR``, issue 14 round 2): a downloaded
tree is indexed and the file defining a used module is parsed.  The tree
must not make f2loopy parse files outside it, read huge or special files,
or walk without end.
"""

from __future__ import annotations

import os
import time

import pytest

from f2loopy.frontend import search_path
from f2loopy.frontend.search_path import SearchPath, SearchPathError
from security_util import CANARY, assert_safe, files_in, invoke

USER = """\
subroutine s(n, x)
  use secrets
  implicit none
  integer, intent(in) :: n
  real, intent(inout) :: x(n)
  integer :: i
  do i = 1, n
    x(i) = x(i) + key
  end do
end subroutine
"""
PRIVATE = "module secrets\n  real, parameter :: key = 7351.25\n  ! " + CANARY + "\nend module\n"


@pytest.fixture
def tree(tmp_path):
    """(project folder with lib/, the user's private module outside it)."""
    private = tmp_path / "home" / "private.f90"
    private.parent.mkdir()
    private.write_text(PRIVATE)
    proj = tmp_path / "proj"
    (proj / "lib").mkdir(parents=True)
    (proj / "a.f90").write_text(USER)
    return proj, private


def translate(proj, timeout_check=30.0):
    start = time.monotonic()
    result = invoke(["translate", "a.f90", "-I", "lib"], proj)
    assert time.monotonic() - start < timeout_check
    return result


def test_symlink_out_of_the_directory_is_not_followed(tree):
    """Before: lib/m.f90 -> ~/private.f90 was parsed and its constant (and
    anything else of the user's module) compiled into the kernel."""
    proj, private = tree
    (proj / "lib" / "m.f90").symlink_to(private)
    result = translate(proj)
    assert result.exit_code == 1
    assert "module 'secrets' is not defined" in result.stderr, result.stderr
    assert "7351" not in result.stderr + result.stdout
    assert files_in(proj) == ["a.f90", "lib"]
    (proj / "lib" / "m.f90").unlink()       # (assert_safe would read the secret through it)
    assert_safe(proj, result.stdout, result.stderr)


def test_symlinked_subfolder_out_of_the_directory(tree):
    proj, private = tree
    (proj / "lib" / "more.f90").symlink_to(private.parent, target_is_directory=True)
    (proj / "lib" / "sub").symlink_to(private.parent, target_is_directory=True)
    result = translate(proj)
    assert result.exit_code == 1 and "module 'secrets' is not defined" in result.stderr
    assert files_in(proj) == ["a.f90", "lib"]
    (proj / "lib" / "more.f90").unlink()
    (proj / "lib" / "sub").unlink()
    assert_safe(proj, result.stdout, result.stderr)


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "dev_stdin", "proc_environ", "loop",
                                  "huge_sparse"])
def test_special_files_are_skipped(tree, kind):
    """Special files named like sources: nothing hangs, nothing is read whole.
    Before: a 64 GiB sparse file was read into memory before its size was
    checked."""
    proj, _ = tree
    bad = proj / "lib" / "bad.f90"
    if kind == "fifo":
        os.mkfifo(bad)
    elif kind == "dev_zero":
        bad.symlink_to("/dev/zero")
    elif kind == "dev_stdin":
        bad.symlink_to("/dev/stdin")
    elif kind == "proc_environ":
        bad.symlink_to("/proc/self/environ")
    elif kind == "loop":
        bad.symlink_to(proj / "lib" / "bad2.f90")
        (proj / "lib" / "bad2.f90").symlink_to(bad)
    else:
        with open(bad, "wb") as f:
            f.truncate(64 << 30)
    (proj / "lib" / "good.f90").write_text("module secrets\n  real, parameter :: key = 2\n"
                                           "end module\n")
    result = translate(proj)
    assert result.exit_code == 0, result.stderr
    assert "+ 2.0f" in (proj / "a.cl").read_text()
    for p in (proj / "lib").iterdir():
        if p.name != "good.f90":
            p.unlink()          # (assert_safe reads every file of the tree)
    assert_safe(proj, result.stdout, result.stderr)


def test_a_file_swapped_for_a_fifo_after_indexing_is_not_opened_blocking(tmp_path):
    fifo = tmp_path / "x.f90"
    os.mkfifo(fifo)
    start = time.monotonic()
    assert search_path.read_bounded(fifo) is None
    assert time.monotonic() - start < 5


def test_directory_with_too_many_files(tmp_path, monkeypatch):
    """A directory of 100k files: indexing stops with a clear error at the
    cap (lowered here to keep the test fast)."""
    monkeypatch.setattr(search_path, "MAX_INDEXED_FILES", 500)
    lib = tmp_path / "lib"
    lib.mkdir()
    for k in range(501):
        (lib / f"f{k}.f90").write_text("")
    with pytest.raises(SearchPathError, match="more than 500 Fortran files"):
        SearchPath([str(lib)]).index()


def test_module_names_that_are_paths(tree):
    proj, _ = tree
    (proj / "a.f90").write_text(USER.replace("use secrets", "use ../../home/private"))
    result = translate(proj)
    assert result.exit_code == 1 and "a.f90:2:" in result.stderr
    assert files_in(proj) == ["a.f90", "lib"]
    assert_safe(proj, result.stdout, result.stderr)


def test_file_names_with_control_characters_are_not_indexed(tree):
    proj, _ = tree
    (proj / "lib" / "m\x1b[2J.f90").write_text("module secrets\n  real, parameter :: key = 2\n"
                                              "end module\n")
    result = invoke(["translate", "a.f90", "-I", "lib", "--depfile", "a.d"], proj)
    assert result.exit_code == 1 and "module 'secrets' is not defined" in result.stderr
    assert files_in(proj) == ["a.f90", "lib"]
    assert_safe(proj, result.stdout, result.stderr)
