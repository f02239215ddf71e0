"""Make (issue 17): --touch-outputs for plain Makefile rules, and the compiler
wrapper f2loopyfc (FC="f2loopyfc gfortran" make).  scripts/ci_builds.sh builds
samples/heat_app/Makefile and wrapper.mk and requires them to settle."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_util import f2loopy     # the command in this process

from f2loopy.wrapper import has_loopy_block, split_arguments

ROOT = Path(__file__).resolve().parents[2]
needs_gfortran = pytest.mark.usefixtures("gfortran")

SAXPY = """subroutine saxpy(n, a, x, y)
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a * x(i) + y(i)
  end do
end subroutine
"""
SCRIPT = """!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! RESULT = split_iname(k, "i", 4, outer_tag="g.0", inner_tag="l.0")
!$loopy end
"""


def wrapper(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "f2loopy.wrapper", *args], cwd=cwd,
                          capture_output=True, text=True, env=env)


def test_touch_outputs_makes_unchanged_outputs_newer_than_the_source(tmp_path):
    src = tmp_path / "saxpy.f90"
    src.write_text(SAXPY)
    assert f2loopy("translate", str(src)).returncode == 0
    outputs = [tmp_path / n for n in ("saxpy.cl", "saxpy_cl.py", "saxpy_cl.f90", "saxpy_cl.c")]
    old = 1_000_000_000
    for p in outputs:
        os.utime(p, (old, old))
    src.write_text(SAXPY + "! a comment\n")          # changes no output
    assert f2loopy("translate", str(src)).returncode == 0
    assert {p.stat().st_mtime for p in outputs} == {old}          # left alone
    proc = f2loopy("translate", "--touch-outputs", str(src))
    assert proc.returncode == 0, proc.stderr
    times = {p.stat().st_mtime_ns for p in outputs}
    assert len(times) == 1 and times.pop() >= src.stat().st_mtime_ns


def test_wrapper_splits_a_command_line():
    assert split_arguments(["-O2", "-c", "a.f90", "-o", "a.o", "-I", "inc", "-Jmods"]) == (
        ["a.f90"], ["-O2", "-c", "-I", "inc", "-Jmods"], "a.o", True)
    assert split_arguments(["main.o", "b.F90", "-o", "app", "-L", "x", "-lfoo"]) == (
        ["b.F90"], ["main.o", "-L", "x", "-lfoo"], "app", False)
    # the value of an option is never a source
    assert split_arguments(["-D", "x.f90", "-c", "y.f"])[0] == ["y.f"]


def test_files_with_blocks_are_told_apart(tmp_path):
    (tmp_path / "a.f90").write_text(SAXPY + SCRIPT)
    (tmp_path / "b.f90").write_text(SAXPY + "! mentions loopy but has no block\n")
    assert has_loopy_block(tmp_path / "a.f90")
    assert not has_loopy_block(tmp_path / "b.f90")
    assert not has_loopy_block(tmp_path / "missing.f90")


@needs_gfortran
def test_wrapper_passes_other_files_through(tmp_path):
    (tmp_path / "b.f90").write_text(SAXPY)
    proc = wrapper("gfortran", "-c", "b.f90", "-o", "b.o", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.f90", "b.o"]
    nm = subprocess.run(["nm", tmp_path / "b.o"], capture_output=True, text=True).stdout
    assert "saxpy_" in nm and "saxpy_cl" not in nm


@needs_gfortran
def test_wrapper_puts_the_glue_into_the_object(tmp_path):
    (tmp_path / "a.f90").write_text(SAXPY + SCRIPT)
    proc = wrapper("gfortran", "-O2", "-c", "a.f90", "-o", "a.o", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    nm = subprocess.run(["nm", tmp_path / "a.o"], capture_output=True, text=True).stdout
    assert "saxpy_" in nm and "__saxpy_cl_mod_MOD_saxpy_cl" in nm
    assert (tmp_path / "saxpy_cl_mod.mod").is_file()
    # nothing else is left beside the object (the translation went to a temporary folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.f90", "a.o", "saxpy_cl_mod.mod"]


@needs_gfortran
def test_wrapper_reports_translation_errors_like_a_compiler(tmp_path):
    (tmp_path / "bad.f90").write_text(SAXPY.replace("    y(i) =", "    print '(b5)', i\n    y(i) =")
                                      + SCRIPT)
    proc = wrapper("gfortran", "-c", "bad.f90", "-o", "bad.o", cwd=tmp_path)
    assert proc.returncode == 1
    assert "bad.f90:5:5: error: edit descriptor 'b5' in 'print '(b5)', i' cannot be translated" in proc.stderr
    assert not (tmp_path / "bad.o").exists()
    usage = wrapper()
    assert usage.returncode == 2 and "usage: f2loopyfc COMPILER" in usage.stdout
    env = dict(os.environ, F2LOOPYFC_OPTIONS="--frobnicate")
    (tmp_path / "a.f90").write_text(SAXPY + SCRIPT)
    proc = wrapper("gfortran", "-c", "a.f90", cwd=tmp_path, env=env)
    assert proc.returncode == 1 and "unknown option '--frobnicate'" in proc.stderr


@needs_gfortran
@pytest.mark.opencl
def test_wrapper_compiles_and_links_in_one_command(tmp_path):
    """f2loopyfc gfortran heat_tiled.f90 main.F90 -o app: the OpenCL program,
    with the numbers of the plain Fortran build."""
    app = ROOT / "samples" / "heat_app"
    sources = [str(app / "heat_tiled.f90"), str(app / "main.F90")]
    proc = wrapper("gfortran", "-O2", "-DUSE_OPENCL", *sources, "-o", "app", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    plain = subprocess.run(["gfortran", "-O2", *sources, "-o", str(tmp_path / "plain")],
                           capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr

    def numbers(exe):
        out = subprocess.run([str(tmp_path / exe), "40", "30", "50"], capture_output=True,
                             text=True, timeout=120).stdout
        return out, {k: float(v) for k, _, v in (line.partition(" ")
                                                 for line in out.splitlines())
                     if k in ("sum", "center", "max")}
    out, opencl = numbers("app")
    assert "device: " in out
    _, reference = numbers("plain")
    assert opencl.keys() == reference.keys() == {"sum", "center", "max"}
    for k in reference:
        assert opencl[k] == pytest.approx(reference[k], rel=1e-12)
