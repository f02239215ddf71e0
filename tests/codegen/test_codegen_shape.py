"""The shape of generated code: loop bounds, guards, grid mapping, indexing."""

import re

import pytest

from f2loopy import generate_code, parse_fortran
from f2loopy.transform.iname import split_iname, tag_inames

pytestmark = pytest.mark.codegen

SAXPY = """
subroutine saxpy(n, a, x, y)
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a*x(i) + y(i)
  end do
end subroutine
"""


def kernel(src=SAXPY, name=None):
    tu = parse_fortran(src, "k.f90")
    return tu[name] if name else tu.kernels[0]


def test_sequential_loop_exact_bounds_no_guard():
    code = generate_code(kernel()).device_code
    assert "for (int i = 1; i <= n; ++i)" in code
    assert "y[i - 1] = a * x[i - 1] + y[i - 1];" in code
    assert "if (" not in code
    assert "reqd_work_group_size(1, 1, 1)" in code


def test_split_and_tag_maps_to_grid_with_guard():
    k = split_iname(kernel(), "i", 128, outer_tag="g.0", inner_tag="l.0")
    gk = generate_code(k)
    code = gk.device_code
    assert "reqd_work_group_size(128, 1, 1)" in code
    assert "int const i_outer = (int) get_group_id(0);" in code
    assert "int const i_inner = (int) get_local_id(0);" in code
    assert "if (n >= i_inner + 128 * i_outer + 1)" in code
    assert "y[i_inner + 128 * i_outer]" in code
    assert gk.grid.local_size == (128, 1, 1)


def test_assumption_removes_guard():
    import islpy as isl
    k = split_iname(kernel(), "i", 16, outer_tag="g.0", inner_tag="l.0")
    k = k.copy(assumptions=isl.Set("[n] -> { : n mod 16 = 0 and n >= 16 }"))
    code = generate_code(k).device_code
    assert "if (" not in code


def test_unrolled_inner_loop():
    k = split_iname(kernel(), "i", 4, inner_tag="unr")
    code = generate_code(k).device_code
    assert code.count("int const i_inner =") == 4
    assert "for (int i_outer = 0; i_outer <= (n + 3) / 4 - 1; ++i_outer)" in code


def test_local_tag_on_run_time_length():
    # the launch computes the work-group size (issue 16)
    gk = generate_code(tag_inames(kernel(), "i:l.0"))
    assert str(gk.grid.local_size[0]) == "max(n, 1)"
    assert "reqd_work_group_size" not in gk.device_code
    assert "int const i = 1 + (int) get_local_id(0);" in gk.device_code


def test_group_tag_alone():
    k = tag_inames(kernel(), {"i": "g.0"})
    gk = generate_code(k)
    assert "int const i = 1 + (int) get_group_id(0);" in gk.device_code
    assert "for (" not in gk.device_code


def test_column_major_indexing_with_lower_bounds():
    src = """
subroutine lb(n, a)
  integer n, i, j
  real a(-1:1, 0:n)
  do j = 0, n
    do i = -1, 1
      a(i, j) = 1.0
    end do
  end do
end subroutine
"""
    code = generate_code(kernel(src)).device_code
    assert "a[i + 1 + 3 * j] = 1.0f;" in code


def test_fp_contraction_is_allowed_unless_switched_off():
    """OpenCL's default (FMA allowed, as gfortran does) unless the kernel asks
    for results reproducible bit for bit."""
    from f2loopy import set_options
    assert "FP_CONTRACT" not in generate_code(kernel()).source
    strict = generate_code(set_options(kernel(), fp_contract=False)).source
    assert strict.startswith("#pragma OPENCL FP_CONTRACT OFF\n")


def test_double_precision_enables_fp64():
    src = "subroutine d(x)\n  double precision x\n  x = x * 0.5d0\nend\n"
    gk = generate_code(kernel(src))
    assert "#pragma OPENCL EXTENSION cl_khr_fp64 : enable" in gk.preamble
    assert "x[0] = x[0] * 0.5;" in gk.device_code


def test_single_precision_literal_widened_like_fortran():
    src = "subroutine d(x)\n  double precision x\n  x = 0.1\nend\n"
    code = generate_code(kernel(src)).device_code
    # 0.1 is a default-real literal: single precision, then widened (by C,
    # exactly, on assignment: the literal stays as written)
    assert "x[0] = 0.1f;" in code


def test_automatic_logical_array_scratch_holds_ints():
    # a logical is an int on the device: the scratch buffer needs 4 bytes per element
    src = """
subroutine flags(n, a, c)
  implicit none
  integer, intent(in) :: n
  real, intent(in) :: a(n)
  integer, intent(out) :: c
  logical :: pos(n)
  integer :: i
  do i = 1, n
    pos(i) = a(i) > 0.0
  end do
  c = 0
  do i = n, 1, -1
    if (pos(i)) c = c + i
  end do
end subroutine
"""
    gk = generate_code(kernel(src))
    (sb,) = gk.scratch
    assert sb.name == "pos" and sb.itemsize == 4
    assert re.search(r"__global int \*(__restrict__ )?pos\b", gk.device_code)
