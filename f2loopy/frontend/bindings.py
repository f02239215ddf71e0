"""What a name stands for in the IR: an array's view, and what a dummy
argument of an inlined procedure stands for in the caller."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pymbolic.primitives as p

from f2loopy.ir.expressions import make_subscript
from f2loopy.ir.folding import normalize_integer


@dataclass(eq=False)
class ArrayView:
    """What a Fortran array name refers to in the IR.

    :attr lbounds: Fortran lower bound per axis (IR expressions).
    :attr ubounds: upper bound per axis; None for an assumed-size axis.
    :attr mapper: Fortran subscripts -> IR subscripts (None: the same).
    :attr read_only: a constant table or an argument bound to one.
    """

    name: str
    ir_name: str
    dtype: np.dtype
    lbounds: tuple
    ubounds: tuple
    mapper: Callable[[tuple], tuple] | None = None
    read_only: bool = False
    what: str = ""

    @property
    def rank(self) -> int:
        return len(self.lbounds)

    def ir_indices(self, indices) -> tuple:
        indices = tuple(normalize_integer(i) for i in indices)
        return tuple(self.mapper(indices)) if self.mapper is not None else indices

    def element(self, indices):
        return make_subscript(self.ir_name, self.ir_indices(indices))

    def extent(self, k):
        if self.ubounds[k] is None:
            return None
        return normalize_integer(p.Sum((self.ubounds[k], p.Product((-1, self.lbounds[k])),
                                        1)))


@dataclass(eq=False)
class ScalarBinding:
    """A scalar dummy bound to an expression of the caller (*writable* when
    it is a variable the callee may assign; *what* names it in messages)."""

    expr: Any                     # an IR expression
    writable: bool
    what: str = "an expression"
    is_array = False


@dataclass(eq=False)
class ArrayBinding:
    """An array dummy bound to a view of an array of the caller."""

    view: ArrayView
    is_array = True


def scalar_binding(binding: ScalarBinding | ArrayBinding) -> ScalarBinding:
    """*binding*, which binds a scalar dummy (callers ask ``is_array`` first)."""
    if not isinstance(binding, ScalarBinding):
        raise TypeError("internal error: an array dummy argument used as a scalar")
    return binding


def array_binding(binding: ScalarBinding | ArrayBinding) -> ArrayBinding:
    """*binding*, which binds an array dummy (callers ask ``is_array`` first)."""
    if not isinstance(binding, ArrayBinding):
        raise TypeError("internal error: a scalar dummy argument used as an array")
    return binding
