"""loopy's script entry points and transform arguments: pre_transform_code,
find_instructions on a translation unit, ..."""

from __future__ import annotations

import pytest

import f2loopy

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

def test_pre_transform_code_runs_before_the_script_in_its_namespace():
    tu = f2loopy.parse_transformed_fortran(FILL, pre_transform_code="split_amount = 64")
    assert tu["fill"].all_inames() == ("i_outer", "i_inner")
    assert "64" in str(tu["fill"].domains[0])


def test_pre_transform_code_without_a_script_runs_and_keeps_the_kernels():
    src = FILL[:FILL.index("!$loopy")]
    tu = f2loopy.parse_transformed_fortran(src, pre_transform_code="x = 1")
    assert tu == f2loopy.parse_fortran(src, "<floopy code>")


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
