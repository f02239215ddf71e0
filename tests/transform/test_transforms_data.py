"""Transformation library II: buffers, data layout, address spaces and
vector axes (substitution rules, precompute and prefetch:
:mod:`test_transforms_rules`).

Each transformation has unit tests on inline Fortran (the IR it makes, the
exact message of every refusal) and differential tests: the transformed
kernel, run on PoCL through the generated Python glue, against gfortran.
"""

import numpy as np
import pytest

import f2loopy
from f2loopy.ir.kernel import AddressSpace
from util import farray, needs_gfortran, run_transformed


from transform_util import code, ex, insn_strs, kernel, refused, tags, zeros


# {{{ buffer_array, collect_common_factors_on_increment, alias_temporaries

ACC = """
subroutine acc(ne, jac, d, u, r)
  implicit none
  integer ne, e, i, n
  real jac(ne), d(4, 4), u(4, 4, ne), r(4, 4, ne), jid
  do e = 1, ne
    do i = 1, 4
      do n = 1, 4
        jid = jac(e) * d(i, n)
        r(i, 1, e) = r(i, 1, e) - jac(e) * d(i, n) * u(n, 1, e)
        r(i, 2, e) = r(i, 2, e) + (-jac(e)) * (d(i, n) * u(n, 2, e))
        r(i, 4, e) = r(i, 4, e) - jid * u(n, 4, e) * u(n, 3, e)
      end do
    end do
  end do
end subroutine
"""


def _acc(init="0", store="base + buffer", **kw):
    k = f2loopy.tag_inames(kernel(ACC), "e:g.0, i:l.0")
    k = f2loopy.assignment_to_subst(k, "jid")
    return f2loopy.buffer_array(k, "r", (), init_expression=init, store_expression=store,
                                default_tag="for", **kw)


def acc_args(ne=3):
    return [ne, farray(ne, seed=0), farray((4, 4), seed=1), farray((4, 4, ne), seed=2),
            farray((4, 4, ne), seed=3)]


def test_buffer_array_private_buffer_per_element():
    k = _acc(fetch_bounding_box=True)
    buf = k.temporaries["r_buf"]
    # fields 1, 2 and 4 are touched: the buffer covers 1..4, one per (e, i)
    # r's axes have no names: neither have the buffer's (it crosses the
    # sandbox's checks of names, as scripts' kernels do)
    assert buf.shape == (4,) and buf.lower_bounds == (1,) and buf.axis_names is None
    from f2loopy.ir.serialize import roundtrip
    assert roundtrip(k).temporaries["r_buf"] == buf
    init, store = k.insn("r_buf_init"), k.insn("r_buf_store")
    assert ex(init.assignee) == "r_buf[r_init_1]" and init.expression == 0
    assert init.within_inames == {"e", "i", "r_init_1"}
    assert ex(store.assignee) == "r[i, r_store_1, e]"
    assert ex(store.expression) == "r[i, r_store_1, e] + r_buf[r_store_1]"
    assert store.depends_on == {"r", "r_1", "r_2"}
    assert insn_strs(k)["r"] == "r_buf[1] + -1*jac[e]*d[i, n]*u[n, 1, e]"
    assert all(k.insn(x).depends_on >= {"r_buf_init"} for x in ("r", "r_1", "r_2"))
    assert tags(k)["r_init_1"] == tags(k)["r_store_1"] == "for"
    assert "    float r_buf[4];" in code(k)


def test_buffer_array_names_from_axis_names_and_default_fetch():
    k = f2loopy.set_array_axis_names(kernel(ACC), "r", "i,field,e")
    k = f2loopy.buffer_array(k, "r", (), default_tag=None)
    assert {"r_init_field", "r_store_field"} <= set(k.all_inames())
    assert not {"r_init_field", "r_store_field"} & set(k.iname_tags)
    assert ex(k.insn("r_buf_init").expression) == "r[i, r_init_field, e]"
    assert ex(k.insn("r_buf_store").expression) == "r_buf[r_store_field]"


BMM = """
subroutine bmm(m, a, b, c)
  implicit none
  integer m, i, j, k
  real a(5, 3), b(3, m), c(5, m)
  do j = 1, m
    do k = 1, 3
      do i = 1, 5
        c(i, j) = c(i, j) + a(i, k) * b(k, j)
      end do
    end do
  end do
end subroutine
"""


