"""The generated Fortran glue (NAME_cl.f90 + NAME_cl.c), compiled with gfortran.

Each test program calls the original subroutine (compiled by gfortran from
the same source) and its ``_cl`` version (OpenCL on PoCL) on the same inputs
and compares the results inside Fortran: every argument kind (scalars by
value of each type, arrays of each type and rank, lower bounds, assumed size,
scalar outputs, fixed parameters), the device-resident mode and errors
reaching the caller as a status and a message (transformed kernels: layout
changes, names, global temporaries, assumed shapes:
:mod:`test_fortran_glue_transformed`).
"""

import pytest

from fortran_util import (
    CHECKS, assert_all_ok, build_program, build_runtime, compile_and_run, device_env,
    glue_from_kernels, needs_toolchain, run, translate)

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


# {{{ every argument kind

KINDS = """
subroutine ints(n, k8, k1, k2, a, b, c, d)
  implicit none
  integer n, i
  integer*8 k8
  integer*1 k1
  integer*2 k2
  integer a(n)
  integer*8 b(n)
  integer*1 c(n)
  integer*2 d(n)
  do i = 1, n
    a(i) = a(i) * 3 + i
    b(i) = b(i) + k8 * i
    c(i) = c(i) + k1
    d(i) = d(i) - k2
  end do
end subroutine

subroutine reals(n, m, alpha, beta, x, y, z)
  implicit none
  integer n, m, i, j
  real alpha
  double precision beta
  real x(n)
  double precision y(0:n-1, -1:m)
  real z(2, n, 0:m)
  do j = -1, m
    do i = 0, n - 1
      y(i, j) = beta * y(i, j) + dble(x(i + 1)) * j
    end do
  end do
  do j = 0, m
    do i = 1, n
      z(1, i, j) = alpha * x(i) + j
      z(2, i, j) = z(2, i, j) - x(i)
    end do
  end do
end subroutine

subroutine cplx(n, c, z, w)
  implicit none
  integer n, i
  complex c
  complex z(n)
  complex*16 w(n)
  do i = 1, n
    z(i) = z(i) * c + (1.0, -1.0)
    w(i) = w(i) * dble(i) + (2.0d0, 0.5d0)
  end do
end subroutine

subroutine outs(n, x, total, imax, big)
  implicit none
  integer n, i, imax
  double precision x(n), total
  logical big
  total = 0
  imax = 1
  do i = 1, n
    total = total + x(i)
    if (x(i) > 2.0d0) imax = i
  end do
  big = total > 10
end subroutine

subroutine onoff(n, on, x)
  implicit none
  integer n, i
  logical on
  real x(n)
  do i = 1, n
    if (on) x(i) = -x(i)
  end do
end subroutine

subroutine asz(n, x, y)
  implicit none
  integer n, i
  real x(n, *), y(*)
  do i = 1, n
    x(i, 2) = x(i, 1) + x(i, 3)
    y(i) = 2 * y(i)
  end do
end subroutine
"""

