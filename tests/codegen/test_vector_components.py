"""Global vector arrays read and written by constant component (``q[...].s1``),
as loopy does, rather than through a flattened float pointer (issue 19: the
paper's level 5 on an H100)."""

from __future__ import annotations

from transform_util import code, kernel, zeros
from util import farray, needs_gfortran, run_transformed

import f2loopy

FIELDS = """
subroutine fields(ne, q, r)
  implicit none
  integer ne, e, i
  real q(4, 8, ne), r(4, ne)
  do e = 1, ne
    do i = 1, 4
      r(i, e) = q(i, 1, e) * q(i, 2, e) + q(i, 3, e) - q(i, 8, e) * q(i, 5, e)
    end do
  end do
end subroutine
"""


def _split(k, fields="r"):
    k = f2loopy.tag_inames(k, "e:g.0, i:l.0")
    k = f2loopy.set_array_axis_names(k, "q", "i,field,e")
    k = f2loopy.split_array_dim(k, ("q", 1, "F"), 4)
    return f2loopy.tag_array_axes(k, "q", "N0,vec,N1,N2")


def test_constant_components_of_a_global_vector_array():
    c = code(_split(kernel(FIELDS)))
    assert "__global float4 const *__restrict__ q," in c
    assert ("r[i - 1 + 4 * (e - 1)] = q[i - 1 + 4 * (2 * (e - 1))].s0 * "
            "q[i - 1 + 4 * (2 * (e - 1))].s1 + q[i - 1 + 4 * (2 * (e - 1))].s2 - "
            "q[i - 1 + 4 * (1 + 2 * (e - 1))].s3 * q[i - 1 + 4 * (1 + 2 * (e - 1))].s0;") in c
    assert "q_flat[" not in c


def test_written_components_and_variable_components():
    k = kernel(FIELDS.replace("r(i, e) = q(i, 1, e)", "q(i, 4, e) = q(i, 1, e)"))
    c = code(_split(k))
    assert "q[i - 1 + 4 * (2 * (e - 1))].s3 = q[i - 1 + 4 * (2 * (e - 1))].s0 * " in c
    # a component chosen by a loop index stays a scalar access through the flat pointer
    loop = """
subroutine pick(ne, q, r)
  implicit none
  integer ne, e, i, f
  real q(4, 8, ne), r(4, ne)
  do e = 1, ne
    do i = 1, 4
      do f = 1, 4
        r(i, e) = r(i, e) + q(i, f, e)
      end do
    end do
  end do
end subroutine
"""
    c = code(_split(kernel(loop)))
    # (split_array_dim splits the loop over f with the axis, as loopy's
    # auto_split_inames does)
    assert "q_flat[f_inner + 4 * (i - 1 + 4 * (f_outer + 2 * (e - 1)))]" in c
    assert "].s" not in c


@needs_gfortran
def test_components_match_gfortran(tmp_path, cl_queue):
    ne = 3
    run_transformed(FIELDS, "fields", _split, [ne, farray((4, 8, ne), seed=1), zeros(4, ne)],
                    tmp_path, cl_queue)
    written = FIELDS.replace("r(i, e) = q(i, 1, e)", "q(i, 4, e) = q(i, 1, e)")
    run_transformed(written, "fields", _split, [ne, farray((4, 8, ne), seed=2), zeros(4, ne)],
                    tmp_path, cl_queue)
