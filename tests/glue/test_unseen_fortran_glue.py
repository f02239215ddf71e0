"""The Fortran glue of kernels from projects nobody had tried (issue 27),
compiled with gfortran and compared with the original inside Fortran."""

import pytest

from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain, translate

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


CLIP = """module clipping
  use iso_c_binding
  implicit none
contains
  subroutine clip(n, x, mask, lo, any_clipped) bind(C, name="clip")
    integer(c_int), value :: n
    real(c_double), intent(inout) :: x(n)
    logical(c_bool), intent(in) :: mask(n)
    real(c_double), value :: lo
    logical(c_bool), intent(out) :: any_clipped
    integer :: i
    any_clipped = .false.
    do i = 1, n
      if (mask(i) .and. x(i) < lo) then
        x(i) = lo
        any_clipped = .true._c_bool
      end if
    end do
  end subroutine
end module
"""
CLIP_MAIN = """
program main
  use checks
  use iso_c_binding
  use clipping
  use clip_cl_mod
  implicit none
  integer, parameter :: n = 9
  real(c_double) :: x(n), y(n)
  logical(c_bool) :: mask(n), hit, hit_cl
  integer :: i
  do i = 1, n
    x(i) = i - 5
    mask(i) = mod(i, 3) /= 0
  end do
  y = x
  call clip(n, x, mask, -1.5d0, hit)
  call clip_cl(n, y, mask, -1.5d0, hit_cl)
  call check(all(x == y), "x")
  call check(logical(hit .eqv. hit_cl .and. hit), "any_clipped")
  call clip_cl(n, y, mask, -100d0, hit_cl)
  call check(logical(.not. hit_cl), "none clipped")
  call done()
end program
"""


def test_logical_c_bool_through_the_fortran_glue(tmp_path, runtime):
    sources = translate(tmp_path, "clip", CLIP)
    glue = sources[2].read_text()
    assert "logical(1), dimension(..), intent(in), contiguous, target :: mask" in glue
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, CLIP_MAIN), 3)


# a kernel that is an internal procedure of a main program: the program uses
# the glue and calls both (the glue takes the host variables after the arguments)
HEAT = """program heat
  use step_cl_mod
  implicit none
  integer, parameter :: n = 20
  real(8) :: u(n), w(n), alpha
  integer :: i
  alpha = 0.25d0
  do i = 1, n
    u(i) = sin(0.3d0 * i)
  end do
  w = u
  call step(u)
  call step_cl(w, alpha)
  if (maxval(abs(u - w)) < 1d-14) then
    print '(a)', 'ok step'
  else
    print '(a)', 'FAIL step'
  end if
contains
  subroutine step(v)
    real(8), intent(inout) :: v(n)
    integer :: i
    do i = 2, n - 1
      v(i) = v(i) + alpha * (v(i-1) - 2*v(i) + v(i+1))
    end do
  end subroutine
end program
"""


def test_internal_procedure_of_a_program_through_the_fortran_glue(tmp_path, runtime):
    from fortran_util import build_program, run
    original, c_glue, f_glue = translate(tmp_path, "heat", HEAT)
    text = f_glue.read_text()
    assert "  subroutine step_cl(v, alpha, status)" in text and "use heat" not in text
    assert "!   alpha: variable of program heat (host association), passed after the " \
        "arguments: read" in text
    exe = build_program(tmp_path, runtime, [c_glue, f_glue, original])
    proc = run([exe])
    assert proc.stdout.split() == ["ok", "step"], proc.stdout + proc.stderr


NMAT = """module dims
  implicit none
  integer :: nmat = 3
end module
subroutine mix(xs, out)
  use dims, only: nmat
  implicit none
  real(8), intent(in) :: xs(nmat)
  real(8), intent(out) :: out
  integer :: i
  out = 0
  do i = 1, nmat
    out = out + i * xs(i)
  end do
end subroutine
"""
NMAT_MAIN = """
program main
  use checks
  use dims
  use mix_cl_mod
  implicit none
  real(8) :: xs(5), a, b
  integer :: st
  xs = [1d0, 2d0, 3d0, 4d0, 5d0]
  nmat = 5
  call mix(xs, a)
  call mix_cl(xs, b)
  call check(a == b .and. a == 55d0, "sized by nmat = 5")
  nmat = 6
  call mix_cl(xs, b, status=st)
  call check(st /= F2L_OK, "xs too small for nmat = 6")
  call done()
end program
"""


def test_dummies_sized_by_module_variables_through_the_fortran_glue(tmp_path, runtime):
    sources = translate(tmp_path, "mix", NMAT)
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, NMAT_MAIN), 2)
