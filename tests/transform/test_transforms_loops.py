"""Transformation library I: unit tests and differential tests on PoCL vs gfortran."""

import numpy as np
import pytest

import f2loopy
from f2loopy import TransformError
from util import farray, needs_gfortran, run_transformed

MATMUL = """
subroutine mm(n, a, b, c)
  implicit none
  integer n, i, j, k
  real a(n, n), b(n, n), c(n, n)
  do j = 1, n
    do i = 1, n
      c(i, j) = 0.0
      do k = 1, n
        c(i, j) = c(i, j) + a(i, k) * b(k, j)
      end do
    end do
  end do
end subroutine
"""

STENCIL = """
subroutine smooth(n, m, u, v)
  implicit none
  integer n, m, i, j
  real u(0:n+1, 0:m+1), v(n, m)
  do j = 1, m
    do i = 1, n
      v(i, j) = 0.25 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1))
    end do
  end do
end subroutine
"""


def kernel(src, name=None):
    tu = f2loopy.parse_fortran(src, "t.f90")
    return tu[name] if name else tu.kernels[0]


def mm_args(n, seed=0):
    return [n, farray((n, n), seed=seed), farray((n, n), seed=seed + 1),
            np.zeros((n, n), np.float32, order="F")]


def st_args(n, m):
    return [n, m, farray((n + 2, m + 2), seed=3), np.zeros((n, m), np.float32, order="F")]


# {{{ unit tests

def test_split_names_domain_and_priorities():
    k = f2loopy.prioritize_loops(kernel(MATMUL), "j,i")
    k = f2loopy.split_iname(k, "i", 8)
    assert "i_outer" in k.all_inames() and "i_inner" in k.all_inames()
    assert "i" not in k.all_inames()
    assert ("j", "i_outer", "i_inner") in k.loop_priority
    assert str(k.domains[1]) == \
        "[n] -> { [i_outer, i_inner] : i_outer >= 0 and 0 <= i_inner <= 7 and i_inner < n - 8i_outer }"


def test_split_errors():
    with pytest.raises(TransformError, match="no iname named 'q'"):
        f2loopy.split_iname(kernel(MATMUL), "q", 4)
    with pytest.raises(TransformError, match="positive integer"):
        f2loopy.split_iname(kernel(MATMUL), "i", 0)
    k = f2loopy.tag_inames(kernel(MATMUL), "i:g.0")
    with pytest.raises(TransformError, match="already tagged 'g.0'"):
        f2loopy.split_iname(k, "i", 4)


def test_tag_inames_forms_and_conflicts():
    k = kernel(MATMUL)
    for spec in ({"i": "l.0", "j": "g.0"}, "i:l.0, j:g.0", [("i", "l.0"), ("j", "g.0")]):
        t = f2loopy.tag_inames(k, spec)
        assert str(t.iname_tag("i")) == "l.0" and str(t.iname_tag("j")) == "g.0"
    t = f2loopy.tag_inames(k, "*:unr")
    assert all(str(t.iname_tag(i)) == "unr" for i in "ijk")
    with pytest.raises(TransformError, match="already tagged 'l.0'"):
        f2loopy.tag_inames(f2loopy.tag_inames(k, "i:l.0"), "i:g.1")
    with pytest.raises(TransformError, match="unknown iname tag 'l.x'"):
        f2loopy.tag_inames(k, "i:l.x")
    # all tags of the reference table parse
    for tag in ["for", "g.0", "l.2", "l.auto", "unr", "ilp", "ilp.unr", "ilp.seq", "vec"]:
        f2loopy.tag_inames(k, {"k": tag})


def test_names_are_case_insensitive_like_fortran():
    k = f2loopy.split_iname(kernel(MATMUL), "I", 4)
    assert "i_outer" in k.all_inames()


def test_rename_and_duplicate():
    k = f2loopy.rename_iname(kernel(MATMUL), "k", "kk")
    assert "kk" in k.all_inames() and "k" not in k.all_inames()
    k2 = f2loopy.duplicate_inames(kernel(MATMUL), "i", within="writes:c and not iname:k")
    ids = {i.id: i for i in k2.instructions}
    assert "i_1" in ids["c"].within_inames and "i" in ids["c_1"].within_inames
    with pytest.raises(TransformError, match="already exists"):
        f2loopy.rename_iname(kernel(MATMUL), "k", "i")


