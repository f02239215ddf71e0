"""``f2loopy check`` of kernels over a module array of derived type (issue 27),
in the style of small molecular-dynamics codes: a velocity-Verlet step that
copies an element into a local of the type, and a pair-force loop with a
cutoff that passes elements to a procedure taking the type.  The harness
allocates the module's array with the extent it draws, copies each
component in and out element by element, and the Python glue gets a record
of component arrays; every written component is compared with gfortran's."""

from __future__ import annotations

import pytest

from check_util import check_text, needs_check

pytestmark = pytest.mark.differential

MD = """module md_system
  implicit none
  type atom
    real(8) :: mass
    real(8), dimension(3) :: x, v, f, f_new
    real(8) :: pe
  end type atom
  type(atom), dimension(:), allocatable :: atoms
  real(8) :: dt, rcut
  real(8), dimension(3) :: box
contains
  subroutine verlet_step()
    type(atom) :: a
    integer :: n, d
    do n = 1, size(atoms)
      a = atoms(n)
      do d = 1, 3
        atoms(n)%x(d) = a%x(d) + a%v(d) * dt + a%f(d) / a%mass * dt ** 2 / 2d0
        atoms(n)%v(d) = a%v(d) + (a%f(d) + a%f_new(d)) / (2d0 * a%mass) * dt
      end do
      atoms(n)%f = atoms(n)%f_new
      atoms(n)%f_new = 0
    end do
  end subroutine verlet_step

  subroutine pair_forces()
    integer :: i, j, s
    do i = 1, size(atoms)
      atoms(i)%pe = 0
    end do
    do i = 1, size(atoms)
      do j = 1, size(atoms)
        if (i == j) cycle
        do s = -1, 1
          call add_pair(atoms(i), atoms(j), [s, 0, 0])
        end do
      end do
    end do
  end subroutine pair_forces

  subroutine add_pair(ai, aj, image)
    type(atom), intent(inout) :: ai
    type(atom), intent(in) :: aj
    integer, dimension(3), intent(in) :: image
    real(8), dimension(3) :: d
    real(8) :: r
    integer :: k
    d = aj%x + box * image - ai%x
    r = sqrt(sum(d ** 2))
    if (r > rcut .or. r == 0) return
    ai%pe = ai%pe + 0.5d0 / r
    do k = 1, 3
      ai%f_new(k) = ai%f_new(k) - d(k) / r ** 3
    end do
  end subroutine add_pair
end module md_system
"""


@needs_check
def test_velocity_verlet_and_a_cutoff_force_loop_match_gfortran(tmp_path):
    _, res = check_text(tmp_path, MD, "--range", "rcut=0.5:3", name="md.f90")
    assert res.exit_code == 0, res.output
    out = res.output
    assert "verlet_step: atoms_n1=" in out.splitlines()[0]
    for component in ("md_system.atoms.x(3,", "md_system.atoms.v(3,", "md_system.atoms.f(3,",
                      "md_system.atoms.f_new(3,", "md_system.atoms.pe("):
        line = next(x for x in out.splitlines() if component in x)
        assert line.rstrip().endswith("ok"), out
    assert out.splitlines()[-1] == "ok: 8 output(s) of 3 kernel(s) match the original Fortran"


DEFAULTS = """module dm2
  implicit none
  type particle
    real(8) :: x(3) = 2d0
    real(8) :: mass = 1d0
  end type particle
contains
  subroutine s(a, b, y)
    type(particle), intent(inout) :: a
    type(particle), intent(out) :: b
    real(8), intent(out) :: y
    y = a%mass + b%mass
    call helper(y)
  end subroutine s
  subroutine helper(y)
    real(8), intent(inout) :: y
    type(particle) :: h
    y = y + h%x(2)
    h%x(2) = 5
  end subroutine helper
end module dm2
"""


@needs_check
def test_default_values_of_derived_type_locals_match_gfortran(tmp_path):
    # a local of the type, and an intent(out) dummy, start from the type's
    # default values on every entry (they were left undefined)
    _, res = check_text(tmp_path, DEFAULTS, name="d.f90")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == \
        "ok: 4 output(s) of 2 kernel(s) match the original Fortran"


PRIVATE = """module mdp
  implicit none
  private
  public :: drift
  type particle
    real(8) :: x(3), v(3)
  end type particle
  type(particle), allocatable :: p(:)
  type(particle) :: q(5)
contains
  subroutine drift(dt)
    real(8), intent(in) :: dt
    integer :: i
    do i = 1, size(p)
      p(i)%x = p(i)%x + dt * p(i)%v
    end do
    do i = 1, 5
      q(i)%v = q(i)%v - dt * q(i)%x
    end do
  end subroutine drift
end module mdp
"""


@needs_check
def test_private_module_arrays_of_derived_type_are_set_through_accessors(tmp_path):
    _, res = check_text(tmp_path, PRIVATE, name="p.f90")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert any(x.strip().startswith("mdp.p.x(3,") and x.endswith("ok") for x in lines)
    assert any(x.strip().startswith("mdp.q.v(3,5)") and x.endswith("ok") for x in lines)
