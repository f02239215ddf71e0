"""``-fdefault-real-8 -fdefault-double-8`` on every path (issue 27: a physics
suite built with them read ``0.95`` as single precision, silently): the
commands take them (and refuse ``-fdefault-real-8`` alone and the other kind
options with why), ``check`` builds the original with them (also when they
come in ``--fflags``), the Python glue takes float64 arrays for ``real``
dummies, ``f2loopyfc`` takes them from the compile and CMake from the
target."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_util import f2loopy

from f2loopy.kind_flags import REAL8_NEEDS_DOUBLE8
from util import needs_gfortran

#: physics-scheme style: default reals, constants in a module of the -I path,
#: literals without kinds, a cap and a floor
CONSTS = """module conv_consts
  implicit none
  real, parameter :: grav = 9.80665, cap = 0.95
  real, parameter :: third = 1. / 3.
end module conv_consts
"""
SIGMA = """subroutine sigma_update(im, km, flag, delt, qadv, del, sigmain, sigmab, sigmaout)
  use conv_consts, only: grav, cap, third
  implicit none
  integer, intent(in) :: im, km
  logical, intent(in) :: flag(im)
  real, intent(in) :: delt, qadv(im,km), del(im,km), sigmain(im,km)
  real, intent(out) :: sigmab(im)
  real, intent(inout) :: sigmaout(im,km)
  real :: fdqa
  integer :: i, k
  do i = 1, im
    sigmab(i) = 0.
  end do
  do k = 1, km
    do i = 1, im
      if (flag(i)) then
        fdqa = qadv(i,k) * del(i,k) / grav
        sigmab(i) = sigmab(i) + fdqa * 1.e-3
        sigmaout(i,k) = min(sigmain(i,k) + delt * fdqa, cap)
      end if
    end do
  end do
  do i = 1, im
    sigmab(i) = max(min(sigmab(i) + third, 0.95), 0.01)
  end do
