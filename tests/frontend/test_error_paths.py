"""Error paths (issue 16): ``call xerbla``, ``stop``, ``error stop`` and the
``write``/``print`` before them become error sites of the kernel; the first
one reached is reported by the Python glue as KernelStopError (with the
Fortran line, the message and the integers printed) and by the Fortran glue
as the same stop.  Differential runs against gfortran where nothing stops,
the exact messages where something does."""

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from util import farray, needs_gfortran, run_both, translate_and_load

DSCALE = """
      subroutine dscale(n, alpha, x, incx)
      integer n, incx
      double precision alpha, x(*)
      integer info, i
      info = 0
      if (n .lt. 0) then
         info = 1
      else if (incx .le. 0) then
         info = 4
      end if
      if (info .ne. 0) then
         call xerbla('DSCALE', info)
         return
      end if
      do i = 1, n
         if (x(1 + (i - 1)*incx) .lt. -100) then
            write(*,*) 'element', i, 'is too small'
            print *, 'giving up'
            stop 'dscale: bad input'
         end if
         x(1 + (i - 1)*incx) = alpha * x(1 + (i - 1)*incx)
      end do
      if (n .gt. 1000) error stop 7
      end
"""


@needs_gfortran
def test_no_error_matches_gfortran(tmp_path, cl_queue):
    run_both(DSCALE, "dscale", [5, 2.0, farray(10, np.float64, seed=1), 2], tmp_path, cl_queue)


@pytest.fixture
def dscale(tmp_path):
    module, _ = translate_and_load(DSCALE, tmp_path)
    return module


@pytest.mark.parametrize("n, incx, line, message, code, values", [
    (-1, 1, 13, "On entry to DSCALE parameter number 1 had an illegal value", 0, 1),
    (3, 0, 13, "On entry to DSCALE parameter number 4 had an illegal value", 0, 4),
    (4, 1, 20, "element 3 is too small; giving up; STOP dscale: bad input", 0, 3),
    (1001, 1, 24, "ERROR STOP 7", 7, None),
])
@pytest.mark.usefixtures("opencl_device")
def test_python_glue_raises_the_stop(dscale, n, incx, line, message, code, values):
    x = np.zeros(1001 * 1, np.float64)
    x[2] = -500.0 if n == 4 else 0.0
    before = x.copy()
    with pytest.raises(dscale.KernelStopError) as info:
        dscale.dscale(n, 2.0, x, incx)
    err = info.value
    assert str(err) == f"dscale: {err.where}: {message}"
    assert err.where.endswith(f".f90:{line}") and err.code == code
    if values is not None:
        assert err.values[0] == values
    if n != 1001:
        assert np.array_equal(x, before)       # nothing is copied back


def test_error_sites_in_the_ir():
    knl = parse_fortran(DSCALE, "d.f")[0]
    assert [s.span.line for s in knl.error_sites] == [13, 20, 24]
    assert knl.error_sites[1].actions == (
        ("write", "*", "*", (("text", "element"), ("value", 0), ("text", "is too small"))),
        ("write", "*", "*", (("text", "giving up"),)), ("stop", "dscale: bad input"))
    from f2loopy.codegen import generate_code
    code = generate_code(knl).device_code
    assert "if (atomic_cmpxchg(&_f2l_err[0], 0, 2) == 0)" in code
    from f2loopy.ir.serialize import roundtrip
    assert roundtrip(knl).error_sites == knl.error_sites


def _error(body):
    src = f"subroutine s(n, x)\n  integer n\n  real x(n)\n{body}end subroutine\n"
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "t.f90")
    return info.value


@pytest.mark.parametrize("body, message", [
    ("  write(10,*) 'n is', n\n  x(1) = 0\n", "t.f90:4:3: error: 'write(10,*) 'n is', n' "
     "cannot be translated: a kernel prints only list-directed output to the screen "
     "(write(*,*), write(6,*) or print *), or output with a "
     "constant format of simple edit descriptors (a, i, f, e, es, g, l, x, /), of scalars and constant text, with OpenCL printf "
     "(write the values to an argument and print them after the call)"),
    ("  print *, 'n is', n\n  print *, 'x is', x(1)\n  stop\n", "t.f90:5:20: error: 'x(1)' is "
     "not an integer: output before a 'stop' that prints a real must be the only output "
     "there (it is printed with printf, the other output after the kernel); print the "
     "integers in the same statement or drop them"),
    ("  if (n < 0) print '(b5)', n\n", "t.f90:4:14: error: edit descriptor 'b5' in 'print '(b5)', n' "
     "cannot be translated: a kernel prints only list-directed output to the screen "
     "(write(*,*), write(6,*) or print *), or output with a "
     "constant format of simple edit descriptors (a, i, f, e, es, g, l, x, /), of scalars and constant text, with OpenCL printf "
     "(write the values to an argument and print them after the call)"),
    ("  call xerbla('S', n, 1)\n", "t.f90:4:8: error: 'xerbla' is supported with a constant "
     "routine name and an integer: call xerbla('NAME', info)"),
    ("  stop n\n", "t.f90:4:8: error: only a constant text or number can be a stop code in a "
     "kernel"),
])
def test_unsupported_error_paths(body, message):
    assert _error(body).format().splitlines()[0] == message