def test_buffer_array_along_buffer_inames_in_local_memory():
    k = f2loopy.tag_inames(kernel(BMM), "j:g.0, i:l.0")
    k = f2loopy.buffer_array(k, "c", "i")
    buf = k.temporaries["c_buf"]
    assert buf.shape == (5,) and buf.lower_bounds == (1,)
    assert ex(k.insn("c_buf_init").expression) == "c[c_init_0, j]"
    assert k.insn("c_buf_init").within_inames == {"j", "c_init_0"}
    assert insn_strs(k)["c"] == "c_buf[i] + a[i, k]*b[k, j]"
    assert tags(k)["c_init_0"] == tags(k)["c_store_0"] == "l.auto"
    c = code(k)
    assert "__local float c_buf[5];" in c
    assert "int const c_store_0 = 1 + (int) get_local_id(0);" in c


RO = """
subroutine ro(n, a, b)
  implicit none
  integer n, i, k
  real a(0:5, n), b(n)
  do i = 1, n
    b(i) = 0
    do k = 1, 4
      b(i) = b(i) + a(k - 1, i) * a(k + 1, i)
    end do
  end do
end subroutine
"""

THROUGH_RULE = """
subroutine tr(n, a, r)
  implicit none
  integer n, i, k
  real a(3, n), r(n), t
  do i = 1, n
    do k = 1, 3
      t = r(i) * 0.5
      r(i) = t + a(k, i)
    end do
  end do
end subroutine
"""


def test_buffer_array_read_only_and_through_rules():
    k = f2loopy.buffer_array(kernel(RO), "a", "k", default_tag=None)
    assert k.temporaries["a_buf"].shape == (6,)
    assert k.temporaries["a_buf"].lower_bounds == (0,)
    assert insn_strs(k)["b_1"] == "b[i] + a_buf[k + -1]*a_buf[k + 1]"
    # nothing is written: no store and no store loop
    assert "a_buf_store" not in k.id_to_insn and "a_store_0" not in k.all_inames()
    # a read through a substitution rule reads the buffer too
    k = f2loopy.assignment_to_subst(kernel(THROUGH_RULE), "t")
    k = f2loopy.buffer_array(k, "r", (), default_tag=None)
    assert list(k.substitutions) == ["t_subst"]
    assert ex(k.substitutions["t_subst"].expression) == "r_buf*0.5f"
    assert insn_strs(k)["r"] == "t_subst() + a[k, i]"


def test_buffer_array_refusals():
    refused(lambda: f2loopy.buffer_array(kernel(BMM), "m"), "buffer_array: 'm' is a scalar")
    refused(lambda: f2loopy.buffer_array(kernel(BMM), "c", "i", within="id:nothing"),
            "buffer_array: no instruction accesses 'c'")
    src = """subroutine bo(n, c)
  implicit none
  integer n, i
  real c(n)
  c(1) = 0
  do i = 1, n
    c(i) = c(i) + i
    c(i) = c(i) * 2
  end do
end subroutine
"""
    refused(lambda: f2loopy.buffer_array(kernel(src), "c"),
            "buffer_array: instruction 'c' accesses 'c' outside loop(s) i", "5:3")
    refused(lambda: f2loopy.buffer_array(kernel(src), "c", within="id:c_1"),
            "buffer_array: instruction 'c_2' also accesses 'c' inside the buffered loops but "
            "is not selected", "8:5")
    src = """subroutine bn(n, c)
  implicit none
  integer n, i
  real c(n)
  do i = 1, n
    c(i) = c(i) * 2
  end do
end subroutine
"""
    refused(lambda: f2loopy.buffer_array(kernel(src), "c", "i"),
            "buffer_array: the extent of the buffer along axis 0 is not a constant")
    refused(lambda: f2loopy.buffer_array(kernel(BMM), "c", "i", temporary_address_space="gpu"),
            "buffer_array: unknown address space 'gpu' (valid: private, local, global)")


def test_collect_common_factors_moves_them_to_the_store():
    k = f2loopy.collect_common_factors_on_increment(_acc(), "r_buf")
    s = insn_strs(k)
    # -1 and jac(e) are common (also inside the nested product and inside
    # the rule jid_subst); d(i, n) is common too but varies with n
    assert s["r"] == "r_buf[1] + d[i, n]*u[n, 1, e]"
    assert s["r_1"] == "r_buf[2] + d[i, n]*u[n, 2, e]"
    assert s["r_2"] == "r_buf[4] + d[i, n]*u[n, 4, e]*u[n, 3, e]"
    assert s["r_buf_store"] == "r[i, r_store_1, e] + -1*jac[e]*r_buf[r_store_1]"
    assert not k.substitutions
    # nothing in common: the kernel comes back unchanged
    src = ACC.replace("- jid * u(n, 4, e) * u(n, 3, e)", "+ u(n, 4, e)")
    k = f2loopy.tag_inames(kernel(src), "e:g.0, i:l.0")
    k = f2loopy.buffer_array(k, "r", (), init_expression="0", store_expression="base + buffer")
    assert f2loopy.collect_common_factors_on_increment(k, "r_buf") is k


