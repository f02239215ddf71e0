"""Transformation library II, substitution rules and on-chip copies:
assignment_to_subst, extract_subst, expand_subst, rule matching and precompute
(add_prefetch: :mod:`test_transforms_prefetch`; buffers, layouts and vector
axes: :mod:`test_transforms_data`).

Each transformation has unit tests on inline Fortran (the IR it makes, the
exact message of every refusal) and differential tests: the transformed
kernel, run on PoCL through the generated Python glue, against gfortran.
"""

import numpy as np
import pytest

import f2loopy
from f2loopy import TransformError
from f2loopy.ir.kernel import AddressSpace
from f2loopy.transform.rules import rule_calls
from transform_util import code, ex, insn_strs, kernel, refused, tags, zeros
from util import farray, needs_gfortran, run_transformed


# {{{ assignment_to_subst, extract_subst, expand_subst, rules

CHAIN = """
subroutine chain(n, a, b, c)
  implicit none
  integer n, i
  real a(n), b(n), c(n), t, u
  do i = 1, n
    t = a(i) * 2.0
    u = t + b(i)
    c(i) = u * t
  end do
end subroutine
"""


def test_assignment_to_subst_makes_rules_and_removes_the_writer():
    k = f2loopy.assignment_to_subst(kernel(CHAIN), "t")
    assert list(k.substitutions) == ["t_subst"]
    rule = k.substitutions["t_subst"]
    assert rule.arguments == () and ex(rule.expression) == "a[i]*2.0f"
    assert set(k.temporaries) == {"u"}
    assert insn_strs(k) == {"u": "t_subst() + b[i]", "c": "u*t_subst()"}
    assert k.insn("u").depends_on == frozenset()      # it waited for 't' only
    assert k.insn("c").depends_on == {"u"}

    k = f2loopy.assignment_to_subst(k, "U")           # Fortran names: any case
    assert ex(k.substitutions["u_subst"].expression) == "t_subst() + b[i]"
    assert not k.temporaries and [i.id for i in k.instructions] == ["c"]
    assert insn_strs(k) == {"c": "u_subst()*t_subst()"}
    assert "c[i - 1] = (a[i - 1] * 2.0f + b[i - 1]) * (a[i - 1] * 2.0f);" in code(k)


def test_assignment_to_subst_array_temporary_takes_subscripts_as_arguments():
    src = """subroutine at(n, a, b)
  implicit none
  integer n, i, j
  real a(n, 3), b(n), t(3)
  do i = 1, n
    do j = 1, 3
      t(j) = a(i, j) * a(i, j)
    end do
    b(i) = t(1) + t(3)
  end do
end subroutine
"""
    k = f2loopy.assignment_to_subst(kernel(src), "t")
    rule = k.substitutions["t_subst"]
    assert rule.arguments == ("t_arg0",)
    assert ex(rule.expression) == "a[i, t_arg0]*a[i, t_arg0]"
    assert "t" not in k.temporaries
    assert insn_strs(k) == {"b": "t_subst(1) + t_subst(3)"}


def _refusal_kernel(body, decl="real a(n), b(n), c(n), t"):
    return kernel(f"""subroutine s(n, m, a, b, c)
  implicit none
  integer n, m, i, j
  {decl}
{body}
end subroutine
""")


