"""The generated Fortran glue (NAME_cl.f90 + NAME_cl.c), compiled with gfortran.

Each test program calls the original subroutine (compiled by gfortran from
the same source) and its ``_cl`` version (OpenCL on PoCL) on the same inputs
and compares the results inside Fortran: every argument kind (scalars by
value of each type, arrays of each type and rank, lower bounds, assumed size,
scalar outputs, fixed parameters), the device-resident mode, layout changes,
and errors reaching the caller as a status and a message.
"""

from pathlib import Path

import pytest

from fortran_util import build_program, build_runtime, device_env, needs_toolchain, run

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


def translate(tmp: Path, stem: str, source: str) -> list[Path]:
    """Translate *source* as tmp/STEM.f90 with the pipeline; return the
    sources to compile (original, glue C, glue Fortran)."""
    from f2loopy.pipeline import translate_text, write_outputs
    path = tmp / f"{stem}.f90"
    path.write_text(source)
    write_outputs(translate_text(source, path).outputs)
    return [path, tmp / f"{stem}_cl.c", tmp / f"{stem}_cl.f90"]


def glue_from_kernels(tmp: Path, stem: str, source: str, kernels, program=None) -> list[Path]:
    """Fortran glue for (transformed) IR *kernels*, bypassing the pipeline."""
    from f2loopy.codegen import file_header, generate_code, join_program
    from f2loopy.glue.fortran import generate_fortran_glue
    path = tmp / f"{stem}.f90"
    path.write_text(source)
    generated = [generate_code(k) for k in kernels]
    if program is None:
        program = file_header(path.name) + "\n\n" + join_program(generated)
    f90, c = generate_fortran_glue(generated, program, stem, path.name)
    (tmp / f"{stem}_cl.f90").write_text(f90)
    (tmp / f"{stem}_cl.c").write_text(c)
    return [path, tmp / f"{stem}_cl.c", tmp / f"{stem}_cl.f90"]


def compile_and_run(tmp, runtime, sources, main: str, args=(), env=None, expect_rc=0):
    (tmp / "main.f90").write_text(CHECKS + main)
    exe = build_program(tmp, runtime, [*sources, tmp / "main.f90"])
    proc = run([exe, *args], env=env, check=False)
    assert proc.returncode == expect_rc, proc.stdout + proc.stderr
    return proc


# helpers every test program has: check() counts failures, close() compares reals
CHECKS = """
module checks
  implicit none
  integer :: failures = 0
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      print '(a)', "ok   " // what
    else
      failures = failures + 1
      print '(a)', "FAIL " // what
    end if
  end subroutine
  subroutine done()
    print '(i0, a)', failures, " failures"
    if (failures /= 0) stop 2
  end subroutine
end module checks
"""


def assert_all_ok(proc, count):
    lines = proc.stdout.splitlines()
    assert "0 failures" in lines, proc.stdout + proc.stderr
    assert sum(line.startswith("ok ") for line in lines) == count, proc.stdout


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


# {{{ layouts changed by transformations

def _with_layout(kernel, name, axis_tags):
    """*kernel* with array *name* stored with *axis_tags*, remembering the
    caller's layout, as tag_array_axes does."""
    from f2loopy.ir.kernel import ArrayLayout
    from f2loopy.ir.tags import parse_axis_tags
    args = []
    for a in kernel.args:
        if a.name == name:
            a = a.copy(axis_tags=parse_axis_tags(axis_tags, a.ndim),
                       fortran_layout=ArrayLayout(shape=a.shape, lower_bounds=a.lower_bounds))
        args.append(a)
    return kernel.copy(args=tuple(args))


TRANSPOSE = """
subroutine colsum(n, m, a, s, b)
  implicit none
  integer n, m, i, j
  double precision a(n, 0:m-1), s(m), b(2, n, m)
  do j = 0, m - 1
    s(j + 1) = 0
    do i = 1, n
      s(j + 1) = s(j + 1) + a(i, j) * i
      b(1, i, j + 1) = a(i, j) + b(2, i, j + 1)
    end do
  end do
end subroutine
"""