SACC = """
subroutine sacc(n, m, jac, x, y)
  implicit none
  integer n, m, i, k
  real jac(n), x(m, n), y(n), v
  do i = 1, n
    v = 0
    do k = 1, m
      v = v + jac(i) * x(k, i)
    end do
    y(i) = v
  end do
end subroutine
"""


def test_collect_common_factors_on_a_scalar_accumulator():
    k = f2loopy.collect_common_factors_on_increment(kernel(SACC), "v")
    assert insn_strs(k) == {"v": "0.0f", "v_1": "v + x[k, i]", "y": "jac[i]*v"}


def test_collect_common_factors_refusals():
    refused(lambda: f2loopy.collect_common_factors_on_increment(_acc(None, None), "r_buf"),
            "collect_common_factors_on_increment: 'r_buf_init' sets 'r_buf' to r[i, r_init_1, "
            "e], not to zero; the factors cannot move to the reads (they would scale that "
            "value too)", "10:9")
    unread = SACC.replace("    y(i) = v\n", "")
    refused(lambda: f2loopy.collect_common_factors_on_increment(kernel(unread), "v"),
            "collect_common_factors_on_increment: 'v' is never read")
    refused(lambda: f2loopy.collect_common_factors_on_increment(kernel(SACC), "y"),
            "collect_common_factors_on_increment: no increments of 'y' found")
    src = """subroutine arg(n, m, jac, x, v, y)
  implicit none
  integer n, m, i, k
  real jac(n), x(m, n), v(n), y(n)
  do i = 1, n
    do k = 1, m
      v(i) = v(i) + jac(i) * x(k, i)
    end do
    y(i) = v(i)
  end do
end subroutine
"""
    refused(lambda: f2loopy.collect_common_factors_on_increment(kernel(src), "v"),
            "collect_common_factors_on_increment: nothing sets 'v' to zero before its "
            "increments; the factors cannot move to the reads (they would scale its first "
            "value too)")
    # a factor that changes while the sum goes on stays where it is
    src = """subroutine run(n, jac, x, y)
  implicit none
  integer n, i
  real jac(n), x(n), y(n), v
  v = 0
  do i = 1, n
    v = v + jac(i) * x(i)
    y(i) = v
  end do
end subroutine
"""
    k = kernel(src)
    assert f2loopy.collect_common_factors_on_increment(k, "v") is k


@needs_gfortran
@pytest.mark.parametrize("variant", ["fetch", "zero", "zero+collect"])
def test_buffer_array_matches_gfortran(variant, tmp_path, cl_queue):
    def t(k):
        k = f2loopy.tag_inames(k, "e:g.0, i:l.0")
        if variant == "fetch":
            return f2loopy.buffer_array(k, "r", (), default_tag=None)
        k = f2loopy.assignment_to_subst(k, "jid")
        k = f2loopy.buffer_array(k, "r", (), init_expression="0",
                                 store_expression="base + buffer", default_tag="for",
                                 fetch_bounding_box=True)
        if variant == "zero+collect":
            k = f2loopy.collect_common_factors_on_increment(k, "r_buf")
        return k
    run_transformed(ACC, "acc", t, acc_args(), tmp_path, cl_queue, rtol=1e-5)


@needs_gfortran
def test_buffer_array_along_inames_matches_gfortran(tmp_path, cl_queue):
    def t(k):
        k = f2loopy.tag_inames(k, "j:g.0, i:l.0")
        return f2loopy.buffer_array(k, "c", "i")
    m = 6
    run_transformed(BMM, "bmm", t, [m, farray((5, 3), seed=1), farray((3, m), seed=2),
                                    farray((5, m), seed=3)], tmp_path, cl_queue, rtol=1e-5)


