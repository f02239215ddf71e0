"""Dummy procedures (issue 27): a procedure of the file called with an actual
procedure is inlined specialised to it; a kernel's own dummy procedure is
bound with ``--bind KERNEL:DUMMY=PROCEDURE`` (the kernel then takes no
argument for it, and ``check`` calls the original with the procedure)."""

import numpy as np
import pytest

from f2loopy.diagnostics import F2LoopyError, FortranError
from f2loopy.frontend import read_source, translate_source
from f2loopy.frontend.procedure_dummies import Binding, parse_bindings
from util import needs_gfortran

#: a solver in Burkardt's style (implicit dummy procedures called, an
#: 'external' function, a 'procedure(iface)' dummy of a module) and the
#: procedures a driver or a binding gives them
SOLVERS = """
module physics
  implicit none
  abstract interface
    real(8) function coef_if(x, y)
      real(8), intent(in) :: x, y
    end function
  end interface
contains
  subroutine source_term(n, x, t, f)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n), t
    real(8), intent(out) :: f(n)
    integer :: i
    do i = 1, n
      f(i) = sin(x(i)) * t
    end do
  end subroutine
  real(8) function conductivity(x, y)
    real(8), intent(in) :: x, y
    conductivity = 1.0d0 + x * y
  end function
  subroutine weigh(n, x, y, k, a)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n), y(n)
    procedure(coef_if) :: k
    real(8), intent(out) :: a(n)
    integer :: i
    do i = 1, n
      a(i) = k(x(i), y(i)) - k(y(i), x(i)) * 0.5d0
    end do
  end subroutine
end module

subroutine heat_step(n, x, t, dt, rhs, bc, h, h_new)
  implicit none
  integer n
  real(8) x(n), t, dt, h(n), h_new(n), f(n)
  call rhs(n, x, t, f)
  h_new(1) = 0
  h_new(2:n-1) = h(2:n-1) + dt * f(2:n-1) + 0.25d0 * (h(1:n-2) - 2d0 * h(2:n-1) + h(3:n))
  h_new(n) = 0
  call bc(n, x, t + dt, h_new)
end subroutine

subroutine fixed_ends(n, x, t, h)
  integer n
  real(8) x(n), t, h(n)
  h(1) = t
  h(n) = x(n) - t
end subroutine

subroutine diffuse(n, x, y, d, a)
  implicit none
  integer n, i
  real(8) x(n), y(n), a(n)
  real(8), external :: d
  do i = 1, n
    a(i) = d(x(i), y(i)) * 2d0
  end do
end subroutine

subroutine sweep(n, x, w, rhs, bc, h)
  implicit none
  integer n
  real(8) x(n), w(n), h(n)
  external rhs, bc
  call rhs(n, x, 0.5d0, w)
  h = h + w
  call bc(n, x, 2d0, h)
end subroutine

subroutine driver(n, x, y, a, b, w, h)
  use physics, only: conductivity, source_term, weigh
  implicit none
  integer n
  real(8) x(n), y(n), a(n), b(n), w(n), h(n)
  external fixed_ends
  call diffuse(n, x, y, conductivity, a)
  call weigh(n, x, y, conductivity, b)
  call sweep(n, x, w, source_term, fixed_ends, h)
end subroutine
"""

HEAT_BINDINGS = ("heat_step:rhs=source_term", "heat_step:bc=fixed_ends")


def _translate(source, *, kernels=None, bindings=()):
    return translate_source(read_source(source, "t.f90"), kernels=kernels, bindings=bindings)


def test_a_call_with_actual_procedures_is_inlined_with_them():
    driver = _translate(SOLVERS, kernels=("driver",))["driver"]
    assert [a.name for a in driver.args] == ["n", "x", "y", "a", "b", "w", "h"]
    assert driver.bound_procedures == ()
    text = str(driver)
    assert "sin(" in text          # source_term's body, inlined through 'rhs'
    # what the bound procedures assign is assigned through the call
    assert {"w", "h", "a", "b"} <= driver.written_variables()


def test_a_binding_specialises_the_kernel_and_drops_the_argument():
    knl = _translate(SOLVERS, kernels=("heat_step",), bindings=HEAT_BINDINGS)["heat_step"]
    assert [a.name for a in knl.args] == ["n", "x", "t", "dt", "h", "h_new"]
    assert [(b.dummy, b.position, b.procedure, b.module) for b in knl.bound_procedures] == [
        ("rhs", 4, "source_term", "physics"), ("bc", 5, "fixed_ends", None)]
    assert "h_new" in knl.written_variables()


