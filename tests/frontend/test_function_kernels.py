"""A file of functions (BLAS ddot/dasum/idamax style): each function no
procedure of the file calls becomes a kernel whose glue returns its value;
a file with nothing to translate says so."""

from __future__ import annotations


import numpy as np
import pytest
from cli_util import f2loopy     # the command in this process

from f2loopy.frontend import parse_fortran
from f2loopy.ir.serialize import decode_kernel, encode_kernel
from f2loopy.ir.roles import Result
from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain, translate
from util import fortran_reference, needs_gfortran, translate_and_load

BLAS = """\
double precision function ddot(n, dx, incx, dy, incy)
  integer n, incx, incy
  double precision dx(*), dy(*)
  integer i, ix, iy
  ddot = 0.0d0
  if (n <= 0) return
  ix = 1
  iy = 1
  if (incx < 0) ix = (-n + 1) * incx + 1
  if (incy < 0) iy = (-n + 1) * incy + 1
  do i = 1, n
    ddot = ddot + dx(ix) * dy(iy)
    ix = ix + incx
    iy = iy + incy
  end do
end function ddot

real function sasum(n, sx)
  integer n
  real sx(n)
  integer i
  sasum = 0.0
  do i = 1, n
    sasum = sasum + abs(sx(i))
  end do
end function

integer function idamax(n, dx)
  integer, intent(in) :: n
  double precision, intent(in) :: dx(n)
  double precision dmax
  integer i
  idamax = 0
  if (n < 1) return
  idamax = 1
  dmax = abs(dx(1))
  do i = 2, n
    if (abs(dx(i)) > dmax) then
      idamax = i
      dmax = abs(dx(i))
    end if
  end do
end function idamax
"""


def test_functions_become_kernels():
    tu = parse_fortran(BLAS, "blas.f90")
    assert [k.name for k in tu] == ["ddot", "sasum", "idamax"]
    ddot = tu["ddot"]
    res = ddot.result_arg
    assert (res.name, res.dtype, res.intent, res.role) == ("ddot", np.float64, "out",
                                                           Result())
    assert [a.name for a in ddot.fortran_args] == ["n", "dx", "incx", "dy", "incy"]
    assert "ddot: float64, scalar, the function result" in str(ddot)
    again = decode_kernel(encode_kernel(ddot))
    assert again.result_arg.name == "ddot"


def test_called_functions_stay_inlined():
    src = """\
subroutine s(n, x)
  integer n
  real x(n)
  real f
  integer i
  do i = 1, n
    x(i) = f(x(i))
  end do
end subroutine

real function f(a)
  real a
  f = a + 1
end function

real function g(a) result(r)
  real a
  r = a * 2
end function
"""
    tu = parse_fortran(src, "t.f90")
    assert [k.name for k in tu] == ["s", "g"]
    assert tu["g"].result_arg.name == "r"


def test_python_glue_returns_the_value(tmp_path, cl_queue):
    module, _ = translate_and_load(BLAS, tmp_path, filename="blas.f90")
    x = np.array([1.0, -5.0, 3.0, 2.0])
    y = np.array([2.0, 1.0, 0.5, -1.0])
    assert module.ddot(4, x, 1, y, 1, queue=cl_queue) == pytest.approx(-3.5)
    assert module.ddot(2, x, 2, y, 2, queue=cl_queue) == pytest.approx(3.5)
    assert module.idamax(4, x, queue=cl_queue) == 2
    assert module.sasum(3, np.array([1, -2, 3], dtype=np.float32), queue=cl_queue) == 6
    assert "Returns the value of ddot." in module.ddot.__doc__


@needs_gfortran
def test_differential_against_gfortran(tmp_path, cl_queue):
    module, _ = translate_and_load(BLAS, tmp_path, filename="blas.f90")
    ref = fortran_reference(BLAS, "blas.f90")
    rng = np.random.default_rng(3)
    for n, incx, incy in [(7, 1, 1), (5, 2, -1), (0, 1, 1), (4, -2, 3)]:
        x = rng.standard_normal(1 + 3 * max(n, 1))
        y = rng.standard_normal(1 + 3 * max(n, 1))
        want = ref.call("ddot", [n, x.copy(), incx, y.copy(), incy])[-1]
        got = module.ddot(n, x, incx, y, incy, queue=cl_queue)
        assert got == pytest.approx(want, rel=1e-12), (n, incx, incy)
        v = rng.standard_normal(9)
        assert module.idamax(9, v, queue=cl_queue) == ref.call("idamax", [9, v.copy()])[-1]


@needs_toolchain
def test_fortran_glue_is_a_function(tmp_path):
    runtime = build_runtime(tmp_path)
    sources = translate(tmp_path, "blas", BLAS)
    main = """
program main
  use checks
  use ddot_cl_mod
  use idamax_cl_mod
  implicit none
  double precision :: x(4) = [1d0, -5d0, 3d0, 2d0], y(4) = [2d0, 1d0, 0.5d0, -1d0]
  double precision, external :: ddot
  integer, external :: idamax
  integer :: st
  call check(abs(ddot_cl(4, x, 1, y, 1) - ddot(4, x, 1, y, 1)) < 1d-12, "ddot")
  call check(idamax_cl(4, x, status=st) == idamax(4, x) .and. st == F2L_OK, "idamax")
  call done()
end program
"""
    proc = compile_and_run(tmp_path, runtime, sources, main)
    assert_all_ok(proc, 2)


def test_nothing_to_translate_is_said(tmp_path):
    (tmp_path / "m.f90").write_text("module m\n  integer, parameter :: wp = 8\nend module m\n")
    (tmp_path / "k.f90").write_text("subroutine k(x)\n  use m\n  real(wp) x\n  x = 1\nend\n")
    proc = f2loopy("translate", "m.f90", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == (
        "m.f90:1:1: error: nothing to translate: the file has no subroutine or function (a "
        "file of modules is read where the files that use it are translated: name it with "
        "them, or its directory with -I)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.f90", "m.f90"]
    # named with the file that uses it: a note, and the other file is translated
    proc = f2loopy("translate", "m.f90", "k.f90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ("f2loopy: note: skipping m.f90: it has no subroutine or function "
                           "to translate (its modules are read where other files use them)\n")
    assert (tmp_path / "k_cl.py").exists() and not (tmp_path / "m_cl.py").exists()


@pytest.mark.usefixtures("sandbox_process")
def test_nothing_to_translate_is_said_before_a_recipe(tmp_path):
    # with --transform the recipe ran on no kernels and said only
    # "f2loopy: error: RESULT holds no kernels" (no position), so a file of
    # modules among the files of a build with --transform failed the build
    (tmp_path / "m.f90").write_text("module m\n  integer, parameter :: wp = 8\nend module m\n")
    (tmp_path / "k.f90").write_text("subroutine k(x)\n  use m\n  real(wp) x\n  x = 1\nend\n")
    proc = f2loopy("translate", "--transform", "auto", "m.f90", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0].startswith(
        "m.f90:1:1: error: nothing to translate: the file has no subroutine or function")
    proc = f2loopy("translate", "--transform", "auto", "m.f90", "k.f90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("f2loopy: note: skipping m.f90: it has no subroutine")
