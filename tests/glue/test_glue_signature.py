"""The launch signature check of the host plan (issue 26, item 10), in each
glue: the Python glue, the Fortran glue and a C caller of the runtime
refuse a launch whose arguments do not fit the kernel (a value where a
buffer goes, a scalar of another size, too few arguments, an index given
twice) with F2L_ERROR_ARGUMENT / KernelArgumentError and a message naming
the kernel and the argument, never a crash or a wrong answer."""

import re
import subprocess
import sys

import pytest

from fortran_util import (
    CFLAGS, RUNTIME, build_program, build_runtime, link_flags, needs_toolchain, run, translate)

SAXPY = """subroutine saxpy(n, a, x, y)
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a * x(i) + y(i)
  end do
end subroutine
"""

SIGNATURE = "int32 float32 buffer buffer"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """saxpy translated, the runtime compiled, and the C symbol of its program."""
    tmp = tmp_path_factory.mktemp("sig")
    sources = translate(tmp, "saxpy", SAXPY)
    c_text = sources[1].read_text()
    symbol = re.search(r"const char \*(f2l_src_\w+)\(void\);", c_text).group(1)
    return tmp, sources, symbol


def test_the_glues_print_the_signature(built):
    tmp, sources, _ = built
    f90 = re.sub(r"&\n *&", "", sources[2].read_text())
    assert f'"saxpy", "{SIGNATURE}")' in f90
    assert f'saxpy: "{SIGNATURE}"' in sources[1].read_text()
    assert repr(tuple(SIGNATURE.split())) in (tmp / "saxpy_cl.py").read_text()


WRONG_PY = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import saxpy_cl as g
queue = g._default_queue()
knl = g._kernel(queue, 'saxpy', ())
x = g.cl.Buffer(queue.context, g.cl.mem_flags.READ_WRITE, 16)
sig = tuple(sys.argv[2].split())
n, a = np.int32(4), np.float32(2)
for args in ([n, a, x, n], [n, a, x], [n, np.float64(2), x, x], [n, a, x, x]):
    try:
        g._launch(queue, knl, args, (1, 1, 1), (1, 1, 1), sig)
        print("launched")
    except g.KernelArgumentError as exc:
        print("refused:", exc)
"""


@pytest.mark.opencl
def test_python_glue_refuses_a_wrong_launch(built):
    pytest.importorskip("pyopencl")
    tmp, _, _ = built
    proc = subprocess.run([sys.executable, "-c", WRONG_PY, str(tmp), SIGNATURE],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "refused: saxpy: argument 4 must be a device buffer, not int32",
        "refused: saxpy: 3 arguments for a kernel of 4 (the glue and the OpenCL program do "
        "not match: translate again)",
        "refused: saxpy: argument 2 must be a numpy float32 scalar, not float64",
        "launched"]


WRONG_F90 = """
program wrong
  use, intrinsic :: iso_c_binding
  use f2loopy_runtime
  implicit none
  interface
    function program_text() bind(C, name="SYMBOL") result(source)
      import :: c_ptr
      type(c_ptr) :: source
    end function
  end interface
  type(c_ptr), save :: knl = c_null_ptr
  integer(c_int32_t), target :: n
  real(c_float), target :: a, x(4), y(4)
  real(c_double), target :: a8
  integer :: st, case
  n = 4; a = 2; a8 = 2; x = 1; y = 1
  do case = 1, 4
    block
      type(f2l_call) :: c
      call c%begin("wrong", knl, program_text(), "", "saxpy", "SIGNATURE")
      call c%value(0, c_loc(n), 4_c_size_t)
      select case (case)
      case (1)      ! a value where the kernel takes a buffer
        call c%value(1, c_loc(a), 4_c_size_t)
        call c%array(2, "x", "x(4)", c_loc(x), 1, 4_c_int64_t, 4_c_int64_t, 4_c_int64_t, .false.)
        call c%value(3, c_loc(n), 4_c_size_t)
      case (2)      ! a double where the kernel takes a float
        call c%value(1, c_loc(a8), 8_c_size_t)
        call c%array(2, "x", "x(4)", c_loc(x), 1, 4_c_int64_t, 4_c_int64_t, 4_c_int64_t, .false.)
        call c%array(3, "y", "y(4)", c_loc(y), 1, 4_c_int64_t, 4_c_int64_t, 4_c_int64_t, .true.)
      case (3)      ! an argument left out
        call c%value(1, c_loc(a), 4_c_size_t)
        call c%array(2, "x", "x(4)", c_loc(x), 1, 4_c_int64_t, 4_c_int64_t, 4_c_int64_t, .false.)
      case (4)      ! right: y = 2 x + y
        call c%value(1, c_loc(a), 4_c_size_t)
        call c%array(2, "x", "x(4)", c_loc(x), 1, 4_c_int64_t, 4_c_int64_t, 4_c_int64_t, .false.)
        call c%array(3, "y", "y(4)", c_loc(y), 1, 4_c_int64_t, 4_c_int64_t, 4_c_int64_t, .true.)
      end select
      call c%run([1_c_int64_t, 1_c_int64_t, 1_c_int64_t], [1_c_int64_t, 1_c_int64_t, 1_c_int64_t])
      call c%finish(st)
    end block
    if (st == F2L_OK) then
      print '(a, 4f5.1)', "ok", y
    else
      print '(i0, 1x, a)', st, trim(f2l_error_message())
    end if
  end do