STOP_MAIN = """
program main
  use checks
  use dscale_cl_mod
  implicit none
  double precision :: x(8)
  integer :: st, mode
  character(len=16) :: arg
  call get_command_argument(1, arg)
  read(arg, *) mode
  x = 1
  if (mode == 0) then
    call dscale_cl(-3, 2d0, x, 1, status=st)
    call check(st == F2L_ERROR_STOP, "status")
    call check(index(f2l_error_message(), &
      "dscale.f90:13: On entry to DSCALE parameter number 1 had an illegal value") > 0, &
      "message")
    call dscale_cl(4, 2d0, x, 1, status=st)
    call check(st == F2L_OK .and. x(4) == 2, "no error")
    call done()
  else if (mode == 1) then
    x(3) = -500
    call dscale_cl(4, 2d0, x, 1)
  else
    call dscale_cl(1001, 2d0, x, 0)
  end if
end program

subroutine xerbla(srname, info)
  character(len=*) :: srname
  integer :: info
  print '(a, a, a, i0)', 'xerbla: ', srname, ' argument ', info
  stop 3
end subroutine
"""


@pytest.mark.opencl
@pytest.mark.gfortran
def test_fortran_glue_stops_like_the_fortran(tmp_path, gfortran, gcc, opencl_headers, opencl_device):
    from fortran_util import (
        assert_all_ok, build_runtime, compile_and_run, translate)
    runtime = build_runtime(tmp_path)
    sources = translate(tmp_path, "dscale", DSCALE)
    proc = compile_and_run(tmp_path, runtime, sources, STOP_MAIN, args=["0"])
    assert_all_ok(proc, 3)
    proc = compile_and_run(tmp_path, runtime, sources, STOP_MAIN, args=["1"])
    assert proc.stdout.split() == ["element", "3", "is", "too", "small", "giving", "up"]
    assert "STOP dscale: bad input" in proc.stderr
    # the program's own xerbla, called with the same arguments
    proc = compile_and_run(tmp_path, runtime, sources, STOP_MAIN, args=["2"], expect_rc=3)
    assert proc.stdout.strip() == "xerbla: DSCALE argument 4"


# Reference-LAPACK's handler: a formatted write, which a kernel cannot do
XERBLA_FILE = """
      subroutine xerbla(srname, info)
      character*(*) srname
      integer info
      write(*, fmt = 9999) srname(1:len_trim(srname)), info
      stop
 9999 format(' ** On entry to ', a, ' parameter number ', i2, ' had ',
     $       'an illegal value')
      end
"""


def test_xerbla_of_the_search_path_is_the_error_handler(tmp_path):
    """With the BLAS sources on -I, 'call xerbla' is still the error site:
    the xerbla found there is not inlined (its formatted write cannot be)."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "xerbla.f").write_text(XERBLA_FILE)
    knl = parse_fortran(DSCALE, "dscale.f", include_dirs=[tmp_path / "lib"])[0]
    assert [s.actions[-1][0] for s in knl.error_sites][:1] == ["xerbla"]
    # a xerbla of the file itself is the user's own: it is inlined
    own = DSCALE + XERBLA_FILE
    # (its format statement is read; the substring of the character dummy is not)
    with pytest.raises(FortranError, match="intrinsic 'len_trim' is not supported"):
        parse_fortran(own, "dscale.f")


@needs_gfortran
def test_check_with_xerbla_on_the_search_path(tmp_path):
    """f2loopy check compiles the search path's xerbla with the original and
    does not add its own stand-in as well (two definitions: a link error)."""
    from click.testing import CliRunner

    from f2loopy.cli import main
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "xerbla.f").write_text(XERBLA_FILE)
    (tmp_path / "dscale.f").write_text(DSCALE)
    res = CliRunner().invoke(main, ["check", "-I", str(tmp_path / "lib"),
                                    str(tmp_path / "dscale.f")])
    assert res.exit_code == 0, res.output
    assert "ok: 1 output(s) of 1 kernel(s) match the original Fortran" in res.output


CALLS_DSCALE = """
      subroutine twice(n, x)
      integer n
      double precision x(*)
      call dscale(n, 2.0d0, x, 1)
      call dscale(n, 2.0d0, x, 1)
      end
"""


@needs_gfortran
def test_a_callee_on_the_search_path_stops(tmp_path, cl_queue):
    """A procedure of another file (on -I) that stops, inlined into a file that
    never says 'stop' or 'xerbla' itself (Reference LAPACK calling dgemv):
    the kernel leaves at the callee's error site, and runs as gfortran where
    nothing stops."""
    import importlib.util

    from f2loopy.pipeline import translate_text, write_outputs
    from util import fortran_reference
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "dscale.f").write_text(DSCALE)
    (tmp_path / "lib" / "xerbla.f").write_text(XERBLA_FILE)
    path = tmp_path / "twice.f"
    path.write_text(CALLS_DSCALE)
    result = translate_text(CALLS_DSCALE, path, include_dirs=[tmp_path / "lib"])
    (knl,) = result.kernels
    assert [s.actions[-1][0] for s in knl.error_sites] == ["xerbla", "stop", "error stop"] * 2
    write_outputs(result.outputs)
    spec = importlib.util.spec_from_file_location("twice_cl", tmp_path / "twice_cl.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(module.KernelStopError) as info:
        module.twice(-3, np.zeros(4), queue=cl_queue)
    assert str(info.value).endswith(
        "dscale.f:13: On entry to DSCALE parameter number 1 had an illegal value")
    # the first call doubles element 3 to -120, the second stops there
    x = farray(6, np.float64, seed=4)
    x[2] = -60.0
    with pytest.raises(module.KernelStopError, match="STOP dscale: bad input"):
        module.twice(6, x, queue=cl_queue)
    x = farray(6, np.float64, seed=5)
    want = x.copy()
    fortran_reference(DSCALE + CALLS_DSCALE, "all.f").call("twice", [6, want])
    module.twice(6, x, queue=cl_queue)
    assert np.array_equal(x, want)
