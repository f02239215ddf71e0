"""Declarations in the Fortran glue: the Fortran type of a kernel argument,
its declaration as written (for messages and comments), and how an array
whose layout a transformation changed is converted from the caller's layout
(:c:func:`f2l_relayout`)."""

from __future__ import annotations

import numpy as np

from f2loopy.diagnostics import CodegenError
from f2loopy.glue.fexpr import FORTRAN_TYPES, HostExpressionError, f_int_expr
from f2loopy.ir.printing import expr_to_str


def fortran_type(dtype) -> tuple[str, int]:
    try:
        return FORTRAN_TYPES[np.dtype(dtype).name]
    except KeyError:
        raise CodegenError(f"type {np.dtype(dtype)} cannot be passed from Fortran") from None


def declaration_text(arg, hidden=frozenset()) -> str:
    """``u(0:n+1, *)`` as written in Fortran, for messages and comments
    (an extent named in *hidden* is an assumed shape, ``:``)."""
    dims = []
    for extent, lower in zip(arg.shape, arg.lower_bounds, strict=True):
        if extent is None:
            dims.append("*" if _is_one(lower) else f"{_plain(lower)}:*")
        elif str(extent) in hidden:
            dims.append(":" if _is_one(lower) else f"{_plain(lower)}:")
        elif _is_one(lower):
            dims.append(_plain(extent))
        else:
            from pymbolic.primitives import Sum
            from f2loopy.ir.folding import normalize_integer
            upper = normalize_integer(Sum((lower, extent, -1)))
            dims.append(f"{_plain(lower)}:{_plain(upper)}")
    return f"{arg.name}({', '.join(dims)})" if dims else arg.name


def _plain(expr) -> str:
    try:
        return f_int_expr(expr, plain=True)
    except HostExpressionError:
        return expr_to_str(expr)


def _is_one(x) -> bool:
    return isinstance(x, (int, np.integer)) and int(x) == 1


# {{{ layouts changed by transformations

def layout_conversion(arg):
    """How to convert *arg* from the caller's layout to the kernel's.

    None: no conversion; a string: why the glue cannot; else ``(extents,
    terms, device_elems)`` for :c:func:`f2l_relayout` as expressions.
    """
    lay = arg.fortran_layout
    if lay is None:
        return None
    ndim = len(arg.shape)
    tags = arg.axis_tags
    caller = declaration_text(arg.copy(shape=lay.shape, lower_bounds=lay.lower_bounds,
                                        fortran_layout=None))
    if any(s is None for s in lay.shape):
        return (f"the kernel stores {caller} in another layout, which the glue cannot convert "
                "for an assumed-size array (its size is unknown)")
    if any(t.kind not in ("nest", "vec") for t in tags):
        return (f"the kernel stores it with axis tags {', '.join(str(t) for t in tags)}; the "
                f"Fortran glue converts reorderings, splits and vector axes of {caller} only")
    # each kernel axis reads (caller index along `axis` // div) % mod (mod 0: none)
    axes = [(ax, 1, 0) for ax in range(len(lay.shape))]
    for axis, count, order in lay.splits:
        o, div, mod = axes[axis]
        inner = (o, div, count)
        outer = (o, div * count, mod // count if mod else 0)
        axes[axis:axis + 1] = [inner, outer] if order == "F" else [outer, inner]
    unsplit_same = all(
        div != 1 or mod != 0 or (arg.shape[k] == lay.shape[o]
                                 and arg.lower_bounds[k] == lay.lower_bounds[o])
        for k, (o, div, mod) in enumerate(axes)) if len(axes) == ndim else False
    if not unsplit_same:
        kernel = declaration_text(arg.copy(fortran_layout=None))
        return (f"the kernel uses it as {kernel} but the caller passes {caller}; the Fortran "
                "glue converts only reorderings, splits and vector axes, not this layout change")
    # memory order, fastest first: vector axes, then the nesting orders
    order = sorted(range(ndim), key=lambda ax: -1 if tags[ax].kind == "vec" else tags[ax].order)
    if order == list(range(ndim)) and not lay.splits:
        return None
    strides = {}
    stride = 1
    for ax in order:
        strides[ax] = stride
        stride = _times(stride, _nonneg(arg.shape[ax]))
    extents = [_nonneg(s) for s in lay.shape]
    terms = []
    for k, (o, div, mod) in enumerate(axes):
        terms += [o, div, mod, strides[k]]
    return extents, terms, stride


def _nonneg(expr):
    from pymbolic.primitives import Call, Variable
    if isinstance(expr, (int, np.integer)):
        return max(0, int(expr))
    return Call(Variable("max"), (0, expr))


def _times(a, b):
    from pymbolic.primitives import Product
    if a == 1:
        return b
    return Product((a, b))

# }}}