SUBST_REFUSALS = [
    ("argument", "a", None, """  do i = 1, n
    c(i) = a(i)
  end do""",
     "assignment_to_subst: 'a' is an argument; only temporaries can become substitution "
     "rules", None),
    ("array written twice", "t", "real a(n), b(n), c(n), t(n)", """  do i = 1, n
    t(i) = a(i)
  end do
  do i = 1, n
    t(i) = t(i) + 1
    c(i) = t(i)
  end do""",
     "assignment_to_subst: 't' is assigned by 2 instructions; an array temporary needs "
     "exactly one", None),
    ("read before the first of two assignments", "t", None, """  do i = 1, n
    c(i) = t
    t = a(i)
    t = t + 1
  end do""",
     "assignment_to_subst: instruction 'c' reads 't' before its first assignment (it may "
     "read an older value)", "6:5"),
    ("a later assignment reaches a read in the next iteration", "t", None, """  t = 0
  do i = 1, n
    c(i) = t
    t = a(i)
  end do""",
     "assignment_to_subst: 't_1' changes t between the assignment to 't' and its use in 'c'",
     "8:5"),
    ("read before written", "t", None, """  do i = 1, n
    c(i) = t
    t = a(i)
  end do""",
     "assignment_to_subst: instruction 'c' reads 't' without depending on its assignment "
     "(it may read an older value)", "6:5"),
    ("used after the loop", "t", None, """  do i = 1, n
    t = a(i)
  end do
  c(1) = t""",
     "assignment_to_subst: instruction 'c' reads 't' outside loop(s) i of its assignment "
     "(it needs the last value)", "8:3"),
    ("conditional", "t", None, """  do i = 1, n
    if (a(i) > 0) t = a(i)
    c(i) = t
  end do""",
     "assignment_to_subst: the assignment to 't' is conditional (a[i] > 0); its value is "
     "not defined everywhere", "6:19"),
    ("input changed in between", "t", None, """  do i = 1, n
    t = a(i) * 2
    a(i) = 0
    c(i) = t
  end do""",
     "assignment_to_subst: 'a' changes a between the assignment to 't' and its use in 'c'",
     "7:5"),
    ("input changed by a later iteration", "t", None, """  do i = 1, n
    t = a(i) * 2
    do j = 1, m
      c(j) = c(j) + t
      a(i) = a(i) + 1
    end do
  end do""",
     "assignment_to_subst: 'a' changes a between the assignment to 't' and its use in 'c'",
     "9:7"),
    ("reader changes the input in a loop", "t", None, """  do i = 1, n
    t = a(i) * 2
    do j = 1, m
      a(i) = a(i) + t
    end do
  end do""",
     "assignment_to_subst: 'a' changes a between the assignment to 't' and its use in 'a'",
     "8:7"),
    ("constant subscript", "t", "real a(n), b(n), c(n), t(2)", """  do i = 1, n
    t(1) = a(i)
    c(i) = t(1)
  end do""",
     "assignment_to_subst: 't' is assigned at subscripts 1; they must be distinct loop "
     "indices", "6:5"),
    ("repeated subscript", "t", "real a(n), b(n), c(n), t(8, 8)", """  do i = 1, n
    t(i, i) = a(i)
    c(i) = t(i, i)
  end do""",
     "assignment_to_subst: 't' is assigned at subscripts i, i; they must be distinct loop "
     "indices", "6:5"),
    ("rule name taken", "t", "real a(n), b(n), c(n), t, t_subst", """  do i = 1, n
    t = a(i)
    c(i) = t + t_subst
  end do""",
     "assignment_to_subst: the name 't_subst' is taken", None),
]


@pytest.mark.parametrize("what,var,decl,body,message,at", SUBST_REFUSALS,
                         ids=[c[0] for c in SUBST_REFUSALS])
def test_assignment_to_subst_refusals(what, var, decl, body, message, at):
    k = _refusal_kernel(body, decl or "real a(n), b(n), c(n), t")
    refused(lambda: f2loopy.assignment_to_subst(k, var), message, at)


def test_assignment_to_subst_accepts_an_input_written_after_the_last_use():
    k = _refusal_kernel("""  do i = 1, n
    t = a(i) * 2
    c(i) = t
    a(i) = 0
  end do""")
    k = f2loopy.assignment_to_subst(k, "t")
    assert insn_strs(k)["c"] == "t_subst()"


RULES_SRC = """
subroutine rl(n, a, b, c, d)
  implicit none
  integer n, i
  real a(0:n+1), b(n), c(n), d(n), t, u, w
  do i = 1, n
    t = a(i) * 2.0
    u = a(i) * 2.0
    w = b(i) + 1.0
    c(i) = t + w
    d(i) = u * w + a(i-1)*b(i) + a(i+1)*b(i)
  end do
end subroutine
"""


def _rl_rules():
    k = kernel(RULES_SRC)
    for v in "tuw":
        k = f2loopy.assignment_to_subst(k, v)
    return k


def test_identical_rule_bodies_are_merged():
    k = _rl_rules()
    # u_subst had the body of t_subst: one rule is left, used for both
    assert sorted(k.substitutions) == ["t_subst", "w_subst"]
    assert insn_strs(k)["d"].startswith("t_subst()*w_subst() + ")


TWO_USES = """
subroutine twouses(n, a, b, c)
  implicit none
  integer n, i
  real a(n), b(n), c(n), t
  do i = 1, n
    t = a(i) * 2.0
    b(i) = t + 1.0
    c(i) = t * 3.0
  end do
end subroutine
"""


