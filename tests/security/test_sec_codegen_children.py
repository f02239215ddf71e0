"""The two code-generation children of a script's kernels (issue 24: the code
and the value-flow check side by side) are each locked down before any work:
no file opens in either, whatever the kernels make the code generator do."""

from __future__ import annotations

import mmap
import struct

import pytest

import f2loopy
from f2loopy.directives import child_codegen
from f2loopy.directives.child_codegen import LoweringFailed, lower_script_kernels
from f2loopy.directives.lockdown import Limits

SAXPY = """subroutine saxpy(n, a, x, y)
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a*x(i) + y(i)
  end do
end
"""

ATTEMPTED, OPENED, REFUSED = 1, 2, 3


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("which", ["lower_all", "check_all_flows"])
def test_neither_child_opens_a_file(which, monkeypatch):
    shared = mmap.mmap(-1, 8)

    def try_open(kernels, *args, **kwargs):
        struct.pack_into("q", shared, 0, ATTEMPTED)
        try:
            with open(__file__, "rb") as f:
                f.read(1)
            struct.pack_into("q", shared, 0, OPENED)
        except OSError:
            struct.pack_into("q", shared, 0, REFUSED)
        return [None] * len(kernels) if which == "check_all_flows" else []

    monkeypatch.setattr(child_codegen, "side_by_side", lambda: True)
    monkeypatch.setattr(child_codegen, which, try_open)
    k = f2loopy.tag_inames(f2loopy.parse_fortran(SAXPY, "s.f90").kernels[0], "i:l.0")
    try:
        lower_script_kernels([k], Limits.from_environment())
    except LoweringFailed:
        pass                    # (killed by the filter, or the answer is not one)
    assert struct.unpack_from("q", shared, 0)[0] in (ATTEMPTED, REFUSED)
