"""Differential tests: generated OpenCL on PoCL vs the same Fortran built by gfortran.

Tolerance: relative 1e-5 (float32) / 1e-12 (float64) of the largest value in
the array, or 4 ulp; integers and logicals must match exactly.
"""

import numpy as np
import pytest

from f2loopy.codegen import generate_code
from f2loopy.frontend import parse_fortran
from f2loopy.transform.iname import split_iname
from util import farray, needs_gfortran, run_both, zeros

pytestmark = needs_gfortran

CASES = {}


def case(name, source, make_args, **kw):
    CASES[name] = (source, make_args, kw)


case("nested_loops_2d", """
subroutine scale2d(n, m, a, b, s)
  implicit none
  integer n, m, i, j
  real a(n, m), b(n, m), s
  do j = 1, m
    do i = 1, n
      b(i, j) = s * a(i, j) + real(i) - real(j) / 2.0
    end do
  end do
end subroutine
""", lambda: [7, 5, farray((7, 5), seed=1), farray((7, 5), seed=2), np.float32(1.5)])

case("if_elseif_else", """
subroutine classify(n, x, y, code)
  implicit none
  integer n, i
  real x(n), y(n)
  integer code(n)
  do i = 1, n
    if (x(i) > 0.5) then
      y(i) = x(i) * 2.0
      code(i) = 1
    else if (x(i) < -0.5 .and. i > 3) then
      y(i) = -x(i)
      code(i) = 2
    else if (x(i) .ge. 0.0 .or. i == 1) then
      y(i) = 0.0
      code(i) = 3
    else
      code(i) = 4
    end if
  end do
end subroutine
""", lambda: [40, farray(40, seed=3), farray(40, seed=4),
              np.zeros(40, dtype=np.int32, order="F")])

case("integer_division_and_mod", """
subroutine intdiv(n, a, q, r, m)
  implicit none
  integer n, i
  integer a(n), q(n), r(n), m(n)
  do i = 1, n
    q(i) = a(i) / 7
    r(i) = mod(a(i), 7)
    m(i) = (a(i) - 3) / (-4) + a(i) / 2 * 2
  end do
end subroutine
""", lambda: [60, farray(60, np.int32, seed=5, low=-50, high=50),
              np.zeros(60, np.int32), np.zeros(60, np.int32), np.zeros(60, np.int32)])

case("powers", """
subroutine powers(n, x, y, k)
  implicit none
  integer n, i, k
  real*8 x(n), y(n, 5)
  do i = 1, n
    y(i, 1) = x(i) ** 2
    y(i, 2) = x(i) ** 3 + x(i) ** (-2)
    y(i, 3) = abs(x(i)) ** 1.5d0
    y(i, 4) = x(i) ** k
    y(i, 5) = 2 ** k + (-2) ** 3 + i ** 2
  end do
end subroutine
""", lambda: [20, farray(20, np.float64, seed=6, low=0.5, high=2.0),
              np.zeros((20, 5), np.float64, order="F"), 5])

case("math_intrinsics", """
subroutine mathfun(n, x, y)
  implicit none
  integer n, i
  real x(n), y(n, 7)
  do i = 1, n
    y(i, 1) = sqrt(abs(x(i)))
    y(i, 2) = exp(x(i))
    y(i, 3) = log(abs(x(i)) + 1.0)
    y(i, 4) = sin(x(i)) * cos(x(i))
    y(i, 5) = min(x(i), 0.25, -x(i) * 0.5)
    y(i, 6) = max(x(i), real(i) / 10.0)
    y(i, 7) = abs(x(i) - 0.1)
  end do
end subroutine
""", lambda: [50, farray(50, seed=7, low=-3, high=3), np.zeros((50, 7), np.float32, order="F")],
     ulps=8)

