"""Function results of derived type and defined operators (issue 27:
Allen-Tildesley's force sums pair potentials with ``total = total + pair``,
``operator(+)`` bound to a function that returns the type).  The result is
inlined into a temporary of the type (each component a kernel temporary),
then copied component by component; structure constructors likewise."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran

#: a type-bound operator(+) whose function takes class(pot_t) dummies
POTS = """module pots
  implicit none
  integer, parameter :: n = 6
  real :: r(3, n)
  type :: pot_t
    real :: pot, vir
    logical :: ovr
  contains
    procedure :: add_pot
    generic :: operator(+) => add_pot
  end type
contains
  function add_pot(a, b) result(c)
    type(pot_t) :: c
    class(pot_t), intent(in) :: a, b
    c%pot = a%pot + b%pot
    c%vir = a%vir + b%vir
    c%ovr = a%ovr .or. b%ovr
  end function
  subroutine force(box, total)
    real, intent(in) :: box
    type(pot_t), intent(out) :: total
    type(pot_t) :: pair
    integer :: i, j
    real :: d2
    total = pot_t(pot=0.0, vir=0.0, ovr=.false.)
    do i = 1, n - 1
      do j = i + 1, n
        d2 = sum((r(:, i) - r(:, j))**2) * box**2
        pair%ovr = d2 < 0.1
        pair%pot = 1.0 / (1.0 + d2)
        pair%vir = pair%pot * d2
        total = total + pair
      end do
    end do
    total%vir = total%vir / 3.0
  end subroutine
end module
"""

#: operators of interface blocks (one with a scalar operand, one defined
#: operator returning a real), a function of prefix type(vec_t), default values
VECS = """module vecs
  implicit none
  type :: vec_t
    real(8) :: x(3)
    real(8) :: w = 1d0
  end type
  interface operator(+)
    module procedure add_vec
  end interface
  interface operator(*)
    module procedure scale_vec
  end interface
  interface operator(.dot.)
    module procedure dot_vec
  end interface
contains
  function add_vec(a, b) result(c)
    type(vec_t), intent(in) :: a, b
    type(vec_t) :: c
    c%x = a%x + b%x
    c%w = a%w + b%w
  end function
  function scale_vec(s, a) result(c)
    real(8), intent(in) :: s
    type(vec_t), intent(in) :: a
    type(vec_t) :: c
    c%x = s * a%x
    c%w = a%w
  end function
  real(8) function dot_vec(a, b)
    type(vec_t), intent(in) :: a, b
    dot_vec = sum(a%x * b%x)
  end function
  type(vec_t) function mid(a, b)
    type(vec_t), intent(in) :: a, b
    mid = 0.5d0 * (a + b)
  end function
  subroutine combine(n, p, q, s, out, d)
    integer, intent(in) :: n
    type(vec_t), intent(in) :: p(n), q
    real(8), intent(in) :: s
    type(vec_t), intent(out) :: out
    real(8), intent(out) :: d(n)
    integer :: i
    out = vec_t(x=0d0)
    do i = 1, n
      out = out + s * p(i) + mid(p(i), q)
      d(i) = p(i) .dot. (q + out)
    end do
  end subroutine
