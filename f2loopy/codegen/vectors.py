"""OpenCL vector types for ``vec`` array axes and ``vec`` inames.

An array with a ``vec`` axis of length N (2, 4, 8 or 16) is stored as an
array of ``floatN`` (for arguments: the kernel takes ``__global floatN *``;
the bytes are the same).  Scalar accesses go through a plain pointer to its
elements (``<name>_flat``); an instruction inside a ``vec`` iname that spans
exactly a vector axis of every array element it touches with that iname
becomes one vector statement (``q_fetch[fo] = q[...]`` moves a ``float4``;
``x ** 1.4`` becomes OpenCL's vector ``pow``).
Anything else inside a ``vec`` iname is unrolled.
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p

from f2loopy.ir.expressions import index_tuple, variables_read
from f2loopy.ir.folding import normalize_integer
from f2loopy.ir.kernel import Assignment

VECTOR_LENGTHS = (2, 4, 8, 16)


def vec_axis(var):
    """``(axis, length)`` of the vector axis of *var*, or None."""
    tags = getattr(var, "axis_tags", ())
    for axis, t in enumerate(tags):
        if t.kind == "vec":
            try:
                n = int(var.shape[axis])
            except (TypeError, ValueError):
                return None
            return (axis, n) if n in VECTOR_LENGTHS else None
    return None


def vectorizable(kernel, insn, iname, length, lower, dtype_of=None) -> bool:
    """Whether *insn* inside vec iname *iname* (values lower..lower+length-1)
    can be one vector statement.  *dtype_of* (expression -> numpy dtype)
    allows real powers whose operands have the power's own real type."""
    if not isinstance(insn, Assignment) or insn.predicates:
        return False
    found_vector = False

    def ok(expr, is_assignee=False):
        nonlocal found_vector
        if isinstance(expr, p.Subscript):
            idx = index_tuple(expr)
            uses = [k for k, e in enumerate(idx) if iname in variables_read(e)]
            if not uses:
                return all(ok(e) for e in idx)
            var = kernel.variable(expr.aggregate.name) if kernel.has_variable(
                expr.aggregate.name) else None
            va = vec_axis(var) if var is not None else None
            if var is None or va is None or uses != [va[0]] or va[1] != length:
                return False
            rel = normalize_integer(p.Sum((idx[va[0]], p.Product((-1, var.lower_bounds[va[0]])))))
            if rel != normalize_integer(p.Sum((p.Variable(iname), p.Product((-1, lower))))):
                return False
            found_vector = True
            return all(ok(e) for k, e in enumerate(idx) if k != va[0])
        if isinstance(expr, p.Variable):
            return expr.name != iname
        if isinstance(expr, (int, float, np.number)):
            return True
        if isinstance(expr, (p.Sum, p.Product)):
            return all(ok(c) for c in expr.children)
        if isinstance(expr, p.Quotient):
            return ok(expr.numerator) and ok(expr.denominator)
        if isinstance(expr, p.Power) and dtype_of is not None and \
                isinstance(expr.exponent, (float, np.floating)):
            # a real power (OpenCL pow on vectors) of a base of its own type
            # (no conversion of a vector); integer powers use scalar helpers
            dt = np.dtype(dtype_of(expr))
            return dt.kind == "f" and np.dtype(dtype_of(expr.base)) == dt and ok(expr.base)
        if isinstance(expr, p.Call) and expr.function.name in (
                "sqrt", "exp", "log", "sin", "cos", "fabs", "min", "max", "float32",
                "float64", "abs"):
            return all(ok(a) for a in expr.parameters)
        return False

    assignee_ok = isinstance(insn.assignee, p.Subscript) and ok(insn.assignee, True)
    if not assignee_ok or not found_vector:
        return False
    found_vector = False
    return ok(insn.expression)
