"""``f2loopy check`` of kernels with allocatable and pointer components
(issue 27): the harness allocates a derived-type argument's component with
lower bounds it draws (a halo at 0 where the kernel reads it), loops bounded
by scalar copies of components (``nx = curr%nx``) are sized, and a module
pointer to a derived-type value gets a target."""

from __future__ import annotations

from check_util import check_text, needs_check
from shared_kernels import HEAT_EVOLVE

HEAT = HEAT_EVOLVE + """end module solver

module grids
  implicit none
  type :: grid_t
    real(8), dimension(:,:), pointer :: h => null()
  end type
  type(grid_t), pointer :: vgrid
contains
  subroutine scale_h(nx, ny, f)
    integer, intent(in) :: nx, ny
    real(8), intent(in) :: f
    integer :: i, j
    if (.not. associated(vgrid%h)) return
    do j = 1, ny
      do i = 1, nx
        vgrid%h(i, j) = f * vgrid%h(i, j)
      end do
    end do
  end subroutine
end module
"""


@needs_check
def test_allocatable_components_and_module_pointers_match_gfortran(tmp_path):
    _, res = check_text(tmp_path, HEAT, name="heat.f90")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert any(line.strip().startswith("curr%data(") and line.endswith("ok") for line in lines)
    assert any(line.strip().startswith("grids.vgrid.h(") and line.endswith("ok")
               for line in lines), res.output
    # the halo read at i - 1 = 0: prev%data was allocated from 0
    assert "prev_data_lb1=0" in res.output
    assert "NOT COVERED" not in res.output


def test_public_statements_continued_over_lines_are_read_whole():
    from f2loopy.verify.fortran import is_private, module_access
    text = ("module m\n  private\n  public :: a, &   ! the fields\n     b, &\n  & c\n"
            "  real :: a, b, c, d\nend module\n")
    access = module_access(text)
    assert [is_private(access, "m", n) for n in "abcd"] == [False, False, False, True]


def test_a_statement_gfortran_counts_on_a_continuation_line_ran():
    from types import SimpleNamespace

    from f2loopy.verify.coverage import required_lines
    text = ("subroutine s(a, b, n)\n  do i = 1, n\n    a(i) = b(i) + &\n      b(i - 1)\n"
            "  end do\n  a(1) = 0\nend subroutine\n")
    kernel = SimpleNamespace(error_sites=(), span=None)
    need = required_lines(text, kernel, 1, 7, {2: 3, 3: 0, 4: 2, 6: 0}, fixed_form=False)
    assert need == {2: "do i = 1, n", 6: "a(1) = 0"}


#: PRIVATE allocatable module arrays (the shallow-water model's coefficient
#: arrays): the harness sets them through accessors compiled into the module
#: (whose only public procedure is the kernel's, so 'contains' shares its line
#: with the 'public' the harness adds)
PRIVATE_ALLOCATABLE = """module lm
  implicit none
  private
  public :: out
  real(8), allocatable :: coef(:,:)
  real(8), allocatable :: out(:)
contains
  subroutine step(n)
    integer, intent(in) :: n
    integer :: i
    do i = 1, n
      out(i) = coef(1, i) + 2 * coef(2, i)
    end do
  end subroutine
end module
"""


@needs_check
def test_private_allocatable_module_arrays_are_set_through_accessors(tmp_path):
    _, res = check_text(tmp_path, PRIVATE_ALLOCATABLE, name="lm.f90")
    assert res.exit_code == 0, res.output
    assert any(line.strip().startswith("lm.out(") and line.endswith("ok")
               for line in res.output.splitlines()), res.output