def test_rule_versions_per_use_and_merged_back():
    k = f2loopy.assignment_to_subst(kernel(TWO_USES), "t")
    k = f2loopy.duplicate_inames(k, "i", within="id:c")
    # the uses in 'c' see the rule with the duplicated iname: a version of it
    assert ex(k.substitutions["t_subst"].expression) == "a[i]*2.0f"
    assert ex(k.substitutions["t_subst_0"].expression) == "a[i_1]*2.0f"
    assert insn_strs(k)["c"] == "t_subst_0()*3.0f"
    k = f2loopy.rename_iname(k, "i_1", "i", existing_ok=True)
    assert list(k.substitutions) == ["t_subst"]
    assert insn_strs(k)["c"] == "t_subst()*3.0f"


def test_a_rule_rewritten_at_every_use_keeps_its_name(tmp_path, cl_queue):
    """The tutorial's order: make the rule, split the loop its body uses,
    then precompute the rule by the name assignment_to_subst gave it."""
    k = f2loopy.assignment_to_subst(kernel(TWO_USES), "t")
    k = f2loopy.split_iname(k, "i", 4, outer_tag="g.0", inner_tag="l.0")
    assert list(k.substitutions) == ["t_subst"]
    assert ex(k.substitutions["t_subst"].expression) == "a[1 + i_inner + 4*i_outer]*2.0f"
    assert insn_strs(k)["c"] == "t_subst()*3.0f"
    # a version for some uses only: both keep their names
    k2 = f2loopy.duplicate_inames(f2loopy.assignment_to_subst(kernel(TWO_USES), "t"), "i",
                                  within="id:c")
    assert sorted(k2.substitutions) == ["t_subst", "t_subst_0"]

    def t(k):
        k = f2loopy.assignment_to_subst(k, "t")
        k = f2loopy.split_iname(k, "i", 4, outer_tag="g.0", inner_tag="l.0")
        return f2loopy.precompute(k, "t_subst", "i_inner", default_tag="l.auto")
    n = 10
    run_transformed(TWO_USES, "twouses", t, [n, farray(n, seed=1), zeros(n), zeros(n)],
                    tmp_path, cl_queue)


def test_duplicating_a_loop_across_a_dependence_is_refused():
    """Giving 'c' its own copy of the loop would read the last value of the
    scalar u instead of the one of its iteration (loop distribution)."""
    k = f2loopy.assignment_to_subst(kernel(CHAIN), "t")
    with pytest.raises(TransformError) as err:
        f2loopy.duplicate_inames(k, "i", within="id:c")
    assert err.value.message == (
        "giving instruction 'c' (line 9) its own loop 'i_1' (a copy of 'i') would run it "
        "apart from instruction 'u' (line 8): they access the same elements of 'u' in "
        "iterations that the separate loops would run in the other order")


def test_find_one_rule_matching():
    k = _rl_rules()
    assert f2loopy.find_one_rule_matching(k, "w*") == "w_subst"
    assert f2loopy.find_one_rule_matching(k, "t_*subst*") == "t_subst"
    assert f2loopy.find_rules_matching(k, "*_subst") == ["t_subst", "w_subst"]
    refused(lambda: f2loopy.find_one_rule_matching(k, "*_subst"),
            "find_one_rule_matching: 2 rules match '*_subst' (rules: t_subst, w_subst)")
    refused(lambda: f2loopy.find_one_rule_matching(k, "zz*"),
            "find_one_rule_matching: 0 rules match 'zz*' (rules: t_subst, w_subst)")
    refused(lambda: f2loopy.find_one_rule_matching(kernel(CHAIN), "*"),
            "find_one_rule_matching: 0 rules match '*' (rules: none)")


def test_expand_subst_all_or_by_glob():
    k = _rl_rules()
    some = f2loopy.expand_subst(k, within="w_*")
    assert list(some.substitutions) == ["t_subst"]
    assert insn_strs(some)["c"] == "t_subst() + b[i] + 1.0f"
    assert insn_strs(some)["d"].startswith("t_subst()*(b[i] + 1.0f) + ")
    assert f2loopy.expand_subst(k, within="nothing*").substitutions == k.substitutions
    every = f2loopy.expand_subst(k)
    assert not every.substitutions
    assert insn_strs(every)["c"] == "a[i]*2.0f + b[i] + 1.0f"


