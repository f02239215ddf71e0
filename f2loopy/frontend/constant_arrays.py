"""The values of constant array initializers (a ``parameter`` array, or a
variable's initial value): array constructors whose values may be scalars,
named constant arrays and implied-do loops of constant bounds, ``reshape``
of such a constructor (with ``pad`` and ``order``), and ``transpose`` of a
``reshape`` or of a named constant matrix, as real code writes tables::

    integer, parameter :: perm(2, 3) = reshape([(2*i, i = 1, 6)], [2, 3], order=[2, 1])
    real, parameter :: w(4) = [w2, (0.5*k, k = 1, 2)]

The reader (:class:`f2loopy.frontend.declarations.DeclarationReader`) evaluates
each scalar; an implied-do's variable is bound through its
``constant_bindings`` while the loop's values are evaluated."""

from __future__ import annotations

import numpy as np
from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import UnsupportedFeatureError

#: at most this many values in one constant array (a hostile file cannot make
#: the translator build a table of billions of elements)
MAX_CONSTANT_ELEMENTS = 1 << 20


def _items(node) -> list:
    return list(node.items) if isinstance(node, F.Ac_Value_List) else [node]


def _is_reshape(node) -> bool:
    return isinstance(node, F.Intrinsic_Function_Reference) and \
        str(node.items[0]).lower() == "reshape"


def initializer_values(reader, node, name: str) -> list:
    """The values of initializer *node* in array element order (one value
    for a scalar constant expression)."""
    if isinstance(node, F.Array_Constructor):
        out: list = []
        for item in _items(node.items[1]):
            _append_values(reader, item, name, out)
        return out
    out = []
    _append_values(reader, node, name, out)
    return out


def _append_values(reader, node, name: str, out: list) -> None:
    if isinstance(node, F.Ac_Implied_Do):
        _append_implied_do(reader, node, name, out)
    elif isinstance(node, F.Name) and isinstance(
            getattr(reader.lookup(str(node)), "value", None), np.ndarray) and \
            reader.lookup(str(node)).is_parameter:
        out.extend(reader.lookup(str(node)).value.ravel(order="F"))
    elif isinstance(node, F.Array_Constructor):
        out.extend(initializer_values(reader, node, name))
    elif any(True for _ in _array_operands(reader, node)):
        out.extend(_elementwise(reader, node, name))
    else:
        out.append(reader.constant(node))
    if len(out) > MAX_CONSTANT_ELEMENTS:
        raise reader.error(f"the initializer of '{name}' has more than "
                           f"{MAX_CONSTANT_ELEMENTS} values", name, UnsupportedFeatureError)


#: the operators through which an array operand makes an expression
#: array-valued element by element (``c*[1.0, 2.0]``, ``[a, b]/6.0``, ``-w``)
_OPERATORS = (F.Level_2_Expr, F.Add_Operand, F.Mult_Operand, F.Level_2_Unary_Expr,
              F.Parenthesis)


def _array_operands(reader, node):
    """The array constructors and named constant arrays that are operands
    of the arithmetic expression *node* (through operators and parentheses
    only: an array inside a function call is the function's business)."""
    if isinstance(node, F.Array_Constructor):
        yield node
    elif isinstance(node, F.Name):
        sym = reader.lookup(str(node))
        if sym is not None and sym.is_parameter and isinstance(sym.value, np.ndarray):
            yield node
    elif isinstance(node, _OPERATORS):
        for child in node.items:
            if isinstance(child, F.Base):
                yield from _array_operands(reader, child)


def _elementwise(reader, node, name: str) -> list:
    """The values of the array-valued constant expression *node*: the
    expression evaluated once per element, each array operand standing for
    its element (the operands must have as many elements; an array of one
    rank, or of the same shape: as Fortran's conformance requires)."""
    operands = list(_array_operands(reader, node))
    values = []
    shapes = []
    for op in operands:
        if isinstance(op, F.Name):
            value = reader.lookup(str(op)).value
            values.append(list(value.ravel(order="F")))
            shapes.append(value.shape)
        else:
            values.append(initializer_values(reader, op, name))
            shapes.append((len(values[-1]),))
    if any(s != shapes[0] for s in shapes):
        raise reader.error(f"the arrays of the initializer of '{name}' do not conform (shapes "
                           + ", ".join("(" + ", ".join(map(str, s)) + ")" for s in shapes)
                           + ")", name)
    bindings = reader.constant_bindings
    saved = dict(bindings)
    out = []
    try:
        for k in range(len(values[0])):
            for op, vals in zip(operands, values, strict=True):
                if isinstance(op, F.Name):
                    bindings[str(op).lower()] = vals[k]
                else:
                    reader.constructor_elements[id(op)] = vals[k]
            out.append(reader.constant(node))
    finally:
        reader.constructor_elements.clear()
        bindings.clear()
        bindings.update(saved)
    return out


def _int_constant(reader, node, what: str) -> int:
    value = reader.constant(node)
    if value.dtype.kind not in "iu":
        raise reader.error(f"the {what} of an implied-do must be an integer constant",
                           str(node))
    return int(value)