KINDS_MAIN = """
program main
  use checks
  use ints_cl_mod
  use reals_cl_mod
  use cplx_cl_mod
  use outs_cl_mod
  use onoff_cl_mod
  use asz_cl_mod
  implicit none
  integer, parameter :: n = 13, m = 3
  integer :: a1(n), a2(n), i, st, imax1, imax2
  integer(8) :: b1(n), b2(n)
  integer(1) :: c1(n), c2(n)
  integer(2) :: d1(n), d2(n)
  real :: x(n), z1(2, n, 0:m), z2(2, n, 0:m), x1(n), x2(n), p1(n, 3), p2(n, 3), q1(20), q2(20)
  double precision :: y1(0:n-1, -1:m), y2(0:n-1, -1:m), t(n), total1, total2
  complex :: zc1(n), zc2(n)
  complex(8) :: w1(n), w2(n)
  logical :: big1, big2

  a1 = [(i * 7 - 40, i = 1, n)]; a2 = a1
  b1 = [(int(i, 8) * 3000000000_8, i = 1, n)]; b2 = b1
  c1 = [(int(i - 6, 1), i = 1, n)]; c2 = c1
  d1 = [(int(i * 100, 2), i = 1, n)]; d2 = d1
  call ints(n, 5_8, 2_1, 3_2, a1, b1, c1, d1)
  call ints_cl(n, 5_8, 2_1, 3_2, a2, b2, c2, d2, status=st)
  call check(st == F2L_OK, "ints: status")
  call check(all(a1 == a2), "ints: integer(4) array")
  call check(all(b1 == b2), "ints: integer(8) array and scalar")
  call check(all(c1 == c2), "ints: integer(1) array and scalar")
  call check(all(d1 == d2), "ints: integer(2) array and scalar")

  x = [(0.25 * i - 1, i = 1, n)]
  y1 = reshape([(0.5d0 * i, i = 1, n * (m + 2))], shape(y1)); y2 = y1
  z1 = 1.5; z2 = z1
  call reals(n, m, 2.5, 0.75d0, x, y1, z1)
  call reals_cl(n, m, 2.5, 0.75d0, x, y2, z2)
  call check(all(abs(y1 - y2) <= 1d-12 * max(1d0, abs(y1))), "reals: double, lower bounds 0 and -1")
  call check(all(abs(z1 - z2) <= 1e-5 * max(1.0, abs(z1))), "reals: single, rank 3, lower bound 0")

  zc1 = [(cmplx(i, -i), i = 1, n)]; zc2 = zc1
  w1 = [(cmplx(0.5d0 * i, 1d0, kind=8), i = 1, n)]; w2 = w1
  call cplx(n, (0.5, 2.0), zc1, w1)
  call cplx_cl(n, (0.5, 2.0), zc2, w2)
  call check(all(abs(zc1 - zc2) <= 1e-5 * max(1.0, abs(zc1))), "cplx: complex scalar and array")
  call check(all(abs(w1 - w2) <= 1d-12 * max(1d0, abs(w1))), "cplx: complex(8) array")

  t = [(sin(dble(i)) * 4, i = 1, n)]
  total2 = -1; imax2 = -1; big2 = .false.
  call outs(n, t, total1, imax1, big1)
  call outs_cl(n, t, total2, imax2, big2)
  call check(abs(total1 - total2) <= 1d-12 * abs(total1), "outs: double scalar output")
  call check(imax1 == imax2, "outs: integer scalar output")
  call check(big1 .eqv. big2, "outs: logical scalar output")
  t = 1
  call outs_cl(n, t, total2, imax2, big2)
  call check(total2 == n .and. big2, "outs: logical scalar output true")

  x1 = x; x2 = x
  call onoff(n, .true., x1)
  call onoff_cl(n, .true., x2)
  call check(all(x1 == x2) .and. x2(1) == -x(1), "onoff: logical by value, true")
  call onoff_cl(n, .false., x2)
  call check(all(x1 == x2), "onoff: logical by value, false")

  p1 = reshape([(real(i), i = 1, 3 * n)], shape(p1)); p2 = p1
  q1 = [(real(i), i = 1, 20)]; q2 = q1
  call asz(n, p1, q1)
  call asz_cl(n, p2, q2)
  call check(all(p1 == p2), "asz: assumed size x(n, *)")
  call check(all(q1 == q2), "asz: assumed size y(*), the whole array copied")
  call done()
end program
"""


def test_every_argument_kind(tmp_path, runtime):
    sources = translate(tmp_path, "kinds", KINDS)
    proc = compile_and_run(tmp_path, runtime, sources, KINDS_MAIN)
    assert_all_ok(proc, 17)

# }}}


def test_logical_arrays(tmp_path, runtime):
    """Logical arrays are 4-byte ints on the device (the Python glue does not
    take them yet, so this goes around the pipeline)."""
    from f2loopy.frontend import parse_fortran
    src = """
subroutine flip(n, a, b, nset)
  implicit none
  integer n, i, nset
  logical a(n), b(n)
  nset = 0
  do i = 1, n
    b(i) = .not. a(i)
    if (a(i)) nset = nset + 1
  end do
end subroutine
"""
    sources = glue_from_kernels(tmp_path, "flip", src, list(parse_fortran(src, "flip.f90")))
    main = """
program main
  use checks
  use flip_cl_mod
  implicit none
  logical :: a(6) = [.true., .false., .false., .true., .true., .false.], b1(6), b2(6)
  integer :: n1, n2
  call flip(6, a, b1, n1)
  call flip_cl(6, a, b2, n2)
  call check(all(b1 .eqv. b2) .and. n1 == n2 .and. n2 == 3, "logical arrays")
  call done()
end program
"""
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, main), 1)

# }}}


# {{{ transformed kernels: grids, fixed parameters, assumptions

PARALLEL = """
subroutine axpby(n, k, a, x, b, y)
  implicit none
  integer n, k, i
  real a, b, x(0:n-1), y(0:n-1)
  do i = 0, n - 1
    y(i) = a * x(i) + b * y(i) + k
  end do
end subroutine
"""

