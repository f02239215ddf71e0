"""An array passed for a scalar dummy of an external procedure of another
file (issue 27: pyOM2's serial stubs, ``call border_exchg_xy(is, ie, js, je,
beta)`` with ``real*8 :: a`` in ``parallel_none.f90``): without an explicit
interface gfortran passes the first element's address, and so does the
translation; where gfortran checks (a module or internal procedure, or one of
the same file) it stays a located error."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.pipeline import translate_file, write_outputs
from util import needs_gfortran

STUBS = """subroutine exchg_xy(is_, ie_, a)
  implicit none
  integer, intent(in) :: is_, ie_
  real*8, intent(inout) :: a
end subroutine exchg_xy

subroutine bump(a)
  implicit none
  real*8, intent(inout) :: a
  a = a + 100d0
end subroutine bump
"""

KERNEL = """subroutine calc_slope(n, m, f, beta)
  implicit none
  integer, intent(in) :: n, m
  real*8, intent(in) :: f(n, m)
  real*8, intent(inout) :: beta(n, m)
  integer :: j
  do j = 2, m - 1
    beta(:, j) = 0.5d0 * (f(:, j + 1) - f(:, j - 1))
  end do
  call exchg_xy(1, n, beta)
  call bump(beta)
end subroutine calc_slope
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "serial").mkdir()
    (tmp_path / "serial" / "stubs.f90").write_text(STUBS)
    (tmp_path / "slope.f90").write_text(KERNEL)
    return tmp_path


def test_the_dummy_is_the_first_element(project):
    k = parse_fortran(KERNEL, str(project / "slope.f90"),
                      include_dirs=[project / "serial"])["calc_slope"]
    last = k.instructions[-1]
    assert (str(last.assignee), str(last.expression)) == ("beta[1, 1]", "beta[1, 1] + 100.0")


@pytest.mark.parametrize("where", ["same file", "module", "interface block"])
def test_an_explicit_interface_keeps_the_error(project, where):
    include = []
    if where == "same file":
        source = KERNEL + STUBS
    elif where == "interface block":
        include = [project / "serial"]
        source = KERNEL.replace("  integer :: j\n", "  integer :: j\n  interface\n"
                                "    subroutine exchg_xy(is_, ie_, a)\n"
                                "      integer, intent(in) :: is_, ie_\n"
                                "      real*8, intent(inout) :: a\n"
                                "    end subroutine\n  end interface\n")
    else:
        source = ("module stubs\ncontains\n" + STUBS + "end module\n" +
                  KERNEL.replace("  implicit none\n", "  use stubs\n  implicit none\n", 1))
    with pytest.raises(FortranError) as e:
        parse_fortran(source, str(project / "slope.f90"), include_dirs=include)
    assert e.value.format().splitlines()[0].endswith(
        "error: array 'beta' is passed for scalar argument 'a' of 'exchg_xy' (an array needs "
        "an array dummy: declare 'a' with dimensions there, e.g. a(*), or pass one element)")


@needs_gfortran
def test_the_stubbed_kernel_matches_gfortran(project, cl_queue):
    n, m = 4, 5
    f = np.asfortranarray(np.arange(n * m, dtype=np.float64).reshape((n, m), order="F") ** 2)
    main = project / "main.f90"
    main.write_text(f"""program main
  implicit none
  real*8 :: f({n}, {m}), beta({n}, {m})
  integer :: i, j
  do j = 1, {m}
    do i = 1, {n}
      f(i, j) = ((j - 1) * {n} + (i - 1))**2
    end do
  end do
  beta = -1
  call calc_slope({n}, {m}, f, beta)
  print '(5es25.16)', beta
end program
""")
    subprocess.run(["gfortran", "-o", "prog", "serial/stubs.f90", "slope.f90", "main.f90"],
                   check=True, cwd=project)
    out = subprocess.run([str(project / "prog")], capture_output=True, text=True,
                         check=True).stdout
    expect = np.array([float(v) for v in out.split()]).reshape((n, m), order="F")
    result = translate_file(project / "slope.f90", include_dirs=[project / "serial"])
    write_outputs(result.outputs)
    import importlib.util
    spec = importlib.util.spec_from_file_location("slope_cl", project / "slope_cl.py")
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)
    beta = np.asfortranarray(np.full((n, m), -1.0))
    glue.calc_slope(n, m, f, beta, queue=cl_queue)
    assert np.array_equal(beta, expect) and beta[0, 0] == 99.0