def test_rename_into_existing_requires_same_bounds():
    src = """subroutine two(n, a, b)
  integer n, i, j
  real a(n), b(n+1)
  do i = 1, n
    a(i) = 1
  end do
  do j = 1, n + 1
    b(j) = 2
  end do
end
"""
    with pytest.raises(TransformError, match="different bounds"):
        f2loopy.rename_iname(kernel(src), "j", "i", existing_ok=True)


def test_join_inames():
    src = """subroutine fill(a)
  integer i, j
  real a(4, 3)
  do j = 1, 3
    do i = 1, 4
      a(i, j) = i + 10 * j
    end do
  end do
end
"""
    k = f2loopy.join_inames(kernel(src), "j,i", "ij")
    assert k.all_inames() == ("ij",)
    code = f2loopy.generate_code(k).device_code
    assert "for (int ij = 0; ij <= 11; ++ij)" in code


def test_fix_parameters_keeps_precision_and_removes_argument():
    src = """subroutine pw(n, g, x)
  integer n, i
  real g, x(n)
  do i = 1, n
    x(i) = x(i) ** g
  end do
end
"""
    k = f2loopy.fix_parameters(kernel(src), g=1.4, n=16)
    code = f2loopy.generate_code(k).device_code
    assert "1.4f" in code and "double" not in code
    assert "int const n" not in code and "float const g" not in code
    assert "for (int i = 1; i <= 16; ++i)" in code
    with pytest.raises(TransformError, match="'zz' is not an argument"):
        f2loopy.fix_parameters(kernel(src), zz=1)
    with pytest.raises(TransformError, match="is an integer; got 2.5"):
        f2loopy.fix_parameters(kernel(src), n=2.5)


def test_assume_drops_guards():
    k = f2loopy.split_iname(kernel(STENCIL), "i", 16, outer_tag="g.0", inner_tag="l.0")
    assert "if (" in f2loopy.generate_code(k).device_code
    k = f2loopy.assume(k, "n mod 16 = 0 and n >= 16")
    assert "if (" not in f2loopy.generate_code(k).device_code
    with pytest.raises(TransformError, match="'zz' is not an integer argument"):
        f2loopy.assume(k, "zz > 2")
    with pytest.raises(TransformError, match="can never hold"):
        f2loopy.assume(kernel(STENCIL), "n > 2 and n < 1")


def test_match_language():
    from f2loopy.transform import match as m
    k = kernel(MATMUL)
    ids = lambda spec: [i.id for i in f2loopy.find_instructions(k, spec)]  # noqa: E731
    assert ids("writes:c and not iname:k") == ["c"]
    assert ids("iname:k") == ["c_1"]
    assert ids("reads:a or id:c") == ["c", "c_1"]
    assert ids("id:c_*") == ["c_1"]
    assert ids(m.And(m.Writes("c"), m.Not(m.Iname("k")))) == ["c"]
    assert ids(m.Reads("b") | m.Id("nothing")) == ["c_1"]
    with pytest.raises(TransformError, match="unknown match kind 'foo:'"):
        ids("foo:bar")
    with pytest.raises(TransformError, match="missing '\\)'"):
        ids("(id:c and reads:a")


def test_instruction_transforms():
    k = f2loopy.tag_instructions(kernel(MATMUL), "update", within="iname:k")
    assert "update" in k.insn("c_1").tags
    k2 = f2loopy.add_dependency(k, "id:c_1", "id:c")
    assert "c" in k2.insn("c_1").depends_on
    k3 = f2loopy.remove_instructions(k2, "id:c")
    assert [i.id for i in k3.instructions] == ["c_1"]
    k4 = f2loopy.add_nosync(k, "local", "id:c", "id:c_1")
    assert ("c", "local") in k4.insn("c_1").no_sync_with
    k5 = f2loopy.set_options(k, "write_code", build_options=["-cl-mad-enable"], fp_contract=True)
    assert k5.options.write_code and k5.options.fp_contract
    assert k5.options.build_options == ("-cl-mad-enable",)
    with pytest.raises(TransformError, match="unknown option"):
        f2loopy.set_options(k, nonsense=True)


def test_fuse_kernels_refuses_disagreeing_domains():
    src = """subroutine a1(n, x)
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = 1
  end do
end
subroutine a2(n, x)
  integer n, i
  real x(n)
  do i = 2, n
    x(i) = x(i) + 1
  end do
end
"""
    with pytest.raises(TransformError, match="loop 'i' has different bounds"):
        f2loopy.fuse_kernels(list(f2loopy.parse_fortran(src, "t.f90")))