TRANSPOSE_MAIN = """
program main
  use checks
  use colsum_cl_mod
  implicit none
  integer, parameter :: n = 5, m = 3
  double precision :: a(n, 0:m-1), s1(m), s2(m), b1(2, n, m), b2(2, n, m)
  integer :: i, st
  a = reshape([(dble(i * i), i = 1, n * m)], shape(a))
  b1 = reshape([(dble(-i), i = 1, 2 * n * m)], shape(b1)); b2 = b1
  call colsum(n, m, a, s1, b1)
  call colsum_cl(n, m, a, s2, b2, st)
  call check(st == F2L_OK, "status")
  call check(all(s1 == s2), "a read in C order")
  call check(all(b1 == b2), "b written in a permuted order, converted back")
  call f2l_upload(b2)
  call colsum_cl(n, m, a, s2, b2, st)
  call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), "colsum_cl: argument " &
             // "'b' is device-resident, but the kernel stores it in another layout") == 1, &
             "a converted array cannot be device-resident")
  call done()
end program
"""


def test_permuted_layouts_are_converted_on_the_host(tmp_path, runtime):
    from f2loopy.frontend import parse_fortran
    (knl,) = parse_fortran(TRANSPOSE, "colsum.f90")
    knl = _with_layout(knl, "a", "c")
    knl = _with_layout(knl, "b", "N1,N0,N2")
    sources = glue_from_kernels(tmp_path, "colsum", TRANSPOSE, [knl])
    assert "call f2l_c%array_mapped(" in sources[2].read_text()
    proc = compile_and_run(tmp_path, runtime, sources, TRANSPOSE_MAIN)
    assert_all_ok(proc, 4)


SPLIT = """
subroutine axpy8(n, a, x, y)
  implicit none
  integer n, i, j
  real a, x(8, n), y(0:7, n)
  do j = 1, n
    do i = 1, 8
      y(i - 1, j) = a * x(i, j) + y(i - 1, j) * j
    end do
  end do
end subroutine
"""

SPLIT_MAIN = """
program main
  use checks
  use axpy8_cl_mod
  implicit none
  integer, parameter :: n = 7
  real :: x(8, n), y1(0:7, n), y2(0:7, n)
  integer :: st, i
  x = reshape([(real(i), i = 1, 8 * n)], shape(x))
  y1 = reshape([(real(3 * i - 100), i = 1, 8 * n)], shape(y1)); y2 = y1
  call axpy8(n, 2.0, x, y1)
  call axpy8_cl(n, 2.0, x, y2, st)
  call check(st == F2L_OK, "status")
  call check(all(y1 == y2), "split, vector and permuted axes converted both ways")
  call done()
end program
"""


def test_split_and_vector_layouts_are_converted_on_the_host(tmp_path, runtime):
    """split_array_axis + vec tags (the paper's level 2 on q and rhsq): the
    glue maps each caller element to its place in the kernel's layout."""
    from f2loopy.frontend import parse_fortran
    from f2loopy.transform import split_array_axis, tag_array_axes
    (knl,) = parse_fortran(SPLIT, "axpy8.f90")
    knl = split_array_axis(knl, "x", 0, count=4, order="F")      # x(4, 2, n)
    knl = tag_array_axes(knl, "x", "vec,N1,N0")                  # n-axis before the pair
    knl = split_array_axis(knl, "y", 0, count=2, order="C")      # y(4, 2, n)
    knl = tag_array_axes(knl, "y", "N0,vec,N1")
    sources = glue_from_kernels(tmp_path, "axpy8", SPLIT, [knl])
    assert "call f2l_c%array_mapped(" in sources[2].read_text()
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, SPLIT_MAIN), 2)


def test_other_layout_changes_are_refused_precisely(tmp_path, runtime):
    import pymbolic.primitives as p
    from f2loopy.frontend import parse_fortran
    from f2loopy.glue.fortran import _layout_conversion
    from f2loopy.ir.kernel import ArrayLayout
    (knl,) = parse_fortran(TRANSPOSE, "colsum.f90")
    a = knl.arg_dict["a"]
    # a shape change that no recorded split explains
    changed = a.copy(shape=(p.Variable("n"), 2, p.Quotient(p.Sum((p.Variable("m"), 1)), 2)),
                     lower_bounds=(1, 1, 1),
                     fortran_layout=ArrayLayout(shape=a.shape, lower_bounds=a.lower_bounds))
    msg = _layout_conversion(changed)
    assert msg == ("the kernel uses it as a(n, 2, (m + 1) / 2) but the caller passes "
                   "a(n, 0:m - 1); the Fortran glue converts only reorderings, splits and "
                   "vector axes, not this layout change")
    # the glue compiles and answers with the message of a separate-arrays axis
    sep = _with_layout(knl, "a", "sep,N0")
    sources = glue_from_kernels(tmp_path, "colsum", TRANSPOSE, [sep])
    main = """
program main
  use checks
  use colsum_cl_mod
  implicit none
  double precision :: a(5, 0:2), s(3), b(2, 5, 3)
  integer :: st
  a = 1; b = 0
  call colsum_cl(5, 3, a, s, b, st)
  call check(st == F2L_ERROR_ARGUMENT, "status")
  print '(a)', f2l_error_message()
  call done()
end program
"""
    proc = compile_and_run(tmp_path, runtime, sources, main)
    assert_all_ok(proc, 1)
    assert ("colsum_cl: argument 'a': the kernel stores it with axis tags sep, N0; the Fortran "
            "glue converts reorderings, splits and vector axes of a(n, 0:m - 1) only"
            ) in proc.stdout