@needs_gfortran
def test_buffers_read_only_and_through_rules_match_gfortran(tmp_path, cl_queue):
    run_transformed(RO, "ro", lambda k: f2loopy.buffer_array(k, "a", "k"),
                    [5, farray((6, 5), seed=1), farray(5, seed=2)], tmp_path, cl_queue)

    def t(k):
        k = f2loopy.assignment_to_subst(k, "t")
        return f2loopy.buffer_array(k, "r", (), default_tag=None)
    run_transformed(THROUGH_RULE, "tr", t, [5, farray((3, 5), seed=3), farray(5, seed=4)],
                    tmp_path, cl_queue)


@needs_gfortran
def test_collect_on_scalar_accumulator_matches_gfortran(tmp_path, cl_queue):
    run_transformed(SACC, "sacc", lambda k: f2loopy.collect_common_factors_on_increment(k, "v"),
                    [6, 5, farray(6, seed=1), farray((5, 6), seed=2), zeros(6)], tmp_path,
                    cl_queue, rtol=1e-5)


TWO = """
subroutine two(ne, u, y, z)
  implicit none
  integer ne, e, i
  real u(4, ne), y(4, ne), z(4, ne), t1(4), t2(2, 3)
  do e = 1, ne
    do i = 1, 4
      t1(i) = u(i, e) * 2.0
    end do
    do i = 1, 4
      y(i, e) = t1(5 - i)
    end do
    do i = 1, 2
      t2(i, 1) = u(i, e) + 1.0
      t2(i, 3) = u(i + 2, e) + 1.0
    end do
    do i = 1, 4
      z(i, e) = t2(1 + mod(i, 2), 1) + t2(2 - mod(i, 2), 3)
    end do
  end do
end subroutine
"""


def _two(k):
    k = f2loopy.tag_inames(k, "e:g.0, i:l.0, i_1:l.0, i_2:l.0, i_3:l.0")
    return f2loopy.alias_temporaries(k, ["t1", "t2"])


def test_alias_temporaries_share_one_storage():
    k = _two(kernel(TWO))
    assert k.temporaries["t1"].base_storage == k.temporaries["t2"].base_storage == \
        "temp_storage"
    # every use of t1 comes before any use of t2
    assert k.insn("t2").depends_on >= {"t1", "y"}
    assert k.insn("t2_1").depends_on >= {"t1", "y"}
    assert k.insn("z").depends_on >= {"t1", "y"}
    c = code(k)
    assert "__local float temp_storage[6];" in c
    assert "float t1" not in c and "float t2" not in c
    assert "temp_storage[i_2 - 1 + 4] = " in c
    # the reads of t1 finish before t2 overwrites the storage: a barrier
    # between 'y' and 't2', placed without being asked for
    between = c[c.index("y[i_1 - 1"):c.index("temp_storage[i_2 - 1]")]
    assert "barrier(CLK_LOCAL_MEM_FENCE)" in between
    again = f2loopy.alias_temporaries(k, "t1,t2", synchronize_for_exclusive_use=False)
    assert again.temporaries["t1"].base_storage == "temp_storage_1"


def test_alias_temporaries_refusals():
    k = kernel(TWO)
    refused(lambda: f2loopy.alias_temporaries(k, ["t1", "u"]),
            "alias_temporaries: 'u' is not a temporary")
    local = f2loopy.set_temporary_address_space(k, "t1", "local")
    refused(lambda: f2loopy.alias_temporaries(local, ["t1", "t2"]),
            "alias_temporaries: the temporaries are in different address spaces")
    src = """subroutine ty(n, a, b)
  implicit none
  integer n, i
  real a(n), t
  double precision b(n), s
  do i = 1, n
    t = a(i)
    s = t * 2
    b(i) = s
  end do
end subroutine
"""
    refused(lambda: f2loopy.alias_temporaries(kernel(src), "t,s"),
            "alias_temporaries: the temporaries have different types")
    src = src.replace("double precision b(n), s", "real b(n), s")
    refused(lambda: f2loopy.alias_temporaries(kernel(src), "t,s"),
            "alias_temporaries: instruction 's' uses two of the aliased temporaries at once")


@needs_gfortran
def test_alias_temporaries_match_gfortran(tmp_path, cl_queue):
    ne = 3
    run_transformed(TWO, "two", _two, [ne, farray((4, ne), seed=1), zeros(4, ne),
                                       zeros(4, ne)], tmp_path, cl_queue)

# }}}


# {{{ array layouts: axis tags, names, splits; address spaces; privatisation