case("double_precision_mixed_kinds", """
subroutine mixed(n, a, b, c)
  implicit none
  integer*4 n, i
  real*4 a(n)
  real*8 b(n)
  double precision c(n)
  do i = 1, n
    c(i) = a(i) * 0.1 + b(i) * 0.1d0 + i / 3 + real(i, 8) / 3.0d0
    b(i) = c(i) - a(i)
  end do
end subroutine
""", lambda: [30, farray(30, np.float32, seed=8), farray(30, np.float64, seed=9),
              np.zeros(30, np.float64)])

case("triangular_loops", """
subroutine lower_tri(n, a, s)
  implicit none
  integer n, i, j
  real a(n, n), s(n)
  do i = 1, n
    s(i) = 0.0
    do j = 1, i
      s(i) = s(i) + a(i, j)
    end do
    do j = i + 1, n
      a(i, j) = 0.0
    end do
  end do
end subroutine
""", lambda: [9, farray((9, 9), seed=10), np.zeros(9, np.float32)])

case("empty_inner_loop_keeps_outer_statements", """
subroutine empty_inner(n, m, x)
  implicit none
  integer n, m, i, j
  real x(n)
  do i = 1, n
    x(i) = 1.0
    do j = 1, m
      x(i) = x(i) + 1.0
    end do
    x(i) = x(i) * 2.0
  end do
end subroutine
""", lambda: [6, 0, np.zeros(6, np.float32)])

case("scalar_outputs", """
subroutine stats(n, x, total, biggest, where)
  implicit none
  integer n, i, where
  real x(n), total, biggest
  total = 0.0
  biggest = x(1)
  where = 1
  do i = 2, n
    if (x(i) > biggest) then
      biggest = x(i)
      where = i
    end if
  end do
  do i = 1, n
    total = total + x(i)
  end do
end subroutine
""", lambda: [33, farray(33, seed=11), np.float32(0), np.float32(0), 0])

case("relational_and_logical", """
subroutine logic(n, a, b, out)
  implicit none
  integer n, i
  real a(n), b(n)
  integer out(n)
  logical p, q
  do i = 1, n
    p = a(i) .gt. b(i)
    q = (a(i) /= b(i)) .and. .not. (a(i) <= 0.0)
    out(i) = 0
    if (p .eqv. q) out(i) = out(i) + 1
    if (p .neqv. q) out(i) = out(i) + 2
    if (p .or. b(i) == 0.5) out(i) = out(i) + 4
  end do
end subroutine
""", lambda: [64, farray(64, seed=12), farray(64, seed=13), np.zeros(64, np.int32)])

case("condition_reads_variable_written_in_branch", """
subroutine swapmax(n, a, b)
  implicit none
  integer n, i
  real a(n), b(n), t
  do i = 1, n
    if (a(i) < b(i)) then
      t = a(i)
      a(i) = b(i)
      b(i) = t
    end if
  end do
end subroutine
""", lambda: [25, farray(25, seed=14), farray(25, seed=15)])

case("several_subroutines_and_lower_bounds", """
subroutine first_diff(n, u, du)
  implicit none
  integer n, i
  real*8 u(0:n), du(n)
  do i = 1, n
    du(i) = u(i) - u(i - 1)
  end do
end subroutine

subroutine second(n, w)
  implicit none
  integer n, i, j
  real*8 w(-1:1, n)
  do i = 1, n
    do j = -1, 1
      w(j, i) = w(j, i) * dble(j + 2) + dble(i)
    end do
  end do
end subroutine
""", lambda: [12, farray(13, np.float64, seed=16), np.zeros(12, np.float64)])