end subroutine sigma_update
"""
LOOPY = "!$loopy begin\n! k, = parse_fortran(SOURCE, FILENAME)\n! RESULT = k\n!$loopy end\n"
BOTH = ("-fdefault-real-8", "-fdefault-double-8")


def _files(tmp_path: Path, text: str = SIGMA) -> Path:
    (tmp_path / "lib").mkdir(exist_ok=True)
    (tmp_path / "lib" / "conv_consts.f90").write_text(CONSTS)
    src = tmp_path / "sigma.f90"
    src.write_text(text)
    return src


# {{{ the commands

def test_translate_takes_the_pair_and_refuses_the_rest(tmp_path):
    src = _files(tmp_path)
    proc = f2loopy("translate", "-fdefault-real-8", "-I", tmp_path / "lib", src)
    assert proc.returncode == 2
    assert f"Invalid value for -fdefault-real-8: {REAL8_NEEDS_DOUBLE8}" in \
        " ".join(proc.stderr.split())
    assert not (tmp_path / "sigma.cl").exists()
    for flag, why in (("-fdefault-integer-8", "default INTEGER of kind 8 is not supported"),
                      ("-freal-4-real-8", "promoting REAL(4) to kind 8 is not supported"),
                      ("-freal-8-real-16", "REAL of kind 16 has no OpenCL type")):
        proc = f2loopy("translate", flag, src)
        assert proc.returncode == 2 and f"Invalid value for {flag}: {why}" in \
            " ".join(proc.stderr.split()), proc.stderr
    proc = f2loopy("translate", *BOTH, "-I", tmp_path / "lib", src)
    assert proc.returncode == 0, proc.stderr
    cl = (tmp_path / "sigma.cl").read_text()
    assert "0.95f" not in cl and "0.95" in cl
    assert "double const delt, __global double const *__restrict__ qadv, __global double " \
        "const *__restrict__ del, __global double const *__restrict__ sigmain, __global " \
        "double *sigmab, __global double *sigmaout)" in cl
    py = (tmp_path / "sigma_cl.py").read_text()
    assert "_array('sigma_update', 'qadv', qadv, np.float64, (im, km), queue, False)" in py
    # -fdefault-double-8 alone: gfortran's defaults, the outputs of no option
    before = {p.name: p.read_text() for p in tmp_path.glob("sigma*") if p.suffix != ".f90"}
    assert f2loopy("translate", "-fdefault-double-8", "-I", tmp_path / "lib",
                   src).returncode == 0
    plain = {p.name: p.read_text() for p in tmp_path.glob("sigma*") if p.suffix != ".f90"}
    assert plain != before and "0.95f" in plain["sigma.cl"]


def test_show_reads_with_the_flags(tmp_path):
    src = _files(tmp_path)
    proc = f2loopy("show", "--no-code", *BOTH, "-I", tmp_path / "lib", src)
    assert proc.returncode == 0, proc.stderr
    assert "sigmab: float64, shape (im)" in proc.stdout
    assert "sigmab: float32, shape (im)" in f2loopy("show", "--no-code", "-I", tmp_path / "lib",
                                                   src).stdout


def test_the_flags_reach_bench_and_tune(monkeypatch, tmp_path):
    from f2loopy.bench import run as bench_run
    from f2loopy.tune import command as tune_command
    seen = []

    def record(path, **kwargs):
        seen.append(kwargs["default_real_kind"])
        raise RuntimeError("recorded")
    monkeypatch.setattr(bench_run, "run_bench", record)
    monkeypatch.setattr(tune_command, "run_tune", record)
    src = _files(tmp_path)
    for command in ("bench", "tune"):
        for flags, want in (((), 4), (BOTH, 8), (("-fdefault-double-8",), 4)):
            f2loopy(command, *flags, src)
            assert seen.pop() == want, (command, flags)
        proc = f2loopy(command, "-fdefault-real-8", src)
        assert proc.returncode == 2 and not seen

@pytest.mark.usefixtures("sandbox_process")
def test_a_scripts_own_parse_reads_with_the_flags(tmp_path):
    """``parse_fortran`` of other text in the file's script (the sandbox
    child) reads it with the translation's kinds too."""
    src = tmp_path / "scr.f90"
    src.write_text(
        "subroutine s(n, x)\n  integer n, i\n  real x(n)\n  do i = 1, n\n"
        "    x(i) = x(i) * 0.95\n  end do\nend subroutine\n!$loopy begin\n"
        "! k, = parse_fortran(SOURCE, FILENAME)\n"
        "! other, = parse_fortran('subroutine t(y)\\n  real y\\n  y = 0.95\\n"
        "end subroutine\\n', 't.f90')\n! RESULT = [k, other]\n!$loopy end\n")
    assert f2loopy("translate", *BOTH, src).returncode == 0
    cl = (tmp_path / "scr.cl").read_text()
    assert ") s(int const n, __global double *x)" in cl
    assert ") t(__global double *y)" in cl and "y[0] = 0.95;" in cl
    assert f2loopy("translate", src).returncode == 0
    cl = (tmp_path / "scr.cl").read_text()
    assert ") t(__global float *y)" in cl and "y[0] = 0.95f;" in cl

# }}}


# {{{ differential: check builds the original with the same kinds; the glue

@needs_gfortran
@pytest.mark.gfortran
@pytest.mark.differential
def test_check_builds_the_original_with_the_flags(tmp_path):
    pytest.importorskip("pyopencl")
    src = _files(tmp_path)
    lib = tmp_path / "lib"
    proc = f2loopy("check", *BOTH, "-I", lib, src)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "  sigmab(4) float64      max |error| 0  ok" in proc.stdout, proc.stdout
    # in --fflags only (what the physics suite's user wrote): the translation
    # reads them too, instead of comparing single-precision kernels with it
    proc = f2loopy("check", "--fflags", "-O0 -fdefault-real-8 -fdefault-double-8", "-I", lib,
                   src)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "  sigmab(4) float64      max |error| 0  ok" in proc.stdout, proc.stdout
    proc = f2loopy("check", "--fflags", "-O0 -fdefault-real-8", "-I", lib, src)
    assert proc.returncode == 2
    assert f"--fflags: {REAL8_NEEDS_DOUBLE8}" in " ".join(proc.stderr.split())