def test_extract_subst_binds_parameters_at_each_occurrence():
    k = f2loopy.extract_subst(_rl_rules(), "nb", "a[j]*b[i]", parameters="j")
    rule = k.substitutions["nb"]
    assert rule.arguments == ("j",) and ex(rule.expression) == "a[j]*b[i]"
    calls = rule_calls(k.insn("d").expression, k.substitutions)
    assert sorted(str(c) for c in calls if c.function.name == "nb") == \
        ["nb(i + -1)", "nb(i + 1)"]
    # a template whose parameter must take one value matches only consistent uses
    src = """subroutine ex(n, a, b)
  implicit none
  integer n, i
  real a(n+1), b(n)
  do i = 1, n
    b(i) = a(i) * a(i + 1) + a(i) * a(i)
  end do
end subroutine
"""
    k = f2loopy.extract_subst(kernel(src), "sq", "a[j]*a[j]", ["j"])
    assert insn_strs(k) == {"b": "a[i]*a[i + 1] + sq(i)"}
    k = f2loopy.extract_subst(kernel(src), "pr", "a[j]*a[j + 1]", "j")
    assert insn_strs(k) == {"b": "pr(i) + a[i]*a[i]"}


def test_extract_subst_refusals():
    k = _rl_rules()
    refused(lambda: f2loopy.extract_subst(k, "ab", "a[j]*c[j]", "j"),
            "extract_subst: 'a[j]*c[j]' does not occur in kernel 'rl'")
    refused(lambda: f2loopy.extract_subst(k, "b", "a[j]*b[i]", "j"),
            "extract_subst: the name 'b' is taken")
    refused(lambda: f2loopy.extract_subst(k, "t_subst", "a[j]*b[i]", "j"),
            "extract_subst: the name 't_subst' is taken")


@needs_gfortran
@pytest.mark.parametrize("n", [1, 37])
def test_subst_chain_matches_gfortran(n, tmp_path, cl_queue):
    def t(k):
        k = f2loopy.assignment_to_subst(k, "t")
        k = f2loopy.assignment_to_subst(k, "u")
        return f2loopy.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")
    run_transformed(CHAIN, "chain", t, [n, farray(n, seed=1), farray(n, seed=2), zeros(n)],
                    tmp_path, cl_queue)


@needs_gfortran
def test_rules_extract_expand_match_gfortran(tmp_path, cl_queue):
    def t(k):
        for v in "tuw":
            k = f2loopy.assignment_to_subst(k, v)
        k = f2loopy.extract_subst(k, "nb", "a[j]*b[i]", "j")
        k = f2loopy.expand_subst(k, within="w_*")
        return f2loopy.tag_inames(k, "i:g.0")
    n = 9
    run_transformed(RULES_SRC, "rl", t, [n, farray(n + 2, seed=1), farray(n, seed=2),
                                         zeros(n), zeros(n)], tmp_path, cl_queue)


@needs_gfortran
def test_subst_with_input_written_after_use_matches_gfortran(tmp_path, cl_queue):
    src = """subroutine late(n, a, c)
  implicit none
  integer n, i
  real a(n), c(n), t
  do i = 1, n
    t = a(i) * 2
    c(i) = t + 1
    a(i) = 0
  end do
end subroutine
"""
    run_transformed(src, "late", lambda k: f2loopy.assignment_to_subst(k, "t"),
                    [7, farray(7, seed=3), zeros(7)], tmp_path, cl_queue)

# }}}


# {{{ precompute

STENCIL = """
subroutine sm(n, a, b)
  implicit none
  integer n, i
  real a(0:n+1), b(n)
  do i = 1, n
    b(i) = a(i-1)*a(i-1) + a(i)*a(i) + a(i+1)*a(i+1)
  end do
end subroutine
"""


def _stencil_tiled():
    k = f2loopy.extract_subst(kernel(STENCIL), "sq", "a[j]*a[j]", "j")
    return f2loopy.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")