LAYOUT = """
subroutine lay(ne, q, r)
  implicit none
  integer ne, e, i, f
  real q(0:2, 8, ne), r(3, 0:7, ne)
  do e = 1, ne
    do f = 1, 8
      do i = 1, 3
        r(i, f - 1, e) = q(i - 1, f, e) * f + q(i - 1, 9 - f, e) + r(i, f - 1, e)
      end do
    end do
  end do
  q(2, 5, 1) = r(3, 7, ne)
end subroutine
"""


def axis_tags(k, name):
    return ",".join(map(str, k.variable(name).axis_tags))


def test_tag_array_axes_forms():
    k = kernel(LAYOUT)
    c = f2loopy.tag_array_axes(k, "q,r", "c")
    assert axis_tags(c, "q") == axis_tags(c, "r") == "N2,N1,N0"
    lay = c.variable("q").fortran_layout
    assert lay is not None and ",".join(map(str, lay.axis_tags)) == "N0,N1,N2"
    assert lay.shape == k.variable("q").shape and lay.lower_bounds == (0, 1, 1)
    assert f2loopy.tag_array_axes(k, "q", "f") is k       # already Fortran order
    assert axis_tags(f2loopy.tag_data_axes(k, "q", "N2,N0,N1"), "q") == "N2,N0,N1"
    # per axis, as loopy reads them: a 'c' axis is faster than those before it,
    # an 'f' axis slower
    assert axis_tags(f2loopy.tag_array_axes(k, "q", "c,c,c"), "q") == "N2,N1,N0"
    assert axis_tags(f2loopy.tag_array_axes(k, "q", "f,f,c"), "q") == "N1,N2,N0"
    assert f2loopy.tag_array_axes(k, "q", "f,f,f") is k
    named = f2loopy.set_array_dim_names(k, "q", "i,f,e")
    assert named.variable("q").axis_names == ("i", "f", "e")
    d = f2loopy.tag_array_axes(named, "q", {"e": "N0", "i": "N2"})
    assert axis_tags(d, "q") == "N2,N1,N0"
    assert d.variable("r").fortran_layout is None
    code(d)


def test_tag_array_axes_changes_the_indexing():
    k = f2loopy.tag_array_axes(kernel(LAYOUT), "q", "c")
    # q(0:2, 8, ne) in C order: the last axis varies fastest
    assert "q[e - 1 + ne * (f - 1 + 8 * (i - 1))]" in code(k)


def test_tag_array_axes_refusals():
    k = kernel(LAYOUT)
    refused(lambda: f2loopy.tag_array_axes(k, "q", {"e": "N0"}),
            "tag_array_axes: the axes of 'q' have no names (use set_array_axis_names, or give "
            "the tags as a string)")
    named = f2loopy.set_array_axis_names(k, "q", "i,f,e")
    refused(lambda: f2loopy.tag_array_axes(named, "q", {"x": "N0"}),
            "tag_array_axes: 'q' has no axis named 'x' (axes: i, f, e)")
    refused(lambda: f2loopy.tag_array_axes(k, "q", "N0,N1"),
            "tag_array_axes: 2 axis tags given for an array with 3 axes")
    refused(lambda: f2loopy.tag_array_axes(k, "q", "N0,N0,N1"),
            "tag_array_axes: axis nesting orders repeat in 'N0,N0,N1'")
    refused(lambda: f2loopy.tag_array_axes(k, "q", "x,N0,N1"),
            "tag_array_axes: unknown array axis tag 'x' (valid: N0..Nk, vec, sep, or 'c'/'f')")
    refused(lambda: f2loopy.tag_array_axes(k, "q", "c,N0,N1"),
            "tag_array_axes: 'c'/'f' and explicit N0..Nk cannot be mixed in 'c,N0,N1'")
    refused(lambda: f2loopy.tag_array_axes(k, "q", "vec,N0,vec"),
            "tag_array_axes: at most one axis can be tagged 'vec'")
    refused(lambda: f2loopy.tag_array_axes(k, "q", "N0,N1,vec"),
            "tag_array_axes: axis 2 of 'q' has extent ne; a 'vec' axis needs 2, 3, 4, 8 or 16")
    refused(lambda: f2loopy.tag_array_axes(k, "q", "sep,N0,N1"),
            "tag_array_axes: 'sep' axes are not supported")
    refused(lambda: f2loopy.tag_array_axes(k, "ne", "N0"), "tag_array_axes: 'ne' is a scalar")
    refused(lambda: f2loopy.set_array_axis_names(k, "q", "i,f"),
            "set_array_axis_names: 'q' has 3 axes, 2 names given")