@pytest.mark.usefixtures("opencl_device")
def test_the_python_glue_computes_in_double(tmp_path):
    src = _files(tmp_path)
    assert f2loopy("translate", *BOTH, "-I", tmp_path / "lib", src).returncode == 0
    spec = importlib.util.spec_from_file_location("sigma_r8_cl", tmp_path / "sigma_cl.py")
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)
    im, km = 5, 3
    rng = np.random.default_rng(7)
    flag = np.array([True, False, True, False, False])
    qadv, dp = (np.asfortranarray(rng.random((im, km))) for _ in range(2))
    sigmain = np.asfortranarray(rng.random((im, km)))
    sigmab = np.zeros(im, order="F")
    sigmaout = np.asfortranarray(np.full((im, km), -1.0))
    glue.sigma_update(im, km, flag, 0.5, qadv, dp, sigmain, sigmab, sigmaout)
    fdqa = qadv * dp / 9.80665
    want_b = np.where(flag, (fdqa * 1e-3).sum(axis=1), 0.0)
    want_b = np.maximum(np.minimum(want_b + 1.0 / 3.0, 0.95), 0.01)
    np.testing.assert_allclose(sigmab, want_b, rtol=1e-14)
    # the unflagged columns: exactly the double 1/3, not a single-precision one
    assert sigmab[1] == 1.0 / 3.0 and sigmab.dtype == np.float64
    want_out = np.where(flag[:, None], np.minimum(sigmain + 0.5 * fdqa, 0.95), -1.0)
    np.testing.assert_allclose(sigmaout, want_out, rtol=1e-14)
    with pytest.raises(Exception, match="float64"):
        glue.sigma_update(im, km, flag, 0.5, qadv.astype(np.float32), dp, sigmain, sigmab,
                          sigmaout)

# }}}


# {{{ builds: the wrapper and CMake

def test_the_wrapper_reads_the_kind_options_of_the_compile():
    from f2loopy.wrapper_options import OptionError, translation_options
    assert translation_options(["-O2", *BOTH]).default_real_kind == 8
    assert translation_options(["-fdefault-double-8"]).default_real_kind == 4
    assert translation_options(["-O2"]).default_real_kind == 4
    with pytest.raises(OptionError) as info:
        translation_options(["-fdefault-real-8"])
    assert str(info.value) == REAL8_NEEDS_DOUBLE8