def _append_implied_do(reader, node, name: str, out: list) -> None:
    body, control = node.items
    var, bounds = str(control.items[0]).lower(), control.items[1]
    lo = _int_constant(reader, bounds[0], "start")
    hi = _int_constant(reader, bounds[1], "end")
    step = _int_constant(reader, bounds[2], "step") if len(bounds) > 2 else 1
    if step == 0:
        raise reader.error("the step of an implied-do is zero", str(control))
    count = max(0, (hi - lo + step) // step)
    if count > MAX_CONSTANT_ELEMENTS:
        raise reader.error(f"the initializer of '{name}' has more than "
                           f"{MAX_CONSTANT_ELEMENTS} values", name, UnsupportedFeatureError)
    bindings = reader.constant_bindings
    saved = bindings.get(var)
    try:
        for k in range(count):
            bindings[var] = np.int32(lo + k * step)
            for item in _items(body):
                _append_values(reader, item, name, out)
    finally:
        if saved is None:
            bindings.pop(var, None)
        else:
            bindings[var] = saved


def reshaped_initializer(reader, node, name: str, shape: list[int]) -> list | None:
    """The values of a ``reshape(source, shape [, pad] [, order])``
    initializer in the array element order of the declared *shape*, or of
    ``transpose(m)`` of such a ``reshape`` or of a named constant matrix
    (``c = transpose(reshape([...], [2, 9]))`` for a ``c(9, 2)``); None
    when *node* is neither."""
    if _is_transpose(node):
        return _transposed(reader, node, name, shape)
    if not _is_reshape(node):
        return None
    keys = ["source", "shape", "pad", "order"]
    args: dict = {}
    keyword_seen = False
    for k, arg in enumerate(_items_of(node.items[1])):
        if isinstance(arg, F.Actual_Arg_Spec):
            key, value = str(arg.items[0]).lower(), arg.items[1]
            keyword_seen = True
        elif k < len(keys) and not keyword_seen:
            key, value = keys[k], arg
        else:
            raise reader.error("'reshape' takes source, shape, pad and order", "reshape")
        if key not in keys or key in args:
            raise reader.error(f"'reshape' has no argument '{key}' (or it is given twice)",
                               "reshape")
        args[key] = value
    if "source" not in args or "shape" not in args:
        raise reader.error("'reshape' needs a source and a shape", "reshape")
    source = initializer_values(reader, args["source"], name)
    shape_values = initializer_values(reader, args["shape"], name)
    if any(np.asarray(v).dtype.kind not in "iu" for v in shape_values):
        raise reader.error("the shape of 'reshape' must be integers", "reshape")
    new_shape = [int(v) for v in shape_values]
    if new_shape != list(shape):
        raise reader.error(f"'reshape' gives shape ({', '.join(map(str, new_shape))}) but "
                           f"'{name}' is declared with shape ({', '.join(map(str, shape))})",
                           "reshape")
    size = int(np.prod(shape)) if shape else 1
    if len(source) < size:
        if "pad" not in args:
            raise reader.error(f"'reshape' needs {size} values but its source has "
                               f"{len(source)} (and no pad)", "reshape")
        pad = initializer_values(reader, args["pad"], name)
        if not pad:
            raise reader.error("the pad of 'reshape' is empty", "reshape")
        source = source + [pad[k % len(pad)] for k in range(size - len(source))]
    source = source[:size]
    if "order" not in args:
        return source
    order = [int(v) - 1 for v in initializer_values(reader, args["order"], name)]
    if sorted(order) != list(range(len(shape))):
        raise reader.error(f"the order of 'reshape' must be a permutation of 1 to "
                           f"{len(shape)}", "reshape")
    # the source fills the result with dimension order[0] varying fastest
    filled = np.arange(size).reshape([shape[d] for d in order], order="F")
    index = np.transpose(filled, np.argsort(order)).ravel(order="F")
    return [source[int(i)] for i in index]


def _is_transpose(node) -> bool:
    return isinstance(node, F.Intrinsic_Function_Reference) and \
        str(node.items[0]).lower() == "transpose"


def _transposed(reader, node, name: str, shape: list[int]) -> list:
    """The values of ``transpose(m)`` for the declared *shape* (rank 2)."""
    args = _items_of(node.items[1])
    if len(args) != 1 or isinstance(args[0], F.Actual_Arg_Spec) and \
            str(args[0].items[0]).lower() != "matrix":
        raise reader.error("'transpose' takes one argument, a matrix", "transpose")
    arg = args[0].items[1] if isinstance(args[0], F.Actual_Arg_Spec) else args[0]
    if len(shape) != 2:
        raise reader.error(f"'transpose' gives a matrix, but '{name}' is declared with rank "
                           f"{len(shape)}", "transpose")
    inner = [shape[1], shape[0]]
    values = reshaped_initializer(reader, arg, name, inner)
    if values is None:
        sym = reader.lookup(str(arg)) if isinstance(arg, F.Name) else None
        value = getattr(sym, "value", None)
        if sym is None or not sym.is_parameter or not isinstance(value, np.ndarray):
            raise reader.error("the argument of 'transpose' in an initializer must be a "
                               "'reshape' or a named constant matrix", "transpose",
                               UnsupportedFeatureError)
        if list(value.shape) != inner:
            raise reader.error(f"'transpose' of a ({', '.join(map(str, value.shape))}) matrix "
                               f"gives shape ({', '.join(map(str, value.shape[::-1]))}) but "
                               f"'{name}' is declared with shape "
                               f"({', '.join(map(str, shape))})", "transpose")
        values = list(value.ravel(order="F"))
    matrix = np.empty(len(values), dtype=object)
    matrix[:] = values
    return list(matrix.reshape(inner, order="F").T.ravel(order="F"))


def _items_of(arg_list) -> list:
    return list(arg_list.items) if isinstance(arg_list, F.Actual_Arg_Spec_List) \
        else [arg_list]
