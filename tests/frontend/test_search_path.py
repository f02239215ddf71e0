"""Modules and procedures of other files: the search path (``-I``), ``use``
renames, the depfile, located errors for what cannot be found, and a
differential test against gfortran."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from cli_util import f2loopy     # the command in this process

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.frontend.search_path import SearchPath, scan_definitions
from util import needs_gfortran, run_both, translate_and_load

KINDS = """\
module kinds
  implicit none
  integer, parameter :: jprb = selected_real_kind(13, 300)
  integer, parameter :: jpim = 4
  real(kind=jprb), parameter :: rtt = 273.16_jprb
end module kinds
"""

HELPERS = """\
subroutine add_one(n, y)
  use kinds
  implicit none
  integer, intent(in) :: n
  real(jprb), intent(inout) :: y(n)
  y(1) = y(1) + 1.0_jprb
end subroutine add_one

real(8) function twice(a)
  real(8), intent(in) :: a
  twice = 2.0d0 * a
end function twice
"""

KERNEL = """\
subroutine scale(n, x)
  use kinds, only: wp => jprb, rtt
  implicit none
  integer, intent(in) :: n
  real(wp), intent(inout) :: x(n)
  real(kind=wp) :: foedelta, ptare
  real(8) :: twice
  integer :: i
  foedelta(ptare) = max(0.0_wp, sign(1.0_wp, ptare - rtt))
  do i = 1, n
    x(i) = twice(x(i)) + foedelta(x(i))
  end do
  call add_one(n, x)