@pytest.mark.parametrize("order", ["F", "C"])
def test_split_array_axis(order):
    k = f2loopy.set_array_axis_names(kernel(LAYOUT), "q", "i,field,e")
    if order == "F":
        s = f2loopy.split_array_dim(k, ("q", 1, "F"), 4, auto_split_inames=False)
        shape, names, tags_ = (3, 4, 2), ("i", "field_inner", "field_outer", "e"), \
            "N0,N1,N2,N3"
        sub = "q[i + -1, modulo(f + -1, 4), (f + -1) // 4, e]"
        const = "q[2, 0, 1, 1]"
    else:
        s = f2loopy.split_array_axis(k, "q", 1, 4, order="C", auto_split_inames=False)
        shape, names, tags_ = (3, 2, 4), ("i", "field_outer", "field_inner", "e"), \
            "N0,N2,N1,N3"
        sub = "q[i + -1, (f + -1) // 4, modulo(f + -1, 4), e]"
        const = "q[2, 1, 0, 1]"
    q = s.variable("q")
    assert q.shape[:3] == shape and str(q.shape[3]) == "ne"
    assert q.lower_bounds == (0, 0, 0, 1)
    assert q.axis_names == names and axis_tags(s, "q") == tags_
    assert q.fortran_layout.splits == ((1, 4, order),)
    assert q.fortran_layout.shape == k.variable("q").shape
    body = insn_strs(s)
    assert sub in body["r"]
    # a constant subscript is split at translation time: q(2, 5, 1)
    assert ex(s.insn("q").assignee) == const


def test_split_array_axis_forms_and_refusals():
    k = kernel(LAYOUT)
    both = f2loopy.split_array_dim(k, [("q", 1, "F"), ("r", 1, "C")], 2)
    assert both.variable("q").shape[:3] == (3, 2, 4)       # inner first
    assert both.variable("r").shape[:3] == (3, 4, 2)       # outer first
    assert f2loopy.split_array_axis(k, ("q", 1), 4).variable("q").shape[:3] == (3, 2, 4)
    refused(lambda: f2loopy.split_array_axis(k, "q", 1),
            "split_array_axis: give the axis number and the count")
    refused(lambda: f2loopy.split_array_axis(k, "q", 1, 4, order="X"),
            "split_array_axis: order must be 'C' or 'F'")
    refused(lambda: f2loopy.split_array_axis(k, "q", 3, 4), "split_array_axis: 'q' has no axis 3")
    refused(lambda: f2loopy.split_array_axis(k, "q", 2, 2),
            "split_array_axis: axis 2 of 'q' must have a constant extent (fix_parameters first)")
    refused(lambda: f2loopy.split_array_axis(k, "q", 1, 3),
            "split_array_axis: extent 8 of axis 1 of 'q' is not a multiple of 3")
    v = f2loopy.tag_array_axes(f2loopy.split_array_axis(k, "q", 1, 4), "q", "N0,N1,vec,N2")
    refused(lambda: f2loopy.split_array_axis(v, "q", 2, 2),
            "split_array_axis: axis 2 of 'q' is tagged 'vec'; retag it before splitting")


LAYOUTS = {
    "c": lambda k: f2loopy.tag_array_axes(k, "q,r", "c"),
    "permuted": lambda k: f2loopy.tag_data_axes(k, "q,r", "N2,N0,N1"),
    "dict": lambda k: f2loopy.tag_array_axes(
        f2loopy.set_array_axis_names(k, "q", "i,f,e"), "q", {"e": "N0", "i": "N2"}),
    "split F": lambda k: f2loopy.split_array_dim(k, ("q", 1, "F"), 4),
    "split C": lambda k: f2loopy.split_array_axis(k, "q,r", 1, 2, order="C"),
    "split F vec": lambda k: f2loopy.tag_array_axes(
        f2loopy.split_array_dim(k, [("q", 1, "F"), ("r", 1, "F")], 4), "q,r", "N0,vec,N2,N1"),
    "split C vec": lambda k: f2loopy.tag_array_axes(
        f2loopy.split_array_axis(k, "q,r", 1, 4), "q,r", "N0,N1,vec,N2"),
    "split then c": lambda k: f2loopy.tag_array_axes(
        f2loopy.split_array_axis(k, "r", 1, 4, order="F"), "r", "c"),
    "c then split": lambda k: f2loopy.split_array_axis(
        f2loopy.tag_array_axes(k, "q,r", "c"), "q,r", 1, 4),
}


