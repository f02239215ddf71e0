"""Module arrays of derived type in the glues (issue 27): ``glue.<module>.<var>``
is None while an allocatable one is unallocated; assigning a numpy structured
array (the Fortran layout of the type, fields named like the components) or
an object whose attributes are the component arrays (a structure of arrays,
component axes first: numpy or pyopencl, kept on the device) allocates it;
reading it returns what was assigned, with the kernel's writes.  The Fortran
glue uses the module's own variable, copying each component through a
contiguous buffer around the launch."""

from __future__ import annotations

import types

import numpy as np
import pytest

from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain, translate
from util import translate_and_load

MD = """module md_state
  implicit none
  type particle
    real(8) :: x(3), v(3), f(3)
    real(8) :: mass = 1d0
    real(8) :: pe
  end type particle
  type(particle), allocatable :: atoms(:)
  real(8) :: dt = 0.5d0
contains
  subroutine verlet_x(moved)
    integer, intent(out) :: moved
    integer :: i, k
    type(particle) :: a
    moved = -1
    if (.not. allocated(atoms)) return
    moved = 0
    do i = lbound(atoms, 1), ubound(atoms, 1)
      a = atoms(i)
      do k = 1, 3
        atoms(i)%x(k) = a%x(k) + a%v(k) * dt + a%f(k) / a%mass * dt ** 2 / 2
      end do
      moved = moved + 1
    end do
  end subroutine verlet_x
  subroutine clear_f()
    integer :: i
    do i = lbound(atoms, 1), ubound(atoms, 1)
      atoms(i)%f = 0
      atoms(i)%pe = 0
    end do
  end subroutine clear_f
end module md_state
"""

PARTICLE = np.dtype([("x", "f8", (3,)), ("v", "f8", (3,)), ("f", "f8", (3,)), ("mass", "f8"),
                     ("pe", "f8")])


def _atoms(n):
    a = np.zeros(n, dtype=PARTICLE)
    a["x"] = np.arange(3 * n).reshape(n, 3)
    a["v"] = 1.0 + np.arange(n)[:, None]
    a["f"] = -2.0
    a["mass"] = 4.0
    a["pe"] = 7.0
    return a


def _verlet_reference(a, dt=0.5):
    return a["x"] + a["v"] * dt + a["f"] / a["mass"][:, None] * dt ** 2 / 2


@pytest.mark.usefixtures("opencl_device")
def test_python_glue_takes_a_structured_array_or_a_record(tmp_path, cl_queue):
    glue, _ = translate_and_load(MD, tmp_path)
    assert glue.md_state.atoms is None
    assert glue.verlet_x(0, queue=cl_queue) == -1          # unallocated
    # a structured array in the Fortran layout: written fields updated in it
    a = _atoms(5)
    expected = _verlet_reference(a)
    glue.md_state.atoms = a
    assert glue.verlet_x(0, queue=cl_queue) == 5
    assert glue.md_state.atoms is a and np.array_equal(a["x"], expected)
    glue.clear_f(queue=cl_queue)
    assert (a["f"] == 0).all() and (a["pe"] == 0).all() and (a["mass"] == 4).all()
    # a structure of arrays (component axes first): used as it is
    b = _atoms(4)
    rec = types.SimpleNamespace(**{n: np.asfortranarray(np.moveaxis(b[n], 0, -1))
                                   for n in PARTICLE.names})
    glue.md_state.atoms = rec
    assert glue.verlet_x(0, queue=cl_queue) == 4
    assert np.array_equal(rec.x, _verlet_reference(b).T)
    glue.md_state.atoms = None                             # deallocated
    assert glue.verlet_x(0, queue=cl_queue) == -1
    for bad, message in [
            (types.SimpleNamespace(x=rec.x, v=rec.v, f=rec.f),
             "verlet_x: argument 'md_state.atoms' has no component 'md_state.atoms%mass' "
             "(pass an object with attributes named like the type's components)"),
            (types.SimpleNamespace(**{**vars(rec), "x": np.zeros((2, 4), order="F")}),
             "verlet_x: component x of md_state.atoms must be an array of shape (3,) followed "
             "by the 1 extent(s) of the array of derived type, got (2, 4)"),
            (np.zeros((2, 2), dtype=PARTICLE),
             "verlet_x: argument 'md_state.atoms' must have 1 dimension(s), got 2")]:
        glue.md_state.atoms = bad
        with pytest.raises(glue.KernelArgumentError) as e:
            glue.verlet_x(0, queue=cl_queue)
        assert str(e.value) == message


