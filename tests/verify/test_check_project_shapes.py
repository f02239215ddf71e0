"""``f2loopy check`` on shapes of code seen in real projects (issue 27): the
kernels around an unnamed main program, loop variables that are arguments,
allocatable and pointer module arrays (allocated by the harness)."""

from __future__ import annotations

from check_util import check_text, needs_check
from shared_kernels import LOOP_VARIABLES, UNNAMED_MAIN


@needs_check
def test_loop_variables_as_arguments_match_gfortran(tmp_path):
    _, res = check_text(tmp_path, LOOP_VARIABLES, "--size", "n=9", name="lv.f90")
    assert res.exit_code == 0, res.output
    assert "count_to" in res.output and "grid_state.j" in res.output and " i " in res.output


@needs_check
def test_kernels_around_an_unnamed_main_program_match_gfortran(tmp_path):
    _, res = check_text(tmp_path, UNNAMED_MAIN, name="lb.f")
    assert res.exit_code == 0, res.output
    assert "relax" in res.output and "shift" in res.output


FIELDS = """module fields
  implicit none
  real(8), allocatable :: u(:,:), w(:)
  real(8), pointer :: p(:) => null()
end module fields
module ops
  use fields
  implicit none
contains
  subroutine relax(n, m, c)
    integer, intent(in) :: n, m
    real(8), intent(in) :: c
    integer :: i, j
    do j = 1, m
      do i = 1, n
        u(i, j) = c * u(i, j) + w(i) + p(j)
      end do
    end do
  end subroutine relax
  subroutine total(s)
    real(8), intent(out) :: s
    integer :: i
    s = 0
    if (.not. associated(p)) return
    do i = lbound(p, 1), ubound(p, 1)
      s = s + p(i)
    end do
  end subroutine total
end module ops
"""


@needs_check
def test_allocatable_and_pointer_module_arrays_are_allocated_by_the_harness(tmp_path):
    _, res = check_text(tmp_path, FIELDS, name="fields.f90")
    lines = res.output.splitlines()
    # (the absent branch of total never runs: NOT COVERED, exit 1, nothing wrong)
    assert "not checked" not in res.output and "MISMATCH" not in res.output, res.output
    assert any(line.strip().startswith("fields.u(") and line.endswith("ok") for line in lines)
    assert any(line.strip().startswith("s float64") and line.endswith("ok") for line in lines)



#: the lattice-Boltzmann file's shape with its declarations in an include file
#: (each include line is many lines of the text the kernels are numbered in)
INCLUDED = "".join(f"c     population arrays, note {k}\n" for k in range(9)) + """\
      parameter(nx = 6, ny = 5, np = 3)
      implicit double precision(a-h, o-z)
      common /pop/ f(0:np-1, 0:nx+1, 0:ny+1), fe(0:np-1, 0:nx+1, 0:ny+1)
      common /rates/ om, fpois
"""
WITH_INCLUDES = """\
      subroutine relax
      include 'pop.inc'
      do j = 1, ny
         do i = 1, nx
            do k = 0, np - 1
               f(k, i, j) = (1 - om) * f(k, i, j) + om * fe(k, i, j)
            enddo
         enddo
      enddo
      end

      subroutine push
      include 'pop.inc'
      do j = 1, ny
         do i = 1, nx
            f(1, i, j) = f(1, i, j) + fpois
            f(2, i, j) = f(2, i, j) - fpois
         enddo
      enddo
      end

      subroutine drain
      include 'pop.inc'
      do j = 1, ny
         do i = 1, nx
            f(0, i, j) = 0.5d0 * f(0, i, j)
            f(1, i, j) = 0.5d0 * f(1, i, j)
            f(2, i, j) = 0.5d0 * f(2, i, j)
            fe(0, i, j) = 0.25d0 * f(0, i, j)
            fe(1, i, j) = 0.25d0 * f(1, i, j)
            fe(2, i, j) = 0.25d0 * f(2, i, j)
         enddo
      enddo
      end
"""


@needs_check
def test_coverage_of_a_file_with_include_lines_names_the_right_statements(tmp_path):
    # the kernels' lines are those of the text with pop.inc expanded; the
    # coverage was counted on the file as written (push was reported as not
    # covering drain's statements)
    (tmp_path / "pop.inc").write_text(INCLUDED)
    _, res = check_text(tmp_path, WITH_INCLUDES, "--kernel", "push", name="lb.f")
    assert res.exit_code == 0, res.output
    assert "never ran" not in res.output and "pop.f(" in res.output


@needs_check
def test_check_of_one_kernel_builds_the_modules_the_other_units_use(tmp_path):
    # (with --kernel the translation reads only the modules 'heat' needs; the
    # original is compiled whole, 'force' and its 'use utils' included)
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "utils.f90").write_text(
        "module utils\n  implicit none\ncontains\n  pure real(8) function wrap(x, box)\n"
        "    real(8), intent(in) :: x, box\n    wrap = x - box * anint(x / box)\n"
        "  end function\nend module\n")
    (lib / "state.f90").write_text(
        "module state\n  implicit none\n  integer, parameter :: n = 5\n"
        "  real(8) :: x(n), e\nend module\n")
    main = ("module steps\n  implicit none\ncontains\n  subroutine heat\n    use state\n"
            "    integer :: i\n    e = 0\n    do i = 1, n\n      e = e + x(i) * x(i)\n"
            "    end do\n  end subroutine\n  subroutine force(box)\n    use state\n"
            "    use utils\n    real(8), intent(in) :: box\n    integer :: i\n"
            "    do i = 1, n\n      x(i) = wrap(x(i), box)\n    end do\n"
            "  end subroutine\nend module\n")
    _, res = check_text(tmp_path, main, "-I", str(lib), "--kernel", "heat", name="steps.f90")
    assert res.exit_code == 0, res.output
    assert "state.e float64" in res.output


LINSPACE = """subroutine spaced(n, a_first, a_last, a)
  implicit none
  integer n, i
  real(8) a(n), a_first, a_last
  if (n == 1) then
    a(1) = (a_first + a_last) / 2.0d0
  else
    do i = 1, n
      a(i) = (dble(n - i) * a_first + dble(i - 1) * a_last) / dble(n - 1)
    end do
  end if
end subroutine
"""


@needs_check
def test_coverage_rounds_try_small_values_of_the_sizes_a_branch_depends_on(tmp_path):
    # (the planner's sizes never made n == 1: NOT COVERED, exit 1)
    _, res = check_text(tmp_path, LINSPACE, name="lin.f90")
    assert res.exit_code == 0, res.output
    assert "n=1)" in res.output and "never ran" not in res.output