end subroutine scale
"""


@pytest.fixture
def project(tmp_path, preprocessor):
    # kinds.F90 on the path goes through the preprocessor
    inc = tmp_path / "inc"
    (inc / "deep").mkdir(parents=True)
    (inc / "deep" / "kinds.F90").write_text(KINDS)
    (inc / "helpers.f90").write_text(HELPERS)
    (tmp_path / "scale.f90").write_text(KERNEL)
    return tmp_path


def test_scan_definitions(tmp_path):
    f = tmp_path / "a.f90"
    f.write_text(textwrap.dedent("""\
        module m1 ! kinds
        contains
          pure real(kind=8) function f(x)
          end function f
          module procedure g
        end module m1
        double precision function ddot(n, x)
        end function
        recursive subroutine walk
        end subroutine walk
        integer*4 function idamax(n)
        end
        ! subroutine commented
        """))
    assert scan_definitions(f, False) == [
        ("module", "m1"), ("procedure", "f"), ("procedure", "ddot"), ("procedure", "walk"),
        ("procedure", "idamax")]
    g = tmp_path / "b.f"
    g.write_text("c     subroutine nope(x)\n      subroutine daxpy(n)\n     &  function x\n"
                 "      end\n")
    assert scan_definitions(g, True) == [("procedure", "daxpy")]


def test_scan_is_linear_on_long_lines(tmp_path):
    """A long statement of words and parentheses (a call with many arguments)
    is scanned in linear time (no backtracking over the prefix words)."""
    import time
    f = tmp_path / "long.f"
    words = " ".join(f"a{k} (b{k}) *2" for k in range(3000))
    f.write_text(f"      x = {words} function\n      subroutine ok(x)\n")
    start = time.perf_counter()
    assert scan_definitions(f, False) == [("procedure", "ok")]
    assert time.perf_counter() - start < 2.0


def test_use_of_another_file_with_rename(project):
    tu = parse_fortran(KERNEL, str(project / "scale.f90"), include_dirs=[project / "inc"])
    knl = tu["scale"]
    x = knl.arg_dict["x"]
    assert x.dtype == np.float64
    spans = {str(i.span.filename).rsplit("/", 1)[-1] for i in knl.instructions}
    assert spans == {"scale.f90", "helpers.f90"}


def test_files_read_are_recorded(project):
    from f2loopy.pipeline import translate_file
    result = translate_file(project / "scale.f90", include_dirs=[project / "inc"])
    assert [p.name for p in result.inputs] == ["scale.f90", "kinds.F90", "helpers.f90"]


def test_files_on_the_command_line_are_searched(project):
    from f2loopy.frontend.search_path import SearchPath
    search = SearchPath((), [project / "inc" / "deep" / "kinds.F90",
                             project / "inc" / "helpers.f90"])
    assert search.where() == "the files named on the command line"
    tu = parse_fortran(KERNEL, "scale.f90", search_files=search.files)
    assert tu["scale"].arg_dict["x"].dtype == np.float64


def test_missing_module_without_search_path():
    with pytest.raises(FortranError) as e:
        parse_fortran(KERNEL, "scale.f90")
    assert e.value.format().splitlines()[0] == (
        "scale.f90:2:7: error: module 'kinds' is not defined in this file and no search path "
        "was given (name the file that defines it on the command line, or its directory "
        "with -I DIR)")


def test_missing_module_names_the_directories(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with pytest.raises(FortranError) as e:
        parse_fortran(KERNEL, "scale.f90", include_dirs=[tmp_path / "a", tmp_path / "b"])
    assert str(e.value.format()).splitlines()[0] == (
        f"scale.f90:2:7: error: module 'kinds' is not defined in this file nor in the Fortran "
        f"sources searched ({tmp_path / 'a'}, {tmp_path / 'b'})")


def test_missing_subroutine_and_function(project):
    (project / "inc" / "helpers.f90").write_text(HELPERS.replace("add_one", "add_two"))
    with pytest.raises(FortranError) as e:
        parse_fortran(KERNEL, "scale.f90", include_dirs=[project / "inc"])
    assert e.value.format().splitlines()[0] == (
        f"scale.f90:13:8: error: subroutine 'add_one' is not defined in this file nor in the "
        f"Fortran sources searched ({project / 'inc'}); it is inlined, so its source is "
        "needed")
    (project / "inc" / "helpers.f90").write_text(HELPERS.replace("twice", "thrice"))
    with pytest.raises(FortranError) as e:
        parse_fortran(KERNEL, "scale.f90", include_dirs=[project / "inc"])
    assert e.value.format().splitlines()[0] == (
        f"scale.f90:11:12: error: function 'twice' is not defined in this file nor in the "
        f"Fortran sources searched ({project / 'inc'}); it is inlined, so its source is "
        "needed")


def test_error_in_a_used_file_points_there(project):
    (project / "inc" / "helpers.f90").write_text(HELPERS.replace("y(1) = y(1) + 1.0_jprb",
                                                                 "y(1) = y(1) + q"))
    with pytest.raises(FortranError) as e:
        parse_fortran(KERNEL, "scale.f90", include_dirs=[project / "inc"])
    assert e.value.span.filename == str(project / "inc" / "helpers.f90")
    assert e.value.span.line == 6


def test_use_cycle_through_files(tmp_path):
    (tmp_path / "a.f90").write_text("module a\n  use b\nend module a\n")
    (tmp_path / "b.f90").write_text("module b\n  use a\nend module b\n")
    src = "subroutine s(x)\n  use a\n  real :: x\n  x = 1\nend subroutine s\n"
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "s.f90", include_dirs=[tmp_path])
    assert "module 'a' uses itself" in e.value.message


def test_generated_glue_is_not_a_source(tmp_path):
    (tmp_path / "k_cl.f90").write_text("! Generated by f2loopy\nmodule kinds\nend module\n")
    assert SearchPath([tmp_path]).index() == {}


def _cli(*args, cwd):
    return f2loopy(*args, cwd=cwd)


def test_cli_translate_with_include_and_depfile(project):
    proc = _cli("translate", "scale.f90", "-I", "inc", "--depfile", "scale.d", cwd=project)
    assert proc.returncode == 0, proc.stderr
    dep = (project / "scale.d").read_text()
    assert dep.splitlines()[0] == "scale.cl scale_cl.py scale_cl.f90 scale_cl.c: scale.f90 \\"
    assert "  inc/deep/kinds.F90 \\" in dep.splitlines()
    assert "  inc/helpers.f90" in dep.splitlines()


def test_cli_missing_module_writes_nothing(project):
    proc = _cli("translate", "scale.f90", cwd=project)
    assert proc.returncode == 1
    assert proc.stderr.startswith("scale.f90:2:7: error: module 'kinds' is not defined")
    assert not (project / "scale.cl").exists()
    assert not (project / "scale_cl.py").exists()


def test_cli_files_named_together(project):
    proc = _cli("translate", "scale.f90", "inc/deep/kinds.F90", "inc/helpers.f90",
                cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert (project / "scale_cl.py").exists()


@needs_gfortran
def test_differential_against_gfortran(project, cl_queue):
    """The kernel translated with its module and helpers from -I runs like
    gfortran's build of the same Fortran."""
    tu = parse_fortran(KERNEL, str(project / "scale.f90"), include_dirs=[project / "inc"])
    from f2loopy.pipeline import translate_file, write_outputs
    result = translate_file(project / "scale.f90", include_dirs=[project / "inc"])
    write_outputs(result.outputs)
    import importlib.util
    spec = importlib.util.spec_from_file_location("scale_cl", project / "scale_cl.py")
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)
    # gfortran builds the module, the helpers and the kernel as one file
    whole = KINDS + HELPERS + KERNEL
    n = 37
    x = np.linspace(-300.0, 600.0, n)
    run_both(whole, "scale", [n, x], project, cl_queue, module=glue, filename="whole.f90")
    assert tu["scale"].name == "scale"


def test_translate_and_load_unaffected(tmp_path):
    """A file without 'use' translates as before, without a search path."""
    module, result = translate_and_load(
        "subroutine s(n, x)\n  integer n\n  real x(n)\n  x = 1\nend\n", tmp_path)
    assert [p.name for p in result.inputs] == [result.inputs[0].name]
    assert hasattr(module, "s")


def test_cache_sees_changes_of_used_files(project):
    """The translation cache keys on the files read through -I too: editing
    the module retranslates, also with parallel jobs."""
    proc = _cli("translate", "-j", "2", "scale.f90", "-I", "inc", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert "double" in (project / "scale.cl").read_text()
    kinds = project / "inc" / "deep" / "kinds.F90"
    kinds.write_text(KINDS.replace("selected_real_kind(13, 300)", "4"))
    proc = _cli("translate", "-j", "2", "scale.f90", "-I", "inc", cwd=project)
    # translated again: x is real(4) now, and twice() takes real(8)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == (
        "scale.f90:11:12: error: argument 'a' of 'twice' is real(8), but the actual argument "
        "is real")


