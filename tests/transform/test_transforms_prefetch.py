"""Transformation library II, on-chip copies: add_prefetch (substitution
rules and precompute: :mod:`test_transforms_rules`; buffers, layouts and
vector axes: :mod:`test_transforms_data`).

Unit tests on inline Fortran (the IR, the exact message of every refusal) and
differential tests of the transformed kernel on PoCL against gfortran.
"""

import pytest

import f2loopy
from test_transforms_data import ACC
from test_transforms_rules import STENCIL, TWO_USES
from transform_util import code, ex, insn_strs, kernel, refused, tags, zeros
from util import farray, needs_gfortran, run_transformed


# {{{ add_prefetch

DMUL = """
subroutine dmul(ne, d, u, y)
  implicit none
  integer ne, e, i, n
  real d(4, 4), u(4, ne), y(4, ne), acc
  do e = 1, ne
    do i = 1, 4
      acc = 0
      do n = 1, 4
        acc = acc + (d(i, n) + 2.0 * d(n, i)) * u(n, e)
      end do
      y(i, e) = acc
    end do
  end do
end subroutine
"""


def _dmul():
    return f2loopy.tag_inames(kernel(DMUL), "e:g.0, i:l.0")


def test_prefetch_whole_small_array():
    k = f2loopy.add_prefetch(_dmul(), "D[:,:]")
    t = k.temporaries["d_fetch"]
    assert t.shape == (4, 4) and t.lower_bounds == (1, 1)
    fetch = k.insn("d_fetch_compute")
    # nothing depends on the work-group: each group fetches (no 'e' loop needed)
    assert fetch.within_inames == {"d_dim_0", "d_dim_1"}
    assert ex(fetch.expression) == "d[d_dim_0, d_dim_1]"
    assert insn_strs(k)["acc_1"] == "acc + (d_fetch[i, n] + 2.0f*d_fetch[n, i])*u[n, e]"
    assert tags(k)["d_dim_0"] == tags(k)["d_dim_1"] == "l.auto"
    c = code(k)
    assert "__local float d_fetch[16];" in c
    assert "int const d_dim_0 = 1 + (int) get_local_id(0);" in c
    # the transposed read needs what other work-items fetched
    assert "barrier(CLK_LOCAL_MEM_FENCE); /* for d_fetch */" in c


def test_prefetch_with_fixed_subscripts_and_axis_names():
    k = f2loopy.add_prefetch(_dmul(), "u[:,e]", default_tag=None)
    assert k.temporaries["u_fetch"].shape == (4,)
    assert k.insn("u_fetch_compute").within_inames == {"e", "u_dim_0"}
    k = f2loopy.set_array_axis_names(_dmul(), "u", "n,e")
    k = f2loopy.add_prefetch(k, "u[:,e]", temporary_name="ue")
    assert "u_dim_n" in k.all_inames() and k.temporaries["ue"].axis_names == ("u_dim_n",)
    # a bare name: what the uses touch while the sweep inames vary
    k = f2loopy.add_prefetch(_dmul(), "d", "i,n", dim_arg_names="r,s", default_tag=None,
                             fetch_bounding_box=True)
    assert k.temporaries["d_fetch"].axis_names == ("r", "s")
    assert k.temporaries["d_fetch"].shape == (4, 4)
    assert k.insn("d_fetch_compute").within_inames == {"r", "s"}


QF = """
subroutine qf(ne, q, r)
  implicit none
  integer ne, e, i, j
  real q(4, 3, 5, ne), r(4, 3, ne)
  do e = 1, ne
    do j = 1, 3
      do i = 1, 4
        r(i, j, e) = q(i, j, 1, e) * q(i, j, 2, e) + q(i, j, 5, e) - q(1, j, 4, e)
      end do
    end do
  end do
end subroutine
"""


def _qf(k):
    k = f2loopy.tag_inames(k, "e:g.0, i:l.0, j:l.1")
    k = f2loopy.set_array_axis_names(k, "q", "i,j,field,e")
    return f2loopy.add_prefetch(k, "q[i,j,:,e]")


def test_prefetch_selected_by_subscripts():
    k = _qf(kernel(QF))
    t = k.temporaries["q_fetch"]
    assert t.shape == (5,) and t.lower_bounds == (1,) and t.axis_names == ("q_dim_field",)
    assert k.insn("q_fetch_compute").within_inames == {"e", "i", "j", "q_dim_field"}
    assert ex(k.insn("q_fetch_compute").expression) == "q[i, j, q_dim_field, e]"
    # q(1, j, 4, e) does not match the subscripts i, j, _, e: it stays
    assert insn_strs(k)["r"] == \
        "q_fetch[1]*q_fetch[2] + q_fetch[5] + -1*q[1, j, 4, e]"
    assert "float q_fetch[5];" in code(k)


