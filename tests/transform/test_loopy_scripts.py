"""loopy's script entry points and transform arguments: pre_transform_code,
find_instructions on a translation unit, ..."""

from __future__ import annotations

import numpy as np
import pytest

import f2loopy
from util import farray, needs_gfortran, run_both, run_transformed

FILL = """
subroutine fill(out, a, n)
  real*8 a, out(n)
  integer n, i
  do i = 1, n
    out(i) = a
  end do
end
!$loopy begin
! knl = lp.parse_fortran(SOURCE)
! RESULT = lp.split_iname(knl, "i", split_amount)
!$loopy end
"""


# {{{ pre_transform_code

@pytest.mark.usefixtures("sandbox_process")
def test_pre_transform_code_runs_before_the_script_in_its_namespace():
    tu = f2loopy.parse_transformed_fortran(FILL, pre_transform_code="split_amount = 64")
    assert tu["fill"].all_inames() == ("i_outer", "i_inner")
    assert "64" in str(tu["fill"].domains[0])


@pytest.mark.usefixtures("sandbox_process")
def test_pre_transform_code_without_a_script_runs_and_keeps_the_kernels():
    src = FILL[:FILL.index("!$loopy")]
    tu = f2loopy.parse_transformed_fortran(src, pre_transform_code="x = 1")
    assert tu == f2loopy.parse_fortran(src, "<floopy code>")


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize(("pre", "message"), [
    ("import os", "<pre_transform_code>:1:1: error: the transformation script may not import "
                  "'os'"),
    ("x = 1\nsplit_amount = 1/0", "<pre_transform_code>:2:16: error: ZeroDivisionError: "
                                  "division by zero"),
    ("split_amount = (", "<pre_transform_code>:1:16: error: SyntaxError: '(' was never closed"),
])
def test_errors_in_pre_transform_code_are_located_in_it(pre, message):
    with pytest.raises(f2loopy.ScriptError) as info:
        f2loopy.parse_transformed_fortran(FILL, pre_transform_code=pre)
    assert str(info.value).splitlines()[0] == message


def test_parse_transformed_fortran_refuses_non_strict():
    with pytest.raises(f2loopy.UnsupportedArgumentError,
                       match=r"parse_transformed_fortran: strict=False is not supported"):
        f2loopy.parse_transformed_fortran(FILL, strict=False)

# }}}


# {{{ translation units wherever a kernel goes

TAGGED = """
subroutine rot(n, alpha, inp, inp2, out)
  integer n, i
  real*8 alpha, a, b, inp(n), inp2(n), out(n)
  do i = 1, n
    !$loopy begin tagged: input
    a = cos(alpha)*inp(i) + sin(alpha)*inp2(i)
    b = -sin(alpha)*inp(i) + cos(alpha)*inp2(i)
    !$loopy end tagged: input
    out(i) = a*b
  end do
end
subroutine other(x)
  real*8 x(3)
  !$loopy begin tagged: input
  x(1) = 0
  !$loopy end tagged: input
end
"""


def test_find_instructions_searches_every_kernel_of_a_unit():
    tu = f2loopy.parse_fortran(TAGGED)
    found = f2loopy.find_instructions(tu, "tag:input")
    assert [i.assignee_name for i in found] == ["a", "b", "x"]
    assert f2loopy.find_instructions(tu["rot"], "tag:input") == found[:2]
    assert f2loopy.find_instructions([tu["other"]], "writes:x") == found[2:]


def test_find_instructions_refuses_other_objects():
    with pytest.raises(f2loopy.TransformError) as info:
        f2loopy.find_instructions("rot", "tag:input")
    assert info.value.message == ("find_instructions: expected a kernel or a translation "
                                  "unit, got str")


def test_rule_queries_take_a_unit():
    tu = f2loopy.parse_fortran(TAGGED)
    with pytest.raises(f2loopy.TransformError):      # 'other' reads no inp
        f2loopy.extract_subst(tu, "inp_acc", "inp[j]", parameters="j")
    tu = f2loopy.extract_subst(tu, "inp_acc", "inp[j]", parameters="j", skip_missing=True)
    assert f2loopy.find_rules_matching(tu, "inp*") == ["inp_acc"]
    assert f2loopy.find_one_rule_matching(tu, "*acc") == "inp_acc"