def test_cache_sees_a_file_added_to_the_path(project):
    """A file added under an -I directory that now defines a module first (a
    shallower kinds.f90 is found before deep/kinds.F90) is a cache miss,
    although no file the entry read has changed."""
    proc = _cli("translate", "scale.f90", "-I", "inc", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert "double" in (project / "scale.cl").read_text()
    (project / "inc" / "aaa_kinds.f90").write_text(
        KINDS.replace("selected_real_kind(13, 300)", "4"))
    proc = _cli("translate", "scale.f90", "-I", "inc", cwd=project)
    assert proc.returncode == 1
    assert "argument 'a' of 'twice' is real(8), but the actual argument is real" in proc.stderr


@needs_gfortran
def test_check_with_include(project):
    """f2loopy check builds the files the search path provided with the
    original and compares."""
    proc = _cli("check", "scale.f90", "-I", "inc", "--size", "n=17", "--range", "x=200:400",
                cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok" in proc.stdout and "FAIL" not in proc.stdout


@needs_gfortran
def test_check_sets_module_data(tmp_path):
    # (check refused module data before; tests/verify/test_check_shared_data.py has more)
    (tmp_path / "m.f90").write_text("module m\n  real(8) :: alpha = 2\nend module\n")
    (tmp_path / "k.f90").write_text("subroutine k(n, x)\n  use m\n  integer n\n  real(8) x(n)\n"
                                    "  x = x * alpha\n  alpha = alpha + 1\nend\n")
    proc = _cli("check", "k.f90", "-I", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == \
        "ok: 2 output(s) of 1 kernel(s) match the original Fortran"


PRECISION_F90 = """\
module precision
  implicit none
#ifdef USE_DOUBLE
  integer, parameter :: wp = kind(1.0d0)
#else
  integer, parameter :: wp = kind(1.0)
#endif
contains
  subroutine bump(x)
    real(wp), intent(inout) :: x
#include "bump.inc"
    x = x + 1
  end subroutine bump
end module precision
"""

USES_PRECISION = """\
subroutine k(n, x)
  use precision
  integer, intent(in) :: n
  real(wp), intent(inout) :: x(n)
  integer :: i
  do i = 1, n
    call bump(x(i))
  end do
end subroutine k
"""


@pytest.mark.parametrize("defines, dtype", [({}, np.float32),
                                            ({"USE_DOUBLE": ""}, np.float64)])
def test_a_file_on_the_path_is_preprocessed(tmp_path, defines, dtype, preprocessor):
    """A .F90 module with #ifdef on -I (Reference LAPACK's la_xisnan.F90)
    is preprocessed with the translation's macros; its #include is an input."""
    from f2loopy.pipeline import translate_text
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "precision.F90").write_text(PRECISION_F90)
    (tmp_path / "lib" / "bump.inc").write_text("    x = 2*x\n")
    result = translate_text(USES_PRECISION, tmp_path / "k.f90", defines=defines,
                            include_dirs=[tmp_path / "lib"])
    (knl,) = result.kernels
    assert knl.arg_dict["x"].dtype == dtype
    assert [str(i.expression) for i in knl.instructions] == ["2*x[i]", "x[i] + 1"]
    assert tmp_path / "lib" / "bump.inc" in result.inputs


def test_an_error_in_a_preprocessed_file_of_the_path_points_there(tmp_path, preprocessor):
    from f2loopy.pipeline import translate_text
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "precision.F90").write_text(PRECISION_F90.replace("x = x + 1",
                                                                         "x = x + q"))
    (tmp_path / "lib" / "bump.inc").write_text("    x = 2*x\n    x = 3*x\n")
    with pytest.raises(FortranError) as e:
        translate_text(USES_PRECISION, tmp_path / "k.f90", include_dirs=[tmp_path / "lib"])
    assert e.value.span.filename == str(tmp_path / "lib" / "precision.F90")
    assert (e.value.span.line, e.value.span.text) == (12, "    x = x + q")


@needs_gfortran
@pytest.mark.parametrize("define", [[], ["-D", "USE_DOUBLE"]])
def test_check_with_a_preprocessed_file_on_the_path(tmp_path, define):
    """check compiles the path's .F90 file as the translation read it (the
    same macros), so both sides compute in the same precision."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "precision.F90").write_text(PRECISION_F90)
    (tmp_path / "lib" / "bump.inc").write_text("    x = 2*x\n")
    (tmp_path / "k.f90").write_text(USES_PRECISION)
    proc = _cli("check", "k.f90", "-I", "lib", *define, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    want = "float64" if define else "float32"
    assert f"  x(4) {want}  max |error| 0  ok" in proc.stdout.splitlines()
    assert "ok: 1 output(s) of 1 kernel(s) match the original Fortran" in proc.stdout
