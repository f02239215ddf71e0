"""Reading the specification part of a program unit into a :class:`SymbolTable`.

Handles type declarations (with ``*N``, ``(N)``, ``(kind=p)`` kinds and the
``dimension``, ``intent`` and ``parameter`` attributes), ``implicit``,
``dimension``, ``intent``, ``parameter`` and ``data`` statements, and initialised
constant arrays.  Parameters are folded to constants as they are declared.
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.analysis.types import BOOL, FortranTypeError, infer_type
from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend.expressions import ConversionContext, ExpressionConverter
from f2loopy.frontend.source import SourceFile
from f2loopy.frontend.symbols import Symbol, SymbolTable, dtype_from_type_spec
from f2loopy.ir.folding import NotConstant, _cast, evaluate_constant


def statement_lines(node) -> tuple[int, int]:
    """First and last line of a statement node (searching children if needed)."""
    item = getattr(node, "item", None)
    if item is not None and getattr(item, "span", None):
        return item.span
    for ch in getattr(node, "children", ()) or ():
        if hasattr(ch, "children"):
            span = statement_lines(ch)
            if span != (0, 0):
                return span
    return (0, 0)


class DeclarationReader:
    """Fill *symtab* from the specification statements of one unit.

    :arg host: symbols visible from an enclosing module (parameters only).
    """

    def __init__(self, src: SourceFile, symtab: SymbolTable, dummy_names: list[str],
                 host: SymbolTable | None = None):
        self.src = src
        self.symtab = symtab
        self.host = host
        self.dummy_names = [d.lower() for d in dummy_names]
        self.lines = (0, 0)
        self.data_stmts: list[tuple] = []

    # {{{ errors and constant evaluation

    def error(self, message, needle=None, cls=FortranError):
        first, last = self.lines
        return cls(message, self.src.span_in_lines(first, last, needle))

    def lookup(self, name: str) -> Symbol | None:
        sym = self.symtab.get(name)
        if sym is None and self.host is not None:
            sym = self.host.get(name)
        return sym

    def _const_context(self, allow_dummies: bool) -> ConversionContext:
        def resolve_name(name, node):
            sym = self.lookup(name)
            if sym is not None and sym.is_parameter:
                if sym.value is None:
                    raise self.error(f"parameter '{name}' is used before its value is known",
                                     name)
                if isinstance(sym.value, np.ndarray):
                    raise self.error(f"array parameter '{name}' used as a scalar", name)
                return sym.value
            if allow_dummies and name.lower() in self.dummy_names:
                return p.Variable(self.symtab.declare(name, None).name)
            raise self.error(f"'{name}' is not a constant", name)

        def array_ref(name, index_nodes, node):
            sym = self.lookup(name)
            if sym is not None and sym.is_parameter and isinstance(sym.value, np.ndarray):
                idx = [int(evaluate_constant(conv(i))) for i in index_nodes]
                lbs = [int(evaluate_constant(conv(d[0]))) if d[0] is not None else 1
                       for d in sym.dims]
                try:
                    return sym.value[tuple(i - lb for i, lb in zip(idx, lbs))]
                except IndexError:
                    raise self.error(f"index out of bounds of parameter array '{name}'",
                                     name) from None
            return None

        def dtype_of(expr):
            def var_dtype(name):
                sym = self.lookup(name)
                dt = sym.dtype if sym is not None else None
                dt = dt if dt is not None else self.symtab.implicit_type(name)
                if dt is None:
                    raise FortranTypeError(f"'{name}' has no type (implicit none)")
                return dt
            return infer_type(expr, var_dtype)

        ctx = ConversionContext(
            error=self.error, resolve_name=resolve_name, array_ref=array_ref,
            function_call=self._const_function, dtype_of=dtype_of,
            kind_value=self.kind_value)
        conv = ExpressionConverter(ctx)
        return ctx

    def _const_function(self, name, arg_nodes, node):
        low = name.lower()
        if low == "kind":
            value = self.constant(arg_nodes[0])
            return np.int32(value.dtype.itemsize if value.dtype.kind != "c"
                            else value.dtype.itemsize // 2)
        if low == "selected_real_kind":
            prec = int(self.constant(_arg_value(arg_nodes[0]))) if arg_nodes else 0
            return np.int32(4 if prec <= 6 else 8 if prec <= 15 else -1)
        if low == "selected_int_kind":
            rng = int(self.constant(_arg_value(arg_nodes[0])))
            return np.int32(1 if rng <= 2 else 2 if rng <= 4 else 4 if rng <= 9 else 8)
        return None

    def convert(self, node, *, allow_dummies=False):
        return ExpressionConverter(self._const_context(allow_dummies))(node)

    def constant(self, node):
        expr = self.convert(node)
        try:
            return evaluate_constant(expr)
        except (NotConstant, FortranTypeError) as exc:
            raise self.error(f"not a constant expression: {exc}", str(node)) from None

    def kind_value(self, node) -> int:
        value = self.constant(node)
        if value.dtype.kind not in "iu":
            raise self.error("kind must be an integer constant", str(node))
        return int(value)

    # }}}

    def read(self, spec_part) -> None:
        for stmt in _flatten_spec(spec_part):
            self.lines = statement_lines(stmt)
            method = getattr(self, "decl_" + type(stmt).__name__, None)
            if method is None:
                raise self.error(f"'{_stmt_keyword(stmt)}' statement is not supported",
                                 _stmt_keyword(stmt), UnsupportedFeatureError)
            method(stmt)

    # {{{ statements

    def decl_Implicit_Stmt(self, stmt):
        spec = stmt.items[0]
        if isinstance(spec, str) and spec.upper() == "NONE":
            self.symtab.implicit_none = True
            return
        for ispec in spec.items:
            type_spec, letters = ispec.items
            dtype = self.type_spec_dtype(type_spec)
            for ls in letters.items:
                lo, hi = (str(x).lower() for x in ls.items)
                hi = hi or lo
                for c in range(ord(lo), ord(hi) + 1):
                    self.symtab.implicit[chr(c)] = dtype
        self.symtab.implicit_none = False

    def type_spec_dtype(self, type_spec) -> np.dtype:
        if isinstance(type_spec, F.Declaration_Type_Spec):
            raise self.error("derived types are not supported", "type",
                             UnsupportedFeatureError)
        type_name, selector = type_spec.items
        span = self.src.span_in_lines(*self.lines, type_name.split()[0])
        if type_name.upper() == "CHARACTER":
            raise UnsupportedFeatureError("character variables are not supported "
                                          "(kernels compute on numbers)", span)
        kind, star = None, False
        if selector is not None:
            items = selector.items
            if items[0] == "*":
                kind, star = int(str(items[1])), True
            else:
                kind = self.kind_value(items[1])
        return dtype_from_type_spec(type_name, kind, span, star=star)

    def decl_Type_Declaration_Stmt(self, stmt):
        type_spec, attrs, entities = stmt.items
        dtype = self.type_spec_dtype(type_spec)
        dims_attr, intent, is_param = None, None, False
        for attr in (attrs.items if attrs is not None else ()):
            if isinstance(attr, F.Dimension_Attr_Spec):
                dims_attr = attr.items[1]
            elif isinstance(attr, F.Intent_Attr_Spec):
                intent = str(attr.items[1]).strip().lower().replace(" ", "")
            else:
                word = str(attr).strip().upper()
                if word == "PARAMETER":
                    is_param = True
                elif word in ("INTRINSIC", "TARGET", "VOLATILE", "CONTIGUOUS"):
                    pass
                else:
                    raise self.error(f"attribute '{word.lower()}' is not supported",
                                     word.split("(")[0].lower(), UnsupportedFeatureError)
        for ent in entities.items:
            name_node, shape, charlen, init = ent.items
            name = str(name_node)
            sym = self.declare(name)
            if sym.dtype is not None and sym.type_span is not None:
                raise self.error(f"'{name}' is declared twice", name)
            sym.dtype = dtype
            sym.type_span = sym.span
            if shape is not None or dims_attr is not None:
                self.set_dims(sym, shape if shape is not None else dims_attr)
            if intent:
                self.set_intent(sym, intent, name)
            if is_param:
                if init is None:
                    raise self.error(f"parameter '{name}' has no value", name)
                self.set_parameter(sym, init.items[1])
            elif init is not None:
                self.set_initializer(sym, init.items[1])

    def declare(self, name: str) -> Symbol:
        return self.symtab.declare(name, self.src.span_in_lines(*self.lines, name))

    def set_dims(self, sym: Symbol, spec):
        if sym.dims is not None:
            raise self.error(f"dimensions of '{sym.name}' are declared twice", sym.name)
        if isinstance(spec, F.Assumed_Size_Spec):
            explicit, lower = spec.items
            dims = [tuple(s.items) for s in (explicit.items if explicit is not None else ())]
            dims.append((lower, "*"))
        elif isinstance(spec, F.Explicit_Shape_Spec_List):
            dims = [tuple(s.items) for s in spec.items]
        elif isinstance(spec, (F.Assumed_Shape_Spec_List, F.Deferred_Shape_Spec_List)):
            raise self.error(f"assumed-shape or deferred-shape array '{sym.name}(:)' is not "
                             "supported (declare explicit extents, e.g. a(n))", sym.name,
                             UnsupportedFeatureError)
        else:
            raise self.error(f"array specification of '{sym.name}' is not supported",
                             sym.name, UnsupportedFeatureError)
        sym.dims = dims

    def set_intent(self, sym: Symbol, intent: str, name: str):
        if sym.name.lower() not in self.dummy_names:
            raise self.error(f"intent given for '{name}', which is not a dummy argument", name)
        sym.intent = intent

    def set_parameter(self, sym: Symbol, value_node):
        sym.is_parameter = True
        dtype = sym.dtype or self.symtab.implicit_type(sym.name)
        if dtype is None:
            raise self.error(f"parameter '{sym.name}' has no type (implicit none)", sym.name)
        if sym.dims is not None:
            sym.value = self.constant_array(sym, value_node, dtype)
            return
        value = self.constant(value_node)
        if value.dtype.kind == "b" and dtype.kind != "b" or \
                dtype.kind == "b" and value.dtype.kind != "b":
            raise self.error(f"value of parameter '{sym.name}' has the wrong type", sym.name)
        sym.value = _cast(value, dtype)
        sym.dtype = dtype

    def constant_array(self, sym: Symbol, value_node, dtype) -> np.ndarray:
        """Fortran-ordered array of an initializer (array constructor or scalar)."""
        shape = []
        for lo, hi in sym.dims:
            if hi == "*":
                raise self.error(f"constant array '{sym.name}' needs explicit extents",
                                 sym.name)
            lo_v = int(self.constant(lo)) if lo is not None else 1
            shape.append(int(self.constant(hi)) - lo_v + 1)
        size = int(np.prod(shape)) if shape else 1
        values = self.array_values(value_node)
        if len(values) == 1:
            values = values * size
        if len(values) != size:
            raise self.error(f"'{sym.name}' has {size} elements but {len(values)} values "
                             "are given", sym.name)
        arr = np.array([_cast(v, dtype) for v in values], dtype=dtype)
        return arr.reshape(shape, order="F")

    def array_values(self, node) -> list:
        if isinstance(node, F.Array_Constructor):
            out = []
            for v in node.items[1].items:
                if isinstance(v, F.Ac_Implied_Do):
                    raise self.error("implied-do in an array constructor is not supported",
                                     "(", UnsupportedFeatureError)
                out.append(self.constant(v))
            return out
        return [self.constant(node)]

    def set_initializer(self, sym: Symbol, value_node):
        dtype = sym.dtype or self.symtab.implicit_type(sym.name)
        if sym.dims is None:
            sym.value = _cast(self.constant(value_node), dtype)
        else:
            sym.value = self.constant_array(sym, value_node, dtype)
        sym.attributes.add("initialized")

    def decl_Dimension_Stmt(self, stmt):
        for name_node, spec in stmt.items[0]:
            self.set_dims(self.declare(str(name_node)), spec)

    def decl_Intent_Stmt(self, stmt):
        intent = str(stmt.items[0]).strip().lower().replace(" ", "")
        for name_node in stmt.items[1].items:
            self.set_intent(self.declare(str(name_node)), intent, str(name_node))

    def decl_Parameter_Stmt(self, stmt):
        for nc in stmt.items[1].items:
            name_node, value_node = nc.items
            self.set_parameter(self.declare(str(name_node)), value_node)

    def decl_Data_Stmt(self, stmt):
        self.data_stmts.append((stmt, self.lines))

    def decl_Intrinsic_Stmt(self, stmt):
        pass

    def decl_Use_Stmt(self, stmt):
        raise self.error("'use' of a module is not supported; put the subroutines in the "
                         "module's own file", "use", UnsupportedFeatureError)

    # }}}


def _arg_value(node):
    return node.items[1] if isinstance(node, F.Actual_Arg_Spec) else node


def _flatten_spec(spec_part):
    if spec_part is None:
        return
    for ch in spec_part.children:
        if isinstance(ch, F.Implicit_Part):
            yield from (c for c in ch.children if c is not None)
        else:
            yield ch


def _stmt_keyword(stmt) -> str:
    text = str(stmt).strip()
    word = text.split("(")[0].split()[0] if text else type(stmt).__name__
    return word.lower()


def logical_dtype() -> np.dtype:
    return BOOL