@pytest.mark.usefixtures("sandbox_process")
def test_find_instructions_on_a_unit_in_a_script(tmp_path):
    from f2loopy.pipeline import translate_text
    src = TAGGED + """
!$loopy begin
! tu = lp.parse_fortran(SOURCE, FILENAME)
! print(len(lp.find_instructions(tu, "tag:input")))
! RESULT = tu
!$loopy end
"""
    r = translate_text(src, tmp_path / "t.f90")
    assert r.script_output == "3\n"


@pytest.mark.parametrize(("call", "changes"), [
    (lambda tu, **kw: f2loopy.split_iname(tu, "i", 2, **kw), True),
    (lambda tu, **kw: f2loopy.tag_instructions(tu, "t", "writes:x", **kw), True),
    (lambda tu, **kw: f2loopy.assignment_to_subst(tu, "a", **kw), True),
    (lambda tu, **kw: f2loopy.set_temporary_address_space(tu, "a", "local", **kw), True),
    (lambda tu, **kw: f2loopy.tag_data_axes(tu, "x", "c", **kw), False),
    (lambda tu, **kw: f2loopy.add_and_infer_dtypes(tu, {"inp": "float64"}, **kw), False),
])
def test_transforms_take_a_unit_and_apply_where_asked(call, changes):
    """A kernel of the unit without the name raises (issue 26: never half a
    unit transformed in silence) unless the caller asks to skip it."""
    tu = f2loopy.parse_fortran(TAGGED)
    try:
        out = call(tu)
    except f2loopy.TransformError as exc:
        assert "of the unit: " in exc.message and "skip_missing=True" in exc.message
        out = call(tu, skip_missing=True)
    assert isinstance(out, f2loopy.TranslationUnit) and out.keys() == ["rot", "other"]
    assert (out != tu) == changes

# }}}


# {{{ assignment_to_subst: extra arguments, several assignments

TWO_DEFS = """
subroutine fill(out, out2, inp, n)
  integer n, i
  real*8 a, out(n), out2(n), inp(n)
  do i = 1, n
    a = inp(i)
    out(i) = 5*a
    a = 3*inp(n) + a
    out2(i) = 6*a
  end do
end
"""


def _rules(knl):
    return {n: (r.arguments, str(r.expression)) for n, r in knl.substitutions.items()}


def test_assignment_to_subst_extra_arguments_become_rule_arguments():
    src = TWO_DEFS.replace("    a = 3*inp(n) + a\n", "")
    knl = f2loopy.parse_fortran(src)["fill"]
    out = f2loopy.assignment_to_subst(knl, "a", extra_arguments="i")
    assert _rules(out) == {"a_subst": (("a_i",), "inp[a_i]")}
    assert [str(i.expression) for i in out.instructions] == ["5*a_subst(i)", "6*a_subst(i)"]
    assert "a" not in out.temporary_variables
    # positional, as loopy's scripts pass it
    assert f2loopy.assignment_to_subst(knl, "a", "i") == out


def test_assignment_to_subst_extra_argument_must_be_a_loop_of_the_assignment():
    src = TWO_DEFS.replace("    a = 3*inp(n) + a\n", "")
    with pytest.raises(f2loopy.TransformError) as info:
        f2loopy.assignment_to_subst(f2loopy.parse_fortran(src), "a", extra_arguments=["n"])
    assert info.value.message == ("assignment_to_subst: extra argument 'n' is not a loop of "
                                  "the assignment to 'a'")


def test_assignment_to_subst_makes_a_rule_per_assignment():
    knl = f2loopy.parse_fortran(TWO_DEFS)["fill"]
    out = f2loopy.assignment_to_subst(knl, "a")
    # the second assignment reads the first: its rule calls the first rule
    assert _rules(out) == {"a_subst_1": ((), "inp[i]"),
                           "a_subst_2": ((), "3*inp[n] + a_subst_1()")}
    assert [str(i.expression) for i in out.instructions] == ["5*a_subst_1()", "6*a_subst_2()"]
    assert not out.temporary_variables


