"""Module arrays of derived type (issue 27): ``type(particle), allocatable ::
p(:)`` in a module is flattened into one module array per component, the
component's axes first (``p(i)%x(k)`` is ``p_x(k, i)``: a structure of arrays),
resident like other module arrays; an allocatable one shares one set of
extent, lower bound and allocation arguments among its components.  What
cannot be supported is a located error where a kernel uses it."""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.ir.roles import Allocation, ModuleVariable

pytestmark = pytest.mark.unit

PARTICLES = """module particles
  implicit none
  type particle
    real(8) :: x(3), v(3), f(3)
    real(8) :: m
  end type particle
  type(particle), allocatable :: p(:)
  type(particle) :: probe(4)
  real(8) :: dt = 0.01d0
contains
  subroutine drift()
    integer :: i, k
    if (.not. allocated(p)) return
    do i = 1, size(p)
      do k = 1, 3
        p(i)%x(k) = p(i)%x(k) + dt * p(i)%v(k)
      end do
    end do
  end subroutine drift
  subroutine kick()
    integer :: i
    type(particle) :: t
    do i = lbound(p, 1), ubound(p, 1)
      t = p(i)
      p(i)%v = t%v + dt * t%f / t%m
    end do
  end subroutine kick
  subroutine weigh(total)
    real(8), intent(out) :: total
    integer :: i
    total = 0
    do i = 1, size(probe)
      total = total + probe(i)%m + sum(probe(i)%x)
    end do
  end subroutine weigh
end module particles
"""


def _kernel(src, name):
    return next(k for k in parse_fortran(src, "md.f90").kernels if k.name == name)


def test_components_of_an_allocatable_array_share_its_dope():
    k = _kernel(PARTICLES, "drift")
    args = {a.name: a for a in k.args}
    assert [a.name for a in k.args] == ["dt", "p_x", "p_n1", "p_lb1", "p_allocated", "p_v"]
    x, v = args["p_x"], args["p_v"]
    assert x.shape == (3, p.Variable("p_n1")) and x.lower_bounds == (1, p.Variable("p_lb1"))
    assert v.shape == x.shape and v.lower_bounds == x.lower_bounds
    assert x.role == ModuleVariable(module="particles", path=("p", "x"), allocatable=True,
                                    type_rank=1)
    # one set of dope arguments, carried by the first component passed
    assert args["p_n1"].role == Allocation(array="p_x", what="extent", axis=1)
    assert args["p_lb1"].role == Allocation(array="p_x", what="lbound", axis=1)
    assert args["p_allocated"].role == Allocation(array="p_x", what="allocated")
    # the components no kernel of the file uses are exposed to the glue too
    assert {a.role.path for a in _kernel(PARTICLES, "drift").module_data} >= {
        ("p", "f"), ("p", "m")}


def test_whole_element_assignment_and_array_syntax_on_components():
    k = _kernel(PARTICLES, "kick")
    assert [a.name for a in k.args] == ["dt", "p_x", "p_n1", "p_lb1", "p_v", "p_f", "p_m"]
    m = next(a for a in k.args if a.name == "p_m")
    assert m.shape == (p.Variable("p_n1"),) and m.role.type_rank == 1
    written = {str(i.assignee.aggregate.name) for i in k.instructions
               if isinstance(i.assignee, p.Subscript)}
    assert "p_v" in written and not {"p_x", "p_f", "p_m"} & written


def test_a_fixed_size_module_array_of_derived_type():
    k = _kernel(PARTICLES.replace("    real(8) :: m\n", "    real(8) :: m = 2d0\n"), "weigh")
    args = {a.name: a for a in k.args}
    assert args["probe_x"].shape == (3, 4) and args["probe_m"].shape == (4,)
    assert args["probe_m"].role.type_rank == 1 and not args["probe_m"].role.allocatable
    assert np.array_equal(args["probe_m"].role.init, np.full(4, 2.0))


@pytest.mark.parametrize("decl, message", [
    ("type(particle), allocatable :: grid(:, :)",
     "md.f90:8:34: error: module array of derived type 'grid' has rank 2, which is not "
     "supported (rank 1 only): keep one module array per component (a structure of arrays: "
     "grid_x for grid(i, j)%x), or pass the array as an argument"),
    ("type(particle), pointer :: grid(:)",
     "md.f90:8:30: error: module pointer array of derived type 'grid' is not supported: "
     "declare it allocatable, or pass the array it points to as an argument"),
])
def test_unsupported_module_arrays_are_refused_where_used(decl, message):
    src = PARTICLES.replace("type(particle), allocatable :: p(:)\n",
                            f"type(particle), allocatable :: p(:)\n  {decl}\n", 1)
    src = src.replace("  type(particle) :: probe(4)\n", "")
    use = src.replace("total = total + probe(i)%m + sum(probe(i)%x)",
                      "total = total + grid(i" + (", 1" if "(:, :)" in decl else "") + ")%m")
    use = use.replace("size(probe)", "3")
    assert {k.name for k in parse_fortran(src.replace(
        "  subroutine weigh", "  subroutine unused_weigh").split(
        "  subroutine unused_weigh")[0] + "end module particles\n", "md.f90").kernels} == {
        "drift", "kick"}
    with pytest.raises(FortranError) as e:
        parse_fortran(use, "md.f90")
    assert e.value.format().splitlines()[0] == message


