"""A transformation applied to a translation unit applies to every kernel or
raises (issue 26, item 6): ``split_iname(tu, "i", 16)`` split kernel ``a`` and
left kernel ``b``, whose ``i`` was already tagged, unchanged without a word.
Kernels that lack the name are skipped only when the caller asks for it
(``skip_missing=True``); any other refusal always raises."""

import pytest

import f2loopy
from f2loopy import TransformError

SRC = """subroutine a(n, x)
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = 2*x(i)
  end do
end subroutine
subroutine b(n, y)
  integer n, i
  real y(n)
  do i = 1, n
    y(i) = y(i) + 1
  end do
end subroutine
subroutine c(n, z)
  integer n, j
  real z(n)
  do j = 1, n
    z(j) = 0
  end do
end subroutine
"""


def _unit(names=("a", "b")):
    tu = f2loopy.parse_fortran(SRC, "t.f90")
    return f2loopy.TranslationUnit([tu[n] for n in names], tu.filename, tu.source)


def test_refusal_in_one_kernel_raises_for_the_unit():
    tu = _unit()
    tu = f2loopy.TranslationUnit([tu["a"], f2loopy.tag_inames(tu["b"], "i:l.0")],
                                 tu.filename, tu.source)
    with pytest.raises(TransformError) as info:
        f2loopy.split_iname(tu, "i", 16)
    assert "kernel 'b'" in info.value.message
    # also when asked to skip kernels without the name: b has it
    with pytest.raises(TransformError):
        f2loopy.split_iname(tu, "i", 16, skip_missing=True)


def test_kernel_without_the_name_raises_unless_skipped():
    tu = _unit(("a", "c"))
    with pytest.raises(TransformError) as info:
        f2loopy.split_iname(tu, "i", 16)
    assert info.value.message.startswith("in kernel 'c' of the unit: no iname named 'i'")
    out = f2loopy.split_iname(tu, "i", 16, skip_missing=True)
    assert "i_inner" in set(out["a"].all_inames())
    assert out["c"] is tu["c"]


def test_every_kernel_is_transformed():
    out = f2loopy.split_iname(_unit(), "i", 16)
    assert all({"i_inner", "i_outer"} <= set(k.all_inames()) for k in out)


def test_no_kernel_has_the_name():
    with pytest.raises(TransformError) as info:
        f2loopy.split_iname(_unit(("c",)), "i", 16, skip_missing=True)
    assert "no iname named 'i'" in info.value.message


@pytest.mark.parametrize("call", [
    lambda tu, **kw: f2loopy.tag_inames(tu, "i:l.0", **kw),
    lambda tu, **kw: f2loopy.rename_iname(tu, "i", "ii", **kw),
    lambda tu, **kw: f2loopy.tag_array_axes(tu, "x", "c", **kw),
    lambda tu, **kw: f2loopy.set_loop_priority(tu, "i", **kw),
])
def test_other_transformations_do_not_skip_silently(call):
    tu = _unit(("a", "c"))
    with pytest.raises(TransformError):
        call(tu)
    call(tu, skip_missing=True)