@pytest.mark.opencl
def test_assignment_to_subst_of_several_assignments_computes_the_same(cl_queue):
    ref = f2loopy.parse_fortran(TWO_DEFS)
    out = f2loopy.assignment_to_subst(ref, "a", extra_arguments="i")
    assert set(out["fill"].substitutions) == {"a_subst_1", "a_subst_2"}
    result = f2loopy.auto_test_vs_ref(ref, cl_queue.context, out, parameters={"n": 7},
                                      quiet=True)
    assert set(result.max_errors) == {"out", "out2"}

# }}}


CHAIN_DEFS = """
subroutine chain(n, a, b, c)
  integer n, i
  real a(n), b(n), c(n), t
  do i = 1, n
    t = a(i)
    b(i) = t * 2
    t = t + a(i)**2
    c(i) = t - b(i)
    t = c(i) * t
    b(i) = b(i) + t
  end do
end subroutine
"""


@pytest.mark.opencl
@needs_gfortran
@pytest.mark.parametrize("extra", [(), "i"])
def test_rules_per_assignment_match_gfortran(extra, tmp_path, cl_queue):
    def t(k):
        out = f2loopy.assignment_to_subst(k, "t", extra_arguments=extra)
        assert sorted(out.substitutions) == ["t_subst_1", "t_subst_2", "t_subst_3"]
        return out
    run_transformed(CHAIN_DEFS, "chain", t, [9, farray(9, seed=4), farray(9, seed=5),
                                            farray(9, seed=6)], tmp_path, cl_queue)


# {{{ precompute with some existing and some new inames

DGEMM = """
subroutine dgemm(m, n, ell, a, b, c)
  implicit none
  real*8 a(m, ell), b(ell, n), c(m, n)
  integer m, n, k, i, j, ell
  do j = 1, n
    do i = 1, m
      do k = 1, ell
        c(i, j) = c(i, j) + b(k, j)*a(i, k)
      end do
    end do
  end do
end subroutine
"""


def _tiled(tile_k=8):
    knl = f2loopy.parse_fortran(DGEMM)
    knl = f2loopy.split_iname(knl, "i", 8, outer_tag="g.0", inner_tag="l.1")
    knl = f2loopy.split_iname(knl, "j", 8, outer_tag="g.1", inner_tag="l.0")
    knl = f2loopy.split_iname(knl, "k", tile_k)
    knl = f2loopy.assume(knl, f"n mod 8 = 0 and m mod 8 = 0 and ell mod {tile_k} = 0")
    knl = f2loopy.extract_subst(knl, "a_acc", "a[i1,i2]", parameters="i1, i2")
    knl = f2loopy.extract_subst(knl, "b_acc", "b[i1,i2]", parameters="i1, i2")
    return f2loopy.precompute(knl, "a_acc", "k_inner,i_inner", precompute_inames="ktemp,itemp",
                              precompute_outer_inames="i_outer, j_outer, k_outer",
                              default_tag="l.auto")


def test_precompute_reuses_existing_inames_and_makes_the_others():
    knl = f2loopy.precompute(_tiled(), "b_acc", "j_inner,k_inner",
                             precompute_inames="itemp,k2temp",
                             precompute_outer_inames="i_outer, j_outer, k_outer",
                             default_tag="l.auto")["dgemm"]
    assert knl.all_inames().count("itemp") == 1
    assert str(knl.domains[-1]) == "{ [k2temp] : 0 <= k2temp <= 7 }"
    computes = [i for i in knl.instructions if i.id.endswith("_compute")]
    assert [sorted(i.within_inames - {"i_outer", "j_outer", "k_outer"}) for i in computes] \
        == [["itemp", "ktemp"], ["itemp", "k2temp"]]
    assert str(knl.iname_tag("k2temp")) == "l.auto"


def test_precompute_refuses_existing_inames_of_another_extent():
    with pytest.raises(f2loopy.TransformError) as info:
        f2loopy.precompute(_tiled(tile_k=4), "b_acc", "k_inner,j_inner",
                           precompute_inames="ktemp,j2temp",
                           precompute_outer_inames="i_outer, j_outer, k_outer")
    # the storage axes follow the rule's arguments: ktemp is a's first axis
    # (i, 8 long), b's first axis is k (4 long)
    assert info.value.message == (
        "precompute: the existing loops ktemp span { [ktemp] : 0 <= ktemp <= 7 }, but "
        "'b_acc' is needed over { [ktemp] : 0 <= ktemp <= 3 }")