@needs_gfortran
def test_the_wrapper_compiles_with_the_kind_options(tmp_path):
    src = _files(tmp_path, SIGMA + LOOPY)
    run = [sys.executable, "-m", "f2loopy.wrapper", "gfortran"]
    proc = subprocess.run([*run, *BOTH, "-c", "lib/conv_consts.f90", "-o", "c.o"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([*run, *BOTH, "-Ilib", "-c", src.name, "-o", "s.o"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    nm = subprocess.run(["nm", tmp_path / "s.o"], capture_output=True, text=True).stdout
    assert "sigma_update_" in nm and "_MOD_sigma_update_cl" in nm, nm
    proc = subprocess.run([*run, "-fdefault-real-8", "-Ilib", "-c", src.name, "-o", "t.o"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1 and REAL8_NEEDS_DOUBLE8 in " ".join(proc.stderr.split())
    env = dict(os.environ, F2LOOPYFC_OPTIONS="-fdefault-real-8")
    proc = subprocess.run([*run, *BOTH, "-Ilib", "-c", src.name, "-o", "t.o"], cwd=tmp_path,
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 1
    assert "F2LOOPYFC_OPTIONS: -fdefault-real-8 belongs on the compile's own command line" \
        in proc.stderr
    assert not (tmp_path / "t.o").exists()


MAIN = """program main
  use sigma_update_cl_mod
  implicit none
  integer, parameter :: im = 5, km = 3
  logical :: flag(im) = [.true., .false., .true., .false., .true.]
  real :: qadv(im,km), dp(im,km), s(im,km), sb(im), so(im,km), sb2(im), so2(im,km)
  integer :: i, k
  do k = 1, km
    do i = 1, im
      qadv(i,k) = 0.1 * i + 0.01 * k
      dp(i,k) = 1. + 0.3 * k
      s(i,k) = 0.2 * i / k
    end do
  end do
  so = -1.
  so2 = -1.
  call sigma_update(im, km, flag, 0.5, qadv, dp, s, sb, so)
  call sigma_update_cl(im, km, flag, 0.5, qadv, dp, s, sb2, so2)
  print '(i2, 2es10.2, l2)', kind(sb), maxval(abs(sb - sb2)), maxval(abs(so - so2)), &
    sb2(2) == 1d0 / 3
end program main
"""


@pytest.mark.usefixtures("gfortran", "gcc", "opencl_headers", "opencl_device")
def test_a_program_built_with_the_wrapper_matches_the_original(tmp_path):
    """The Fortran glue under the flags: a program compiled and linked with
    ``f2loopyfc gfortran -fdefault-real-8 -fdefault-double-8`` calls the
    original and the kernel on the same real arrays (kind 8)."""
    src = _files(tmp_path, SIGMA + LOOPY)
    (tmp_path / "main.f90").write_text(MAIN)
    run = [sys.executable, "-m", "f2loopy.wrapper", "gfortran", *BOTH]
    for args in (["-c", "lib/conv_consts.f90", "-o", "c.o"],
                 ["-Ilib", "-c", src.name, "-o", "s.o"], ["-c", "main.f90", "-o", "m.o"],
                 ["m.o", "s.o", "c.o", "-o", "prog"]):
        proc = subprocess.run([*run, *args], cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([tmp_path / "prog"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["8", "0.00E+00", "0.00E+00", "T"], proc.stdout


@pytest.mark.usefixtures("cmake", "gfortran")
def test_cmake_passes_the_targets_kind_options(tmp_path):
    runtime = Path(__file__).resolve().parents[2] / "runtime" / "F2Loopy.cmake"
    _files(tmp_path)
    head = ("cmake_minimum_required(VERSION 3.20)\nproject(r8 LANGUAGES C Fortran)\n"
            f'include("{runtime}")\n')
    (tmp_path / "CMakeLists.txt").write_text(
        head + "add_library(a STATIC sigma.f90)\n"
        "target_compile_options(a PRIVATE -fdefault-real-8 -fdefault-double-8)\n"
        "f2loopy_add_kernels(a SOURCES sigma.f90 INCLUDE_DIRS lib)\n"
        "add_library(b STATIC sigma.f90)\n"
        "f2loopy_add_kernels(b SOURCES sigma.f90 INCLUDE_DIRS lib DEFAULT_REAL_KIND 8)\n"
        "add_library(c STATIC sigma.f90)\nf2loopy_add_kernels(c SOURCES sigma.f90)\n")
    proc = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr

    def command(target):
        text = (tmp_path / "build" / "CMakeFiles" / f"{target}.dir" / "build.make").read_text()
        return next(line for line in text.splitlines() if " translate -o " in line)
    for target in ("a", "b"):
        assert " -fdefault-real-8 -fdefault-double-8 " in command(target), command(target)
    assert "fdefault" not in command("c")
    (tmp_path / "CMakeLists.txt").write_text(
        head + "add_library(d STATIC sigma.f90)\n"
        "f2loopy_add_kernels(d SOURCES sigma.f90 DEFAULT_REAL_KIND 16)\n")
    proc = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build2")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "DEFAULT_REAL_KIND must be 4 or 8, not '16'" in " ".join(proc.stderr.split())

# }}}
