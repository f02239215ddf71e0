"""Helpers of the transformation tests (library II)."""

import numpy as np
import pytest

import f2loopy
from f2loopy import TransformError
from f2loopy.ir.printing import expr_to_str


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


class KeptCode:
    """``generate_code`` as ``plan_auto``'s *verify*, keeping the code of the
    last kernels it accepted: the kernel ``plan_auto`` returns is the one its
    last call of *verify* accepted, so a test that asserts on that kernel's
    code reads it with :meth:`of` instead of generating it a second time (a
    kernel verify never saw is generated then).  Kernels are matched by
    identity (the IR is immutable)."""

    def __init__(self, keep: int = 4):
        self._kept: list = []
        self._keep = keep
        self.reused = 0

    def __call__(self, kernel):
        gen = f2loopy.generate_code(kernel)
        self._kept = [*self._kept, (kernel, gen)][-self._keep:]
        return gen

    def of(self, kernel):
        """The generated code of *kernel* (a ``GeneratedKernel``)."""
        for k, gen in reversed(self._kept):
            if k is kernel:
                self.reused += 1
                return gen
        return f2loopy.generate_code(kernel)
