"""Issue 29, item 2: depfiles name files, never inject Make rules.

A header or a module file whose path holds ``;`` (with ``=``) made Make run
shell text in every later build; ``:`` broke every later build ("multiple
target patterns"); CMake's Makefile generator stopped with "missing
separator", and its Ninja conversion wrote ``$`` and ``#`` back unescaped.
Now every character that Make, Ninja or CMake gives a meaning to is refused
(before anything is written) and the space is escaped; real ``make`` and
``cmake`` builds (both generators) check what they read back.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from security_util import INCLUDING_KERNEL as KERNEL
from security_util import ROOT, SENTINEL, TOUCH, assert_safe, child_env, files_in, invoke
from security_util import SCALES_MODULE as MODULE
from security_util import MODULE_USER

from f2loopy.escape import UnrepresentablePath, make_path

#: folder names that a downloaded project could ship, each with a meaning to
#: Make, Ninja or CMake
HOSTILE = [
    f"x=1;{TOUCH};",                 # the reviewer's recipe injection
    "a:b", "a%b", "a*b", "a?b", "a[b]", "lib(m)", "a|b", "a&b", "a$b", "a$(shell touch S)",
    "a#b", "a\\b", "a'b", 'a"b', "a`b`", "a<b", "a^b",
]


@pytest.mark.parametrize("char", list(";:=%*?[()|&$#\\'\"`<>^"))
def test_make_path_refuses_what_a_build_tool_reads(char):
    with pytest.raises(UnrepresentablePath, match="which a depfile cannot hold"):
        make_path(f"/tmp/in{char}x/defs.h")


def test_make_path_escapes_spaces_only():
    assert make_path("/tmp/my dir/a-b_c+d,e@f!{g}~/h.f90") == "/tmp/my\\ dir/a-b_c+d,e@f!{g}~/h.f90"
    assert make_path("/tmp/caf\u00e9/\u03b1.f90") == "/tmp/caf\u00e9/\u03b1.f90"
    with pytest.raises(UnrepresentablePath):
        make_path("~/x.f90")


@pytest.mark.parametrize("folder", HOSTILE)
def test_include_folder_refused_before_anything_is_written(folder, tmp_path, preprocessor):
    inc = tmp_path / folder
    inc.mkdir()
    (inc / "defs.h").write_text("#define SCALE 2.0\n")
    (tmp_path / "k.F90").write_text(KERNEL)
    before = files_in(tmp_path)
    result = invoke(["translate", "--depfile", "k.d", "-I", folder, "k.F90"], tmp_path)
    assert result.exit_code == 1, result.output
    assert "k.F90: --depfile: the path" in result.stderr
    assert "which a depfile cannot hold" in result.stderr
    assert files_in(tmp_path) == before                 # no outputs, no depfile
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.parametrize("folder", ["a;b=c", "a:b", "a$b"])
def test_module_file_under_a_hostile_folder_refused(folder, tmp_path):
    inc = tmp_path / "mods" / folder
    inc.mkdir(parents=True)
    (inc / "scales.f90").write_text(MODULE)
    (tmp_path / "u.f90").write_text(MODULE_USER)
    result = invoke(["translate", "--depfile", "u.d", "-I", "mods", "u.f90"], tmp_path)
    assert result.exit_code == 1, result.output
    assert "u.f90: --depfile: the path" in result.stderr
    assert not (tmp_path / "u.cl").exists() and not (tmp_path / "u.d").exists()


@pytest.mark.parametrize("name", ["a;b.f90", "a=b.f90", "a:b.f90", "a#b.f90", "a$b.f90"])
def test_source_name_refused_before_anything_is_written(name, tmp_path):
    (tmp_path / name).write_text(KERNEL.replace('#include "defs.h"\n', "")
                                 .replace("SCALE", "2.0"))
    result = invoke(["translate", "--depfile", "d.d", name], tmp_path)
    assert result.exit_code == 2, result.output
    assert "which a depfile cannot hold" in result.stderr
    assert files_in(tmp_path) == [name]


def test_without_depfile_such_folders_still_translate(tmp_path, preprocessor):
    inc = tmp_path / "x=1;y"
    inc.mkdir()
    (inc / "defs.h").write_text("#define SCALE 2.0\n")
    (tmp_path / "k.F90").write_text(KERNEL)
    result = invoke(["translate", "-I", inc.name, "k.F90"], tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "k_cl.c").exists()


# {{{ real builds

MAKEFILE = """\
F2LOOPY := {python} -m f2loopy.cli
k.cl k_cl.py k_cl.f90 k_cl.c &: k.F90
\t$(F2LOOPY) translate --touch-outputs --depfile k.d -I {inc} $<
-include k.d
"""


def _make_project(tmp_path: Path, folder: str) -> Path:
    proj = tmp_path / "proj"
    (proj / folder).mkdir(parents=True)
    (proj / folder / "defs.h").write_text("#define SCALE 2.0\n")
    (proj / "k.F90").write_text(KERNEL)
    # the folder is named through a variable: only the depfile is under test
    (proj / "Makefile").write_text(f"INC := {folder.replace('$', '$$')}\n"
                                   + MAKEFILE.format(python=sys.executable, inc="'$(INC)'"))
    return proj


def _make(proj: Path):
    return subprocess.run(["make"], cwd=proj, env=child_env(), capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow
@pytest.mark.usefixtures("make")
def test_make_build_with_a_space_settles_and_follows_the_header(tmp_path):
    proj = _make_project(tmp_path, "my headers")
    first = _make(proj)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "my\\ headers/defs.h" in (proj / "k.d").read_text()
    second = _make(proj)
    assert second.returncode == 0 and "translate" not in second.stdout, second.stdout
    header = proj / "my headers" / "defs.h"
    t = (proj / "k.cl").stat().st_mtime + 10
    os.utime(header, (t, t))
    third = _make(proj)
    assert third.returncode == 0 and "translate" in third.stdout, third.stdout


@pytest.mark.slow
@pytest.mark.usefixtures("make")
@pytest.mark.parametrize("folder", [f"x=1;{TOUCH};", "a:b"])
def test_make_build_with_a_hostile_header_folder_fails_cleanly(folder, tmp_path):
    proj = _make_project(tmp_path, folder)
    for _ in range(2):            # the injection ran in the build after the first
        proc = _make(proj)
        assert proc.returncode != 0
        assert "which a depfile cannot hold" in proc.stderr, proc.stderr
        assert "missing separator" not in proc.stderr
        assert "multiple target patterns" not in proc.stderr
    assert not (proj / "k.d").exists() and not (proj / "k.cl").exists()
    assert not (proj / SENTINEL).exists()


CMAKELISTS = """\
cmake_minimum_required(VERSION 3.20)
project(t LANGUAGES C Fortran)
include("{cmake}")
add_executable(app main.f90)
f2loopy_add_kernels(app SOURCES k.F90 INCLUDE_DIRS [=[{folder}]=])
"""


def _cmake_project(tmp_path: Path, folder: str) -> Path:
    proj = tmp_path / "proj"
    (proj / folder).mkdir(parents=True)
    (proj / folder / "defs.h").write_text("#define SCALE 2.0\n")
    (proj / "k.F90").write_text(KERNEL)
    (proj / "main.f90").write_text("program main\nend program\n")
    (proj / "CMakeLists.txt").write_text(
        CMAKELISTS.format(cmake=ROOT / "runtime" / "F2Loopy.cmake", folder=folder))
    return proj


def _cmake(*args, cwd):
    return subprocess.run(["cmake", *map(str, args)], cwd=cwd, env=child_env(),
                          capture_output=True, text=True, timeout=600)


needs_ninja = pytest.mark.skipif(shutil.which("ninja") is None, reason="needs ninja")


@pytest.mark.slow
@pytest.mark.gfortran
@pytest.mark.usefixtures("cmake", "gfortran")
@needs_ninja
@pytest.mark.parametrize("generator", ["Unix Makefiles", "Ninja"])
def test_cmake_build_with_a_space_settles(generator, tmp_path):
    proj = _cmake_project(tmp_path, "my headers")
    exe = f"-DF2LOOPY_EXECUTABLE={sys.executable};-m;f2loopy.cli"
    assert _cmake("-G", generator, "-S", proj, "-B", proj / "build", exe, cwd=proj).returncode == 0
    first = _cmake("--build", proj / "build", cwd=proj)
    assert first.returncode == 0, first.stdout + first.stderr
    second = _cmake("--build", proj / "build", cwd=proj)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "f2loopy: translating" not in second.stdout, second.stdout


@pytest.mark.slow
@pytest.mark.gfortran
@pytest.mark.usefixtures("cmake", "gfortran")
@needs_ninja
@pytest.mark.parametrize("generator", ["Unix Makefiles", "Ninja"])
def test_cmake_build_with_a_hostile_header_folder_fails_cleanly(generator, tmp_path):
    proj = _cmake_project(tmp_path, "a$b#c")
    exe = f"-DF2LOOPY_EXECUTABLE={sys.executable};-m;f2loopy.cli"
    assert _cmake("-G", generator, "-S", proj, "-B", proj / "build", exe, cwd=proj).returncode == 0
    proc = _cmake("--build", proj / "build", cwd=proj)
    assert proc.returncode != 0
    assert "which a depfile cannot hold" in proc.stdout + proc.stderr
    assert "missing separator" not in proc.stdout + proc.stderr
    assert not (proj / SENTINEL).exists()

# }}}


def test_a_non_ascii_include_folder_translates_with_a_depfile(tmp_path, preprocessor):
    """(A sibling found on the way: the preprocessor's line markers hold the
    file name's UTF-8 bytes, which were read as Latin-1, so such an include
    was "a file that was not checked".)"""
    inc = tmp_path / "en-t\u00eate"
    inc.mkdir()
    (inc / "defs.h").write_text("#define SCALE 2.0\n")
    (tmp_path / "k.F90").write_text(KERNEL)
    result = invoke(["translate", "--depfile", "k.d", "-I", inc.name, "k.F90"], tmp_path)
    assert result.exit_code == 0, result.output
    assert f"{inc}/defs.h" in (tmp_path / "k.d").read_text(encoding="utf-8")