# }}}


# {{{ differential

@needs_gfortran
@pytest.mark.parametrize("n", [16, 21])
def test_tiled_parallel_matmul(n, tmp_path, cl_queue):
    def t(k):
        k = f2loopy.split_iname(k, "i", 8, outer_tag="g.0", inner_tag="l.0")
        k = f2loopy.split_iname(k, "j", 4, outer_tag="g.1", inner_tag="l.1")
        return f2loopy.split_iname(k, "k", 4, inner_tag="unr")
    run_transformed(MATMUL, "mm", t, mm_args(n), tmp_path, cl_queue)


@needs_gfortran
def test_matmul_local_reduction(tmp_path, cl_queue):
    def t(k):
        k = f2loopy.fix_parameters(k, n=24)
        k = f2loopy.accumulation_to_reduction(k, "iname:k")
        return f2loopy.tag_inames(k, "k:l.0, i:g.0, j:g.1")
    run_transformed(MATMUL, "mm", t, mm_args(24), tmp_path, cl_queue)


@needs_gfortran
def test_sequential_reduction_and_ilp(tmp_path, cl_queue):
    def t(k):
        k = f2loopy.accumulation_to_reduction(k, "iname:k")
        k = f2loopy.split_iname(k, "i", 4, inner_tag="ilp")
        return f2loopy.tag_inames(k, "j:g.0")
    run_transformed(MATMUL, "mm", t, mm_args(10), tmp_path, cl_queue)


@needs_gfortran
def test_stencil_join_and_parallel(tmp_path, cl_queue):
    def t(k):
        k = f2loopy.fix_parameters(k, n=12, m=5)
        k = f2loopy.join_inames(k, "j,i", "ji")
        return f2loopy.split_iname(k, "ji", 16, outer_tag="g.0", inner_tag="l.0")
    run_transformed(STENCIL, "smooth", t, st_args(12, 5), tmp_path, cl_queue)


@needs_gfortran
def test_rename_duplicate_prioritize(tmp_path, cl_queue):
    def t(k):
        k = f2loopy.rename_iname(k, "j", "col")
        k = f2loopy.prioritize_loops(k, "i,col")
        k = f2loopy.duplicate_inames(k, "i", within="iname:k")
        return f2loopy.remove_unused_inames(k)
    run_transformed(MATMUL, "mm", t, mm_args(7), tmp_path, cl_queue)


@needs_gfortran
def test_fused_kernels_run_in_order(tmp_path, cl_queue):
    src = """subroutine both(n, x, y)
  integer n
  real x(n), y(n)
  call first(n, x, y)
end
subroutine first(n, x, y)
  integer n, i
  real x(n), y(n), t
  do i = 1, n
    t = x(i) * 2
    y(i) = t
  end do
end
subroutine second(n, x, y)
  integer n, i
  real x(n), y(n), t
  do i = 1, n
    t = y(i) + 1
    x(i) = t * y(i)
  end do
end
"""
    del src
    first = """subroutine first(n, x, y)
  integer n, i
  real x(n), y(n), t
  do i = 1, n
    t = x(i) * 2
    y(i) = t
  end do
  do i = 1, n
    x(i) = (y(i) + 1) * y(i)
  end do
end
"""
    second = """subroutine first(n, x, y)
  integer n, i
  real x(n), y(n), t
  do i = 1, n
    t = x(i) * 2
    y(i) = t
  end do
end
subroutine second(n, x, y)
  integer n, i
  real x(n), y(n), t
  do i = 1, n
    t = y(i) + 1
    x(i) = t * y(i)
  end do
end
"""

    def t(_):
        ks = list(f2loopy.parse_fortran(second, "s.f90"))
        fused = f2loopy.fuse_kernels(ks, suffixes=["_a", "_b"], name="first")
        return f2loopy.split_iname(fused, "i", 8, outer_tag="g.0", inner_tag="l.0")
    run_transformed(first, "first", t, [30, farray(30, seed=1), farray(30, seed=2)],
                    tmp_path, cl_queue)

# }}}


# {{{ slabs, reductions over split loops