def test_allocatable_components_of_elements_are_refused_where_used():
    src = """module cells
  implicit none
  type cell
    real(8), allocatable :: w(:)
    real(8) :: h
  end type
  type(cell), allocatable :: c(:)
  real(8) :: g = 1d0
contains
  subroutine other(y)
    real(8), intent(out) :: y
    y = g
  end subroutine
  subroutine uses(y)
    real(8), intent(out) :: y
    y = c(1)%h
  end subroutine
end module
"""
    kernels = parse_fortran(src.split("  subroutine uses")[0] + "end module\n", "c.f90").kernels
    assert [k.name for k in kernels] == ["other"]
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "c.f90")
    assert e.value.format().splitlines()[0] == (
        "c.f90:7:30: error: allocatable component 'w' of an array of derived type ('c') is "
        "not supported (only of a scalar of the type: pass the arrays themselves)")


def test_assigning_an_expression_to_a_derived_type_value_is_refused():
    src = PARTICLES.replace("      t = p(i)\n", "      t = dt\n")
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "md.f90")
    assert e.value.format().splitlines()[0] == (
        "md.f90:24:7: error: 't' is of type(particle): only a variable, element or component "
        "of type(particle) can be assigned to it (assign the components one by one)")


def test_elements_passed_to_derived_type_dummies_and_constructors_to_arrays():
    src = PARTICLES.replace("end module particles\n", """  subroutine pairs(cutoff)
    real(8), intent(in) :: cutoff
    integer :: i, j, s
    do i = 1, size(p)
      do j = 1, size(p)
        if (i == j) cycle
        do s = -1, 1
          call add_force(p(i), p(j), [s, 0, 0], cutoff)
        end do
      end do
    end do
  end subroutine pairs
  subroutine add_force(pi, pj, shift, cutoff)
    type(particle), intent(inout) :: pi
    type(particle), intent(in) :: pj
    integer, intent(in) :: shift(3)
    real(8), intent(in) :: cutoff
    real(8) :: d(3), r
    d = pj%x + shift - pi%x
    r = sqrt(sum(d * d))
    if (r > cutoff) return
    pi%f = pi%f + d / r
  end subroutine add_force
end module particles
""")
    k = _kernel(src, "pairs")
    names = [a.name for a in k.args]
    assert names[:4] == ["cutoff", "p_x", "p_n1", "p_lb1"] and "p_f" in names
    written = {str(i.assignee.aggregate.name) for i in k.instructions
               if isinstance(i.assignee, p.Subscript)}
    assert "p_f" in written and "p_x" not in written
    # the constructor's values: a temporary of three integers
    shift = [t for name, t in k.temporaries.items() if name.startswith("shift_values")]
    assert len(shift) == 1 and shift[0].shape == (3,) and shift[0].dtype == np.int32


TYPE_BOUND = """module mdt
  implicit none
  type particle
    real(8) :: x(3), v(3)
  contains
    procedure :: move
  end type particle
  type(particle), allocatable :: p(:)
contains
  subroutine move(self, dt)
    class(particle), intent(inout) :: self
    real(8), intent(in) :: dt
    self%x = self%x + dt * self%v
  end subroutine move
  subroutine drift(dt)
    real(8), intent(in) :: dt
    integer :: i
    do i = 1, size(p)
      call p(i)%move(dt)
    end do
  end subroutine drift
end module mdt
"""


@pytest.mark.parametrize("call, message", [
    ("call p(i)%move(dt)",
     "t.f90:19:7: error: calling type-bound procedure 'p(i)%move' is not supported in a "
     "kernel: call the procedure it binds directly, with the object as an argument declared "
     "type(...) (call move(p(i), ...) if 'move' is bound to a procedure of that name)"),
])
def test_type_bound_calls_are_located_errors(call, message):
    from f2loopy.frontend import read_source, translate_source
    source = TYPE_BOUND.replace("call p(i)%move(dt)", call)
    with pytest.raises(FortranError) as e:
        translate_source(read_source(source, "t.f90"), kernels=("drift",))
    assert e.value.format().splitlines()[0] == message


@pytest.mark.parametrize("declared", ["class", "type"])
def test_the_bound_procedure_called_directly_binds_the_components(declared):
    # a class(particle) dummy of a procedure that is inlined is the type itself
    # (the actual argument is a type(particle)); a kernel's own is refused
    from f2loopy.frontend import read_source, translate_source
    source = TYPE_BOUND.replace("call p(i)%move(dt)", "call move(p(i), dt)").replace(
        "class(particle), intent(inout) :: self", f"{declared}(particle), intent(inout) :: self")
    (k,) = translate_source(read_source(source, "t.f90"), kernels=("drift",))
    assert {"p_x", "p_v"} <= {a.name for a in k.args}
    if declared == "class":
        with pytest.raises(FortranError) as e:
            translate_source(read_source(source, "t.f90"), kernels=("move",))
        assert e.value.format().splitlines()[0] == (
            "t.f90:11:39: error: polymorphic 'class(particle)' declarations are not supported "
            "(a kernel needs the exact type: declare it type(particle), or pass the components)")


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
    type(particle) :: h
    y = a%mass + b%mass + h%x(2)
  end subroutine s
end module dm2
"""


def test_default_values_of_locals_and_intent_out_dummies_of_derived_type():
    # (they were left undefined: a silent wrong answer)
    k = parse_fortran(DEFAULTS, "d.f90").kernels[0]
    sets = {str(i.assignee): str(i.expression) for i in k.instructions
            if not i.assignee_name.startswith("y")}
    assert sets == {"b_x[1]": "2.0", "b_x[2]": "2.0", "b_x[3]": "2.0", "b_mass": "1.0",
                    "h_x[1]": "2.0", "h_x[2]": "2.0", "h_x[3]": "2.0", "h_mass": "1.0"}