def test_parse_fortran_takes_bindings():
    from f2loopy.frontend import parse_fortran
    every = ["weigh:k=conductivity", "diffuse:d=conductivity", "sweep:rhs=source_term",
             "sweep:bc=fixed_ends", *HEAT_BINDINGS]
    tu = parse_fortran(SOLVERS, "t.f90", bindings=every)
    assert [a.name for a in tu["weigh"].args] == ["n", "x", "y", "a"]
    assert [a.name for a in tu["sweep"].args] == ["n", "x", "w", "h"]
    with pytest.raises(FortranError) as info:
        parse_fortran(SOLVERS, "t.f90", bindings=every[1:])
    assert "dummy procedure 'k' of 'weigh' needs a procedure to call" in str(info.value)
    assert "of the 7 units of this file, source_term, heat_step, fixed_ends, diffuse, sweep, " \
        "driver translate and weigh does not" in str(info.value)


def test_a_function_binding_records_its_result_type():
    knl = _translate(SOLVERS, kernels=("diffuse",),
                     bindings=("diffuse:d=conductivity",))["diffuse"]
    (bp,) = knl.bound_procedures
    assert (bp.dummy, bp.position, bp.procedure, bp.result_dtype) == \
        ("d", 3, "conductivity", np.dtype(np.float64))


@pytest.mark.parametrize("bindings, message", [
    (("heat_step:rhs=source_term",),
     "t.f90:35:40: error: dummy procedure 'bc' of 'heat_step' needs a procedure to call (a kernel "
     "calls procedures known when it is translated): translate with --bind heat_step:bc=PROCEDURE "
     "(a subroutine or function of the file or of a module; the kernel then takes no argument "
     "for it)"),
    (HEAT_BINDINGS + ("heat_step:h=fixed_ends",),
     "t.f90:35:12: error: --bind heat_step:h=fixed_ends: 'h' is not a dummy procedure of "
     "'heat_step' (its dummy procedures: rhs, bc)"),
    (("heat_step:rhs=nowhere", "heat_step:bc=fixed_ends"),
     "t.f90:35:12: error: --bind heat_step:rhs=nowhere: procedure 'nowhere' is not defined in "
     "this file and no search path was given (name the file that defines it on the command "
     "line, or its directory with -I DIR)"),
])
def test_binding_errors_are_located(bindings, message):
    with pytest.raises(FortranError) as info:
        _translate(SOLVERS, kernels=("heat_step",), bindings=bindings)
    assert info.value.format().splitlines()[0] == message


def test_an_actual_that_is_no_procedure_is_located():
    source = SOLVERS.replace("call diffuse(n, x, y, conductivity, a)",
                             "call diffuse(n, x, y, sqrt, a)")
    with pytest.raises(FortranError) as info:
        _translate(source, kernels=("driver",))
    assert info.value.format().splitlines()[0] == (
        "t.f90:79:25: error: the actual argument 'sqrt' of dummy procedure 'd' of 'diffuse' is "
        "not a subroutine or function of the file, of a module or of the search path (an "
        "intrinsic or a generic name cannot be passed: pass a procedure that calls it)")


@pytest.mark.parametrize("values, message", [
    (["heat_step:rhs"], "--bind 'heat_step:rhs': give KERNEL:DUMMY=PROCEDURE (three Fortran "
                        "names)"),
    (["a:b=c d"], "--bind 'a:b=c d': give KERNEL:DUMMY=PROCEDURE (three Fortran names)"),
    (["k:f=g", "K:F=h"], "--bind k:f=h: the dummy is bound to 'g' already"),
])
def test_binding_syntax(values, message):
    with pytest.raises(F2LoopyError) as info:
        parse_bindings(values)
    assert info.value.message == message


def test_bindings_are_lower_case_and_once():
    assert parse_bindings(["Heat:RHS=Src", "heat:rhs=src"]) == (Binding("heat", "rhs", "src"),)