DOT_MAX = """
subroutine dot_max(n, x, y, dot, amax)
  implicit none
  integer n, i
  double precision x(n), y(n), dot, amax
  dot = 0.0d0
  amax = 0.0d0
  do i = 1, n
    dot = dot + x(i) * y(i)
    amax = max(amax, abs(x(i)))
  end do
end subroutine
"""


def test_slabs_peel_the_partial_last_chunk():
    k = f2loopy.split_iname(kernel(MATMUL), "k", 4, slabs=(0, 1))
    k = f2loopy.tag_inames(k, "k_inner:unr")
    assert dict(k.iname_slabs) == {"k_outer": (0, 1)}
    code = f2loopy.generate_code(k).device_code
    # the last chunk: one iteration, a block that fixes the index
    loops = [ln.strip() for ln in code.splitlines()
             if ln.strip().startswith(("for (int k_outer", "int const k_outer"))]
    assert loops == ["for (int k_outer = 0; k_outer <= (n + 3) / 4 - 2; ++k_outer)",
                     "int const k_outer = (n + 3) / 4 - 1;"]
    middle = code.split(loops[0])[1].split(loops[1])[0]
    assert "n >=" not in middle          # full chunks: no bound tests
    assert "n >= 4 * k_outer + 2" in code.split(loops[1])[1]
    with pytest.raises(TransformError, match=r"slabs must be two non-negative integers"):
        f2loopy.split_iname(kernel(MATMUL), "k", 4, slabs=(1,))
    # renaming keeps the peeling
    assert dict(f2loopy.rename_iname(k, "k_outer", "kk").iname_slabs) == {"kk": (0, 1)}


@needs_gfortran
@pytest.mark.parametrize("n", [13, 16])
def test_slabs_give_the_same_results(n, tmp_path, cl_queue):
    def t(k):
        k = f2loopy.split_iname(k, "i", 8, outer_tag="g.0", inner_tag="l.0")
        k = f2loopy.split_iname(k, "k", 4, slabs=(1, 1), inner_tag="unr")
        return k
    run_transformed(MATMUL, "mm", t, mm_args(n), tmp_path, cl_queue)


def test_independent_accumulations_in_one_loop_become_reductions():
    k = f2loopy.accumulation_to_reduction(kernel(DOT_MAX), "iname:i",
                                          inames="i")
    from f2loopy.ir.printing import expr_to_str
    exprs = sorted(expr_to_str(i.expression) for i in k.instructions)
    assert exprs == ["max(0.0, max(i, abs(x[i])))", "sum(i, x[i]*y[i])"]
    assert all(i.within_inames == frozenset() for i in k.instructions)


def test_make_reduction_inames_unique_gives_each_reduction_its_loop():
    k = f2loopy.accumulation_to_reduction(kernel(DOT_MAX), "iname:i", inames="i")
    k = f2loopy.tag_inames(k, "i:unr")
    u = f2loopy.make_reduction_inames_unique(k)
    from f2loopy.ir.printing import expr_to_str
    exprs = sorted(expr_to_str(i.expression) for i in u.instructions)
    assert exprs == ["max(0.0, max(i_1, abs(x[i_1])))", "sum(i, x[i]*y[i])"]
    assert str(u.iname_tag("i_1")) == "unr"
    assert f2loopy.make_reduction_inames_unique(u) is u
    assert f2loopy.make_reduction_inames_unique(k, inames="i", within="writes:dot") is k
    only = f2loopy.make_reduction_inames_unique(k, within="writes:amax")
    assert sorted(only.all_inames()) == ["i", "i_1"]


@needs_gfortran
def test_unique_reduction_inames_split_apart(tmp_path, cl_queue):
    def t(k):
        k = f2loopy.accumulation_to_reduction(k, "iname:i", inames="i")
        k = f2loopy.make_reduction_inames_unique(k)
        k = f2loopy.split_iname(k, "i", 16, inner_tag="l.0")
        return f2loopy.split_iname(k, "i_1", 4, inner_tag="unr")
    n = 37
    run_transformed(DOT_MAX, "dot_max", t, [n, farray(n, np.float64, seed=5),
                                            farray(n, np.float64, seed=6),
                                            np.float64(0), np.float64(0)], tmp_path, cl_queue)