case("sizes_from_expressions", """
subroutine halves(n, a, b)
  implicit none
  integer n, i
  real a(n), b(n/2 + 1)
  do i = 1, n / 2 + 1
    b(i) = a(2 * i - 1)
  end do
end subroutine
""", lambda: [9, farray(9, seed=17), np.zeros(9 // 2 + 1, np.float32)])

case("data_dependent_bounds", """
subroutine csr_matvec(nrows, nnz, rowptr, col, val, x, y)
  implicit none
  integer nrows, nnz, i, k
  integer rowptr(nrows + 1), col(nnz)
  real val(nnz), x(nrows), y(nrows)
  do i = 1, nrows
    y(i) = 0.0
    do k = rowptr(i), rowptr(i + 1) - 1
      y(i) = y(i) + val(k) * x(col(k))
    end do
  end do
end subroutine
""", lambda: _csr_args())

case("implicit_typing_and_stepped_loop", """
subroutine legacy(n, a)
  dimension a(n)
  do i = 1, n, 3
    t = a(i) * 2
    a(i) = t + float(i)
  end do
end subroutine
""", lambda: [20, farray(20, seed=18)])


def _csr_args():
    rng = np.random.default_rng(19)
    nrows = 12
    counts = rng.integers(0, 5, size=nrows)
    rowptr = np.concatenate([[1], 1 + np.cumsum(counts)]).astype(np.int32)
    nnz = int(rowptr[-1] - 1)
    col = rng.integers(1, nrows + 1, size=max(nnz, 1)).astype(np.int32)[:nnz]
    val = farray(nnz, seed=20)
    return [nrows, nnz, rowptr, col, val, farray(nrows, seed=21), np.zeros(nrows, np.float32)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_gfortran(name, tmp_path, cl_queue):
    source, make_args, kw = CASES[name]
    from f2loopy.frontend import parse_fortran
    sub = parse_fortran(source, "k.f90").kernels[0].name
    run_both(source, sub, make_args(), tmp_path, cl_queue, **kw)


@pytest.mark.parametrize("n", [0, 1, 2, 17])
def test_saxpy_sizes_including_empty(n, tmp_path, cl_queue):
    source = CASES["nested_loops_2d"][0]
    run_both(source, "scale2d", [n, 3, farray((n, 3), seed=1), farray((n, 3), seed=2),
                                 np.float32(-2.0)], tmp_path, cl_queue)


OPENCL_BUILTIN_NAMES = """
subroutine step(n, distance, sign, mix)
  implicit none
  integer n, i
  real distance(n), sign(n), mix
  do i = 1, n
    sign(i) = distance(i) * mix + 1.0
  end do
end subroutine
"""


@needs_gfortran
def test_names_of_opencl_builtins(tmp_path, cl_queue):
    """A kernel or variable named like an OpenCL built-in (step, distance,
    sign, mix) is renamed in the OpenCL; clCreateKernel refused 'step'."""
    gk = generate_code(parse_fortran(OPENCL_BUILTIN_NAMES, "t.f90")[0])
    assert "__kernel void" in gk.device_code and " step_(" in gk.device_code
    run_both(OPENCL_BUILTIN_NAMES, "step", [7, farray(7, seed=3), zeros(7), 0.5], tmp_path,
             cl_queue)


SAXPY = """
subroutine saxpy(n, a, x, y)
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a*x(i) + y(i)
  end do
end subroutine
"""


@pytest.mark.parametrize("n", [1, 100, 128, 257])
def test_parallel_saxpy_matches_gfortran(n, tmp_path, cl_queue):
    from f2loopy.codegen import join_program
    from f2loopy.glue.python import generate_python_glue
    import importlib.util
    # (tests/codegen/test_codegen_shape.py checks the shape of this kernel)
    k = split_iname(parse_fortran(SAXPY, "k.f90").kernels[0], "i", 32, outer_tag="g.0",
                    inner_tag="l.0")
    gk = generate_code(k)
    prog = join_program([gk])
    (tmp_path / "p.cl").write_text(prog)
    (tmp_path / "p_cl.py").write_text(generate_python_glue([gk], prog, "p.cl", "k.f90"))
    spec = importlib.util.spec_from_file_location("p_cl", tmp_path / "p_cl.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    run_both(SAXPY, "saxpy", [n, np.float32(1.5), farray(n, seed=3), farray(n, seed=4)],
             tmp_path, cl_queue, module=mod)
