"""Allocatable and pointer array components of derived types (issue 27): a
derived-type dummy's allocatable component is a kernel argument with its
run-time extents and lower bounds (role Component with ``allocatable``, its
:class:`~f2loopy.ir.roles.Allocation` arguments), ``allocated(x%comp)`` works;
a module variable of derived type (also a module pointer to one) with such
components; what cannot be supported is a located error."""

from __future__ import annotations

import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.ir.roles import Allocation, Component, ModuleVariable
from shared_kernels import HEAT_EVOLVE

#: the 2-D heat equation's shape: a field type with an allocatable array
#: (allocated with a halo, lower bounds 0), kernels taking two fields
HEAT = HEAT_EVOLVE + """
  function average(f0)
    real(dp) :: average
    type(field) :: f0
    average = -1
    if (allocated(f0%data)) then
      average = sum(f0%data(1:f0%nx, 1:f0%ny)) / (f0%nx * f0%ny)
    end if
  end function average

  subroutine halo(f)
    type(field), intent(inout) :: f
    call fill_edges(f, 0.0_dp)
  end subroutine halo

  subroutine fill_edges(g, v)
    type(field), intent(inout) :: g
    real(dp), intent(in) :: v
    integer :: j
    do j = lbound(g%data, 2), ubound(g%data, 2)
      g%data(lbound(g%data, 1), j) = v
      g%data(ubound(g%data, 1), j) = v
    end do
  end subroutine fill_edges
end module solver
"""

#: a grid type of pointer components (the shallow-water model's shape), a
#: module variable of it and a module pointer to one
GRIDS = """module grids
  implicit none
  type :: grid_t
    real(8), dimension(:,:), pointer :: h => null()
    integer(2), dimension(:,:), pointer :: ocean => null()
  end type
  type :: state_t
    integer :: n
    real(8), allocatable :: u(:)
  end type
  type(grid_t) :: ugrid
  type(grid_t), pointer :: vgrid
  type(state_t) :: st
end module
module mix
  use grids
  implicit none
  real(8), allocatable :: out(:,:)
contains
  subroutine compute(nx, ny)
    integer, intent(in) :: nx, ny
    integer :: i, j
    do j = 1, ny
      do i = 1, nx
        if (ugrid%ocean(i, j) .eq. 1_2) out(i, j) = 2 * ugrid%h(i, j) + vgrid%h(i, j)
      end do
    end do
  end subroutine
  subroutine scale_u(f)
    real(8), intent(in) :: f
    integer :: i
    if (.not. allocated(st%u)) return
    if (.not. associated(vgrid%h)) return
    do i = 1, st%n
      st%u(i) = f * st%u(i)
    end do
  end subroutine
end module
"""


def test_an_allocatable_component_takes_its_bounds_at_run_time():
    tu = parse_fortran(HEAT, "heat.f90")
    k = tu["evolve"]
    data = k.arg_dict["curr_data"]
    assert data.role == Component(path=("curr", "data"), type_module="grid_types",
                                  type_name="field", type_rank=0, allocatable=True)
    assert tuple(map(str, data.shape)) == ("curr_data_n1", "curr_data_n2")
    assert tuple(map(str, data.lower_bounds)) == ("curr_data_lb1", "curr_data_lb2")
    assert [(a.name, a.role) for a in k.args if isinstance(a.role, Allocation)
            and a.role.array == "prev_data"] == [
        ("prev_data_n1", Allocation("prev_data", "extent", 0)),
        ("prev_data_n2", Allocation("prev_data", "extent", 1)),
        ("prev_data_lb1", Allocation("prev_data", "lbound", 0)),
        ("prev_data_lb2", Allocation("prev_data", "lbound", 1))]
    # the caller passes curr and prev (their components); the dope is hidden
    assert [a.name for a in k.fortran_args] == [
        "curr_nx", "curr_ny", "curr_dx", "curr_data", "prev_data", "a", "dt"]
    # allocated(): a flag
    f = tu["average"]
    assert [a.name for a in f.args if isinstance(a.role, Allocation)] == [
        "f0_data_n1", "f0_data_n2", "f0_data_lb1", "f0_data_lb2", "f0_data_allocated"]
    from f2loopy.ir.serialize import decode_kernel, encode_kernel
    again = decode_kernel(encode_kernel(k))
    assert again.arg_dict["curr_data"].role.allocatable
    assert again.arg_dict["curr_data"].role == data.role


def test_an_inlined_procedure_sees_the_callers_allocation():
    k = parse_fortran(HEAT, "heat.f90")["halo"]
    text = str(k)
    # lbound/ubound of g%data are those of f%data, not an assumed shape's
    assert "f_data_lb2" in text and "f_data_n1" in text
    assert "f_data" in [a.name for a in k.fortran_args]
    assert "f_data_n1" not in [a.name for a in k.fortran_args]


def test_allocatable_components_in_the_generated_code():
    from f2loopy.codegen import generate_code
    code = generate_code(parse_fortran(HEAT, "heat.f90")["evolve"]).source
    assert "__global double *curr_data, int const curr_data_n1, int const curr_data_n2, " \
        "int const curr_data_lb1, int const curr_data_lb2, " in code
    assert "prev_data[i - prev_data_lb1 - 1 + prev_data_n1 * (j - prev_data_lb2)]" in code


