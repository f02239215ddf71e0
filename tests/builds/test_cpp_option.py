"""``-cpp``/``-nocpp`` (issue 27, cause 1): a project that builds its ``.f90``
with ``gfortran -cpp -DN=128`` (a lattice-Boltzmann code's sizes, a kind from a
macro) translates, checks and builds the same way; gfortran's rule decides
everywhere (``.F90`` preprocessed, ``.f90`` not, ``-cpp`` forces it, ``-nocpp``
turns it off, the last one given wins), for the modules found through ``-I``
too; ``-D`` on a file that is not preprocessed is named where the macro is
used."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_util import f2loopy

from f2loopy.pipeline import TranslateOptions, translate_text
from f2loopy.preprocessor import needs_preprocessing
from util import needs_gfortran

#: the lattice-Boltzmann style: sizes and a kind that only the build's -D gives
LBM = """module lattice
  implicit none
  integer, parameter :: wp = KINDW
contains
  subroutine relax(f, feq, omega)
    real(wp), intent(inout) :: f(NX, NY)
    real(wp), intent(in) :: feq(NX, NY), omega
    integer :: i, j
    do j = 1, NY
      do i = 1, NX   ! NX cells
        f(i, j) = f(i, j) - omega * (f(i, j) - feq(i, j))
      end do
    end do
  end subroutine relax
end module lattice
"""
#: a module on the -I path whose constant comes from a macro
PARAMS = """module params
  implicit none
  integer, parameter :: rk = KINDW
  real(rk), parameter :: visc = 0.25_rk
end module params
"""
USER = """subroutine damp(n, u)
  use params, only: rk, visc
  implicit none
  integer, intent(in) :: n
  real(rk), intent(inout) :: u(n)
  integer :: i
  do i = 1, n
    u(i) = (1 - visc) * u(i)
  end do
end subroutine damp
"""
BRANCHES = """subroutine flip(n, x)
  implicit none
  integer, intent(in) :: n
  real, intent(inout) :: x(n)
#ifdef NEGATE
  x = -x
