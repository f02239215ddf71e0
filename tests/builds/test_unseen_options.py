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


@pytest.mark.usefixtures("preprocessor")
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


# {{{ -ffree-form / -ffixed-form (cause 5)

FREE_F = """module kern
contains
subroutine scale_all(n, a, x)
  integer, intent(in) :: n
  real(8), intent(in) :: a
  real(8), intent(inout) :: x(n)
  integer :: i
#ifdef NEGATE
  do i = 1, n
    x(i) = -a * x(i)   ! negated
  end do
#else
  do i = 1, n
    x(i) = a * x(i)
  end do
#endif
end subroutine scale_all
end module kern
"""
FIXED_F90 = """      subroutine twice(n, x)
      integer n, i
      real x(n)
      do 10 i = 1, n
         x(i) = 2.0 *
     &          x(i)
   10 continue
      end
"""
LOOPY = """!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! RESULT = k
!$loopy end
"""


def _translate(*args):
    return CliRunner().invoke(main, ["translate", *map(str, args)])


@pytest.mark.usefixtures("preprocessor")
def test_a_free_form_dot_F_file_needs_ffree_form_and_says_so(tmp_path):
    src = tmp_path / "k.F"
    src.write_text(FREE_F)
    result = _translate("-o", tmp_path / "out", src)
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        f"{src}:4:3: error: syntax error (read as fixed form: statements in columns 7-72; "
        "give -ffree-form for a free-form file)")
    assert not (tmp_path / "out").exists()
    result = _translate("-ffree-form", "-D", "NEGATE", "-o", tmp_path / "out", src)
    assert result.exit_code == 0, result.output
    assert "-(a * x[" in (tmp_path / "out" / "k.cl").read_text().replace("-1.0 * a", "-a")


def test_ffixed_form_reads_a_dot_f90_file_as_fixed_form(tmp_path):
    from f2loopy.pipeline import translate_text
    src = tmp_path / "t.f90"
    src.write_text(FIXED_F90)
    assert _translate("-o", tmp_path / "a", src).exit_code == 1
    result = _translate("-ffixed-form", "-o", tmp_path / "b", src)
    assert result.exit_code == 0, result.output
    r = translate_text(FIXED_F90, src, fixed_form=True)
    (k,) = r.kernels
    assert k.name == "twice" and [a.name for a in k.args] == ["n", "x"]
    with pytest.raises(TypeError, match="fixed_form must be True, False or None"):
        translate_text(FIXED_F90, src, fixed_form="fixed")


@pytest.mark.usefixtures("preprocessor")
def test_the_form_applies_to_the_files_on_the_search_path(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "consts.F").write_text(
        "module consts\n  implicit none\n  real(8), parameter :: half = 0.5d0\n"
        "end module consts\n")
    user = tmp_path / "u.F"
    user.write_text("subroutine halve(n, x)\n  use consts, only: half\n  integer :: n, i\n"
                    "  real(8) :: x(n)\n  do i = 1, n\n    x(i) = half * x(i)\n  end do\n"
                    "end subroutine halve\n")
    result = _translate("-ffree-form", "-I", tmp_path / "lib", "-o", tmp_path / "out", user)
    assert result.exit_code == 0, result.output
    assert "0.5 * x[" in (tmp_path / "out" / "u.cl").read_text()


@needs_gfortran
@pytest.mark.gfortran
def test_ffree_form_check_against_gfortran(tmp_path):
    pytest.importorskip("pyopencl")
    src = tmp_path / "k.F"
    src.write_text(FREE_F)
    for extra in ([], ["-D", "NEGATE"]):
        proc = f2loopy("check", "-ffree-form", *extra, "--size", "n=33", str(src))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "x(33) float64  max |error| 0  ok" in proc.stdout
    src = tmp_path / "t.f90"
    src.write_text(FIXED_F90)
    proc = f2loopy("check", "-ffixed-form", "--size", "n=9", str(src))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "x(9) float32  max |error| 0  ok" in proc.stdout