def test_accumulation_sharing_its_loop_with_a_dependent_statement_is_refused():
    src = """
subroutine cumsum(n, x, s, y)
  implicit none
  integer n, i
  real x(n), s, y(n)
  s = 0
  do i = 1, n
    s = s + x(i)
    y(i) = s
  end do
end subroutine
"""
    with pytest.raises(TransformError) as err:
        f2loopy.accumulation_to_reduction(kernel(src), "writes:s and iname:i", inames="i")
    assert err.value.message == ("accumulation_to_reduction: loop 'i' also contains 'y', which "
                                 "uses 's'; the reduction would reorder them")


def test_reduction_follows_a_split_of_its_loop():
    k = f2loopy.accumulation_to_reduction(kernel(DOT_MAX), "writes:dot and iname:i", inames="i")
    k = f2loopy.split_iname(k, "i", 64, inner_tag="l.0", within="writes:dot")
    from f2loopy.ir.printing import expr_to_str
    (dot,) = [i for i in k.instructions if i.assignee_name == "dot"]
    assert expr_to_str(dot.expression) == \
        "sum((i_outer, i_inner), x[1 + i_inner + 64*i_outer]*y[1 + i_inner + 64*i_outer])"


ROWSUM = """
subroutine rowsum(n, m, a, s)
  implicit none
  integer n, m, i, j
  real a(n, m), s(n), acc
  do i = 1, n
    acc = 0
    do j = 1, m
      acc = acc + a(i, j)
    end do
    s(i) = acc
  end do
end subroutine
"""


def test_accumulation_into_a_temporary_read_after_the_loop():
    """The usual Fortran: ``acc = 0``, the loop, ``s(i) = acc``.  "writes:acc"
    selects the start too (left alone), which becomes the reduction's start
    although ``s`` waits for it as well; the result can then become a rule
    whose reduction follows a split of its loop."""
    from f2loopy.ir.printing import expr_to_str
    k = f2loopy.accumulation_to_reduction(kernel(ROWSUM), "writes:acc")
    assert [(i.id, expr_to_str(i.expression)) for i in k.instructions] == [
        ("acc_1", "sum(j, a[i, j])"), ("s", "acc")]
    k = f2loopy.assignment_to_subst(k, "acc")
    k = f2loopy.split_iname(k, "j", 16, inner_tag="l.0")
    assert expr_to_str(k.substitutions["acc_subst"].expression) == \
        "sum((j_outer, j_inner), a[i, 1 + j_inner + 16*j_outer])"
    with pytest.raises(TransformError) as err:
        f2loopy.accumulation_to_reduction(kernel(ROWSUM), "id:acc")
    assert err.value.message == ("accumulation_to_reduction: instruction 'acc' is not an "
                                 "accumulation of the form acc = acc + ... (or *, max, min)")


@needs_gfortran
@pytest.mark.parametrize("m", [0, 7, 40])
def test_reduction_of_a_rule_over_a_split_parallel_loop(m, tmp_path, cl_queue):
    def t(k):
        k = f2loopy.accumulation_to_reduction(k, "writes:acc")
        k = f2loopy.assignment_to_subst(k, "acc")
        k = f2loopy.split_iname(k, "j", 16, inner_tag="l.0")
        return f2loopy.tag_inames(k, "i:g.0")
    n = 5
    run_transformed(ROWSUM, "rowsum", t, [n, m, farray((n, max(m, 1)), seed=4)[:, :m].copy(
        order="F"), np.zeros(n, np.float32)], tmp_path, cl_queue)


@needs_gfortran
@pytest.mark.parametrize("n", [0, 5, 256, 1000])
def test_two_level_parallel_reduction(n, tmp_path, cl_queue):
    """A reduction over a split loop: each work-item sums its share
    sequentially, the group combines the shares in local memory; lanes with
    no share (n < 256) contribute the neutral element."""
    def t(k):
        k = f2loopy.accumulation_to_reduction(k, "iname:i", inames="i")
        return f2loopy.split_iname(k, "i", 256, inner_tag="l.0")
    args = [n, farray(max(n, 1), np.float64, seed=1)[:n].copy(),
            farray(max(n, 1), np.float64, seed=2)[:n].copy(), 0.0, 0.0]
    run_transformed(DOT_MAX, "dot_max", t, args, tmp_path, cl_queue)

# }}}


# {{{ loopy's other spellings (scripts written for loopy's Fortran frontend)