def test_precompute_sliding_window_of_a_work_group():
    k = f2loopy.precompute(_stencil_tiled(), "sq", "i_inner", precompute_inames="ii")
    t = k.temporaries["sq_0"]
    # the 18 values a work-group needs, counted from the start of its tile
    assert t.shape == (18,) and t.lower_bounds == (0,) and t.axis_names == ("ii",)
    assert t.address_space is None
    compute = k.insn("sq_0_compute")
    assert compute.within_inames == {"i_outer", "ii"}
    assert ex(compute.expression) == "a[16*i_outer + ii]*a[16*i_outer + ii]"
    assert insn_strs(k)["b"] == "sq_0[i_inner] + sq_0[i_inner + 1] + sq_0[i_inner + 2]"
    assert k.insn("b").depends_on >= {"sq_0_compute"}
    assert tags(k)["ii"] == "l.auto"
    assert str(k.domains[-1]) == \
        "[n, i_outer] -> { [ii] : 0 <= ii <= 17 and ii <= 1 + n - 16i_outer }"
    assert not k.substitutions                          # the rule is used no more


def test_precompute_names_tags_and_types():
    k = f2loopy.precompute(_stencil_tiled(), "sq", "i_inner", precompute_inames="pp",
                           temporary_name="tile", default_tag=None,
                           storage_axis_to_tag={"pp": "unr"}, dtype=np.float64,
                           compute_insn_id="fill", temporary_address_space="private")
    t = k.temporaries["tile"]
    assert t.shape == (18,) and t.dtype == np.float64
    assert t.address_space == AddressSpace.PRIVATE
    assert k.insn("fill").assignee_name == "tile"
    assert tags(k)["pp"] == "unr"
    k = f2loopy.precompute(_stencil_tiled(), "sq", "i_inner", default_tag=None)
    assert "sq_0_dim_0" in k.all_inames() and "sq_0_dim_0" not in k.iname_tags


FLUX = """
subroutine flux(ne, d, u, r)
  implicit none
  integer ne, e, i, j, n
  real d(4, 4), u(4, 3, ne), r(4, 3, ne), f, acc
  do e = 1, ne
    do j = 1, 3
      do i = 1, 4
        acc = 0
        do n = 1, 4
          f = u(n, j, e) * u(n, j, e) + 1.0
          acc = acc + d(i, n) * f
        end do
        r(i, j, e) = acc
      end do
    end do
  end do
end subroutine
"""


def _flux():
    k = f2loopy.tag_inames(kernel(FLUX), "e:g.0, i:l.0, j:l.1")
    return f2loopy.assignment_to_subst(k, "f")


def test_precompute_rule_without_arguments_over_sweep_inames():
    k = f2loopy.precompute(_flux(), "f_subst", "j,n", precompute_inames="jj,nn",
                           temporary_name="fs", default_tag=None)
    fs = k.temporaries["fs"]
    assert fs.shape == (3, 4) and fs.lower_bounds == (1, 1) and fs.axis_names == ("jj", "nn")
    # computed once per element, not once per i: it depends on e only
    assert k.insn("fs_compute").within_inames == {"e", "jj", "nn"}
    assert ex(k.insn("fs_compute").expression) == "u[nn, jj, e]*u[nn, jj, e] + 1.0f"
    assert insn_strs(k)["acc_1"] == "acc + d[i, n]*fs[j, n]"
    assert "jj" not in k.iname_tags and "nn" not in k.iname_tags
    k = f2loopy.tag_inames(k, "nn:l.0, jj:l.1")
    c = code(k)
    assert "__local float fs[12];" in c
    assert "int const nn = 1 + (int) get_local_id(0);" in c
    assert "barrier(CLK_LOCAL_MEM_FENCE); /* for fs */" in c


def test_precompute_storage_axes_order_and_auto_local_tags():
    k = f2loopy.precompute(_flux(), "f_subst", "j,n", storage_axes="n,j")
    f = k.temporaries["f"]
    assert f.shape == (4, 3) and f.axis_names == ("f_dim_0", "f_dim_1")
    assert insn_strs(k)["acc_1"] == "acc + d[i, n]*f[n, j]"
    assert tags(k)["f_dim_0"] == tags(k)["f_dim_1"] == "l.auto"
    c = code(k)
    # l.auto takes the work-group's axes: the fill is spread over its work-items
    assert "int const f_dim_0 = 1 + (int) get_local_id(0);" in c
    assert "int const f_dim_1 = 1 + (int) get_local_id(1);" in c
    assert "__local float f[12];" in c