@needs_gfortran
def test_the_wrapper_passes_the_compiles_source_form_on(tmp_path):
    from f2loopy.wrapper_options import translation_options
    assert translation_options(["-O2", "-ffixed-form", "-ffree-form"]).fixed_form is False
    assert translation_options(["-O2"]).fixed_form is None
    (tmp_path / "k.F").write_text(FREE_F + LOOPY)
    proc = subprocess.run([sys.executable, "-m", "f2loopy.wrapper", "gfortran", "-ffree-form",
                           "-DNEGATE", "-c", "k.F", "-o", "k.o"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    nm = subprocess.run(["nm", tmp_path / "k.o"], capture_output=True, text=True).stdout
    assert "__kern_MOD_scale_all" in nm and "__scale_all_cl_mod_MOD_scale_all_cl" in nm



@pytest.mark.usefixtures("cmake", "gfortran")
def test_cmake_translates_with_the_source_form(tmp_path):
    from pathlib import Path
    runtime = Path(__file__).resolve().parents[2] / "runtime" / "F2Loopy.cmake"
    (tmp_path / "k.F").write_text(FREE_F)
    (tmp_path / "t.f").write_text(FIXED_F90)
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(forms LANGUAGES C Fortran)\n"
        f'include("{runtime}")\n'
        "add_library(a STATIC k.F)\nset_target_properties(a PROPERTIES Fortran_FORMAT FREE)\n"
        "f2loopy_add_kernels(a SOURCES k.F)\n"
        "add_library(b STATIC t.f)\nf2loopy_add_kernels(b SOURCES t.f SOURCE_FORM FIXED)\n"
        "add_library(c STATIC t.f)\nf2loopy_add_kernels(c SOURCES t.f KERNELS twice Other)\n")
    proc = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr

    def command(target):
        text = (tmp_path / "build" / "CMakeFiles" / f"{target}.dir" / "build.make").read_text()
        return next(line for line in text.splitlines() if " translate -o " in line)
    assert " -ffree-form " in command("a") and " -ffixed-form " in command("b")
    assert "-form" not in command("c") and " --kernel twice --kernel Other " in command("c")
    (tmp_path / "CMakeLists.txt").write_text(
        (tmp_path / "CMakeLists.txt").read_text() + "f2loopy_add_kernels(c SOURCES k.F "
        "SOURCE_FORM free OUTPUT_DIR x)\n")
    proc = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "SOURCE_FORM must be FREE or FIXED, not 'free'" in " ".join(proc.stderr.split())

# }}}


# {{{ --kernel NAME (cause 6)

MULTI = """module ops
  implicit none
contains
  subroutine axpy(n, a, x, y)
    integer, intent(in) :: n
    real(8), intent(in) :: a, x(n)
    real(8), intent(inout) :: y(n)
    integer :: i
    do i = 1, n
      y(i) = y(i) + a * twice(x(i))
    end do
  end subroutine
  subroutine report(n, x)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n)
    open(10, file='x.txt')
    write(10, *) x
    close(10)
  end subroutine
  real(8) function twice(v)
    real(8), intent(in) :: v
    twice = 2 * v
  end function
  subroutine scale(n, a, x)
    integer, intent(in) :: n
    real(8), intent(in) :: a
    real(8), intent(inout) :: x(n)
    x = a * x
  end subroutine
end module
"""


def test_a_bad_unit_names_the_units_that_translate(tmp_path):
    from f2loopy.diagnostics import F2LoopyError
    from f2loopy.pipeline import translate_text
    with pytest.raises(F2LoopyError) as e:
        translate_text(MULTI, tmp_path / "m.f90")
    assert e.value.format().splitlines()[3] == (
        "f2loopy: note: of the 3 units of this file, axpy, scale translate and report does not; "
        "nothing was written (translate the others alone with --kernel axpy --kernel scale)")
    r = translate_text(MULTI, tmp_path / "m.f90", kernels=("SCALE", "axpy", "scale"))
    assert [k.name for k in r.kernels] == ["axpy", "scale"]
    # a function may be chosen too (else only inlined where it is called)
    r = translate_text(MULTI, tmp_path / "m.f90", kernels=("twice",))
    assert [k.name for k in r.kernels] == ["twice"]
    with pytest.raises(F2LoopyError) as e:
        translate_text(MULTI, tmp_path / "m.f90", kernels=("nope",))
    assert e.value.format().splitlines()[0] == (
        f"{tmp_path / 'm.f90'}:1:1: error: --kernel nope: {tmp_path / 'm.f90'} has no subroutine "
        "or function of that name (it has: axpy, report, scale, twice)")
    with pytest.raises(F2LoopyError, match="--kernel 'a b': not a Fortran name"):
        translate_text(MULTI, tmp_path / "m.f90", kernels=("a b",))


def test_translate_kernel_on_the_command_line(tmp_path):
    src = tmp_path / "m.f90"
    src.write_text(MULTI)
    result = _translate("-o", tmp_path / "out", src)
    assert result.exit_code == 1 and not (tmp_path / "out").exists()
    result = _translate("--kernel", "axpy", "--kernel", "scale", "-o", tmp_path / "out", src)
    assert result.exit_code == 0, result.output
    assert result.output == (f"f2loopy: note: {src}: only axpy, scale translated (--kernel); "
                             "the file's other units were not\n")
    code = (tmp_path / "out" / "m.cl").read_text()
    assert code.count("__kernel") == 2 and ") axpy(" in code and ") scale(" in code
    result = _translate("--kernel", "x;y", src)
    assert result.exit_code == 2 and "--kernel 'x;y': not a Fortran name" in result.output
    # collected errors (show) say it too
    result = CliRunner().invoke(main, ["show", "--no-ir", "--no-code", str(src)])
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        f"{src}: note: of the 3 units of this file, axpy, scale translate and report does "
        "not; nothing was written (translate the others alone with --kernel axpy --kernel "
        "scale)")