@pytest.mark.opencl
def test_precompute_with_reused_inames_computes_the_same(cl_queue):
    ref = f2loopy.parse_fortran(DGEMM)
    knl = f2loopy.precompute(_tiled(), "b_acc", "j_inner,k_inner",
                             precompute_inames="itemp,k2temp",
                             precompute_outer_inames="i_outer, j_outer, k_outer",
                             default_tag="l.auto")
    f2loopy.auto_test_vs_ref(ref, cl_queue.context, knl,
                             parameters={"n": 16, "m": 24, "ell": 32}, quiet=True)

# }}}


# {{{ fuse_kernels through private scalar temporaries

DERIV = """
subroutine {name}(nelements, ndofs, result, d, q)
  implicit none
  integer e, i, j, k, nelements, ndofs
  real*8 result(nelements, ndofs, ndofs), q(nelements, ndofs, ndofs), d(ndofs, ndofs)
  real*8 prev
  do e = 1, nelements
    do i = 1, ndofs
      do j = 1, ndofs
        do k = 1, ndofs
{inner}
        end do
      end do
    end do
  end do
end subroutine
"""
X_DIRECT = "          result(e,i,j) = result(e,i,j) + d(i,k)*q(e,i,k)"
X_TEMP = "          prev = result(e,i,j)\n          result(e,i,j) = prev + d(i,k)*q(e,i,k)"
Y_TEMP = "          prev = result(e,i,j)\n          result(e,i,j) = prev + d(i,k)*q(e,k,j)"


def _deriv(name, inner):
    return f2loopy.parse_fortran(DERIV.format(name=name, inner=inner))[name]


@pytest.mark.parametrize("x_inner", [X_DIRECT, X_TEMP])
def test_fusion_sees_accumulations_through_private_scalars(x_inner):
    fused = f2loopy.fuse_kernels([_deriv("xd", x_inner), _deriv("yd", Y_TEMP)],
                                 data_flow=[("result", 0, 1)])
    assert fused.name == "xd_yd"
    assert len(fused.temporaries) == (2 if x_inner == X_TEMP else 1)


@pytest.mark.parametrize(("y_inner", "why"), [
    # the update is a product: it does not commute with the other kernel's sum
    ("          prev = result(e,i,j)\n          result(e,i,j) = prev * d(i,k)", "kind"),
    # the temporary is read again: not a plain update
    ("          prev = result(e,i,j)\n          result(e,i,j) = prev + d(i,k)\n"
     "          q(e,i,j) = prev", "read twice"),
    # something else writes the array between the load and the store
    ("          prev = result(e,i,j)\n          result(e,i,j) = 0\n"
     "          result(e,i,j) = prev + d(i,k)", "written between"),
])
def test_fusion_through_temporaries_refuses_what_is_not_an_update(y_inner, why):
    with pytest.raises(f2loopy.TransformError) as info:
        f2loopy.fuse_kernels([_deriv("xd", X_TEMP), _deriv("yd", y_inner)])
    assert info.value.message.startswith("fuse_kernels: fusing would change results: ")


@pytest.mark.opencl
def test_fused_accumulations_through_temporaries_compute_the_same(cl_queue):
    from f2loopy import loopy_compat as lp
    both = f2loopy.parse_fortran(DERIV.format(name="xyd", inner=X_TEMP + "\n" + Y_TEMP))
    tu = lp.fuse_kernels((_deriv("xd", X_TEMP), _deriv("yd", Y_TEMP)),
                         data_flow=[("result", 0, 1)])
    assert tu.keys() == ["xd_and_yd"]
    knl = lp.prioritize_loops(tu["xd_and_yd"], "e,i,j,k")
    lp.auto_test_vs_ref(both, cl_queue.context, knl,
                        parameters={"nelements": 5, "ndofs": 4}, quiet=True)

# }}}


