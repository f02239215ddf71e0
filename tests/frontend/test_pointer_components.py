"""Scalar pointer components of derived type (issue 27: GOcean's field type
holds ``type(grid_type), pointer :: grid``, and half of PSyclone's eg1
kernels read ``fld%grid%dx``): a kernel reads through them; the target's
components are kernel arguments like other components.  Writes through such
a component, or of data its target may be, are located errors (two fields
may share one grid)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.ir.roles import Component

GRIDS = """module grids
  implicit none
  type :: grid_t
    integer :: nx, ny
    real(8) :: dx, dy
    integer, allocatable :: tmask(:,:)
  end type
  type :: field_t
    type(grid_t), pointer :: grid => null()
    real(8), allocatable :: data(:,:)
    integer :: xstart, xstop
  end type
contains
  subroutine scale_masked(fld, src, s)
    type(field_t), intent(inout) :: fld
    type(field_t), intent(in) :: src
    real(8), intent(in) :: s
    integer :: i, j
    do j = 1, fld%grid%ny
      do i = fld%xstart, fld%xstop
        if (fld%grid%tmask(i, j) > 0) then
          fld%data(i, j) = s * src%data(i, j) / (src%grid%dx * fld%grid%dy)
        end if
      end do
    end do
  end subroutine
end module
"""


def test_the_targets_components_are_arguments_that_know_the_pointer():
    k = parse_fortran(GRIDS, "grids.f90")["scale_masked"]
    roles = {a.name: a.role for a in k.args if isinstance(a.role, Component)}
    assert sorted(roles) == ["fld_data", "fld_grid_dy", "fld_grid_ny", "fld_grid_tmask",
                             "fld_xstart", "fld_xstop", "src_data", "src_grid_dx"]
    assert roles["fld_grid_tmask"].path == ("fld", "grid", "tmask")
    assert roles["fld_grid_tmask"].pointers == (1,)
    assert roles["fld_grid_tmask"].allocatable
    assert roles["src_grid_dx"].pointers == (1,)
    assert roles["fld_data"].pointers == ()
    assert "fld_grid_dx" not in k.written_variables()
    assert k.written_variables() & set(roles) == {"fld_data"}


def _with(declaration: str, statement: str, extra: str = "") -> str:
    src = GRIDS.replace("    integer :: i, j\n", f"    integer :: i, j\n    {declaration}\n")
    src = src.replace("    end do\n  end subroutine", f"    end do\n    {statement}\n"
                      "  end subroutine")
    return src.replace("scale_masked(fld, src, s)", f"scale_masked(fld, src, s{extra})")


SHARED = ("whose target other arguments may share (two fields on one grid): a kernel only "
          "reads through pointer components (pass the target itself as an argument to assign "
          "it)")
MAY_POINT = ("through a pointer component, which may point to it: pass the data read "
             "through the pointer as an argument of its own")


@pytest.mark.parametrize("declaration, statement, extra, message, line", [
    ("", "fld%grid%dx = 2d0", "",
     f"'fld%grid%dx' is assigned through pointer component 'fld%grid', {SHARED}", 27),
    ("", "fld%grid%tmask(1, 1) = 0", "",
     f"'fld%grid%tmask' is assigned through pointer component 'fld%grid', {SHARED}", 27),
    # a callee that writes what it is given through the pointer
    ("", "call zero(fld%grid%dy)", "",
     f"'fld%grid%dy' is assigned through pointer component 'fld%grid', {SHARED}", 31),
    # another variable of the target's type: fld%grid may point to it
    ("type(grid_t), intent(inout) :: g", "g%dx = 1d0", ", g",
     f"the kernel assigns 'g%dx', data of type(grid_t), and reads 'fld%grid%dy' {MAY_POINT}",
     27),
    ("real(8), target, intent(inout) :: t", "t = 1d0", ", t",
     "the kernel assigns 't', data with the pointer or target attribute, and reads "
     f"'fld%grid%dy' {MAY_POINT}", 27),
    # a whole value copies the association, not the data
    ("type(field_t) :: f2", "f2 = src", "",
     "assigning a whole value of type(field_t), which has pointer component 'grid', is not "
     "supported (assign the components one by one) (a pointer component of derived type is "
     "associated, not copied)", 27),
])
def test_writes_the_pointer_may_see_are_located_errors(declaration, statement, extra,
                                                       message, line):
    src = _with(declaration, statement, extra)
    if statement.startswith("call zero"):
        src = src.replace("end module", "  subroutine zero(x)\n    real(8), intent(out) :: x\n"
                          "    x = 0d0\n  end subroutine\nend module")
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "grids.f90")
    assert info.value.message == message
    assert info.value.span.line == line


def test_a_target_of_another_type_written_is_no_conflict():
    # a real(4) target cannot be the integer or real(8) data read through the pointer
    k = parse_fortran(_with("real(4), target, intent(inout) :: w", "w = w + 1", ", w"),
                      "grids.f90")["scale_masked"]
    assert "w" in k.written_variables()


def test_a_component_passed_to_a_subroutine_that_assigns_it_is_by_reference():
    # (before: "'zero' assigns argument 'x', but the actual argument is an expression")
    src = _with("", "call zero(fld%xstart)").replace(
        "end module", "  subroutine zero(x)\n    integer, intent(out) :: x\n    x = 0\n"
        "  end subroutine\nend module")
    k = parse_fortran(src, "grids.f90")["scale_masked"]
    assert "fld_xstart" in k.written_variables()


def test_a_pointer_component_of_an_array_of_the_type_is_refused():
    src = GRIDS.replace("type(field_t), intent(in) :: src", "type(field_t), intent(in) :: "
                        "src(2)").replace("src%", "src(1)%")
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "grids.f90")
    assert info.value.message.startswith("pointer component 'grid' of an array of derived "
                                         "type ('src') is not supported")


@pytest.mark.usefixtures("gfortran", "opencl_device")
def test_the_kernel_matches_gfortran(tmp_path):
    (tmp_path / "grids.f90").write_text(GRIDS)
    res = CliRunner().invoke(main, ["check", str(tmp_path / "grids.f90")])
    assert res.exit_code == 0, res.output
    assert res.output.rstrip().endswith(
        "ok: 1 output(s) of 1 kernel(s) match the original Fortran")


def test_python_glue_reads_through_one_grid_shared_by_two_fields(tmp_path, cl_queue):
    # (tests/util.py: translate and import the Python glue)
    import numpy as np
    from types import SimpleNamespace

    from util import translate_and_load
    glue, _ = translate_and_load(GRIDS, tmp_path)
    nx, ny = 5, 4
    rng = np.random.default_rng(7)
    mask = np.asfortranarray((rng.random((nx, ny)) > 0.3).astype(np.int32))
    grid = SimpleNamespace(nx=nx, ny=ny, dx=0.5, dy=0.25, tmask=mask)
    src_data = np.asfortranarray(rng.random((nx, ny)))
    out = np.asfortranarray(np.full((nx, ny), -1.0))
    fld = SimpleNamespace(grid=grid, data=out, xstart=2, xstop=nx)
    src = SimpleNamespace(grid=grid, data=src_data, xstart=1, xstop=nx)
    glue.scale_masked(fld, src, 3.0, queue=cl_queue)
    ref = np.full((nx, ny), -1.0)
    ref[1:, :] = np.where(mask[1:, :] > 0, 3.0 * src_data[1:, :] / (0.5 * 0.25), -1.0)
    np.testing.assert_allclose(out, ref, rtol=1e-14)
    assert grid.tmask is mask and grid.dx == 0.5          # read only