def test_bind_on_the_command_line(tmp_path):
    from cli_util import f2loopy
    path = tmp_path / "s.f90"
    path.write_text(SOLVERS)
    bad = f2loopy("translate", "--bind", "heat_step", str(path))
    assert bad.returncode == 2
    assert "--bind 'heat_step': give KERNEL:DUMMY=PROCEDURE" in bad.stderr
    missing = f2loopy("translate", "--kernel", "heat_step", str(path))
    assert missing.returncode == 1
    assert "translate with --bind heat_step:rhs=PROCEDURE" in missing.stderr
    assert not (tmp_path / "s.cl").exists()
    args = [a for b in HEAT_BINDINGS for a in ("--bind", b)]
    ok = f2loopy("translate", "--kernel", "heat_step", *args, str(path))
    assert ok.returncode == 0, ok.stderr
    assert "def heat_step(n, x, t, dt, h, h_new, *, queue=None)" in \
        (tmp_path / "s_cl.py").read_text()


@needs_gfortran
@pytest.mark.parametrize("kernel, bindings", [
    ("driver", ()),
    ("heat_step", HEAT_BINDINGS),
    ("diffuse", ("diffuse:d=conductivity",)),
    ("weigh", ("weigh:k=conductivity",)),
])
def test_against_gfortran(kernel, bindings, tmp_path, cl_queue):
    """``check`` calls the original with the bound procedures."""
    from f2loopy.pipeline.options import TranslateOptions
    from f2loopy.verify.check import check_source
    from f2loopy.verify.options import CheckOptions
    path = tmp_path / "solvers.f90"
    path.write_text(SOLVERS)
    options = CheckOptions(translation=TranslateOptions(bindings=bindings), kernel=kernel,
                           sizes={"n": 7})
    report = check_source(SOLVERS, path, options, queue=cl_queue)
    assert report.passed, report.format()
    assert report.checks and all(o.name for c in report.checks for o in c.outputs)


@needs_gfortran
def test_the_wrapper_passes_bindings(tmp_path):
    import os
    import subprocess
    import sys
    # (the wrapper translates files with a script; the script's parse_fortran
    # gives the kernel as the pipeline made it, bound)
    (tmp_path / "s.f90").write_text(SOLVERS + "!$loopy begin\n! k, = parse_fortran(SOURCE, "
                                    "FILENAME)\n! RESULT = k\n!$loopy end\n")
    env = dict(os.environ, F2LOOPYFC_OPTIONS="--kernel heat_step --bind heat_step:rhs=source_term "
               "--bind=heat_step:bc=fixed_ends")
    cmd = [sys.executable, "-m", "f2loopy.wrapper", "gfortran", "-c", "s.f90", "-o", "s.o"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    nm = subprocess.run(["nm", tmp_path / "s.o"], capture_output=True, text=True).stdout
    assert "heat_step_cl" in nm
    env["F2LOOPYFC_OPTIONS"] = "--bind heat_step"
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 1
    assert "F2LOOPYFC_OPTIONS: --bind 'heat_step': give KERNEL:DUMMY=PROCEDURE" in proc.stderr


@pytest.mark.usefixtures("cmake", "gfortran")
def test_cmake_passes_bindings(tmp_path):
    import subprocess
    from pathlib import Path
    runtime = Path(__file__).resolve().parents[2] / "runtime" / "F2Loopy.cmake"
    (tmp_path / "s.f90").write_text(SOLVERS)
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(solvers LANGUAGES C Fortran)\n"
        f'include("{runtime}")\nadd_library(a STATIC s.f90)\n'
        "f2loopy_add_kernels(a SOURCES s.f90 KERNELS heat_step "
        "BINDINGS heat_step:rhs=source_term heat_step:bc=fixed_ends)\n")
    proc = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "build" / "CMakeFiles" / "a.dir" / "build.make").read_text()
    command = next(line for line in text.splitlines() if " translate -o " in line)
    assert " --kernel heat_step --bind heat_step:rhs=source_term --bind " \
        "heat_step:bc=fixed_ends " in command


def test_what_a_typed_external_assigns_through_a_call_is_assigned():
    """A caller that declares the procedure it passes (``real(8), external
    :: f``) and the callee's writes through it: the analysis binds the
    callee to it (the glue copies the array back)."""
    source = """
subroutine fill(n, v, g)
  integer n, i
  real(8) v(n)
  external g
  do i = 1, n
    call g(i, v(i))
  end do
end subroutine
subroutine put(i, x)
  integer i
  real(8) x
  x = 2 * i
end subroutine
subroutine top(n, v)
  integer n
  real(8) v(n)
  external put
  call fill(n, v, put)
end subroutine
"""
    top = _translate(source, kernels=("top",))["top"]
    assert "v" in top.written_variables()
