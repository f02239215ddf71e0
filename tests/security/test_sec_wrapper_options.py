"""Issue 29, item 6: ``f2loopyfc`` translates a file as the compiler reads
it, so that ``foo`` and ``foo_cl`` in one object compute the same thing.

The compiler's ``-D``/``-U`` (in order), ``-I`` and ``-ffixed-form``/
``-ffree-form`` reach the translation; options it cannot follow (default
kinds, line lengths, other include options) are refused for a file with a
``!$loopy`` block, before anything is written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from security_util import run_module

BRANCHES = """\
subroutine k(n, x)
  implicit none
  integer n, i
  real x(n)
#include "scale.h"
  do i = 1, n
#ifdef USE_OPENCL
    x(i) = x(i) * 3.0 * s
#else
    x(i) = x(i) * 2.0 * s
#endif
  end do
end subroutine
!$loopy begin
! knl, = parse_fortran(SOURCE, FILENAME)
! RESULT = [knl]
!$loopy end
"""
FIXED = """\
      subroutine f(n, x)
      implicit none
      integer n, i
      real x(n)
      do i = 1, n
         x(i) = x(i) *
     &        4.0
      end do
      end subroutine
!$loopy begin
! knl, = parse_fortran(SOURCE, FILENAME)
! RESULT = [knl]
!$loopy end
"""


def test_defines_undefines_in_command_line_order():
    from f2loopy.wrapper_options import translation_options
    o = translation_options(["-O2", "-DUSE_OPENCL", "-D", "N=8", "-UN", "-DM=(8,4)",
                             "-UX", "-DX", "-Iinc", "-I", "more", "-ffixed-form"])
    assert o.macros == {"USE_OPENCL": "1", "M": "(8,4)", "X": "1"}
    assert o.undefines == ["N"]
    assert o.include_dirs == ["inc", "more"]
    assert o.fixed_form is True
    assert translation_options(["-ffixed-form", "-ffree-form"]).fixed_form is False


def test_script_values_keep_the_preprocessors_text():
    from f2loopy.wrapper_options import script_values
    values = script_values({"N": "8", "T": "(8,4)", "S": '"abc"', "F": "fast", "B": "True"})
    assert values == {"N": 8, "T": "(8,4)", "S": '"abc"', "F": "fast", "B": "True"}


@pytest.mark.parametrize("option", [
    # (-fdefault-real-8 -fdefault-double-8 are taken: tests/builds/test_default_real_8.py)
    "-fdefault-real-16", "-fdefault-double-16", "-fdefault-integer-8", "-freal-4-real-8",
    "-finteger-4-integer-8", "-fd-lines-as-code", "-ffixed-line-length-132",
    "-ffixed-line-length-none", "-include", "-iquote", "-isystem"])
def test_options_the_translation_cannot_follow_are_refused(option):
    from f2loopy.wrapper_options import OptionError, translation_options
    with pytest.raises(OptionError, match="cannot follow"):
        translation_options(["-O2", option])


@pytest.mark.parametrize("macro", ["-DF(x)=x", "-D1X", "-U"])
def test_malformed_macros_are_refused(macro):
    from f2loopy.wrapper_options import OptionError, translation_options
    with pytest.raises(OptionError):
        translation_options([macro])


def test_underscore_names_are_macros_only_and_long_names_are_refused():
    """A ``-D`` name with a leading underscore is a preprocessor macro (as
    for ``f2loopy translate -D``): taken, and kept from the script by its
    namespace (test_wrapper_underscore_macro_reaches_the_preprocessor_only)."""
    from f2loopy.wrapper_options import OptionError, script_values
    assert script_values({"_DEBUG": "1", "__N": "(8,4)"}) == {"_DEBUG": 1, "__N": "(8,4)"}
    with pytest.raises(OptionError, match="at most 63 characters"):
        script_values({"X" * 64: "1"})


UNDERSCORED = """\
subroutine k(n, x)
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = x(i) * _SCALE
  end do