def test_precompute_per_work_item():
    from f2loopy import RaceError
    # over n only: each (i, j) work-item's values, filled by a plain loop
    k = f2loopy.precompute(_flux(), "f_subst", "n", default_tag=None)
    assert k.temporaries["f"].shape == (4,)
    assert k.insn("f_compute").within_inames == {"e", "j", "f_dim_0"}
    c = code(k)
    assert "    float f[4];" in c
    assert "        acc = acc + d[i - 1 + 4 * (n - 1)] * f[n - 1];" in c
    k = f2loopy.precompute(_flux(), "f_subst", "n", default_tag=None,
                           temporary_address_space="private")
    assert k.temporaries["f"].address_space == AddressSpace.PRIVATE
    assert "    float f[4];" in code(k)
    # filled by the work-items of a group (l.auto): the j-rows would collide
    with pytest.raises(RaceError, match="race on 'f': instances of instruction 'f_compute'"):
        code(f2loopy.precompute(_flux(), "f_subst", "n"))


TRIANGLE = """
subroutine tri(a, b)
  implicit none
  integer i, j
  real a(8, 8), b(8)
  do i = 1, 8
    b(i) = 0
    do j = 1, i
      b(i) = b(i) + a(i, j) * 2.0
    end do
  end do
end subroutine
"""


@pytest.mark.parametrize("box", [False, True])
def test_precompute_exact_footprint_or_bounding_box(box):
    k = f2loopy.extract_subst(kernel(TRIANGLE), "g", "a[x, y]*2.0", "x, y")
    k = f2loopy.precompute(k, "g", "i,j", fetch_bounding_box=box, default_tag=None)
    t = k.temporaries["g_0"]
    assert t.shape == (8, 8) and t.lower_bounds == (1, 1)
    if box:
        assert str(k.domains[-1]) == \
            "{ [g_0_dim_0, g_0_dim_1] : 0 < g_0_dim_0 <= 8 and 0 < g_0_dim_1 <= 8 }"
    else:
        assert str(k.domains[-1]) == \
            "{ [g_0_dim_0, g_0_dim_1] : 0 < g_0_dim_0 <= 8 and 0 < g_0_dim_1 <= g_0_dim_0 }"


def test_precompute_refusals():
    src = """subroutine pe(n, idx, a, b, c)
  implicit none
  integer n, i, idx(n)
  real a(0:n+1), b(n), c(n), t
  do i = 1, n
    t = a(i) + 1.0
    b(i) = a(i-1)*a(i-1) + a(i)*a(i) + t * 2.0
    c(i) = a(idx(i))*a(idx(i))
  end do
end subroutine
"""
    k = f2loopy.extract_subst(kernel(src), "sq", "a[j]*a[j]", "j")
    refused(lambda: f2loopy.precompute(k, "nosuch", "i"),
            "precompute: no substitution rule named 'nosuch' (rules: sq)")
    refused(lambda: f2loopy.precompute(k, "sq", "i", within="id:nothing"),
            "precompute: rule 'sq' is not used in instructions 'id:nothing'")
    refused(lambda: f2loopy.precompute(k, "sq", "i", within="id:c"),
            "precompute: the use in 'c' has a non-affine index idx[i]; its footprint is "
            "unknown", "8:5")
    refused(lambda: f2loopy.precompute(k, "sq", "i", within="id:b"),
            "precompute: the extent of axis 'sq_0_dim_0' is not bounded by a constant (fix "
            "the parameters it depends on first)")
    fixed = f2loopy.fix_parameters(k, n=10)
    refused(lambda: f2loopy.precompute(fixed, "sq", "i", within="id:b",
                                       precompute_inames="p1,p2"),
            "precompute: 2 precompute inames for 1 storage axes")
    refused(lambda: f2loopy.precompute(fixed, "sq", "i", within="id:b", temporary_name="a"),
            "precompute: the name 'a' is already used")
    tw = f2loopy.extract_subst(fixed, "tw", "t*2.0")
    refused(lambda: f2loopy.precompute(tw, "tw", "i"),
            "precompute: 'tw' reads 't', which is computed anew in each iteration of sweep "
            "iname(s) i", "6:5")


