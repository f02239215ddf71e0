"""Components a kernel cannot hold (a C pointer to the field's device copy,
procedure pointers that read it back: the GOcean field type's) are errors
where a kernel uses them, not where the type is defined: the type's data
components stay usable (issue 27: the dl_esm_inf field type blocked every
kernel that takes a field)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran

FIELDS = """module fields
  use iso_c_binding, only: c_ptr
  implicit none
  abstract interface
    subroutine reader_iface(n, x)
      integer, intent(in) :: n
      real(8), intent(inout) :: x(n)
    end subroutine
  end interface
  type :: field_type
    real(8) :: data(8)
    integer :: nx
    type(c_ptr) :: device_ptr
    procedure(reader_iface), pointer, nopass :: read_from_device
  end type
contains
  subroutine scale_field(f, s)
    type(field_type), intent(inout) :: f
    real(8), intent(in) :: s
    integer :: i
    do i = 1, f%nx
      f%data(i) = s * f%data(i)
    end do
  end subroutine
end module
"""


def test_a_kernel_uses_the_data_components_of_a_type_with_pointers():
    k = parse_fortran(FIELDS, "fields.f90")["scale_field"]
    names = [a.name for a in k.args]
    assert names == ["f_data", "f_nx", "s"]


def _with(src: str, declaration: str, statement: str) -> str:
    return src.replace("    integer :: i\n", f"    integer :: i\n    {declaration}\n").replace(
        "    end do\n  end subroutine", f"    end do\n    {statement}\n  end subroutine")


@pytest.mark.parametrize("src, message, line", [
    # a whole value holds the pointer: copied component by component, it is used
    (_with(FIELDS, "type(field_type) :: g", "g = f"),
     "'c_ptr' of intrinsic module 'iso_c_binding' cannot be used in a kernel (only its kind "
     "constants are supported: a kernel has no C pointers, procedures or character constants "
     "of it)", 13),
    (_with(FIELDS.replace("    type(c_ptr) :: device_ptr\n", ""), "type(field_type) :: g",
           "g = f"),
     "procedure pointer component 'read_from_device' of type 'field_type' cannot be used in "
     "a kernel (a kernel calls no procedure pointers: call the procedure itself)", 13),
    (_with(FIELDS, "type(field_type) :: g", "g%read_from_device => f%read_from_device"),
     "pointer assignment is not supported", 25),
])
def test_using_them_is_a_located_error(src, message, line):
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "fields.f90")
    assert info.value.message == message
    assert info.value.span.line == line


@pytest.mark.usefixtures("gfortran", "opencl_device")
def test_the_kernel_matches_gfortran(tmp_path):
    (tmp_path / "fields.f90").write_text(FIELDS)
    res = CliRunner().invoke(main, ["check", str(tmp_path / "fields.f90")])
    assert res.exit_code == 0, res.output
    assert res.output.rstrip().endswith(
        "ok: 1 output(s) of 1 kernel(s) match the original Fortran")