end module
"""


def test_a_type_bound_operator_sums_into_the_argument():
    kernels = parse_fortran(POTS, "pots.f90")
    assert [k.name for k in kernels] == ["force"]   # (add_pot implements '+': no kernel)
    k = kernels["force"]
    assert [a.name for a in k.args] == ["box", "total_pot", "total_vir", "total_ovr", "r"]
    # the result of total + pair: a temporary per component, then copied
    sums = [i for i in k.instructions if i.span.line == 33]
    assert [i.assignee_name for i in sums] == ["total_pot", "total_vir", "total_ovr"]
    assert sorted(n for n in k.temporaries if n.startswith("pot_t_value")) == [
        "pot_t_value_1_ovr", "pot_t_value_1_pot", "pot_t_value_1_vir", "pot_t_value_ovr",
        "pot_t_value_pot", "pot_t_value_vir"]


def test_interface_operators_and_functions_of_the_type():
    kernels = parse_fortran(VECS, "vecs.f90")
    assert [k.name for k in kernels] == ["combine"]
    k = kernels["combine"]
    assert k.temporaries["vec_t_value_x"].shape == (3,)
    assert k.temporaries["dot_vec"].shape == ()
    # d(i) = p(i) .dot. (q + out): the defined operator's real result
    (last,) = [i for i in k.instructions if i.span.line == 48 and i.assignee_name == "d"]
    assert str(last.expression) == "dot_vec"


def _statement(src: str, statement: str, declaration: str = "") -> str:
    anchor = "      d(i) = p(i) .dot. (q + out)\n"
    src = src.replace(anchor, anchor + f"      {statement}\n")
    return src.replace("    integer :: i\n", f"    integer :: i\n    {declaration}\n") \
        if declaration else src


@pytest.mark.parametrize("src, message", [
    (_statement(VECS, "out = out - q"),
     "vecs.f90:49:17: error: operator '-' is not defined for type(vec_t) (no 'generic :: "
     "operator(-)' of the type nor 'interface operator(-)' of its module)"),
    (_statement(VECS, "d(i) = mid(p(i), q)"),
     "vecs.f90:49:14: error: 'mid' returns a value of type(vec_t), which cannot be used here: "
     "assign it to a variable of the type, pass it as an argument or apply an operator to it"),
    (_statement(VECS, "d(i) = q + out"),
     "vecs.f90:49:7: error: 'q + out' is a value of type(vec_t), which cannot be used here: "
     "assign it to a variable of the type first"),
    (_statement(VECS, "out = vec_t(w=2d0)"),
     "vecs.f90:49:13: error: structure constructor 'vec_t(w = 2D0)' gives no value for "
     "component 'x', which has no default value"),
    (_statement(VECS, "out = vec_t(x=0d0, y=1d0)"),
     "vecs.f90:49:13: error: type 'vec_t' has no component 'y'"),
    (VECS.replace("type(vec_t), intent(in) :: p(n), q",
                  "type(vec_t), intent(in) :: p(n)\n    class(vec_t), intent(in) :: q"),
     "vecs.f90:41:33: error: polymorphic 'class(vec_t)' declarations are not supported (a "
     "kernel needs the exact type: declare it type(vec_t), or pass the components)"),
    (VECS.replace("  subroutine combine", "  type(vec_t) function twice(a)\n    type(vec_t), "
                  "intent(in) :: a\n    twice = a + a\n  end function\n  subroutine combine"),
     "vecs.f90:38:24: error: function 'twice' returns a value of type(vec_t), which a kernel "
     "cannot return: translate a subroutine that calls it (its result is inlined component by "
     "component there)"),
])
def test_what_is_not_supported_is_a_located_error(src, message):
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "vecs.f90")
    assert info.value.format().splitlines()[0] == message


GRADES = """module grades
  implicit none
  type :: grade_t
    real :: mean
    real, allocatable :: marks(:)
  end type
  interface operator(+)
    module procedure merge_grades
  end interface
contains
  function merge_grades(a, b) result(c)
    type(grade_t), intent(in) :: a, b
    type(grade_t) :: c
    c%mean = a%mean + b%mean
  end function
  subroutine total(a, b, m)
    type(grade_t), intent(inout) :: a, b
    real, intent(out) :: m
    a = a + b
    m = a%mean
  end subroutine
end module
"""


def test_a_temporary_cannot_hold_an_allocatable_component():
    with pytest.raises(FortranError) as info:
        parse_fortran(GRADES, "grades.f90")
    assert info.value.format().splitlines()[0] == (
        "grades.f90:19:5: error: a value of type(grade_t) is made here, but its component "
        "'marks' holds an allocatable array, which a kernel cannot hold in a temporary: assign "
        "the components one by one")


@pytest.mark.usefixtures("gfortran", "opencl_device")
@pytest.mark.parametrize("name, src", [("pots.f90", POTS), ("vecs.f90", VECS)])
def test_the_kernels_match_gfortran(tmp_path, name, src):
    (tmp_path / name).write_text(src)
    res = CliRunner().invoke(main, ["check", str(tmp_path / name)])
    assert res.exit_code == 0, res.output
    assert "ok: " in res.output.splitlines()[-1], res.output
