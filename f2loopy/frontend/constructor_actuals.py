"""An array constructor passed to an array dummy argument of a called
procedure (``call add_force(pi, pj, [s, t, u])``).

The constructor's values are stored, in order, in a temporary array of the
caller's kernel before the call, and the dummy views that temporary, as the
compiler passes a temporary.  The dummy is read-only there (assigning it is
an error, as Fortran forbids it); the values are plain scalar expressions of
one type (an implied-do or a nested array among them is a located error)."""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.bindings import ArrayView


def constructor_view(lowering, node, dummy: str, proc_name: str) -> ArrayView:
    """A read-only view of a temporary holding the values of array
    constructor *node*, passed for array *dummy* of *proc_name*."""
    spec = node.items[1]
    items = list(spec.items) if isinstance(spec, F.Ac_Value_List) else [spec]
    if isinstance(spec, F.Ac_Spec) or any(isinstance(x, (F.Ac_Implied_Do, F.Ac_Spec))
                                          for x in items):
        raise lowering.error(f"the array constructor passed for argument '{dummy}' of "
                             f"'{proc_name}' has an implied-do or a type: list its values",
                             str(node)[:20], UnsupportedFeatureError)
    values = [lowering.expr(x) for x in items]
    dtypes = {np.dtype(lowering.checked_dtype(v)) for v in values}
    if len(dtypes) != 1:
        raise lowering.error(f"the array constructor passed for argument '{dummy}' of "
                             f"'{proc_name}' must list scalars of one type", str(node)[:20],
                             UnsupportedFeatureError)
    dtype = dtypes.pop()
    tmp = lowering.new_temporary(f"{dummy}_values", dtype, shape=(len(values),),
                                 lower_bounds=(1,))
    for k, v in enumerate(values, 1):
        lowering.add_assignment(p.Subscript(p.Variable(tmp), (np.int32(k),)), dtype, v,
                                None, base_id=tmp)
    return ArrayView(tmp, tmp, dtype, (np.int32(1),), (np.int32(len(values)),),
                     read_only=True, what="an array constructor")
