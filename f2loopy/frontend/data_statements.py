"""Values of ``data`` statements: the objects they name (variables, array
elements, implied-do lists) and the values they give them, applied to the
symbols of a :class:`~f2loopy.frontend.declarations.DeclarationReader`
once its declarations are read."""

from __future__ import annotations

import numpy as np
from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend.constant_arrays import MAX_CONSTANT_ELEMENTS


def apply_data(reader) -> None:
    """Give the objects of the collected ``data`` statements their values."""
    for stmt, lines in reader.data_stmts:
        reader.lines = lines
        try:
            for dset in stmt.items:
                _apply_data_set(reader, dset)
        except FortranError as exc:
            if reader.errors is None:
                raise
            reader.errors.append(exc)

def _apply_data_set(reader, dset) -> None:
    objects, values_node = dset.items
    values = []
    for v in values_node.items:
        if isinstance(v, F.Data_Stmt_Value):
            count_node, value_node = v.items
            count = int(reader.constant(count_node)) if count_node is not None else 1
            value = reader.constant(value_node)
            values.extend([value] * count)
        else:
            values.append(reader.constant(v))
    targets = []
    for obj in objects.items:
        targets.extend(data_targets(reader, obj))
    if len(targets) != len(values):
        raise reader.error(f"'data' statement has {len(targets)} objects but "
                         f"{len(values)} values", "data")
    for (sym, pos), value in zip(targets, values, strict=True):
        if sym.is_parameter or sym.is_dummy:
            raise reader.error(f"'{sym.name}' cannot appear in a 'data' statement",
                             sym.name)
        dtype = sym.dtype or reader.symtab.implicit_type(sym.name)
        if dtype is None:
            raise reader.error(f"'{sym.name}' has no type (implicit none)", sym.name)
        sym.dtype = dtype
        value = reader.cast_value(value, dtype, sym.name)
        if pos is None:
            sym.value = value
        else:
            if not isinstance(sym.value, np.ndarray):
                sym.value = np.zeros(reader.array_shape(sym), dtype=dtype, order="F")
            sym.value[pos] = value
        sym.attributes.add("initialized")

def data_targets(reader, obj) -> list:
    if isinstance(obj, F.Name):
        sym = reader.declare(str(obj))
        if sym.dims is None:
            return [(sym, None)]
        shape = reader.array_shape(sym)
        return [(sym, idx) for idx in _fortran_order(shape)]
    if isinstance(obj, F.Part_Ref):
        name = str(obj.items[0])
        sym = reader.declare(name)
        if sym.dims is None:
            raise reader.error(f"'{name}' is not an array", name)
        subs = obj.items[1].items
        if any(isinstance(s, F.Subscript_Triplet) for s in subs):
            raise reader.error("array sections in 'data' statements are not supported",
                             name, UnsupportedFeatureError)
        if len(subs) != len(sym.dims):
            raise reader.error(f"'{name}' has {len(sym.dims)} dimension(s) but "
                             f"{len(subs)} subscript(s) are given", name)
        shape = reader.array_shape(sym)
        lbs = reader.array_lower_bounds(sym)
        pos = tuple(int(reader.constant(s)) - lb for s, lb in zip(subs, lbs, strict=True))
        if any(k < 0 or k >= n for k, n in zip(pos, shape, strict=True)):
            raise reader.error(f"subscript out of bounds of '{name}'", name)
        return [(sym, pos)]
    if isinstance(obj, F.Data_Implied_Do):
        return _implied_do_targets(reader, obj)
    raise reader.error(f"unsupported object '{obj}' in a 'data' statement", str(obj),
                     UnsupportedFeatureError)


def _implied_do_targets(reader, obj) -> list:
    """The elements ``data (mm(1, j), j = 1, 4) / ... /`` names (LAPACK's
    dlaruv), ``(symbol, position)`` in the implied-do's order (as
    ``data_targets`` gives them); nested implied-dos too."""
    objects, var_node, lo_node, hi_node, step_node = obj.items
    var = str(var_node).lower()
    lo, hi = int(reader.constant(lo_node)), int(reader.constant(hi_node))
    step = int(reader.constant(step_node)) if step_node is not None else 1
    if step == 0:
        raise reader.error("the step of an implied-do is zero", str(step_node))
    count = max(0, (hi - lo + step) // step)
    targets: list = []
    bindings = reader.constant_bindings
    saved = bindings.get(var)
    try:
        for k in range(count):
            bindings[var] = np.int32(lo + k * step)
            for item in objects.items:
                targets.extend(data_targets(reader, item))
            if len(targets) > MAX_CONSTANT_ELEMENTS:
                raise reader.error(f"a 'data' implied-do names more than "
                                   f"{MAX_CONSTANT_ELEMENTS} elements", str(var_node),
                                   UnsupportedFeatureError)
    finally:
        if saved is None:
            bindings.pop(var, None)
        else:
            bindings[var] = saved
    return targets


def _fortran_order(shape):
    return [tuple(int(x) for x in np.unravel_index(k, shape, order="F"))
            for k in range(int(np.prod(shape)) if shape else 1)]
