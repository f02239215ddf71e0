"""A subroutine's dummy arguments as kernel arguments: their shapes and
lower bounds from the declarations (bounds may use only scalar arguments
the subroutine leaves unchanged), and the :class:`~f2loopy.ir.kernel.ArrayArg`
or :class:`~f2loopy.ir.kernel.ScalarArg` of each (moved from
:mod:`f2loopy.frontend.units` as they were)."""

from __future__ import annotations

import functools

import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend.argument_facts import last_extent_one
from f2loopy.frontend.declarations import DeclarationReader
from f2loopy.frontend.lowering import UnitLowering
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.folding import normalize_integer
from f2loopy.ir.kernel import ArrayArg, ScalarArg
from f2loopy.ir.roles import Character, Dummy, Result


def _shape_expr(src, reader: DeclarationReader, lowering: UnitLowering, node, sym_name,
                what):
    reader.bound_inquiry = functools.partial(_bound_inquiry, reader, lowering)
    try:
        expr = reader.convert(node, allow_dummies=True)
    finally:
        reader.bound_inquiry = None
    for n in variables_read(expr):
        if not lowering.is_invariant_param(n):
            raise FortranError(f"{what} of '{sym_name}' depends on '{n}', which is not a "
                               "scalar argument the subroutine leaves unchanged",
                               sym_span(src, reader, sym_name))
        lowering.used.add(n.lower())
    return normalize_integer(expr)


def _bound_inquiry(reader, lowering, name, arg_nodes, node):
    """``size``, ``lbound`` or ``ubound`` of an array in a bound of another
    (``real :: c(size(a), size(b))``): the extents of an assumed-shape dummy
    are kernel arguments; other array intrinsics are refused."""
    if name not in ("size", "lbound", "ubound"):
        raise reader.error(f"intrinsic '{name}' is not supported here", name,
                           UnsupportedFeatureError)
    return lowering.array_inquiry(name, arg_nodes)


def sym_span(src, reader, name):
    sym = reader.symtab.get(name)
    return sym.span if sym is not None and sym.span is not None else None


def array_dims(src, reader, lowering, sym):
    if sym.span is not None and (0, 0) in (lowering.lines, getattr(reader, "lines", None)):
        # errors in the bounds point at the declaration (not at line 0)
        saved = getattr(reader, "lines", None)
        reader.lines = (sym.span.line, sym.span.line)
        try:
            with lowering.at(reader.lines):
                return array_dims(src, reader, lowering, sym)
        finally:
            reader.lines = saved
    shape: list = []
    lbs: list = []
    for k, (lo_node, hi_node) in enumerate(sym.dims):
        lo = 1 if lo_node is None else _shape_expr(src, reader, lowering, lo_node, sym.name,
                                                     "lower bound")
        if hi_node == "*":
            shape.append(None)
        elif hi_node == ":":
            shape.append(p.Variable(lowering.assumed_extent(sym, k)))
        else:
            hi = _shape_expr(src, reader, lowering, hi_node, sym.name, "upper bound")
            shape.append(normalize_integer(p.Sum((hi, p.Product((-1, lo)), 1))))
        lbs.append(lo)
    return tuple(shape), tuple(lbs)


def make_arg(src, reader, lowering, symtab, dummy, first_line, is_result=False):
    sym = symtab.get(dummy)
    optional = "optional" in sym.attributes
    if sym.is_array and sym.dtype is not None and sym.dtype.metadata and \
            "character" in sym.dtype.metadata:
        raise UnsupportedFeatureError(f"character array '{sym.name}' is not supported (only "
                                      "scalar character arguments used as flags are)",
                                      sym.span)
    if sym.is_array:
        shape, lbs = array_dims(src, reader, lowering, sym)
        if not is_result and last_extent_one(sym):
            # F77's 'dimension a(1)' for an array of any length (Nekbone's
            # math.f): assumed size for the glue, which then takes the
            # caller's array of any length; the kernel's addressing never
            # uses the last extent, and array syntax and size() keep the
            # declared one, as gfortran does
            shape = (*shape[:-1], None)
        if any(s is None for s in shape[:-1]):
            raise FortranError(f"only the last dimension of '{sym.name}' may be '*'", sym.span)
        return ArrayArg(name=sym.name, dtype=np.dtype(sym.dtype), shape=shape,
                        lower_bounds=lbs, intent=sym.intent, span=sym.span,
                        logical_kind=sym.logical_kind,
                        role=Result() if is_result else Dummy(optional=optional))
    from f2loopy.frontend.characters import character_length, is_character
    if is_character(sym.dtype):
        length = character_length(sym.dtype)
        messages = lowering.st.messages.get(sym.name.lower())
        if messages:
            # a message dummy (f2loopy.frontend.messages): the code of the
            # text assigned, which the kernel writes
            return ScalarArg(name=sym.name, dtype=np.dtype(np.int32),
                             intent="out" if sym.intent == "out" else "inout",
                             span=sym.span, role=Dummy(character=Character(
                                 length=length if isinstance(length, int) else None,
                                 messages=tuple(messages))))
        return ScalarArg(name=sym.name, dtype=np.dtype(np.int32), intent="in", span=sym.span,
                         role=Dummy(character=Character(
                             length=length if isinstance(length, int) else None)))
    return ScalarArg(name=sym.name, dtype=np.dtype(sym.dtype), intent=sym.intent, span=sym.span,
                     role=Result() if is_result else Dummy(by_value="value" in sym.attributes,
                                                           optional=optional),
                     logical_kind=sym.logical_kind)