@needs_gfortran
@pytest.mark.gfortran
def test_check_kernel_translates_only_that_kernel(tmp_path):
    pytest.importorskip("pyopencl")
    src = tmp_path / "m.f90"
    src.write_text(MULTI)
    proc = f2loopy("check", "--kernel", "axpy", "--size", "n=17", str(src))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "  y(17) float64  max |error| " in proc.stdout
    assert proc.stdout.endswith("ok: 1 output(s) of 1 kernel(s) match the original Fortran\n")


@needs_gfortran
def test_the_wrapper_takes_kernel_in_its_options(tmp_path):
    import os
    (tmp_path / "m.f90").write_text(MULTI + LOOPY)
    env = dict(os.environ, F2LOOPYFC_OPTIONS="--kernel scale")
    proc = subprocess.run([sys.executable, "-m", "f2loopy.wrapper", "gfortran", "-c", "m.f90",
                           "-o", "m.o"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    nm = subprocess.run(["nm", tmp_path / "m.o"], capture_output=True, text=True).stdout
    assert "__scale_cl_mod_MOD_scale_cl" in nm and "axpy_cl" not in nm
    env["F2LOOPYFC_OPTIONS"] = "--kernel=a.b"
    proc = subprocess.run([sys.executable, "-m", "f2loopy.wrapper", "gfortran", "-c", "m.f90",
                           "-o", "m.o"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 1
    assert "F2LOOPYFC_OPTIONS: --kernel 'a.b': not a Fortran name" in proc.stderr

# }}}


LEGACY = """      subroutine twice(a, n)
      integer n, i
      real a(n)
      do 10 i = 1, n
         a(i) = 2 * a(i)
   10 continue
      end
      subroutine other(x, w)
      include 'defs.h'
      real x, w(lmax)
      call gop(x, w)
      if (x .lt. 0) call exitt
      end
      subroutine gop(x, w)
      real x(1), w(1)
      x(1) = w(1)
      end
"""


@needs_gfortran
@pytest.mark.gfortran
def test_check_compiles_legacy_files_as_their_projects_do(tmp_path):
    # the original is compiled whole: its include folder, an argument mismatch
    # between two other units, a call of a procedure of another file
    pytest.importorskip("pyopencl")
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "defs.h").write_text("      parameter (lmax = 8)\n")
    src = tmp_path / "legacy.f"
    src.write_text(LEGACY)
    proc = f2loopy("check", "--kernel", "twice", "-I", str(tmp_path / "inc"), "--size",
                   "n=12", str(src))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "a(12) float32  max |error| 0  ok" in proc.stdout