PARALLEL_MAIN = """
program main
  use checks
  use axpby_cl_mod
  implicit none
  integer, parameter :: n = 37
  real :: x(0:n-1), y1(0:n-1), y2(0:n-1)
  integer :: i, st
  x = [(sin(0.1 * i), i = 0, n - 1)]
  y1 = 1; y2 = 1
  call axpby(n, 3, 0.5, x, 1.0, y1)
  call axpby_cl(n, 3, 0.5, x, 1.0, y2, st)
  call check(st == F2L_OK, "status")
  call check(all(abs(y1 - y2) <= 1e-5 * max(1.0, abs(y1))), "split and tagged: same results")
  call axpby_cl(n, 4, 0.5, x, 1.0, y2, st)
  call check(st == F2L_ERROR_ARGUMENT .and. f2l_error_message() == "axpby_cl: argument 'k' " &
             // "was fixed to 3 when the kernel was translated; got 4", "fixed integer")
  call axpby_cl(n, 3, 0.5, x, 2.0, y2, st)
  call check(st == F2L_ERROR_ARGUMENT .and. index(f2l_error_message(), "argument 'b' was " &
             // "fixed to 1.0") > 0, "fixed real")
  call axpby_cl(0, 3, 0.5, x, 1.0, y2, st)
  call check(st == F2L_ERROR_ARGUMENT .and. index(f2l_error_message(), "axpby_cl: the " &
             // "kernel was translated assuming") == 1 .and. index(f2l_error_message(), &
             "(n = 0)") > 0, "assumption violated")
  call check(all(abs(y1 - y2) <= 1e-5 * max(1.0, abs(y1))), "nothing ran after the errors")
  call done()
end program
"""


def test_parallel_grid_fixed_parameters_and_assumption(tmp_path, runtime):
    from f2loopy.frontend import parse_fortran
    from f2loopy.transform import assume, fix_parameters, split_iname
    (knl,) = parse_fortran(PARALLEL, "axpby.f90")
    knl = fix_parameters(knl, k=3, b=1.0)
    knl = assume(knl, "n >= 1 and n <= 100")
    knl = split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    sources = glue_from_kernels(tmp_path, "axpby", PARALLEL, [knl])
    glue = sources[2].read_text()
    assert "[16_c_int64_t, 1_c_int64_t, 1_c_int64_t]" in glue   # the local size
    assert "if (b /= 1.0e0_c_float) call f2l_c%fail(" in glue
    proc = compile_and_run(tmp_path, runtime, sources, PARALLEL_MAIN)
    assert_all_ok(proc, 6)

# }}}


STENCIL = """
subroutine stencil(n, m, c, u, v)
  implicit none
  integer n, m, i, j
  real c, u(0:n+1, m), v(n, m)
  do j = 1, m
    do i = 1, n
      v(i, j) = c * (u(i-1, j) - 2 * u(i, j) + u(i+1, j))
    end do
  end do
end subroutine
"""


# {{{ device-resident arrays

RESIDENT_MAIN = """
program main
  use checks
  use stencil_cl_mod
  implicit none
  integer, parameter :: n = 50, m = 3, steps = 20
  real :: u1(0:n+1, m), v1(n, m), u2(0:n+1, m), v2(n, m)
  integer :: i, j, step, st
  u1 = reshape([((cos(0.2 * i) * j, i = 0, n + 1), j = 1, m)], shape(u1))
  u2 = u1
  do step = 1, steps
    call stencil(n, m, 0.1, u1, v1)
    u1(1:n, :) = u1(1:n, :) + v1
  end do

  call f2l_upload(u2)
  call f2l_upload(v2)
  call check(f2l_is_resident(u2) .and. f2l_is_resident(v2), "uploaded")
  do step = 1, steps
    call stencil_cl(n, m, 0.1, u2, v2)
    ! the update runs on the host here: download, update, upload again
    call f2l_download(v2)
    call f2l_download(u2)
    u2(1:n, :) = u2(1:n, :) + v2
    call f2l_upload(u2)
  end do
  call check(all(abs(u1 - u2) <= 1e-5 * max(1.0, abs(u1))), "resident: same results")

  ! kernels on resident arrays leave the host copies alone until a download,
  ! and read the device copy, not the host's
  v2 = -99
  u2 = 1e30
  call stencil_cl(n, m, 0.1, u2, v2)
  call check(all(v2 == -99), "resident: host copy untouched")
  call f2l_sync(st)
  call check(st == F2L_OK, "sync")
  call f2l_download(v2)
  call f2l_download(u2)
  call stencil(n, m, 0.1, u2, v1)
  call check(all(abs(v1 - v2) <= 1e-5 * max(1.0, abs(v1))), &
             "resident: the kernel used the device copies")

  ! a contiguous section that starts inside a resident array cannot be passed ...
  call stencil_cl(n, 2, 0.1, u2(:, 2:3), v2(:, 2:3), st)
  call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), "stencil_cl: argument " &
             // "'u' overlaps a device-resident array") == 1, "resident: a section is refused")
  ! ... one that starts where it starts uses the device copy's first elements
  call stencil_cl(n, 2, 0.1, u2(:, 1:2), v2(:, 1:2), st)
  call check(st == F2L_OK, "resident: leading section")

  call f2l_release(u2)
  call f2l_release(v2)
  call check(.not. f2l_is_resident(u2), "released")
  v1 = 0; v2 = 0
  call stencil(n, m, 0.1, u2, v1)
  call stencil_cl(n, m, 0.1, u2, v2)
  call check(all(abs(v1 - v2) <= 1e-5 * max(1.0, abs(v1))), "after release: transfer mode")
  call done()
end program
"""