def test_prefetch_refusals():
    k = _dmul()
    refused(lambda: f2loopy.add_prefetch(k, "d[:]"),
            "add_prefetch: 'd' has 2 axes but 1 are given")
    refused(lambda: f2loopy.add_prefetch(k, "acc"), "add_prefetch: 'acc' is a scalar")
    refused(lambda: f2loopy.add_prefetch(k, "y[:,:]"), "add_prefetch: no read of 'y[:,:]' found")
    refused(lambda: f2loopy.add_prefetch(k, "u[:,e]", within="id:y"),
            "add_prefetch: no read of 'u[:,e]' found in 'id:y'")
    refused(lambda: f2loopy.add_prefetch(k, "u[e,:]"),
            "add_prefetch: no read of 'u[e,:]' found (the reads are: u[n, e])")
    # loopy's keyword that would be ignored is refused
    refused(lambda: f2loopy.add_prefetch(k, "u", footprint_subscripts=[("i", "e")]),
            "add_prefetch: footprint_subscripts= is not supported: the footprint is that of "
            "the reads; name the accesses to fetch in the variable instead (e.g. 'u[:, j]' "
            "fetches the reads with second subscript j, whole first axis)")
    refused(lambda: f2loopy.assignment_to_subst(kernel(TWO_USES), "t", within="id:c"),
            "assignment_to_subst: within='id:c' is not supported: the rules replace every "
            "read of 't'")
    refused(lambda: f2loopy.add_prefetch(k, "d[i,"),
            "add_prefetch: cannot parse 'd[i,' (expected 'name[...]')")
    refused(lambda: f2loopy.add_prefetch(k, "d[:,]"), "add_prefetch: empty index in 'd[:,]'")
    refused(lambda: f2loopy.add_prefetch(k, "zz[:,:]"),
            "no variable named 'zz' (the kernel has: ne, d, u, y, acc)")
    refused(lambda: f2loopy.add_prefetch(kernel(ACC), "r[:,:,e]"),
            "add_prefetch: 'r' is written by the kernel; prefetching it would read stale "
            "values (use buffer_array)")
    refused(lambda: f2loopy.add_prefetch(kernel(STENCIL), "a[:]"),
            "add_prefetch: axis 0 of 'a' does not have a constant extent (fix_parameters "
            "first)")


@needs_gfortran
@pytest.mark.parametrize("spec,sweep", [("d[:,:]", ()), ("d", "i,n"), ("u[:,e]", ())])
def test_prefetch_matches_gfortran(spec, sweep, tmp_path, cl_queue):
    def t(k):
        k = f2loopy.tag_inames(k, "e:g.0, i:l.0")
        return f2loopy.add_prefetch(k, spec, sweep)
    ne = 5
    run_transformed(DMUL, "dmul", t, [ne, farray((4, 4), seed=1), farray((4, ne), seed=2),
                                      zeros(4, ne)], tmp_path, cl_queue, rtol=1e-5)


@needs_gfortran
def test_prefetch_selected_by_subscripts_matches_gfortran(tmp_path, cl_queue):
    ne = 3
    run_transformed(QF, "qf", _qf, [ne, farray((4, 3, 5, ne), seed=3), zeros(4, 3, ne)],
                    tmp_path, cl_queue)

# }}}


def test_prefetch_subscripts_are_compared_as_values():
    src = """subroutine sh(n, m, x, y)
  integer n, m, i, j
  real x(n + 1, m), y(n, m)
  do j = 1, m
    do i = 1, n
      y(i, j) = x(i + 1, j)
    end do
  end do
end subroutine
"""
    k = f2loopy.fix_parameters(f2loopy.parse_fortran(src, "t.f90").kernels[0], m=4)
    a = f2loopy.add_prefetch(k, "x[1 + i, :]", default_tag=None)
    b = f2loopy.add_prefetch(k, "x[i + 1, :]", default_tag=None)
    assert str(a) == str(b) and "x_fetch" in a.temporaries


def test_precompute_inames_may_name_fewer_loops_than_storage_axes():
    src = """subroutine st(n, u, v)
  integer n, i
  real u(n + 1), v(n), w
  do i = 1, n
    w = u(i) + u(i + 1)
    v(i) = w * 2
  end do
end subroutine
"""
    k = f2loopy.parse_fortran(src, "t.f90").kernels[0]
    k = f2loopy.extract_subst(k, "uu", "u[a] + u[b]", parameters="a, b")
    k = f2loopy.split_iname(k, "i", 4)
    k = f2loopy.precompute(k, "uu", "i_inner", precompute_inames="ip", default_tag=None)
    assert "ip" in k.all_inames() and len(k.temporaries["uu_0"].shape) == 2
