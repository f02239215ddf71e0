"""Module pointer arrays that the kernels only index (issue 27, cause 8): a
molecular-dynamics style module keeps its coordinates in ``real(8), pointer
:: rx(:)``; they are treated as allocatable module arrays (None in the
Python glue until an array is assigned, ``associated()`` sees it).  Pointer
dummies, pointer locals and the target form of ``associated`` are located
errors that say what to write instead."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.ir.roles import Allocation, ModuleVariable
from util import translate_and_load

PARTICLES = """module particles
  implicit none
  integer :: natoms
  real(8) :: dt = 0.5d0, ekin
  real(8), pointer, dimension(:) :: rx => null(), vx => null()
end module particles
subroutine advance
  use particles
  implicit none
  integer :: i
  ekin = -1
  if (.not. associated(vx)) return
  ekin = 0
  do i = 1, natoms
    rx(i) = rx(i) + dt * vx(i)
    ekin = ekin + 0.5d0 * vx(i) * vx(i)
  end do
end subroutine advance
"""


def test_module_pointer_arrays_are_allocatable_like():
    k = parse_fortran(PARTICLES, "p.f90")["advance"]
    roles = {a.name: a.role for a in k.args}
    assert isinstance(roles["rx"], ModuleVariable) and roles["rx"].allocatable \
        and roles["rx"].pointer
    assert isinstance(roles["vx_allocated"], Allocation) \
        and roles["vx_allocated"].what == "allocated"
    assert [str(e) for e in next(a for a in k.args if a.name == "rx").shape] == ["rx_n1"]


@pytest.mark.parametrize("source, message", [
    ("subroutine s(q)\n  real, pointer :: q(:)\n  q(1) = 0\nend subroutine\n",
     "f.f90:2:20: error: pointer dummy argument 'q' is not supported (a kernel cannot change "
     "what it points to): declare it as an assumed-shape array 'q(:)' and pass the array it "
     "points to"),
    ("subroutine s(u)\n  real, target :: u(4, 4)\n  real, pointer :: col(:)\n"
     "  col => u(:, 2)\nend subroutine\n",
     "f.f90:3:20: error: pointer local variable 'col' is not supported (pointer assignment is "
     "not translated): use the array it would point to directly (e.g. u(:, k) where 'col => "
     "u(:, k)'), or pass that array as an argument"),
    ("module m\n  real, pointer :: p(:)\ncontains\n  subroutine s(f)\n    logical :: f\n"
     "    f = allocated(p)\n  end subroutine\nend module\n",
     "f.f90:6:9: error: 'p' is a pointer: ask associated(p), not allocated"),
    ("module m\n  real, pointer :: p(:)\n  real, target :: t(3)\ncontains\n"
     "  subroutine s(f)\n    logical :: f\n    f = associated(p, t)\n  end subroutine\n"
     "end module\n",
     "f.f90:7:9: error: intrinsic 'associated' takes 1 argument here (the target argument of "
     "'associated' is not supported)"),
    ("module m\n  real, pointer :: p\nend module\nsubroutine s(x)\n  use m\n  x = p\n"
     "end subroutine\n",
     "f.f90:2:20: error: pointer scalar 'p' is not supported (only pointer arrays of a module "
     "are: use a plain module variable)"),
    # (before: an internal error)
    ("module m\n  real, allocatable :: a\nend module\nsubroutine s(x)\n  use m\n  x = a\n"
     "end subroutine\n",
     "f.f90:2:24: error: allocatable scalar 'a' is not supported (only allocatable arrays of "
     "a module are: use a plain module variable)"),
    ("module m\n  real, pointer :: p(4)\nend module\nsubroutine s(x)\n  use m\n  x = p(1)\n"
     "end subroutine\n",
     "f.f90:2:20: error: pointer array 'p' must have a deferred shape (p(:))"),
])
def test_what_pointers_cannot_be_is_a_located_error(source, message):
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "f.f90")
    assert e.value.format().splitlines()[0] == message


def test_python_glue_takes_the_array_a_module_pointer_points_to(tmp_path, cl_queue):
    glue, _ = translate_and_load(PARTICLES, tmp_path)
    assert glue.particles.rx is None and glue.particles.vx is None
    glue.advance(queue=cl_queue)
    assert glue.particles.ekin == -1           # not associated: the early return
    rx, vx = np.linspace(0, 1, 6), np.arange(6.0)
    glue.particles.rx, glue.particles.vx, glue.particles.natoms = rx.copy(), vx, 6
    glue.advance(queue=cl_queue)
    assert np.array_equal(glue.particles.rx, rx + 0.5 * vx)
    assert glue.particles.ekin == pytest.approx(0.5 * (vx * vx).sum(), rel=1e-15)