def test_add_dtypes_checks_the_declarations():
    k = kernel(MATMUL)
    assert f2loopy.add_dtypes(k, {"a, B": np.float32, "n": np.int32}) is k
    assert f2loopy.add_and_infer_dtypes(k, dict(c="float32")) is k
    with pytest.raises(TransformError, match=r"add_dtypes: 'c' is declared real \(float32\) "
                                             r"in the Fortran, not float64"):
        f2loopy.add_dtypes(k, {"c": np.float64})
    with pytest.raises(TransformError, match="add_dtypes: kernel 'mm' has no variable 'x'"):
        f2loopy.add_dtypes(k, {"x": np.float32})


@needs_gfortran
def test_chunk_iname_splits_into_that_many_chunks(tmp_path, cl_queue):
    k = f2loopy.fix_parameters(kernel(MATMUL), n=10)
    c = f2loopy.chunk_iname(k, "j", 3, outer_tag="g.0")
    assert str(c.domains).count("j_inner <= 3") == 1        # ceil(10 / 3) = 4 per chunk
    assert f2loopy.generate_code(c).grid.num_groups[0] == 3
    with pytest.raises(TransformError, match="chunk_iname: the trip count of loop 'i' is not "
                                             "a constant"):
        f2loopy.chunk_iname(kernel(MATMUL), "i", 4)
    run_transformed(MATMUL, "mm", lambda k: f2loopy.chunk_iname(
        f2loopy.fix_parameters(k, n=10), "i", 4, inner_tag="l.0"), mm_args(10), tmp_path,
        cl_queue)


def test_rename_inames_merges_loops_of_the_same_range():
    k = kernel(STENCIL)
    k = f2loopy.duplicate_inames(k, "i", within="id:v")
    (dup,) = [i for i in k.all_inames() if i.startswith("i_")]
    merged = f2loopy.rename_inames(k, [dup], "x")
    assert "x" in merged.all_inames() and dup not in merged.all_inames()
    assert f2loopy.temporary_to_subst is not None and f2loopy.split_arg_axis is not None


def test_set_options_write_cl_is_write_code():
    k = f2loopy.set_options(kernel(MATMUL), "write_cl")
    assert k.options.write_code
    assert not f2loopy.set_options(k, "no_write_code").options.write_code
    with pytest.raises(TransformError, match="unknown option.s. trace_everything"):
        f2loopy.set_options(k, trace_everything=True)

# }}}


TWO = """subroutine two(n, x, y, z)
  integer n, i
  real x(n), y(n), z(n)
  do i = 1, n
    y(i) = x(i) * 2.0
    z(i) = x(i) + 3.0
  end do
end subroutine
"""


@needs_gfortran
@pytest.mark.parametrize("second", [
    lambda k: f2loopy.split_iname(k, "i", 4, outer_tag="g.0", inner_tag="l.0"),
    lambda k: f2loopy.split_iname(f2loopy.duplicate_inames(k, "i", within="writes:z",
                                                           new_inames="k"), "k", 8),
])
def test_split_within_then_split_the_rest(second, tmp_path, cl_queue):
    # the loop left to the other statements is independent of the first split
    # (it was tied to it in one domain: wrong subscripts, code that did not build)
    def t(k):
        k = f2loopy.split_iname(k, "i", 4, within="writes:y", outer_tag="g.0",
                                inner_tag="l.0")
        return second(k)
    k = t(kernel(TWO))
    assert {"i_outer", "i_inner"} <= set(k.all_inames())
    if "i_outer_1" in k.all_inames():              # default names of the second split
        assert "i_inner_1" in k.all_inames()
    run_transformed(TWO, "two", t, [50, farray(50, seed=4), np.zeros(50, np.float32),
                                    np.zeros(50, np.float32)], tmp_path, cl_queue)


def test_ilp_that_would_reorder_dependent_statements_is_refused():
    # s accumulates over i then j: running the ilp copies of i inside j
    # changes the order of the additions
    src = """subroutine acc(n, m, a, s)
  integer n, m, i, j
  real a(n, m), s
  do i = 1, n
    do j = 1, m
      s = s * 0.5 + a(i, j)
    end do
  end do
end subroutine
"""
    k = f2loopy.split_iname(kernel(src), "i", 2, inner_tag="ilp")
    with pytest.raises(f2loopy.CodegenError, match="iname 'i_inner' is tagged ilp.unr: its "
                                                   "iterations run innermost, inside 'j'"):
        f2loopy.generate_code(k)
    f2loopy.generate_code(f2loopy.split_iname(kernel(src), "i", 2, inner_tag="unr"))