@needs_gfortran
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_changed_layouts_through_the_glue_match_gfortran(layout, tmp_path, cl_queue):
    ne = 4
    run_transformed(LAYOUT, "lay", LAYOUTS[layout],
                    [ne, farray((3, 8, ne), seed=1), farray((3, 8, ne), seed=2)],
                    tmp_path, cl_queue)


PV = """
subroutine pv(n, a, b)
  implicit none
  integer n, i, j
  real a(4, n), b(4, n), t, s, w(2)
  do j = 1, n
    s = 0
    do i = 1, 4
      t = a(i, j) * 2.0
      w(1) = t + 1.0
      w(2) = t - 1.0
      b(i, j) = t + w(1) * w(2)
      s = s + t
    end do
    b(1, j) = b(1, j) + s
  end do
end subroutine
"""


def test_privatize_temporaries_with_inames():
    k = f2loopy.privatize_temporaries_with_inames(kernel(PV), "i")
    # t and w are written and read inside i only; s lives across i
    assert k.temporaries["t"].shape == (4,) and k.temporaries["t"].lower_bounds == (1,)
    assert k.temporaries["w"].shape == (4, 2) and k.temporaries["w"].lower_bounds == (1, 1)
    assert k.temporaries["s"].shape == ()
    s = insn_strs(k)
    assert s["b"] == "t[i] + w[i, 1]*w[i, 2]" and s["s_1"] == "s + t[i]"
    only = f2loopy.privatize_temporaries_with_inames(kernel(PV), "i", only_var_names="w")
    assert only.temporaries["t"].shape == () and only.temporaries["w"].shape == (4, 2)
    refused(lambda: f2loopy.privatize_temporaries_with_inames(kernel(PV), "j"),
            "privatize_temporaries_with_inames: loop 'j' does not have constant bounds")


def test_set_temporary_address_space():
    k = kernel(PV)
    for space in ("private", "LOCAL", AddressSpace.PRIVATE):
        k2 = f2loopy.set_temporary_address_space(k, "t,w", space)
        want = AddressSpace.LOCAL if space == "LOCAL" else AddressSpace.PRIVATE
        assert k2.temporaries["t"].address_space == k2.temporaries["w"].address_space == want
        assert k2.temporaries["s"].address_space is None
    assert "__local float t;" in code(f2loopy.set_temporary_scope(k, "t", "local"))
    refused(lambda: f2loopy.set_temporary_address_space(k, "a", "local"),
            "set_temporary_address_space: 'a' is an argument")
    refused(lambda: f2loopy.set_temporary_address_space(k, "t", "shared"),
            "set_temporary_address_space: unknown address space 'shared' (valid: private, "
            "local, global)")


@needs_gfortran
def test_privatized_ilp_matches_gfortran(tmp_path, cl_queue):
    def t(k):
        k = f2loopy.privatize_temporaries_with_inames(k, "i")
        k = f2loopy.set_temporary_address_space(k, "t,w", "private")
        return f2loopy.tag_inames(k, "i:ilp, j:g.0")
    run_transformed(PV, "pv", t, [6, farray((4, 6), seed=1), farray((4, 6), seed=2)],
                    tmp_path, cl_queue)


@needs_gfortran
def test_global_temporary_matches_gfortran(tmp_path, cl_queue):
    run_transformed(PV, "pv", lambda k: f2loopy.set_temporary_address_space(k, "t", "global"),
                    [6, farray((4, 6), seed=1), farray((4, 6), seed=2)], tmp_path, cl_queue)

# }}}


# {{{ vec axes: OpenCL vector types

SCALE = """
subroutine sc(n, a, b)
  implicit none
  integer n, i, j
  real a(4, n), b(4, n)
  do j = 1, n
    do i = 1, 4
      b(i, j) = 2.0 * a(i, j) + b(i, j)
    end do
  end do
end subroutine
"""


def _vec(k, arrays="a,b"):
    k = f2loopy.tag_array_axes(k, arrays, "vec,N0")
    return f2loopy.tag_inames(k, "i:vec")


def test_vec_axis_becomes_float4_statements():
    c = code(_vec(kernel(SCALE)))
    assert "__global float4 const *__restrict__ a, __global float4 *b)" in c
    assert "b[j - 1] = 2.0f * a[j - 1] + b[j - 1];" in c
    assert "for (int i" not in c and "int const i" not in c


