"""Transformation library II: substitution rules, precompute and prefetch,
buffers, data layout, address spaces and vector axes.

Each transformation has unit tests on inline Fortran (the IR it makes, the
exact message of every refusal) and differential tests: the transformed
kernel, run on PoCL through the generated Python glue, against gfortran.
"""

import numpy as np
import pytest

import f2loopy
from f2loopy import CodegenError, TransformError
from f2loopy.ir.kernel import AddressSpace
from f2loopy.ir.printing import expr_to_str
from f2loopy.transform.rules import rule_calls
from util import farray, needs_gfortran, run_transformed


def kernel(src, name=None):
    tu = f2loopy.parse_fortran(src, "t.f90")
    return tu[name] if name else tu.kernels[0]


def refused(call, message, at=None):
    """*call()* raises TransformError with exactly *message*, printed like a
    compiler: located at ``t.f90:<at>`` with the source line and a caret, or
    (*at* None) as a bare ``f2loopy: error:`` line."""
    with pytest.raises(TransformError) as info:
        call()
    err = info.value
    assert err.message == message
    lines = str(err).splitlines()
    if at is None:
        assert lines == [f"f2loopy: error: {message}"]
    else:
        assert lines[0] == f"t.f90:{at}: error: {message}"
        assert len(lines) == 3 and lines[2].strip().startswith("^")
    return err


def code(k):
    return f2loopy.generate_code(k).device_code


def ex(expr):
    """An IR expression as the kernel listing prints it (``2.0f`` for float32)."""
    return expr_to_str(expr)


def insn_strs(k):
    return {i.id: ex(i.expression) for i in k.instructions}


def tags(k):
    return {i: str(t) for i, t in k.iname_tags.items()}


def zeros(*shape):
    return np.zeros(shape, np.float32, order="F")


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
    ("written twice", "t", None, """  do i = 1, n
    t = a(i)
    t = t + 1
    c(i) = t
  end do""",
     "assignment_to_subst: 't' is assigned by 2 instructions; it needs exactly one", None),
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
            "assignment_to_subst: within= is not supported: the rule replaces every read of "
            "'t' and takes the subscripts of its assignment as arguments")
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
        s = f2loopy.split_array_dim(k, ("q", 1, "F"), 4)
        shape, names, tags_ = (3, 4, 2), ("i", "field_inner", "field_outer", "e"), \
            "N0,N1,N2,N3"
        sub = "q[i + -1, modulo(f + -1, 4), (f + -1) // 4, e]"
        const = "q[2, 0, 1, 1]"
    else:
        s = f2loopy.split_array_axis(k, "q", 1, 4, order="C")
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
