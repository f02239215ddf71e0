"""loopy keyword arguments f2loopy does not implement are refused by name,
never silently ignored; those it implements (or that change nothing here) are
accepted."""

from __future__ import annotations

import pytest

import f2loopy
from f2loopy.diagnostics import UnsupportedArgumentError
from test_transforms_data import ACC
from transform_util import kernel
from util import needs_gfortran

LOOP = """
subroutine s(n, a, b)
  integer n, i
  real a(n), b(n), t
  do i = 1, n
    t = a(i) * 2
    b(i) = t
  end do
end subroutine
"""


def _loop():
    return kernel(LOOP)


REFUSED = [
    (lambda: f2loopy.collect_common_factors_on_increment(
        f2loopy.buffer_array(f2loopy.assignment_to_subst(kernel(ACC), "jid"), "r", (),
                             init_expression="0", store_expression="base + buffer",
                             default_tag="for", fetch_bounding_box=True),
        "r_buf", vary_by_axes=(0,)),
     "collect_common_factors_on_increment: vary_by_axes=(0,) is not supported: f2loopy finds "
     "where the factors may vary itself (a factor may depend on every loop the reads of the "
     "variable run in); leave it out"),
    (lambda: f2loopy.rename_inames(_loop(), "i", "j", raise_on_domain_mismatch=False),
     "rename_inames: raise_on_domain_mismatch=False is not supported: loops of different "
     "bounds are never merged (that would change which iterations run)"),
    (lambda: f2loopy.split_array_dim(_loop(), ("a", 0), 2, auto_split_inames=False,
                                     split_kwargs={"slabs": (0, 1)}),
     "split_array_axis: split_kwargs={'slabs': (0, 1)} is not supported: with "
     "auto_split_inames=False no loop is split"),
    (lambda: f2loopy.add_barrier(_loop(), "id:t", "id:b", mem_kind="global"),
     "add_barrier: mem_kind='global' is not supported: a local barrier fences local memory"),
    (lambda: f2loopy.assignment_to_subst(_loop(), "t", within="id:b"),
     "assignment_to_subst: within='id:b' is not supported: the rules replace every read of "
     "'t'"),
    (lambda: f2loopy.buffer_array(kernel(ACC), "r", (), init_expression="0",
                                  store_expression="buffer", default_tag="for"),
     "buffer_array: fetch_bounding_box=False is not supported: the elements of 'r' the "
     "instructions touch (along axes 2) do not fill their bounding box, the buffer is always "
     "filled and stored over the whole box, and this init_expression/store_expression would "
     "change the elements nobody touches; pass fetch_bounding_box=True to accept that"),
]


@pytest.mark.parametrize(("call", "message"), REFUSED,
                         ids=[m.split(":")[0] + "/" + m.split(" ")[1].split("=")[0]
                              for _, m in REFUSED])
def test_unimplemented_loopy_keywords_are_refused_by_name(call, message):
    with pytest.raises(UnsupportedArgumentError) as info:
        call()
    assert info.value.message == message
    assert str(info.value) == f"f2loopy: error: {message}"


@pytest.mark.usefixtures("sandbox_process")
def test_refusals_from_a_script_are_located(tmp_path):
    from f2loopy.pipeline import translate_text
    src = LOOP + """
!$loopy begin
! knl = lp.parse_fortran(SOURCE, FILENAME)
! knl = lp.add_barrier(knl, "id:t", "id:b", mem_kind="global")
! RESULT = knl
!$loopy end
"""
    with pytest.raises(f2loopy.ScriptError) as info:
        translate_text(src, tmp_path / "t.f90")
    assert str(info.value).splitlines()[0] == (
        f"{tmp_path / 't.f90'}:13:9: error: add_barrier: mem_kind='global' is not supported: "
        "a local barrier fences local memory")