#endif
end subroutine flip
"""


# {{{ unit: the rule, the options object, the messages (no preprocessor runs)

def test_gfortrans_rule_and_the_two_flags():
    assert needs_preprocessing("x = 1\n", "k.F90") is True
    assert needs_preprocessing("x = 1\n", "k.f90") is False
    assert needs_preprocessing("#ifdef A\n#endif\n", "k.f90") is True     # (as before)
    assert needs_preprocessing("x = 1\n", "k.f90", True) is True
    assert needs_preprocessing("x = 1\n", "k.F90", False) is False
    assert needs_preprocessing("#ifdef A\n#endif\n", "k.F90", False) is False
    assert TranslateOptions().cpp is None
    assert TranslateOptions(cpp=True).replace(cpp=False).cpp is False
    with pytest.raises(TypeError, match="cpp must be True, False or None, not 'yes'"):
        TranslateOptions(cpp="yes")


def test_a_define_without_cpp_is_named_where_the_macro_is_used(tmp_path):
    from f2loopy.diagnostics import F2LoopyError
    src = tmp_path / "lb.f90"
    with pytest.raises(F2LoopyError) as info:
        translate_text(LBM, src, defines={"KINDW": 8, "NX": 16, "NY": 4, "unused": 1})
    text = info.value.format().splitlines()
    why = ("is not applied: lb.f90 is not preprocessed (gfortran preprocesses a .f90 or .f "
           "file only with -cpp), so '{0}' stays a Fortran name; give -cpp, as the project's "
           "build does, to have the file preprocessed")
    assert text[0] == f"{src}:3:30: error: 'KINDW' is not a constant"
    notes = [line for line in text if ": note: " in line]
    # each macro once, where it is first used (the comment's NX does not count)
    assert notes == [f"{src}:3:30: note: -D KINDW " + why.format("KINDW"),
                     f"{src}:6:34: note: -D NX " + why.format("NX"),
                     f"{src}:6:38: note: -D NY " + why.format("NY")]


def test_a_define_the_script_reads_is_no_macro_left_unapplied(tmp_path):
    """``-D Nq=8`` on the paper's file is the script's value of the argument
    ``Nq``: no warning, no note."""
    from f2loopy.preprocessor import unapplied_macros
    text = ("subroutine s(Nq, x)\n  integer Nq\n  real x(Nq)\n  x = 0\nend subroutine\n"
            "!$loopy begin\n! k, = parse_fortran(SOURCE, FILENAME)\n"
            "! RESULT = fix_parameters(k, Nq=Nq)\n!$loopy end\n")
    assert unapplied_macros(text, "v.f90", {"Nq": 8}) == []
    (name, span), = unapplied_macros(text.replace("Nq=Nq", "n=1"), "v.f90", {"Nq": 8})
    assert (name, span.line, span.column) == ("Nq", 1, 14)


def test_a_preprocessor_line_under_nocpp_is_refused_located(tmp_path):
    from f2loopy.diagnostics import F2LoopyError
    src = tmp_path / "k.F90"
    with pytest.raises(F2LoopyError) as info:
        translate_text(BRANCHES, src, cpp=False)
    assert info.value.format().splitlines()[:3] == [
        f"{src}:5:1: error: '#ifdef' is a preprocessor line, but -nocpp turns the preprocessor "
        "off (gfortran then skips the line with a warning and compiles every branch of an "
        "#ifdef): drop -nocpp, or remove the line",
        "    #ifdef NEGATE", "    ^~~~~~"]


def test_nocpp_reads_a_dot_F90_as_it_is(tmp_path):
    # (no preprocessor runs: the translation reads the text itself)
    r = translate_text(USER.replace("use params, only: rk, visc", "integer, parameter :: "
                                    "rk = 8\n  real(rk), parameter :: visc = 0.5_rk"),
                       tmp_path / "k.F90", cpp=False)
    assert [k.name for k in r.kernels] == ["damp"]


def test_the_flags_reach_every_command(monkeypatch, tmp_path):
    """translate, show and check through the pipeline's options (below with
    the preprocessor); bench and tune hand -cpp/-nocpp to their runs."""
    from f2loopy.bench import run as bench_run
    from f2loopy.tune import command as tune_command
    seen = []

    def record(path, **kwargs):
        seen.append(kwargs["cpp"])
        raise RuntimeError("recorded")
    monkeypatch.setattr(bench_run, "run_bench", record)
    monkeypatch.setattr(tune_command, "run_tune", record)
    src = tmp_path / "k.f90"
    src.write_text(USER)
    for command in ("bench", "tune"):
        for flags, want in (([], None), (["-cpp"], True), (["-nocpp"], False),
                            (["-nocpp", "-cpp"], True), (["-cpp", "-nocpp"], False)):
            f2loopy(command, *flags, str(src))
            assert seen.pop() is want, (command, flags)

# }}}


# {{{ compiler: the preprocessor runs

@pytest.mark.usefixtures("preprocessor")
def test_cpp_translates_a_dot_f90_with_the_builds_macros(tmp_path):
    src = tmp_path / "lb.f90"
    src.write_text(LBM)
    proc = f2loopy("translate", "-cpp", "-DKINDW=8", "-DNX=16", "-DNY=4", "-o",
                   str(tmp_path / "out"), str(src))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    code = (tmp_path / "out" / "lb.cl").read_text()
    assert "__global double *f" in code and "i <= 16" in code and "j <= 4" in code
    # the last of -cpp/-nocpp wins, as for gfortran: the note then names the macros
    proc = f2loopy("translate", "-cpp", "-nocpp", "-DKINDW=8", "-DNX=16", "-DNY=4", "-o",
                   str(tmp_path / "out2"), str(src))
    assert proc.returncode == 1
    assert "note: -D KINDW is not applied: lb.f90 is not preprocessed" in proc.stderr
    assert not (tmp_path / "out2").exists()


@pytest.mark.usefixtures("preprocessor")
def test_a_define_without_cpp_that_translates_gets_a_located_warning(tmp_path):
    src = tmp_path / "s.f90"
    src.write_text("subroutine s(n, x)\n  integer n\n  real x(N)\n  x = 1\nend subroutine\n")
    proc = f2loopy("translate", "-DN=4", "-o", str(tmp_path / "out"), str(src))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"{src}:3:10: warning: -D N is not applied: s.f90 is not preprocessed (gfortran "
        "preprocesses a .f90 or .f file only with -cpp), so 'N' stays a Fortran name; give "
        "-cpp, as the project's build does, to have the file preprocessed",
        "      real x(N)", "             ^"]
    proc = f2loopy("translate", "-cpp", "-DN=4", "-o", str(tmp_path / "out"), str(src))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "x[" in (tmp_path / "out" / "s.cl").read_text()


@pytest.mark.usefixtures("preprocessor")
def test_cpp_applies_to_the_modules_found_through_I(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "params.f90").write_text(PARAMS)
    user = tmp_path / "u.f90"
    user.write_text(USER)
    out = tmp_path / "out"
    proc = f2loopy("translate", "-I", str(tmp_path / "lib"), "-DKINDW=8", "-o", str(out),
                   str(user))
    assert proc.returncode == 1
    assert f"{tmp_path / 'lib' / 'params.f90'}:3:30: error: 'KINDW'" in proc.stderr, proc.stderr
    proc = f2loopy("translate", "-cpp", "-I", str(tmp_path / "lib"), "-DKINDW=8", "-o",
                   str(out), "--depfile", str(tmp_path / "u.d"), str(user))
    assert proc.returncode == 0, proc.stderr
    assert "__global double *u" in (out / "u.cl").read_text()
    assert "params.f90" in (tmp_path / "u.d").read_text()
    # show reads the same way
    proc = f2loopy("show", "-cpp", "-I", str(tmp_path / "lib"), "-DKINDW=4", "--no-ir",
                   str(user))
    assert proc.returncode == 0 and "__global float *u" in proc.stdout, proc.stderr


@pytest.mark.usefixtures("preprocessor")
def test_the_depfile_lists_the_headers_of_a_preprocessed_dot_f90(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "sizes.h").write_text("#define NX 8\n")
    src = tmp_path / "k.f90"
    src.write_text('#include "sizes.h"\n' + USER.replace("u(n)", "u(NX)").replace(
        "use params, only: rk, visc", "integer, parameter :: rk = 4\n  real, parameter :: "
        "visc = 0.5"))
    proc = f2loopy("translate", "-cpp", "-I", str(tmp_path / "inc"), "-o", str(tmp_path / "o"),
                   "--depfile", str(tmp_path / "k.d"), str(src))
    assert proc.returncode == 0, proc.stderr
    assert str(tmp_path / "inc" / "sizes.h") in (tmp_path / "k.d").read_text()

# }}}


# {{{ differential: check builds the original with the same preprocessing

@needs_gfortran
@pytest.mark.gfortran
def test_check_builds_the_original_with_cpp(tmp_path):
    pytest.importorskip("pyopencl")
    src = tmp_path / "lb.f90"
    src.write_text(LBM)
    proc = f2loopy("check", "-cpp", "-DKINDW=8", "-DNX=24", "-DNY=5", str(src))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "f(24,5) float64  max |error| " in proc.stdout, proc.stdout
    # a module on the path, preprocessed with -cpp, built with the same kind
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "params.f90").write_text(PARAMS)
    user = tmp_path / "u.f90"
    user.write_text(USER)
    proc = f2loopy("check", "-cpp", "-I", str(tmp_path / "lib"), "-DKINDW=4", "--size",
                   "n=30", str(user))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "u(30) float32  max |error| " in proc.stdout, proc.stdout

# }}}


# {{{ builds: the wrapper and CMake

@needs_gfortran
def test_the_wrapper_passes_the_compiles_cpp_on(tmp_path):
    from f2loopy.wrapper_options import translation_options
    assert translation_options(["-cpp", "-nocpp"]).cpp is False
    assert translation_options(["-nocpp", "-O2", "-cpp"]).cpp is True
    assert translation_options(["-O2"]).cpp is None
    (tmp_path / "lb.f90").write_text(LBM + "!$loopy begin\n! k, = parse_fortran(SOURCE, "
                                     "FILENAME)\n! RESULT = k\n!$loopy end\n")
    proc = subprocess.run([sys.executable, "-m", "f2loopy.wrapper", "gfortran", "-cpp",
                           "-DKINDW=8", "-DNX=16", "-DNY=4", "-c", "lb.f90", "-o", "lb.o"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    nm = subprocess.run(["nm", tmp_path / "lb.o"], capture_output=True, text=True).stdout
    assert "__lattice_MOD_relax" in nm and "_MOD_relax_cl" in nm, nm


@pytest.mark.usefixtures("cmake", "gfortran")
def test_cmake_translates_with_preprocess(tmp_path):
    runtime = Path(__file__).resolve().parents[2] / "runtime" / "F2Loopy.cmake"
    (tmp_path / "lb.f90").write_text(LBM)
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(pp LANGUAGES C Fortran)\n"
        f'include("{runtime}")\n'
        "add_library(a STATIC lb.f90)\nset_target_properties(a PROPERTIES Fortran_PREPROCESS ON)\n"
        "f2loopy_add_kernels(a SOURCES lb.f90 DEFINES KINDW=8)\n"
        "add_library(b STATIC lb.f90)\nf2loopy_add_kernels(b SOURCES lb.f90 PREPROCESS OFF)\n"
        "add_library(c STATIC lb.f90)\nf2loopy_add_kernels(c SOURCES lb.f90)\n")
    proc = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr

    def command(target):
        text = (tmp_path / "build" / "CMakeFiles" / f"{target}.dir" / "build.make").read_text()
        return next(line for line in text.splitlines() if " translate -o " in line)
    assert " -cpp " in command("a") and " -nocpp " in command("b")
    assert "cpp" not in command("c").replace("f2l-cache-cpp", "")
    (tmp_path / "CMakeLists.txt").write_text(
        (tmp_path / "CMakeLists.txt").read_text() + "f2loopy_add_kernels(c SOURCES lb.f90 "
        "PREPROCESS yes OUTPUT_DIR x)\n")
    proc = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "PREPROCESS must be ON or OFF, not 'yes'" in " ".join(proc.stderr.split())

# }}}