# }}}


def test_arguments_named_like_what_the_glue_uses(tmp_path, runtime):
    """Arguments may be called size, rank, status...: keyword calls keep working."""
    src = """
subroutine clash(size, rank, status, x)
  implicit none
  integer size, rank, status, i
  real x(size)
  status = 0
  do i = 1, size
    x(i) = x(i) * rank
    status = status + 1
  end do
end subroutine
"""
    sources = translate(tmp_path, "clash", src)
    glue = sources[2].read_text()
    assert "subroutine clash_cl(size, rank, status, x, f2l_status)" in glue
    main = """
program main
  use checks
  use clash_cl_mod
  implicit none
  real :: x(5) = [1, 2, 3, 4, 5]
  integer :: count, st
  call clash_cl(x=x, rank=3, size=4, status=count, f2l_status=st)
  call check(st == F2L_OK .and. count == 4 .and. all(x == [3, 6, 9, 12, 5]), "keywords")
  call clash_cl(6, 3, count, x, st)
  call check(st == F2L_ERROR_ARGUMENT .and. f2l_error_message() == "clash_cl: argument 'x' " &
             // "has 5 elements, but its declaration x(size) needs 6", "message")
  call done()
end program
"""
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, main), 2)


# {{{ the paper's kernel through its own script

PAPER_MAIN = """
program main
  use checks
  use refFluxR_refFluxS_cl_mod
  implicit none
  integer, parameter :: nq = 4, ne = 3
  real :: geo(nq, nq, nq, 11, ne), d(nq, nq), q(nq, nq, nq, 8, ne)
  real :: rhs1(nq, nq, nq, 8, ne), rhs2(nq, nq, nq, 8, ne)
  integer :: st
  call random_seed(put=[(17, st = 1, 64)])
  call random_number(geo); call random_number(d); call random_number(q)
  q(:, :, :, 4:5, :) = q(:, :, :, 4:5, :) + 1     ! density and theta away from 0
  call random_number(rhs1); rhs2 = rhs1
  call refFluxR(ne, nq, geo, d, q, rhs1, 1.0, 1.4, 1.0)
  call refFluxS(ne, nq, geo, d, q, rhs1, 1.0, 1.4, 1.0)
  call refFluxR_refFluxS_cl(ne, nq, geo, d, q, rhs2, 1.0, 1.4, 1.0, st)
  call check(st == F2L_OK, "status")
  call check(all(abs(rhs1 - rhs2) <= 1e-4 * max(1.0, abs(rhs1))), "fused, fixed, tagged: same")
  call refFluxR_refFluxS_cl(ne, nq, geo, d, q, rhs2, 1.0, 1.5, 1.0, st)
  call check(st == F2L_ERROR_ARGUMENT .and. f2l_error_message() == "refFluxR_refFluxS_cl: " &
             // "argument 'p_Gamma' was fixed to 1.4 when the kernel was translated; got 1.5", &
             "fixed gamma")
  call done()
end program
"""


def test_paper_kernel_with_its_script(tmp_path, runtime):
    """samples/numa_volume/volume.f90: the paper's two subroutines through its
    whole !$loopy script (level 8: fused, fixed, split and vector layouts,
    prefetches, buffers), called from Fortran."""
    from f2loopy.pipeline import translate_text, write_outputs
    src = (Path(__file__).resolve().parent.parent / "samples" / "numa_volume"
           / "volume.f90")
    path = tmp_path / "volume.f90"
    path.write_text(src.read_text())
    write_outputs(translate_text(path.read_text(), path, defines={"Nq": 4}).outputs)
    sources = [path, tmp_path / "volume_cl.c", tmp_path / "volume_cl.f90"]
    proc = compile_and_run(tmp_path, runtime, sources, PAPER_MAIN)
    assert_all_ok(proc, 3)