def test_keywords_that_hold_or_change_nothing_are_accepted():
    k = _loop()
    # a local barrier fences local memory: loopy's mem_kind="local" says the same
    assert f2loopy.add_barrier(k, "id:t", "id:b", mem_kind="local") == \
        f2loopy.add_barrier(k, "id:t", "id:b")
    # Fortran declares every type: inference is complete
    assert f2loopy.add_and_infer_dtypes(k, {"a": "float32"}, expect_completion=True) == k
    # arguments never become rules, so there is nothing to retain
    assert f2loopy.assignment_to_subst(k, "t", force_retain_argument=True) == \
        f2loopy.assignment_to_subst(k, "t")
    # nosync is always recorded as asked
    assert f2loopy.add_nosync(k, "local", "id:t", "id:b", force=True) == \
        f2loopy.add_nosync(k, "local", "id:t", "id:b")
    # a store that keeps untouched elements is fine over the bounding box
    kb = f2loopy.buffer_array(kernel(ACC), "r", (), default_tag="for")
    assert kb.temporaries["r_buf"].shape == (4,)


def _public_api():
    import f2loopy.transform as T
    from f2loopy.api import generate_code_v2
    from f2loopy.codegen import generate_code
    from f2loopy.glue.call import call_kernel
    from f2loopy.glue.fortran import generate_fortran_glue
    from f2loopy.glue.python import generate_python_glue
    funcs = [getattr(T, n) for n in T.__all__]
    return funcs + [f2loopy.parse_fortran, f2loopy.parse_transformed_fortran, generate_code,
                    generate_code_v2, generate_python_glue, generate_fortran_glue, call_kernel,
                    f2loopy.auto_test_vs_ref]


@pytest.mark.parametrize("func", _public_api(), ids=lambda f: f.__name__)
def test_public_api_is_typed(func):
    import inspect
    import typing
    sig = inspect.signature(func)
    untyped = [p.name for p in sig.parameters.values()
               if p.annotation is inspect.Parameter.empty
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert not untyped and sig.return_annotation is not inspect.Signature.empty
    # the annotations name things that exist
    typing.get_type_hints(inspect.unwrap(func))
    assert func.__doc__ and func.__doc__.strip()


def test_transforms_keep_kernels_and_units_apart():
    import inspect
    sig = inspect.signature(f2loopy.split_iname)
    assert str(sig.parameters["kernel"].annotation) == "Kernel | TranslationUnit"
    assert sig.return_annotation == "Kernel | TranslationUnit"


@pytest.mark.parametrize(("order", "sub"), [("F", "q[i + -1, f_inner, f_outer, e]"),
                                            ("C", "q[i + -1, f_outer, f_inner, e]")])
def test_split_array_axis_splits_the_loop_of_the_subscript(order, sub):
    """loopy's auto_split_inames (its default): the loop that is the whole
    subscript of the split axis is split with it, so the subscripts stay
    loops; other subscripts use floor division and modulo."""
    from test_transforms_data import LAYOUT
    k = kernel(LAYOUT)
    s = f2loopy.split_array_axis(k, "q", 1, 4, order=order)
    assert {"f_outer", "f_inner"} <= set(s.all_inames()) and "f" not in s.all_inames()
    (body,) = [str(i.expression) for i in s.instructions if i.id == "r"]
    assert sub in body
    # 9 - f is not a loop: floor division and modulo
    assert "// 4" in body and "modulo(" in body
    # r's axis starts at 0 and its subscript f - 1 is not a bare loop
    s2 = f2loopy.split_array_axis(k, "r", 1, 4, order=order)
    assert "f" in s2.all_inames()
    # loopy's split_kwargs reach the loop's split
    s3 = f2loopy.split_array_dim(k, ("q", 1, order), 4, split_kwargs={"inner_tag": "unr"})
    assert str(s3.iname_tag("f_inner")) == "unr"


@pytest.mark.opencl
@needs_gfortran
def test_split_array_axis_with_split_loops_matches_gfortran(tmp_path, cl_queue):
    from test_transforms_data import LAYOUT
    from util import farray, run_transformed

    def t(k):
        k = f2loopy.split_array_dim(k, [("q", 1, "F")], 4)
        return f2loopy.tag_array_axes(k, "q", "N0,vec,N2,N1")
    ne = 3
    run_transformed(LAYOUT, "lay", t, [ne, farray((3, 8, ne), seed=1),
                                       farray((3, 8, ne), seed=2)], tmp_path, cl_queue)
