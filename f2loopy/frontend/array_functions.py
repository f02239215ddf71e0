"""Array-valued functions (``function twice(n, x) result(y)`` with
``real(8) :: y(n)``) called from a kernel.

The call is inlined before the statement that contains it, as a scalar
function's is, with its result bound to a new array temporary of the
declared bounds (evaluated with the actual arguments); in the array
expression the call stands for that temporary, element by element.  A
result whose extents are not constant lives in device memory the host
allocates for each call, so they may depend only on scalar arguments of the
kernel that it leaves unchanged (as automatic arrays may).
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.arrays import ArrayView
from f2loopy.frontend.bindings import ArrayBinding
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.folding import NotConstant, evaluate_constant, normalize_integer
from f2loopy.ir.kernel import AddressSpace


def has_array_result(proc, callee) -> bool:
    """Whether *proc* (prepared: *callee*) is a function whose result is an
    array."""
    if proc.kind != "function":
        return False
    rsym = callee.symtab.get(callee.result_name)
    return rsym is not None and rsym.is_array


def bind_array_result(lowering, child, proc, callee) -> ArrayView:
    """Bind the array result of function *proc* (being inlined by *child*
    into *lowering*) to a new temporary; return its view."""
    rsym = callee.symtab.get(callee.result_name)
    lbs, ubs = child.bounds_of(rsym)
    if any(u is None for u in ubs) or any(hi == ":" for _, hi in rsym.dims):
        raise lowering.error(f"the result of '{proc.name}' must have explicit bounds",
                             proc.name, UnsupportedFeatureError)
    shape = tuple(normalize_integer(p.Sum((ub, p.Product((-1, lb)), 1)))
                  for lb, ub in zip(lbs, ubs, strict=True))
    space = None
    try:
        shape = tuple(max(0, int(evaluate_constant(s))) for s in shape)
        lbs = tuple(int(evaluate_constant(lb)) for lb in lbs)
    except NotConstant:
        _check_run_time_bounds(lowering, proc, shape + tuple(lbs))
        space = AddressSpace.GLOBAL
    tmp = lowering.new_temporary(f"{proc.name}_result", rsym.dtype, shape=shape,
                                 lower_bounds=lbs, address_space=space)
    view = ArrayView(rsym.name, tmp, np.dtype(rsym.dtype), tuple(lbs),
                     tuple(normalize_integer(p.Sum((lb, s, -1))) for lb, s in zip(lbs, shape, strict=True)))
    child.bindings[callee.result_name.lower()] = ArrayBinding(view)
    return view


def _check_run_time_bounds(lowering, proc, exprs) -> None:
    root = lowering.root
    allowed = {d for d in root.dummies if d not in root.written}
    for e in exprs:
        for name in variables_read(e):
            if name.lower() not in allowed:
                raise lowering.error(
                    f"the bounds of the result of '{proc.name}' depend on '{name}', which is "
                    "not a scalar argument the kernel leaves unchanged (the result is device "
                    "memory the host allocates for each call: pass sizes the kernel takes as "
                    "arguments, or give the result constant bounds)", proc.name,
                    UnsupportedFeatureError)


def result_element(lowering, proc, view):
    """The element of the array result *view* of *proc* at the current
    position of the array expression being converted."""
    if lowering.elemental is None:
        raise lowering.error(f"array-valued function '{proc.name}' is used in a scalar "
                             "expression (use it in an array expression, e.g. assign it to "
                             "an array)", proc.name, UnsupportedFeatureError)
    axes = [(lb, ub, 1) for lb, ub in zip(view.lbounds, view.ubounds, strict=True)]
    return lowering.conforming_element(view, axes, [("axis", k) for k in range(view.rank)],
                                       proc.name)
