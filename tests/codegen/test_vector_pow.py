"""A real power inside a ``vec`` iname becomes one OpenCL vector ``pow``
(issue 19: the paper's kernel on PoCL, whose scalar ``pow`` costs about as
much as its float8 ``pow``); integer powers keep their scalar helpers, so a
statement with one is unrolled as before."""

from __future__ import annotations

from transform_util import code, kernel, zeros
from util import farray, needs_gfortran, run_transformed

import f2loopy

POWERS = """
subroutine powers(ne, x, y, z)
  implicit none
  integer ne, e, i, m
  real x(4, ne), y(4, ne), z(4, ne)
  do e = 1, ne
    do i = 1, 4
      y(i, e) = 2.0 * (x(i, e) / 3.0) ** 1.4 + x(i, 1) ** 0.5
    end do
    do m = 1, 4
      z(m, e) = x(m, e) ** 3 + y(m, e)
    end do
  end do
end subroutine
"""


def _vectorize(k):
    k = f2loopy.tag_inames(k, "e:g.0, i:vec, m:vec")
    for name in ("x", "y", "z"):
        k = f2loopy.tag_array_axes(k, name, "vec,N0")
    return k


def test_real_power_is_one_vector_statement():
    c = code(_vectorize(kernel(POWERS)))
    assert ("y[e - 1] = 2.0f * pow((float4)(x[e - 1] / 3.0f), (float4)(1.4f)) + "
            "pow((float4)(x[0]), (float4)(0.5f));") in c
    # x ** 3 (an integer power) is not vectorized: z's loop is unrolled
    assert "int const m = 4;" in c
    assert "z_flat[m - 1 + 4 * (e - 1)] = f2l_powi_float(x_flat[m - 1 + 4 * (e - 1)], 3)" in c
    # outside a vector statement pow stays scalar
    plain = code(f2loopy.tag_inames(kernel(POWERS), "e:g.0, i:l.0, m:l.0"))
    assert "pow(x[i - 1 + 4 * (e - 1)] / 3.0f, 1.4f)" in plain


def test_power_of_an_integer_vector_is_unrolled():
    # a real power of an integer array would need a vector conversion: the
    # loop stays scalar statements
    src = """
subroutine ipow(ne, m, y)
  implicit none
  integer ne, e, i
  integer m(4, ne)
  real y(4, ne)
  do e = 1, ne
    do i = 1, 4
      y(i, e) = m(i, e) ** 1.5
    end do
  end do
end subroutine
"""
    k = f2loopy.tag_inames(kernel(src), "e:g.0, i:vec")
    for name in ("m", "y"):
        k = f2loopy.tag_array_axes(k, name, "vec,N0")
    c = code(k)
    assert "int const i = 4;" in c and "(float4)" not in c


@needs_gfortran
def test_vector_pow_matches_gfortran(tmp_path, cl_queue):
    ne = 5
    run_transformed(POWERS, "powers", _vectorize,
                    [ne, farray((4, ne), seed=3), zeros(4, ne), zeros(4, ne)], tmp_path, cl_queue)