end subroutine
!$loopy begin
! knl, = parse_fortran(SOURCE, FILENAME)
! print(tile)
! RESULT = [knl]
!$loopy end
"""


def test_wrapper_underscore_macro_reaches_the_preprocessor_only(tmp_path, capsys, preprocessor):
    from f2loopy.wrapper import translate_for_compile
    src = tmp_path / "k.F90"
    src.write_text(UNDERSCORED)
    f_glue, c_glue, _ = translate_for_compile(
        str(src), tmp_path, ["-D_SCALE=7.0", "-D", "__builtins__=1", "-Dtile=8", "-c"])
    assert f_glue.is_file() and c_glue.is_file()
    assert capsys.readouterr().out == "8\n"        # the script ran, its builtins intact
    assert "7.0f" in (tmp_path / "k.cl").read_text()


@pytest.mark.usefixtures("sandbox_process")
def test_a_form_in_f2loopyfc_options_must_be_the_compilers(tmp_path, monkeypatch):
    from f2loopy.wrapper import WrapperError, translate_for_compile
    src = tmp_path / "f.f90"
    src.write_text(FIXED)
    monkeypatch.setenv("F2LOOPYFC_OPTIONS", "-ffixed-form")
    with pytest.raises(WrapperError, match=r"-ffixed-form differs from the form the compiler "
                                           r"reads .*f\.f90 in \(free\)"):
        translate_for_compile(str(src), tmp_path, ["-c"])
    f_glue, _, _ = translate_for_compile(str(src), tmp_path, ["-ffixed-form", "-c"])
    assert f_glue.is_file()


def _wrapper(*args, cwd):
    return run_module("f2loopy.wrapper", "gfortran", *args, cwd=cwd)


needs_compilers = pytest.mark.usefixtures("gfortran", "gcc")


def _program_text(obj: Path) -> str:
    """The OpenCL program the C glue embeds in the object."""
    return obj.read_bytes().decode("latin-1")


@pytest.mark.gfortran
@needs_compilers
def test_the_kernel_follows_the_compilers_defines_and_include_dirs(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.h").write_text("      real, parameter :: s = 5.0\n")
    (tmp_path / "k.F90").write_text(BRANCHES)
    proc = _wrapper("-O1", "-DUSE_OPENCL", "-Iinc", "-c", "k.F90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    program = _program_text(tmp_path / "k.o")
    assert "3.0f" in program and "2.0f" not in program
    assert "5.0f" in program


@pytest.mark.gfortran
@needs_compilers
def test_the_kernel_follows_the_compilers_source_form(tmp_path):
    (tmp_path / "f.f90").write_text(FIXED)          # fixed form in a .f90 file
    proc = _wrapper("-ffixed-form", "-c", "f.f90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "4.0f" in _program_text(tmp_path / "f.o")


@pytest.mark.gfortran
@needs_compilers
def test_a_kind_option_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.h").write_text("      real, parameter :: s = 5.0\n")
    (tmp_path / "k.F90").write_text(BRANCHES)
    before = sorted(os.listdir(tmp_path))
    proc = _wrapper("-fdefault-integer-8", "-Iinc", "-c", "k.F90", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("f2loopyfc: error: k.F90: -fdefault-integer-8 changes the "
                                  "default integer kind"), proc.stderr
    assert sorted(os.listdir(tmp_path)) == before
    # -fdefault-real-8 is taken with -fdefault-double-8 only (else DOUBLE PRECISION is REAL(16))
    proc = _wrapper("-fdefault-real-8", "-Iinc", "-c", "k.F90", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("f2loopyfc: error: k.F90: -fdefault-real-8 without "
                                  "-fdefault-double-8 makes DOUBLE PRECISION"), proc.stderr
    assert sorted(os.listdir(tmp_path)) == before


PLAIN = """\
subroutine k(n, x)
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = x(i) * SCALE
  end do
end subroutine
!$loopy begin
! knl, = parse_fortran(SOURCE, FILENAME)
! RESULT = [knl]
!$loopy end
"""


@pytest.mark.usefixtures("sandbox_process", "preprocessor")
def test_cpp_on_a_plain_file_preprocesses_it_as_the_compiler_does(tmp_path):
    """``-cpp -DSCALE=2.0`` on a ``.f90``: the compiler replaces SCALE, and so
    does the translation (issue 27: the option takes effect instead of being
    refused); ``-nocpp`` on a ``.F90`` leaves a macro-free file alone and
    refuses a preprocessor line, located."""
    from f2loopy.wrapper import translate_for_compile
    src = tmp_path / "k.f90"
    src.write_text(PLAIN)
    f_glue, c_glue, _ = translate_for_compile(str(src), tmp_path / "a",
                                              ["-cpp", "-DSCALE=2.0", "-c"])
    assert f_glue.is_file() and c_glue.is_file()
    code = (tmp_path / "a" / "k.cl").read_text()
    assert "x[i - 1] * 2.0f" in code, code
    assert "SCALE" not in code
    plain = tmp_path / "p.F90"
    plain.write_text(PLAIN.replace("SCALE", "3.0"))
    translate_for_compile(str(plain), tmp_path / "b", ["-nocpp", "-c"])
    assert "* 3.0f" in (tmp_path / "b" / "p.cl").read_text()
    branches = tmp_path / "q.F90"
    branches.write_text(BRANCHES)
    with pytest.raises(SystemExit):
        translate_for_compile(str(branches), tmp_path / "c", ["-nocpp", "-c"])
    assert not (tmp_path / "c" / "q.cl").exists()