def test_precompute_refuses_uses_outside_the_loops_it_needs():
    src = """subroutine pe(n, a, b, c)
  implicit none
  integer n, i, j
  real a(n, 2), b(n), c(n)
  do i = 1, n
    b(i) = a(i, 1) * 2.0 + a(i, 2) * 2.0
  end do
  do j = 1, n
    c(j) = a(j, 1) * 2.0
  end do
end subroutine
"""
    k = f2loopy.extract_subst(kernel(src), "g", "a[x, y]*2.0", "x, y")
    refused(lambda: f2loopy.precompute(k, "g", "j", within="id:b"),
            "precompute: instruction 'b' is not inside all sweep inames j", "6:5")
    refused(lambda: f2loopy.precompute(k, "g", "i", storage_axes=["x"], within="id:b"),
            "precompute: the uses in 'b' pass different values for arguments that are not "
            "storage axes")
    refused(lambda: f2loopy.precompute(k, "g", "i", within="id:b",
                                       precompute_outer_inames="j"),
            "precompute: the values of 'g' depend on j, but instruction 'b' uses it outside "
            "those loops", "6:5")


def test_precompute_iname_clashing_with_an_outer_loop_is_a_transform_error():
    with pytest.raises(TransformError) as err:
        f2loopy.precompute(_stencil_tiled(), "sq", "i_inner", precompute_inames="i_outer")
    assert err.value.message == ("precompute: 'i_outer' cannot be a precompute iname: the "
                                 "uses of 'sq' run inside loop 'i_outer' (choose a new name)")


MATMUL = """
subroutine mmt(n, m, p, a, b, c)
  implicit none
  integer n, m, p, i, j, k
  real a(n, m), b(m, p), c(n, p), acc
  do j = 1, p
    do i = 1, n
      acc = 0.0
      do k = 1, m
        acc = acc + a(i, k) * b(k, j)
      end do
      c(i, j) = acc
    end do
  end do
end subroutine
"""


def _mm_parallel(k):
    k = f2loopy.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")
    k = f2loopy.split_iname(k, "j", 16, outer_tag="g.1", inner_tag="l.1")
    return f2loopy.split_iname(k, "k", 16)


def _mm_prefetch(k):
    k = _mm_parallel(k)
    k = f2loopy.add_prefetch(k, "a", ["i_inner", "k_inner"], default_tag="l.auto")
    return f2loopy.add_prefetch(k, "b", ["k_inner", "j_inner"], default_tag="l.auto")


def test_prefetched_tile_slides_with_the_work_group():
    k = _mm_prefetch(kernel(MATMUL))
    for name, dims, outer in (("a", "a_dim_0, a_dim_1", {"i_outer", "k_outer"}),
                              ("b", "b_dim_0, b_dim_1", {"j_outer", "k_outer"})):
        t = k.temporaries[f"{name}_fetch"]
        assert t.shape == (16, 16) and t.lower_bounds == (0, 0)
        fetch = k.insn(f"{name}_fetch_compute")
        assert fetch.within_inames == outer | set(dims.split(", "))
        assert all(tags(k)[d] == "l.auto" for d in dims.split(", "))
    assert ex(k.insn("a_fetch_compute").expression) == \
        "a[a_dim_0 + 16*i_outer + 1, a_dim_1 + 16*k_outer + 1]"
    assert insn_strs(k)["acc_1"] == "acc + a_fetch[i_inner, k_inner]*b_fetch[k_inner, j_inner]"
    # constant bounds (work-item axes), cut at the ends of the matrices
    assert "0 <= a_dim_0 <= 15 and a_dim_0 < n - 16i_outer and 0 <= a_dim_1 <= 15 and " \
        "a_dim_1 < m - 16k_outer }" in str(k.domains[-2])
    assert "0 <= b_dim_0 <= 15 and b_dim_0 < m - 16k_outer and 0 <= b_dim_1 <= 15 and " \
        "b_dim_1 < p - 16j_outer }" in str(k.domains[-1])
    c = code(k)
    assert "__local float a_fetch[256];" in c and "__local float b_fetch[256];" in c
    for d, axis in (("a_dim_0", 0), ("a_dim_1", 1), ("b_dim_0", 0), ("b_dim_1", 1)):
        assert f"int const {d} = (int) get_local_id({axis});" in c
    assert "a_fetch[a_dim_0 + 16 * a_dim_1] = a[a_dim_0 + 16 * i_outer + n * " \
        "(a_dim_1 + 16 * k_outer)];" in c
    # one barrier after the fetches, one before the next tile overwrites them
    assert c.count("barrier(CLK_LOCAL_MEM_FENCE);") == 2
    first, second = (x for x in range(len(c)) if c.startswith("barrier(CLK_LOCAL_MEM", x))
    assert c.index("b_fetch[b_dim_0 + 16 * b_dim_1] = ") < first < c.index("for (int k_inner")
    assert c.index("acc = acc + a_fetch[") < second