def test_vec_iname_that_does_not_span_vector_axes_is_unrolled():
    c = code(_vec(kernel(SCALE), "a"))
    assert "__global float4 const *__restrict__ a, __global float *b)" in c
    assert "__global float const *a_flat = (__global float const *) a;" in c
    assert c.count("int const i = ") == 4
    assert "b[i - 1 + 4 * (j - 1)] = 2.0f * a_flat[i - 1 + 4 * (j - 1)] + " \
        "b[i - 1 + 4 * (j - 1)];" in c
    # a vec-tagged axis without a vec iname: scalar accesses through a flat pointer
    c = code(f2loopy.tag_array_axes(kernel(SCALE), "a,b", "vec,N0"))
    assert "b_flat[i - 1 + 4 * (j - 1)] = 2.0f * a_flat[i - 1 + 4 * (j - 1)]" in c


VQ = """
subroutine vq(ne, q, r)
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


def _vq(k):
    k = f2loopy.tag_inames(k, "e:g.0, i:l.0")
    k = f2loopy.set_array_axis_names(k, "q", "i,field,e")
    k = f2loopy.split_array_dim(k, ("q", 1, "F"), 4)
    k = f2loopy.tag_array_axes(k, "q", "N0,vec,N1,N2")
    k = f2loopy.add_prefetch(k, "q[i,:,:,e]", default_tag=None)
    k = f2loopy.tag_array_axes(k, "q_fetch", "vec,N0")
    return f2loopy.tag_inames(k, "q_dim_field_inner:vec, q_dim_field_outer:unr")


def test_vec_prefetch_moves_float4():
    k = _vq(kernel(VQ))
    assert k.temporaries["q_fetch"].shape == (4, 2)
    c = code(k)
    assert "__global float4 const *__restrict__ q," in c
    assert "float4 q_fetch[2];" in c
    assert "q_fetch[q_dim_field_outer] = q[i - 1 + 4 * (q_dim_field_outer + 2 * (e - 1))];" in c
    assert c.count("q_fetch[q_dim_field_outer] = ") == 2
    assert "r[i - 1 + 4 * (e - 1)] = q_fetch_flat[0] * q_fetch_flat[1] + q_fetch_flat[2] - " \
        "q_fetch_flat[3 + 4] * q_fetch_flat[4];" in c


@needs_gfortran
@pytest.mark.parametrize("arrays", ["a,b", "a", "b"])
def test_vec_matches_gfortran(arrays, tmp_path, cl_queue):
    n = 7
    run_transformed(SCALE, "sc", lambda k: _vec(k, arrays),
                    [n, farray((4, n), seed=1), farray((4, n), seed=2)], tmp_path, cl_queue)


@needs_gfortran
def test_vec_prefetch_matches_gfortran(tmp_path, cl_queue):
    ne = 3
    run_transformed(VQ, "vq", _vq, [ne, farray((4, 8, ne), seed=1), zeros(4, ne)], tmp_path,
                    cl_queue)

# }}}


GLOBAL_TWO_PHASE = """
subroutine phases(a, b)
  implicit none
  integer i
  real a(64), b(64), t(64)
  do i = 1, 64
    t(i) = a(i) * a(i)
  end do
  do i = 2, 63
    b(i) = t(i - 1) + t(i) + t(i + 1)
  end do
end subroutine
"""


def _global_two_phase(k):
    k = f2loopy.set_temporary_address_space(k, "t", "global")
    loops = sorted({i for insn in k.instructions for i in insn.within_inames})
    assert len(loops) == 2          # the two do loops over i
    return f2loopy.tag_inames(k, {i: "l.0" for i in loops})


def test_global_temporary_is_a_kernel_argument_with_a_global_barrier():
    gk = f2loopy.generate_code(_global_two_phase(kernel(GLOBAL_TWO_PHASE)))
    assert [(sb.name, sb.elements, sb.itemsize) for sb in gk.scratch] == [("t", 64, 4)]
    assert gk.device_code.split("\n")[0].endswith(
        "__global float *b, __global float *t)")
    assert "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE); /* for t */" in gk.device_code


@needs_gfortran
def test_parallel_kernel_with_global_temporary_matches_gfortran(tmp_path, cl_queue):
    run_transformed(GLOBAL_TWO_PHASE, "phases", _global_two_phase,
                    [farray(64, seed=3), np.zeros(64, np.float32)], tmp_path, cl_queue)
