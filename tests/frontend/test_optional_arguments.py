"""OPTIONAL dummy arguments and present() (issue 27, cause 8): the glue's
argument defaults to None (absent), present() sees it; in procedures inlined
into a kernel present() follows the call."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.ir.roles import Presence
from shared_kernels import OPTIONAL_SCALING
from util import translate_and_load

SCALE = OPTIONAL_SCALING


def test_optional_arguments_have_presence_flags():
    k = parse_fortran(SCALE, "s.f90")["scale_add"]
    assert [a.name for a in k.fortran_args] == ["n", "x", "y", "factor", "shift", "count"]
    assert [(a.name, a.role) for a in k.args if isinstance(a.role, Presence)] == [
        ("factor_present", Presence("factor")), ("shift_present", Presence("shift")),
        ("count_present", Presence("count"))]
    assert [a.role.optional for a in k.fortran_args] == [False] * 3 + [True] * 3
    text = str(k)
    assert "factor_present: int32, scalar, presence flag of optional factor" in text
    # present() of the inlined bump: false, true, then factor's own flag
    insns = [line.split("  {")[0] for line in text.split("INSTRUCTIONS:")[1].splitlines()[1:]]
    assert insns[5:9] == ["y[n] = y[n] + -1", "y[1] = y[1] + 10.0",
                          "if (factor_present != 0) y[1] = y[1] + factor",
                          "if (not (factor_present != 0)) y[n] = y[n] + -1"]
    from f2loopy.ir.serialize import decode_kernel, encode_kernel
    again = decode_kernel(encode_kernel(k))
    assert again.arg_dict["count_present"].role == Presence("count")
    assert again.arg_dict["shift"].role.optional


@pytest.mark.parametrize("source, message", [
    ("subroutine s(n)\n  integer :: n, m\n  optional :: m\n  n = 1\nend subroutine\n",
     "f.f90:3:15: error: 'm' is declared optional but is not a dummy argument"),
    ("subroutine s(n, m)\n  integer :: n, m\n  n = 1\n  if (present(m)) n = 2\nend subroutine\n",
     "f.f90:4:7: error: the argument of 'present' must be an optional dummy argument of 's'"),
    ("subroutine s(n)\n  integer :: n\n  call t(n)\ncontains\n  subroutine t(a, b, c)\n"
     "    integer :: a, b\n    integer, optional :: c\n    a = b\n  end subroutine\n"
     "end subroutine\n",
     "f.f90:3:8: error: argument 'b' of 't' is missing"),
])
def test_optional_errors_are_located(source, message):
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "f.f90")
    assert e.value.format().splitlines()[0] == message


def test_python_glue_optional_arguments_default_to_absent(tmp_path, cl_queue):
    glue, _ = translate_and_load(SCALE, tmp_path)
    x = np.arange(1.0, 5.0)

    def expect(y, factor=None, shift=None):
        y = y + (1 if factor is None else factor) * x + (0 if shift is None else shift)
        y[3] -= 1                        # bump(n, y)
        y[0] += 10                       # bump(n, y, 10d0)
        if factor is None:               # bump(n, y, factor)
            y[3] -= 1
        else:
            y[0] += factor
        return y

    y = np.zeros(4)
    assert glue.scale_add(4, x, y, queue=cl_queue) is None
    assert np.array_equal(y, expect(np.zeros(4)))
    y = np.zeros(4)
    assert glue.scale_add(4, x, y, 2.0, count=0, queue=cl_queue) == 4
    assert np.array_equal(y, expect(np.zeros(4), factor=2.0))
    y, shift = np.zeros(4), np.full(4, 0.5)
    assert glue.scale_add(4, x, y, None, shift, 7, queue=cl_queue) == 4
    assert np.array_equal(y, expect(np.zeros(4), shift=shift))
    import inspect
    assert str(inspect.signature(glue.scale_add)) == \
        "(n, x, y, factor=None, shift=None, count=None, *, queue=None)"