def test_loopy_compat_gives_f2loopy_names_and_loopy_conventions():
    from f2loopy import loopy_compat as lp
    assert lp.split_iname is f2loopy.split_iname
    assert lp.parse_fortran is f2loopy.parse_fortran
    assert lp.LoopyError is f2loopy.F2LoopyError and lp.Program is f2loopy.TranslationUnit
    assert "fuse_kernels" in dir(lp) and "auto_test_vs_ref" in dir(lp)
    with pytest.raises(AttributeError):
        lp.no_such_function


# {{{ non-contiguous sections passed to explicit-shape dummies

TWICE_CROSS = """
subroutine twice(n, a)
  implicit none
  real*8 a(n)
  integer i, n
  do i = 1, n
    a(i) = a(i) * 2
  end do
end subroutine

subroutine twice_cross(n, a, i)
  implicit none
  integer i, n
  real*8 a(n, n)
  call twice(n, a(1:n, i))
  call twice(n, a(i, 1:n))
end subroutine
"""

STRIDED = """
subroutine fill2(m, x, s)
  integer m, j
  real x(2, m), s
  do j = 1, m
    x(1, j) = s * j
    x(2, j) = x(2, j) - s
  end do
end subroutine

subroutine every_other(n, b, s)
  integer n
  real b(n), s
  call fill2(n / 4, b(1:n:2), s)
  call fill2(n / 4, b(n:1:-2), 2 * s)
end subroutine
"""


def test_row_section_maps_onto_the_dummy_with_its_stride():
    knl = f2loopy.parse_fortran(TWICE_CROSS)["twice_cross"]
    code = f2loopy.generate_code(knl).device_code
    assert "a[i_1 - 1 + n * (i - 1)] = a[i_1 - 1 + n * (i - 1)] * 2;" in code
    assert "a[i - 1 + n * (i_2 - 1)] = a[i - 1 + n * (i_2 - 1)] * 2;" in code


@pytest.mark.opencl
@needs_gfortran
def test_strided_sections_for_explicit_shape_dummies_match_gfortran(tmp_path, cl_queue):
    n = 6
    run_both(TWICE_CROSS, "twice_cross", [n, farray((n, n), np.float64, seed=1), 3],
             tmp_path, cl_queue)
    # sequence association: a rank-2 dummy over a strided, also reversed, section
    run_both(STRIDED, "every_other", [12, farray(12, seed=2), np.float32(0.5)], tmp_path,
             cl_queue)

# }}}


# {{{ buffer_array of a tile that moves with the work-group

def _buffered_dgemm(buffer_inames):
    knl = f2loopy.parse_fortran(DGEMM)
    knl = f2loopy.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.1")
    knl = f2loopy.split_iname(knl, "j", 8, outer_tag="g.1", inner_tag="l.0")
    knl = f2loopy.split_iname(knl, "k", 32)
    knl = f2loopy.assume(knl, "n mod 32 = 0 and m mod 32 = 0 and ell mod 16 = 0")
    return f2loopy.buffer_array(knl, "c", buffer_inames=buffer_inames, init_expression="0",
                                store_expression="base+buffer")


def test_buffer_of_a_sliding_tile_is_stored_relative_to_its_start():
    knl = _buffered_dgemm("i_inner,j_inner")["dgemm"]
    buf = knl.temporaries["c_buf"]
    assert buf.shape == (16, 8) and buf.lower_bounds == (0, 0)
    store = knl.insn("c_buf_store")
    elem = "c[c_store_0 + 16*i_outer + 1, c_store_1 + 8*j_outer + 1]"
    assert str(store.assignee) == elem
    assert str(store.expression) == f"{elem} + c_buf[c_store_0, c_store_1]"


@pytest.mark.opencl
@pytest.mark.parametrize("buffer_inames", ["", "i_inner,j_inner"])
def test_buffered_tiles_compute_the_same(buffer_inames, cl_queue):
    ref = f2loopy.parse_fortran(DGEMM)
    f2loopy.auto_test_vs_ref(ref, cl_queue.context, _buffered_dgemm(buffer_inames),
                             parameters={"n": 32, "m": 64, "ell": 32}, quiet=True)

# }}}
