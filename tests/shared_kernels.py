"""Fortran kernels that tests of several folders use (a test module of another
folder is not importable when a test runs alone, so they live here), and the
paper's kernel translated once for the tests that only read the result."""

import functools
from pathlib import Path

PAPER = Path(__file__).resolve().parents[1] / "samples" / "numa_volume" / "volume.f90"


@functools.cache
def paper_level_8():
    """``translate_file`` of the paper's file (``-D Nq=8``, every checkpoint),
    once per test session: a translation costs one to two seconds of CPU and
    the tests of its counts and moves only read the result (do not change
    it).  The file has no tuning record, so *tuning* does not matter.  Its
    script runs in the sandbox: a test that calls this needs the
    ``sandbox_process`` fixture (whichever test comes first forks)."""
    from f2loopy.pipeline import translate_file
    from f2loopy.tuning_record import record_path
    assert not record_path(PAPER).exists()
    return translate_file(PAPER, defines={"Nq": 8})

#: a module whose procedures take OPTIONAL dummies (issue 27): present(), an
#: absent optional passed on, an inlined callee's own optional
OPTIONAL_SCALING = """module scaling
  implicit none
contains
  subroutine scale_add(n, x, y, factor, shift, count)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n)
    real(8), intent(inout) :: y(n)
    real(8), intent(in), optional :: factor
    real(8), intent(in), optional :: shift(n)
    integer, intent(out), optional :: count
    integer :: i
    real(8) :: f
    f = 1
    if (present(factor)) f = factor
    do i = 1, n
      y(i) = y(i) + f * x(i)
      if (present(shift)) y(i) = y(i) + shift(i)
    end do
    if (present(count)) count = n
    call bump(n, y)
    call bump(n, y, 10d0)
    call bump(n, y, factor)
  end subroutine
  subroutine bump(n, y, by)
    integer, intent(in) :: n
    real(8), intent(inout) :: y(n)
    real(8), intent(in), optional :: by
    if (present(by)) then
      y(1) = y(1) + by
    else
      y(n) = y(n) - 1
    end if
  end subroutine
end module
"""

#: a time loop over an integer(8) variable: split into launches, its index
#: reaches them as a 32-bit value while the kernel computes in 64 bits
INT8_TIME_LOOP = """
subroutine t8(ts, n, a, b)
  implicit none
  integer(8), intent(in) :: ts
  integer, intent(in) :: n
  integer(8), intent(inout) :: a(n), b(n)
  integer(8) :: t
  integer :: i
  do t = 1, ts
    do i = 1, n
      b(i) = a(i) + t * t * t * 1000
    end do
    do i = 1, n
      a(i) = b(n + 1 - i) / 2
    end do
  end do
end subroutine t8
"""

#: a lattice-Boltzmann style file: the driver is an unnamed main program,
#: the work is in subroutines before and after it, data in a common block
UNNAMED_MAIN = """\
c     relaxation step, driver first
      subroutine relax(om)
      implicit double precision(a-h, o-z)
      parameter(nx = 6, ny = 5, np = 3)
      common /pop/ f(0:np-1, 0:nx+1, 0:ny+1), fe(0:np-1, 0:nx+1, 0:ny+1)
      do j = 1, ny
         do i = 1, nx
            do k = 0, np - 1
               f(k, i, j) = (1 - om) * f(k, i, j) + om * fe(k, i, j)
            enddo
         enddo
      enddo
      end

      implicit double precision(a-h, o-z)
      parameter(nx = 6, ny = 5, np = 3)
      common /pop/ f(0:np-1, 0:nx+1, 0:ny+1), fe(0:np-1, 0:nx+1, 0:ny+1)
      read(5, *) om
      do istep = 1, 10
         call relax(om)
         call shift
      enddo
      end

      subroutine shift
      implicit double precision(a-h, o-z)
      parameter(nx = 6, ny = 5, np = 3)
      common /pop/ f(0:np-1, 0:nx+1, 0:ny+1), fe(0:np-1, 0:nx+1, 0:ny+1)
      do j = ny, 1, -1
         do i = 1, nx
            f(1, i, j) = f(1, i, j - 1)
         enddo
      enddo
      end
"""

#: loop variables that are a module variable and a dummy argument (issue 27)
LOOP_VARIABLES = """\
module grid_state
  implicit none
  integer, parameter :: nx = 7
  real :: eta(0:nx+1)
  integer :: j
end module grid_state

subroutine smooth
  use grid_state
  implicit none
  do j = 1, nx
    eta(j) = 0.5 * eta(j) + 0.25 * (eta(j - 1) + eta(j + 1))
  end do
end subroutine smooth

subroutine count_to(n, i, x)
  implicit none
  integer, intent(in) :: n
  integer, intent(inout) :: i
  real, intent(inout) :: x(n)
  do i = 1, n, 2
    x(i) = x(i) + i
    if (x(i) > 100.0) return
  end do
end subroutine count_to
"""


#: a heat-equation step over a derived type with an allocatable component (the
#: style of a 2-D heat-conduction mini-app): the start of the allocatable
#: components' tests in frontend/, glue/ and verify/
HEAT_EVOLVE = """module grid_types
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  type :: field
     integer :: nx, ny
     real(dp) :: dx
     real(dp), dimension(:,:), allocatable :: data
  end type field
end module grid_types

module solver
  use grid_types
  implicit none
contains
  subroutine evolve(curr, prev, a, dt)
    type(field), intent(inout) :: curr, prev
    real(dp) :: a, dt
    integer :: i, j, nx, ny
    nx = curr%nx
    ny = curr%ny
    do j = 1, ny
       do i = 1, nx
          curr%data(i, j) = prev%data(i, j) + a * dt * &
               (prev%data(i-1, j) - 2.0 * prev%data(i, j) + &
                prev%data(i+1, j)) / curr%dx**2
       end do
    end do
  end subroutine evolve
"""