# }}}


def test_global_temporaries_get_device_memory_from_the_runtime(tmp_path, runtime):
    """A temporary in global memory is scratch space the runtime allocates for
    each call (f2l_launch_scratch); results match the plain Fortran."""
    import f2loopy
    from f2loopy.frontend import parse_fortran
    src = """
subroutine phases(n, a, b)
  implicit none
  integer n, i
  real a(n), b(n), t(64)
  do i = 1, 64
    t(i) = a(i) * a(i)
  end do
  do i = 2, 63
    b(i) = t(i - 1) + t(i) + t(i + 1)
  end do
end subroutine
"""
    (knl,) = parse_fortran(src, "phases.f90")
    knl = f2loopy.set_temporary_address_space(knl, "t", "global")
    loops = sorted({i for insn in knl.instructions for i in insn.within_inames})
    knl = f2loopy.tag_inames(knl, {i: "l.0" for i in loops})
    sources = glue_from_kernels(tmp_path, "phases", src, [knl])
    assert "call f2l_c%scratch(" in sources[2].read_text()
    main = """
program main
  use checks
  use phases_cl_mod
  implicit none
  real :: a(64), b1(64), b2(64)
  integer :: i, st
  a = [(real(i) / 7, i = 1, 64)]
  b1 = -1; b2 = -1
  call phases(64, a, b1)
  call phases_cl(64, a, b2, st)
  call check(st == F2L_OK, "status")
  call check(all(abs(b1 - b2) <= 1e-6 * abs(b1)), "same as Fortran")
  call done()
end program
"""
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, main), 2)


# {{{ assumed-shape arrays

ASSUMED = """
module field_ops
  implicit none
contains
  subroutine relax(u, f, w, total)
    real(8), intent(inout) :: u(0:, :)
    real(8), intent(in) :: f(:, :)
    real(8), intent(in) :: w
    real(8), intent(out) :: total
    integer :: i, j
    total = 0
    do j = 1, size(u, 2)
      do i = 1, ubound(u, 1) - 1
        u(i, j) = (1 - w) * u(i, j) + w * (u(i - 1, j) + u(i + 1, j) + f(i, j)) / 2
        total = total + u(i, j)
      end do
    end do
  end subroutine
end module
"""

ASSUMED_MAIN = """
program main
  use checks
  use field_ops
  use relax_cl_mod
  implicit none
  real(8) :: u1(0:6, 3), u2(0:6, 3), f(5, 3), big(12, 3), t1, t2
  real(8) :: v(8)
  integer :: st
  call random_number(u1); u2 = u1; call random_number(f)
  call relax(u1, f, 0.7d0, t1)
  call relax_cl(u2, f, 0.7d0, t2, st)
  call check(st == F2L_OK, "status")
  call check(all(abs(u1 - u2) < 1d-12) .and. abs(t1 - t2) < 1d-10, "whole arrays")
  ! a non-contiguous section: the compiler passes a contiguous copy
  big = 0; big(1:10:2, :) = f
  u2 = u1
  call relax(u1, big(1:10:2, :), 0.5d0, t1)
  call relax_cl(u2, big(1:10:2, :), 0.5d0, t2, st)
  call check(st == F2L_OK .and. all(abs(u1 - u2) < 1d-12) .and. abs(t1 - t2) < 1d-10, &
             "strided section")
  call relax_cl(u2, v, 0.5d0, t2, st)
  call check(st == F2L_ERROR_ARGUMENT .and. f2l_error_message() == "relax_cl: argument 'f' " &
             // "must have 2 dimension(s), got 1", "rank")
  call done()
end program
"""


def test_assumed_shape_arrays_take_their_extents_from_the_caller(tmp_path, runtime):
    sources = translate(tmp_path, "relax", ASSUMED)
    glue = sources[2].read_text()
    assert "subroutine relax_cl(u, f, w, total, status)" in glue
    assert "! u(0:, :)" in glue
    proc = compile_and_run(tmp_path, runtime, sources, ASSUMED_MAIN)
    assert_all_ok(proc, 4)

# }}}