def test_precomputed_tile_of_a_rule():
    k = f2loopy.extract_subst(_mm_parallel(kernel(MATMUL)), "aik", "a[x, y]", "x, y")
    k = f2loopy.precompute(k, "aik", "i_inner,k_inner", temporary_name="a_tile",
                           precompute_inames="ti,tk")
    t = k.temporaries["a_tile"]
    assert t.shape == (16, 16) and t.lower_bounds == (0, 0) and t.axis_names == ("ti", "tk")
    assert ex(k.insn("a_tile_compute").expression) == \
        "a[16*i_outer + ti + 1, 16*k_outer + tk + 1]"
    c = code(k)
    assert "int const ti = (int) get_local_id(0);" in c
    assert "int const tk = (int) get_local_id(1);" in c


@needs_gfortran
@pytest.mark.parametrize("n", [16, 37])
def test_precompute_sliding_window_matches_gfortran(n, tmp_path, cl_queue):
    def t(k):
        k = f2loopy.extract_subst(k, "sq", "a[j]*a[j]", "j")
        k = f2loopy.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")
        return f2loopy.precompute(k, "sq", "i_inner")
    run_transformed(STENCIL, "sm", t, [n, farray(n + 2, seed=5), zeros(n)], tmp_path,
                    cl_queue)


@needs_gfortran
@pytest.mark.parametrize("sizes", [(21, 19, 23), (32, 48, 16)])
def test_matmul_tiles_in_local_memory_match_gfortran(sizes, tmp_path, cl_queue):
    n, m, p = sizes
    run_transformed(MATMUL, "mmt", _mm_prefetch,
                    [n, m, p, farray((n, m), seed=1), farray((m, p), seed=2), zeros(n, p)],
                    tmp_path, cl_queue, rtol=1e-5)


@needs_gfortran
def test_matmul_precomputed_rule_tile_matches_gfortran(tmp_path, cl_queue):
    def t(k):
        k = f2loopy.extract_subst(_mm_parallel(k), "bkj", "b[x, y]", "x, y")
        return f2loopy.precompute(k, "bkj", "k_inner,j_inner", fetch_bounding_box=True)
    n, m, p = 18, 35, 20
    run_transformed(MATMUL, "mmt", t, [n, m, p, farray((n, m), seed=3),
                                       farray((m, p), seed=4), zeros(n, p)],
                    tmp_path, cl_queue, rtol=1e-5)


@needs_gfortran
@pytest.mark.parametrize("variant", ["local", "auto", "private", "layout"])
def test_precomputed_flux_matches_gfortran(variant, tmp_path, cl_queue):
    def t(k):
        k = f2loopy.tag_inames(k, "e:g.0, i:l.0, j:l.1")
        k = f2loopy.assignment_to_subst(k, "f")
        if variant == "private":
            return f2loopy.precompute(k, "f_subst", "n", temporary_address_space="private",
                                      default_tag=None)
        if variant == "auto":
            return f2loopy.precompute(k, "f_subst", "j,n", storage_axes="n,j")
        k = f2loopy.precompute(k, "f_subst", "j,n", precompute_inames="jj,nn",
                               temporary_name="fs", default_tag=None)
        if variant == "layout":
            k = f2loopy.tag_data_axes(k, "fs", {"nn": "N0", "jj": "N1"})
        return f2loopy.tag_inames(k, "nn:l.0, jj:l.1")
    ne = 3
    run_transformed(FLUX, "flux", t, [ne, farray((4, 4), seed=1), farray((4, 3, ne), seed=2),
                                      zeros(4, 3, ne)], tmp_path, cl_queue, rtol=1e-5)


@needs_gfortran
@pytest.mark.parametrize("box", [False, True])
def test_triangular_footprint_matches_gfortran(box, tmp_path, cl_queue):
    def t(k):
        k = f2loopy.extract_subst(k, "g", "a[x, y]*2.0", "x, y")
        return f2loopy.precompute(k, "g", "i,j", fetch_bounding_box=box, default_tag=None)
    run_transformed(TRIANGLE, "tri", t, [farray((8, 8), seed=6), zeros(8)], tmp_path,
                    cl_queue, rtol=1e-5)

# }}}