@pytest.mark.usefixtures("opencl_device")
def test_python_glue_keeps_the_components_on_the_device(tmp_path, cl_queue):
    import pyopencl.array as cla
    glue, _ = translate_and_load(MD, tmp_path)
    b = _atoms(3)
    host = {n: np.asfortranarray(np.moveaxis(b[n], 0, -1)) for n in PARTICLE.names}
    rec = types.SimpleNamespace(**{n: cla.to_device(cl_queue, v) for n, v in host.items()})
    glue.md_state.atoms = rec
    glue.clear_f(queue=cl_queue)
    assert glue.verlet_x(0, queue=cl_queue) == 3
    b["f"] = 0
    assert np.array_equal(rec.x.get(), _verlet_reference(b).T)
    assert (rec.f.get() == 0).all()


@pytest.mark.usefixtures("opencl_device")
def test_a_fixed_size_module_array_starts_from_the_default_values(tmp_path, cl_queue):
    src = MD.replace("type(particle), allocatable :: atoms(:)", "type(particle) :: atoms(6)") \
        .replace("    if (.not. allocated(atoms)) return\n", "")
    glue, _ = translate_and_load(src, tmp_path)
    atoms = glue.md_state.atoms
    assert atoms.mass.shape == (6,) and (atoms.mass == 1).all() and atoms.x.shape == (3, 6)
    atoms.v[...] = 2.0
    assert glue.verlet_x(0, queue=cl_queue) == 6
    assert (atoms.x == 1.0).all()


FORTRAN_MAIN = """
program main
  use checks
  use md_state
  use verlet_x_cl_mod
  use clear_f_cl_mod
  implicit none
  type(particle), allocatable :: ref(:), inputs(:)
  integer :: c1, c2, i
  call verlet_x(c1)
  call verlet_x_cl(c2)
  call check(c1 == -1 .and. c2 == -1, "unallocated")
  allocate(atoms(-1:3))
  do i = -1, 3
    atoms(i)%x = [1d0 * i, 2d0, 3d0]
    atoms(i)%v = 0.5d0 * i
    atoms(i)%f = [1d0, -1d0, 0.25d0]
    atoms(i)%mass = 2d0 + i
    atoms(i)%pe = 3d0
  end do
  inputs = atoms
  call verlet_x(c1)
  ref = atoms
  atoms = inputs
  call verlet_x_cl(c2)
  call check(c1 == 5 .and. c2 == 5, "count")
  do i = -1, 3
    call check(all(atoms(i)%x == ref(i)%x) .and. atoms(i)%mass == ref(i)%mass, "element")
  end do
  call check(lbound(atoms, 1) == -1, "lower bound kept")
  call clear_f_cl()
  call check(all(atoms(0)%f == 0) .and. atoms(3)%pe == 0 .and. atoms(2)%mass == 4, "clear_f")
  call done()
end program
"""


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


@needs_toolchain
@pytest.mark.opencl
@pytest.mark.gfortran
def test_module_array_of_derived_type_through_the_fortran_glue(tmp_path, runtime):
    sources = translate(tmp_path, "md_state", MD)
    glue = sources[2].read_text()
    assert "f2l_c_atoms_x(:, f2l_i) = f2l_mv_md_state_atoms(f2l_i)%x" in glue
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, FORTRAN_MAIN), 9)