def test_pointer_and_allocatable_components_of_module_variables():
    tu = parse_fortran(GRIDS, "grids.f90")
    k = tu["compute"]
    h = k.arg_dict["ugrid_h"]
    assert h.role == ModuleVariable(module="grids", path=("ugrid", "h"), allocatable=True)
    assert h.role.pointer and not h.role.pointer_root
    assert k.arg_dict["vgrid_h"].role.pointer_root
    assert [a.name for a in k.args if isinstance(a.role, Allocation)
            and a.role.array == "ugrid_ocean"] == [
        "ugrid_ocean_n1", "ugrid_ocean_n2", "ugrid_ocean_lb1", "ugrid_ocean_lb2"]
    s = tu["scale_u"]
    assert [a.name for a in s.args] == [
        "f", "st_u", "st_u_n1", "st_u_lb1", "st_u_allocated", "st_n",
        "vgrid_h", "vgrid_h_n1", "vgrid_h_n2", "vgrid_h_lb1", "vgrid_h_lb2",
        "vgrid_h_allocated"]


def _type(components: str, body: str = "    x = 1", dummy: str = "type(t) :: v") -> str:
    return (f"module m\n  type t\n{components}\n  end type\ncontains\n"
            f"  subroutine s(v, x)\n    {dummy}\n    real :: x\n{body}\n"
            "  end subroutine\nend module\n")


@pytest.mark.parametrize("source, message", [
    # (raised where a kernel uses the component: the type's others stay usable)
    (_type("    real, allocatable :: a", "    x = v%a"),
     "f.f90:3:26: error: allocatable scalar component 'a' is not supported (only allocatable "
     "arrays are: use a plain component)"),
    (_type("    real :: q\n  end type\n  type t2\n    type(t), allocatable :: inner(:)",
           "    x = size(v%inner)", dummy="type(t2) :: v").replace("type t\n", "type t\n", 1),
     "f.f90:6:29: error: allocatable component 'inner' of derived type is not supported "
     "(only allocatable arrays of intrinsic types are: make the inner type's components the "
     "arrays)"),
    (_type("    real, pointer :: p(3)"),
     "f.f90:3:22: error: pointer component 'p' must have a deferred shape (p(:))"),
    (_type("    real, allocatable :: a(:)", "    x = v(1)%a(1)", "type(t) :: v(3)"),
     "f.f90:7:16: error: allocatable component 'a' of an array of derived type ('v') is "
     "not supported (only of a scalar of the type: pass the arrays themselves)"),
    (_type("    real, allocatable :: a(:)", "    x = v%a(1)",
           "type(t), intent(out) :: v"),
     "f.f90:7:29: error: intent(out) argument 'v' has allocatable component 'v%a', which "
     "Fortran deallocates on entry (a kernel cannot allocate it again): declare the argument "
     "intent(inout)"),
    (_type("    real, allocatable :: a(:)", "    type(t) :: w\n    x = w%a(1)"),
     "f.f90:10:5: error: allocatable component 'w%a' of local variable 'w' is not supported "
     "(a kernel cannot allocate memory): pass the variable as an argument, or use a local "
     "array of fixed size instead of 'w%a'"),
    (_type("    real, pointer :: p(:) => null()", "    if (allocated(v%p)) x = 2"),
     "f.f90:9:9: error: 'v%p' is a pointer: ask associated(v%p), not allocated"),
])
def test_what_cannot_be_supported_is_a_located_error(source, message):
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "f.f90")
    assert e.value.format().splitlines()[0] == message


def test_unsupported_components_a_kernel_does_not_use_do_not_matter():
    k = parse_fortran(_type("    real :: q\n    real, allocatable :: a", "    x = v%q"),
                      "f.f90")["s"]
    assert [a.name for a in k.args] == ["v_q", "x"]


PARTICLES = """module md
  implicit none
  type particle
    real :: mass
    real :: x(3)
  end type
  type(particle), allocatable :: atoms(:)
  real :: box = 2.0
contains
  subroutine set_mass(m)
    real, intent(in) :: m
    integer :: i
    do i = 1, size(atoms)
      atoms(i)%mass = m
    end do
  end subroutine
  subroutine pair(pi, pj, d)
    type(particle), intent(in) :: pi, pj
    real, intent(out) :: d
    d = sum(abs(pj%x - pi%x)) / box
  end subroutine
end module
"""


def test_a_module_array_of_derived_type_is_a_structure_of_arrays():
    # (refused where used until issue 27's module arrays of derived type)
    kernels = {k.name: k for k in parse_fortran(PARTICLES, "md.f90").kernels}
    assert sorted(kernels) == ["pair", "set_mass"]
    args = {a.name: a for a in kernels["set_mass"].args}
    assert args["atoms_mass"].role.path == ("atoms", "mass")
    assert args["atoms_mass"].role.type_rank == 1 and args["atoms_mass"].role.allocatable


@pytest.mark.parametrize("statement", ["pts(i)%w = pts(i)%m", "pts(i)%w(:) = pts(i)%m",
                                       "pts(i)%w(1:3) = pts(i)%m"])
def test_array_syntax_on_a_component_of_an_element(statement):
    # (a located error before issue 27's module arrays of derived type):
    # the section pts_w(:, i) of the flattened component
    src = ("module p\n  type point\n    real(8) :: w(3)\n    real(8) :: m\n  end type\n"
           "contains\n  subroutine reset(n, pts)\n    integer, intent(in) :: n\n"
           "    type(point), intent(inout) :: pts(n)\n    integer :: i\n    do i = 1, n\n"
           f"      {statement}\n    end do\n  end subroutine\nend module\n")
    k = parse_fortran(src, "p.f90").kernels[0]
    writes = [i for i in k.instructions if str(i.assignee).startswith("pts_w[")]
    assert len(writes) == 1 and str(writes[0].expression) == "pts_m[i]"
    assert str(writes[0].assignee.index[1]) == "i" and len(writes[0].within_inames) == 2