def test_device_resident_mode(tmp_path, runtime):
    sources = translate(tmp_path, "stencil", STENCIL)
    proc = compile_and_run(tmp_path, runtime, sources, RESIDENT_MAIN)
    assert_all_ok(proc, 9)

# }}}


# {{{ errors reach the caller

SAXPY = """
subroutine saxpy(n, a, x, y)
  implicit none
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a * x(i) + y(i)
  end do
end subroutine
"""

ERRORS_MAIN = """
program main
  use checks
  use saxpy_cl_mod
  implicit none
  real :: x(10), y(10), small(4)
  integer :: st
  character(len=16) :: mode
  x = 1; y = 2
  call get_command_argument(1, mode)
  select case (mode)
  case ("size")
    call saxpy_cl(10, 2.0, small, y, st)
    call check(st == F2L_ERROR_ARGUMENT, "wrong size: status")
    call check(f2l_error_message() == "saxpy_cl: argument 'x' has 4 elements, but its " &
               // "declaration x(n) needs 10", "wrong size: message")
    call check(all(y == 2), "wrong size: nothing ran")
    call saxpy_cl(10, 2.0, x, y, st)
    call check(st == F2L_OK .and. all(y == 4) .and. f2l_error_message() == "", "then a good call")
  case ("status")
    call saxpy_cl(10, 2.0, x, y, st)
    print '(a, i0)', "status ", st
    print '(a)', "message " // f2l_error_message()
    call check(all(y == 2), "nothing ran")
  case ("nostatus")
    call saxpy_cl(10, 2.0, x, y)
    print '(a)', "not reached"
  end select
  call done()
end program
"""


@pytest.fixture(scope="module")
def saxpy_errors(tmp_path_factory, runtime):
    tmp = tmp_path_factory.mktemp("errors")
    sources = translate(tmp, "saxpy", SAXPY)
    (tmp / "main.f90").write_text(CHECKS + ERRORS_MAIN)
    return build_program(tmp, runtime, [*sources, tmp / "main.f90"])


def test_wrong_array_size_is_a_status(saxpy_errors):
    proc = run([saxpy_errors, "size"], check=False)
    assert_all_ok(proc, 4)


@pytest.mark.parametrize("env, message", [
    ({"F2LOOPY_DEVICE": "5"}, "message saxpy_cl: F2LOOPY_DEVICE=5: no OpenCL platform '5'"),
    ({"OCL_ICD_VENDORS": "/nonexistent", "F2LOOPY_DEVICE": "", "PYOPENCL_CTX": ""},
     "message saxpy_cl: no OpenCL platform found"),
])
def test_no_device_is_a_status(saxpy_errors, env, message):
    proc = run([saxpy_errors, "status"], env=device_env(**env), check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "status 1" in proc.stdout              # F2L_ERROR_NO_DEVICE
    assert message in proc.stdout


def test_without_status_an_error_stops_with_the_message(saxpy_errors):
    proc = run([saxpy_errors, "nostatus"], env=device_env(F2LOOPY_DEVICE="5"), check=False)
    assert proc.returncode == 1
    assert "not reached" not in proc.stdout
    assert "f2loopy: error: saxpy_cl: F2LOOPY_DEVICE=5: no OpenCL platform '5'" in proc.stderr
    assert "pass status= to handle errors" in proc.stderr


def test_build_failure_is_a_status(tmp_path, runtime):
    from f2loopy.codegen import generate_code, join_program
    from f2loopy.frontend import parse_fortran
    kernels = list(parse_fortran(SAXPY, "saxpy.f90"))
    program = join_program([generate_code(k) for k in kernels]) + "\n#error broken on purpose\n"
    sources = glue_from_kernels(tmp_path, "saxpy", SAXPY, kernels, program=program)
    (tmp_path / "main.f90").write_text(CHECKS + ERRORS_MAIN)
    exe = build_program(tmp_path, runtime, [*sources, tmp_path / "main.f90"])
    proc = run([exe, "status"], check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "status 3" in proc.stdout              # F2L_ERROR_BUILD
    assert "message saxpy_cl: building the OpenCL program for" in proc.stdout
    assert "broken on purpose" in proc.stdout     # the build log
    assert "CL_BUILD_PROGRAM_FAILURE" in proc.stdout

# }}}