end program
"""


@needs_toolchain
@pytest.mark.opencl
@pytest.mark.gfortran
def test_fortran_glue_refuses_a_wrong_launch(built, tmp_path):
    tmp, sources, symbol = built
    runtime = build_runtime(tmp_path)
    main = tmp_path / "wrong.f90"
    main.write_text(WRONG_F90.replace("SYMBOL", symbol).replace("SIGNATURE", SIGNATURE))
    exe = build_program(tmp_path, runtime, [sources[1], main], exe="wrong")
    proc = run([exe], check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "4 wrong: kernel 'saxpy': argument 4 must be a device buffer, not a 4-byte value",
        "4 wrong: kernel 'saxpy': argument 2 must be a float32 scalar (4 bytes), not a 8-byte "
        "value",
        "4 wrong: kernel 'saxpy': 3 arguments for a kernel of 4 (the glue and the OpenCL "
        "program do not match: translate again)",
        "ok  3.0  3.0  3.0  3.0"]


WRONG_C = r"""
#include <stdio.h>
#include <string.h>
#include "f2loopy_runtime.h"

const char *SYMBOL(void);

static int launch(f2l_kernel *k, int which)
{
    int n = 4;
    float a = 2, x[4] = {1, 1, 1, 1}, y[4] = {1, 1, 1, 1};
    f2l_launch *L;
    int st = f2l_launch_begin(k, &L);
    if (!st) st = f2l_launch_value(L, 0, &n, sizeof n);
    if (!st) st = f2l_launch_value(L, 1, &a, sizeof a);
    if (!st) st = f2l_launch_array(L, 2, "x", x, sizeof x, 0);
    if (!st && which == 1) st = f2l_launch_value(L, 3, &n, sizeof n);
    if (!st && which == 2) st = f2l_launch_array(L, 2, "x", x, sizeof x, 0);
    if (!st && which != 1 && which != 2) st = f2l_launch_array(L, 3, "y", y, sizeof y, 1);
    int64_t groups[3] = {1, 1, 1}, local[3] = {1, 1, 1};  /* one work-item runs the loop */
    if (!st) st = f2l_launch_run(L, groups, local);
    f2l_launch_end(L);
    if (st)
        printf("%d %s\n", st, f2l_error_message());
    else
        printf("ok %g %g\n", y[0], y[3]);
    return st;
}

int main(int argc, char **argv)
{
    f2l_kernel *k;
    if (f2l_kernel_get(SYMBOL(), "", "saxpy", &k)) {
        printf("no kernel: %s\n", f2l_error_message());
        return 1;
    }
    const char *wrong[] = {"int32 float32 buffer", "int32 float32 buffer matrix"};
    for (int i = 0; i < 2; i++) {
        int st = f2l_kernel_signature(k, wrong[i]);
        printf("%d %s\n", st, f2l_error_message());
    }
    if (f2l_kernel_signature(k, argv[1])) {
        printf("signature: %s\n", f2l_error_message());
        return 1;
    }
    for (int which = 1; which <= 3; which++)
        launch(k, which);
    return 0;
}
"""


@needs_toolchain
@pytest.mark.opencl
def test_c_caller_with_the_listed_signature_is_checked(built, tmp_path):
    _, sources, symbol = built
    runtime = build_runtime(tmp_path)
    listed = re.search(r'saxpy: "([^"]*)"', sources[1].read_text()).group(1)
    main = tmp_path / "wrong.c"
    main.write_text(WRONG_C.replace("SYMBOL", symbol))
    exe = tmp_path / "wrong_c"
    run(["gcc", *CFLAGS, "-I", RUNTIME, main, sources[1], runtime / "f2loopy_runtime.o",
         *link_flags(), "-o", exe], cwd=tmp_path)
    proc = run([exe, listed], check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "4 kernel 'saxpy' takes 4 arguments, but the glue passes 3 (the glue and the OpenCL "
        "program do not match: translate again)",
        "4 kernel 'saxpy': 'matrix' in its signature is no argument type (buffer, int32, "
        "float64, ...)",
        "4 kernel 'saxpy': argument 4 must be a device buffer, not a 4-byte value",
        "4 kernel 'saxpy': argument 3 given twice",
        "ok 3 3"]
