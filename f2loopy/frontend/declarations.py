"""Reading the specification part of a program unit into a :class:`SymbolTable`.

Handles type declarations (with ``*N``, ``(N)``, ``(kind=p)`` kinds and the
``dimension``, ``intent`` and ``parameter`` attributes), ``implicit``,
``dimension``, ``intent``, ``parameter``, ``data``, ``external`` and ``use``
statements (of modules of the same file), and initialised constant arrays.
Parameters are folded to constants as they are declared.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.ir.types import FortranTypeError, fortran_kind, infer_type
from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend.allocatables import (
    allocatable_attribute, deferred_dims, deferred_entity, pointer_attribute)
from f2loopy.frontend.characters import character_dtype, is_character, length_from_selector
from f2loopy.frontend.constant_arrays import initializer_values, reshaped_initializer
from f2loopy.frontend.expressions import ConversionContext, ExpressionConverter
from f2loopy.frontend.generics import is_generic_interface
from f2loopy.frontend.intrinsic_modules import intrinsic_module, is_ieee_inquiry
from f2loopy.frontend.library_modules import (Library, library_module, library_name_error,
                                               only_item_refusal)
from f2loopy.frontend.optionals import optional_attribute
from f2loopy.frontend.kind_selection import selected_int_kind, selected_real_kind
from f2loopy.frontend.source import SourceFile, statement_lines
from f2loopy.frontend.symbols import (Symbol, SymbolTable, dtype_from_type_spec,
                                     import_components, import_host)
from f2loopy.ir.folding import NotConstant, cast_value, evaluate_constant

#: ``procedure(...)`` of anything but plain dummy arguments
_PROCEDURE_POINTERS = ("procedure pointers and procedure components are not supported (a "
                       "kernel calls procedures known when it is translated): call the "
                       "procedure by name, or make it a dummy procedure")

_UNSUPPORTED_SPEC = {
    "Equivalence_Stmt": "'equivalence' is not supported",
    "Save_Stmt": "'save' is not supported (kernel variables cannot keep values between "
                 "calls)",
    "Namelist_Stmt": "'namelist' is not supported (kernels cannot do I/O)",
    "Format_Stmt": "'format' statements are not supported (kernels cannot do I/O)",
    "Interface_Block": "interface blocks are not supported (call subroutines of the same "
                       "file instead)",
    "Allocatable_Stmt": "'allocatable' statements are not supported (give the attribute)",
    "Pointer_Stmt": "pointers are not supported",
    "Target_Stmt": None,
    "Entry_Stmt": "'entry' statements are not supported",
    "Stmt_Function_Stmt": None,
    # (include lines are expanded before parsing: f2loopy.frontend.includes)
    "Include_Stmt": "'include' is not supported here",
    "Import_Stmt": "'import' is not supported",
    "Volatile_Stmt": None,
    "Protected_Stmt": None,
    "Access_Stmt": None,
    "Bind_Stmt": None,
    "Asynchronous_Stmt": None,
}


class UseCycleError(FortranError):
    """A module that uses itself (through others): never deferred."""


class DeclarationReader:
    """Fill *symtab* from the specification statements of one unit.

    :arg modules: ``name -> module info`` (with ``.symtab``) for ``use``
        statements, or None when no module is known.
    :arg errors: a list to collect errors into (one per failing statement)
        instead of raising the first.
    """

    def __init__(self, src: SourceFile, symtab: SymbolTable, dummy_names: list[str],
                 host: SymbolTable | None = None, *, modules=None, errors=None):
        self.src = src
        self.symtab = symtab
        self.modules = modules
        self.errors = errors
        if host is not None:
            import_host(symtab, host)
        self.dummy_names = [d.lower() for d in dummy_names]
        self.lines = (0, 0)
        self.data_stmts: list[tuple] = []
        self.externals: set[str] = set()
        self.statement_functions: list = []
        self.in_module = False
        self.in_program = False                 # a main program's specification
        #: the search path of the registry (for the message when a module is missing)
        self.search = None
        #: block name (lower case) -> member symbols, in order (``common``)
        self.common_blocks: dict[str, list] = {}
        #: the module whose specification this reads (for its type definitions)
        self.module_name: str | None = None
        #: lower-case names of saved locals ("*": a bare 'save')
        self.saved: set[str] = set()
        #: lower-case name -> value of the implied-do variables of a constant
        #: array initializer while its values are evaluated (constant_arrays)
        self.constant_bindings: dict[str, np.generic] = {}
        #: the element an array constructor inside a constant expression
        #: stands for while the expression is evaluated element by element
        #: (:mod:`f2loopy.frontend.constant_arrays`), by the constructor's id
        self.constructor_elements: dict[int, np.generic] = {}
        #: ``(name, arg_nodes, node) -> expr`` for ``size``/``lbound``/``ubound``
        #: in the bounds of a kernel's arrays (``real :: c(size(a), size(b))``),
        #: set by the lowering while it reads them; None elsewhere
        self.bound_inquiry: Callable | None = None

    # {{{ errors and constant evaluation

    def error(self, message, needle=None, cls=FortranError):
        first, last = self.lines
        return cls(message, self.src.span_in_lines(first, last, needle))

    def lookup(self, name: str) -> Symbol | None:
        return self.symtab.get(name)

    def _const_context(self, allow_dummies: bool) -> ConversionContext:
        def resolve_name(name, node):
            if name.lower() in self.constant_bindings:
                return self.constant_bindings[name.lower()]
            sym = self.lookup(name)
            if sym is not None and sym.is_parameter:
                if sym.value is None:
                    raise self.error(f"parameter '{name}' is used before its value is known",
                                     name)
                if isinstance(sym.value, np.ndarray):
                    raise self.error(f"array parameter '{name}' used as a scalar", name)
                return sym.value
            if allow_dummies and name.lower() in self.dummy_names:
                # the declared spelling (a module variable the kernel takes as an
                # argument may be written 'Ns' where it is declared 'ns')
                known = sym if sym is not None else self.symtab.declare(name, None)
                return p.Variable(known.name)
            if allow_dummies and sym is not None and sym.storage is not None and \
                    sym.storage[0] == "module" and not sym.is_array and \
                    sym.dtype is not None and sym.dtype.kind in "iu":
                # a dummy sized by a module variable (use dims, only: nmat; xs(nmat)):
                # the variable is a kernel argument, checked unchanged where the
                # bounds are read (f2loopy.frontend.units._shape_expr)
                return p.Variable(sym.name)
            raise self.error(f"'{name}' is not a constant", name)

        def array_ref(name, index_nodes, node):
            sym = self.lookup(name)
            if sym is not None and sym.is_parameter and isinstance(sym.value, np.ndarray):
                idx = [int(evaluate_constant(conv(i))) for i in index_nodes]
                lbs = [int(evaluate_constant(conv(d[0]))) if d[0] is not None else 1
                       for d in sym.dims or ()]
                pos = tuple(i - lb for i, lb in zip(idx, lbs, strict=True))
                if any(k < 0 or k >= n for k, n in zip(pos, sym.value.shape, strict=True)):
                    raise self.error(f"index out of bounds of parameter array '{name}'", name)
                return sym.value[pos]
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

        def constructor_element(node):
            value = self.constructor_elements.get(id(node))
            if value is None:
                raise self.error("array constructors are not supported here", str(node)[:10],
                                 UnsupportedFeatureError)
            return value

        ctx = ConversionContext(
            error=self.error, resolve_name=resolve_name, array_ref=array_ref,
            function_call=self._const_function, dtype_of=dtype_of,
            kind_value=self.kind_value, array_constructor=constructor_element,
            array_intrinsic=self.bound_inquiry if allow_dummies else None)

        def type_of_name(name):
            sym = self.lookup(name)
            if sym is None or sym.dtype is None or sym.derived is not None:
                return None
            return np.dtype(sym.dtype)
        ctx.type_of_name = type_of_name
        conv = ExpressionConverter(ctx)
        return ctx

    def _const_function(self, name, arg_nodes, node):
        low = name.lower()
        if low == "kind":
            arg = _arg_value(arg_nodes[0])
            if isinstance(arg, F.Name):
                # kind(x) of a variable: its type's kind, whatever its value
                sym = self.lookup(str(arg))
                dtype = sym.dtype if sym is not None else self.symtab.implicit_type(str(arg))
                if dtype is not None and (sym is None or not sym.is_parameter) and \
                        isinstance(dtype, np.dtype) and dtype.kind in "biufc":
                    return np.int32(fortran_kind(dtype))
            value = self.constant(arg)
            if value.dtype.kind not in "biufc":
                raise self.error("'kind' of this argument is not supported", "kind",
                                 UnsupportedFeatureError)
            return np.int32(fortran_kind(value.dtype))
        if low == "selected_real_kind":
            args = self._kind_arguments(name, arg_nodes, ("p", "r", "radix"))
            if "radix" in args and args["radix"] != 2:
                return np.int32(-5)
            return np.int32(selected_real_kind(args.get("p"), args.get("r")))
        if low == "selected_int_kind":
            r = self._kind_arguments(name, arg_nodes, ("r",)).get("r")
            if r is None:
                raise self.error("'selected_int_kind' needs its argument 'r'", name)
            return np.int32(selected_int_kind(r))
        return None

    def _kind_arguments(self, name, arg_nodes, keywords) -> dict:
        """The integer constant arguments of kind-selecting intrinsic *name*
        by keyword (positional ones in the order of *keywords*)."""
        out = {}
        for k, node in enumerate(arg_nodes):
            if isinstance(node, F.Actual_Arg_Spec):
                key = str(node.items[0]).lower()
            elif k < len(keywords):
                key = keywords[k]
            else:
                raise self.error(f"too many arguments to '{name}'", name)
            if key not in keywords or key in out:
                raise self.error(f"'{name}' has no argument '{key}' (or it is given twice)",
                                 str(node))
            value = self.constant(_arg_value(node))
            if value.dtype.kind not in "iu":
                raise self.error(f"the argument '{key}' of '{name}' must be an integer",
                                 str(node))
            out[key] = int(value)
        return out

    def convert(self, node, *, allow_dummies=False):
        return ExpressionConverter(self._const_context(allow_dummies))(node)

    def constant(self, node):
        expr = self.convert(node)
        try:
            return evaluate_constant(expr)
        except (NotConstant, FortranTypeError) as exc:
            raise self.error(f"not a constant expression: {exc}", str(node)) from None
        except OverflowError:
            raise self.error("arithmetic overflow in a constant expression (the value does "
                             "not fit its kind)", str(node)) from None

    def kind_value(self, node) -> int:
        value = self.constant(node)
        if value.dtype.kind not in "iu":
            raise self.error("kind must be an integer constant", str(node))
        return int(value)

    # }}}

    def read(self, spec_part) -> None:
        for stmt in _flatten_spec(spec_part):
            self.read_statement(stmt)

    def read_statement(self, stmt) -> None:
        self.lines = statement_lines(stmt)
        try:
            name = type(stmt).__name__
            method = getattr(self, "decl_" + name, None)
            if method is None:
                if name in _UNSUPPORTED_SPEC:
                    message = _UNSUPPORTED_SPEC[name]
                    if message is None:
                        message = f"'{_stmt_keyword(stmt)}' statements are not supported"
                    raise self.error(message, _stmt_keyword(stmt), UnsupportedFeatureError)
                raise self.error(f"'{_stmt_keyword(stmt)}' statement is not supported",
                                 _stmt_keyword(stmt), UnsupportedFeatureError)
            method(stmt)
        except FortranError as exc:
            # a 'use' that fails is never deferred: the entities of the module
            # are unknown, and a name it should give would be taken for an
            # implicitly typed local (or be "not declared") where it is used
            if self.errors is None or isinstance(exc, UseCycleError) or \
                    isinstance(stmt, F.Use_Stmt):
                raise
            self.errors.append(exc)
            # what the statement declares raises its error where it is used
            # (not a half-made symbol: a parameter without its value); a
            # dummy argument of a procedure stays, for the body's own errors
            names = []
            if isinstance(stmt, F.Type_Declaration_Stmt):
                names = [str(ent.items[0]) for ent in stmt.items[2].items]
            elif isinstance(stmt, F.Parameter_Stmt):
                names = [str(nc.items[0]) for nc in stmt.items[1].items]
            for name in names:
                if not self.in_module and name.lower() in self.dummy_names:
                    continue
                sym = self.declare(name)
                sym.attributes.add("poisoned")
                sym.value = exc

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
                first, last = ls.items
                lo = str(first).lower()
                hi = str(last).lower() if last is not None else lo
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
            # a flag's code or a string (f2loopy.frontend.characters, .strings)
            return character_dtype(length_from_selector(selector))
        kind, star = None, False
        if selector is not None:
            items = selector.items
            if items[0] == "*":
                kind, star = int(str(items[1])), True
            else:
                kind = self.kind_value(items[1])
        return dtype_from_type_spec(type_name, kind, span, star=star)

    def logical_kind(self, type_spec) -> int:
        """The kind (bytes) of a ``logical`` type spec (4 for other types)."""
        if isinstance(type_spec, F.Declaration_Type_Spec):
            return 4
        type_name, selector = type_spec.items
        if type_name.upper() != "LOGICAL" or selector is None:
            return 4
        items = selector.items
        return int(str(items[1])) if items[0] == "*" else self.kind_value(items[1])

    def decl_Derived_Type_Def(self, node):
        from f2loopy.frontend.derived_types import TypeDef, read_type_definition
        self.lines = statement_lines(node.children[0])
        try:
            tdef = read_type_definition(self, node)
        except FortranError as exc:
            # a unit that declares a variable of the type gets this error
            name = str(node.children[0].items[1])
            self.symtab.types[name.lower()] = TypeDef(name, self.module_name, error=exc)
            raise
        if tdef.name.lower() in self.symtab.types and \
                self.symtab.types[tdef.name.lower()].module == tdef.module:
            raise self.error(f"type '{tdef.name}' is defined twice", tdef.name)
        self.symtab.types[tdef.name.lower()] = tdef

    def decl_Type_Declaration_Stmt(self, stmt):
        type_spec, attrs, entities = stmt.items
        derived = None
        polymorphic = False
        if isinstance(type_spec, F.Declaration_Type_Spec):
            from f2loopy.frontend.derived_types import lookup_type
            # class(t) dummies: the type itself where inlined (the actual
            # argument's type must be t), refused for a kernel's arguments
            polymorphic = str(type_spec.items[0]).upper() == "CLASS" and all(
                str(e.items[0]).lower() in self.dummy_names for e in entities.items)
            derived = lookup_type(self, type_spec, allow_class=polymorphic)
            dtype = None
        else:
            dtype = self.type_spec_dtype(type_spec)
        lkind = self.logical_kind(type_spec) if dtype is not None and dtype.kind == "b" else 4
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
                elif word in ("INTRINSIC", "VOLATILE", "CONTIGUOUS", "PUBLIC",
                              "PRIVATE", "PROTECTED"):
                    pass
                elif word == "TARGET":
                    # (what a pointer component may point to: see
                    # f2loopy.frontend.pointer_components)
                    for ent in entities.items:
                        self.declare(str(ent.items[0])).attributes.add("target")
                elif word == "VALUE":
                    # a copy of the actual argument: one the procedure leaves
                    # unchanged is an intent(in) scalar (checked in prepare)
                    for ent in entities.items:
                        self.declare(str(ent.items[0])).attributes.add("value")
                elif word == "EXTERNAL":
                    for ent in entities.items:
                        self.externals.add(str(ent.items[0]).lower())
                        # (a typed external function: a procedure, not data)
                        self.declare(str(ent.items[0])).attributes.add("external")
                elif word == "ALLOCATABLE":
                    allocatable_attribute(self, entities)
                elif word == "POINTER":
                    pointer_attribute(self, entities)
                elif word == "OPTIONAL":
                    optional_attribute(self, [str(e.items[0]) for e in entities.items])
                elif word == "SAVE" and self.in_module:
                    pass        # module variables keep their values anyway
                elif word == "SAVE":
                    # saved locals: data the glue keeps (f2loopy.frontend.module_data)
                    for ent in entities.items:
                        self.saved.add(str(ent.items[0]).lower())
                else:
                    raise self.error(f"attribute '{word.lower().split('(')[0]}' is not "
                                     "supported", word.split("(")[0].lower(),
                                     UnsupportedFeatureError)
        for ent in entities.items:
            name_node, shape, charlen, init = ent.items
            name = str(name_node)
            if self.symtab.is_local(name):
                sym = self.symtab.get(name)
                if sym is not None and sym.dtype is not None and sym.type_span is not None:
                    raise self.error(f"'{name}' is declared twice", name)
            sym = self.declare(name)
            sym.dtype = dtype
            if charlen is not None and is_character(dtype):
                sym.dtype = character_dtype(length_from_selector(charlen))  # c2*2, name*(*)
            sym.logical_kind = lkind
            sym.derived = derived
            if derived is not None and polymorphic:
                sym.attributes.add("polymorphic")
            sym.type_span = sym.span
            if derived is not None and (is_param or init is not None):
                raise self.error(f"initial values of derived-type variables ('{name}') are "
                                 "not supported", name, UnsupportedFeatureError)
            if shape is not None or dims_attr is not None:
                self.set_dims(sym, shape if shape is not None else dims_attr)
            if "allocatable" in sym.attributes:
                deferred_entity(self, sym)
            if intent:
                self.set_intent(sym, intent, name)
            if is_param:
                if init is None:
                    raise self.error(f"parameter '{name}' has no value", name)
                self.set_parameter(sym, init.items[1])
            elif init is not None:
                if str(init.items[0]) == "=>":
                    if "pointer" in sym.attributes and \
                            str(init.items[1]).replace(" ", "").upper() == "NULL()":
                        continue        # disassociated at first: None in the glue
                    raise self.error("pointers are not supported", "=>",
                                     UnsupportedFeatureError)
                self.set_initializer(sym, init.items[1])

    def declare(self, name: str) -> Symbol:
        sym = self.symtab.get(name) if self.symtab.is_local(name) else None
        return sym if sym is not None else \
            self.symtab.declare(name, self.src.span_in_lines(*self.lines, name))

    def set_dims(self, sym: Symbol, spec):
        if sym.dims is not None:
            raise self.error(f"dimensions of '{sym.name}' are declared twice", sym.name)
        if isinstance(spec, F.Assumed_Size_Spec):
            explicit, lower = spec.items
            dims = [tuple(s.items) for s in (explicit.items if explicit is not None else ())]
            dims.append((lower, "*"))
        elif isinstance(spec, F.Explicit_Shape_Spec_List):
            dims = [tuple(s.items) for s in spec.items]
        elif isinstance(spec, F.Assumed_Shape_Spec_List):
            # a(:), b(0:, :): the extents come from the actual argument (or the allocation)
            if not deferred_dims(self, sym, spec) and sym.name.lower() not in self.dummy_names:
                raise self.error(f"'{sym.name}' has an assumed shape ('(:)') but is neither a dummy "
                                 "argument nor allocatable (declare explicit extents)", sym.name,
                                 UnsupportedFeatureError)
            dims = [(s.items[0], ":") for s in spec.items]
        elif isinstance(spec, F.Deferred_Shape_Spec_List):
            raise self.error(f"deferred-shape array '{sym.name}(:)' is not supported "
                             "(declare explicit extents, e.g. a(n))", sym.name,
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
        if is_character(dtype):
            from f2loopy.frontend.character_constants import set_character_parameter
            set_character_parameter(self, sym, dtype, value_node)
            return
        if sym.dims is not None:
            sym.value = self.constant_array(sym, value_node, dtype)
            sym.dtype = dtype
            return
        value = self.constant(value_node)
        if value.dtype.kind == "b" and dtype.kind != "b" or \
                dtype.kind == "b" and value.dtype.kind != "b":
            raise self.error(f"value of parameter '{sym.name}' has the wrong type", sym.name)
        sym.value = cast_value(value, dtype)
        sym.dtype = dtype

    def array_shape(self, sym: Symbol) -> list[int]:
        shape = []
        for lo, hi in sym.array_dims:
            if hi in ("*", ":"):
                raise self.error(f"constant array '{sym.name}' needs explicit extents",
                                 sym.name)
            lo_v = int(self.constant(lo)) if lo is not None else 1
            shape.append(max(0, int(self.constant(hi)) - lo_v + 1))
        return shape

    def array_lower_bounds(self, sym: Symbol) -> list[int]:
        return [int(self.constant(lo)) if lo is not None else 1 for lo, _ in sym.array_dims]

    def constant_array(self, sym: Symbol, value_node, dtype) -> np.ndarray:
        """Fortran-ordered array of an initializer (array constructor or scalar)."""
        shape = self.array_shape(sym)
        size = int(np.prod(shape)) if shape else 1
        values = reshaped_initializer(self, value_node, sym.name, shape)
        if values is None:
            values = initializer_values(self, value_node, sym.name)
        if len(values) == 1 and not isinstance(value_node, F.Array_Constructor):
            values = values * size
        if len(values) != size:
            raise self.error(f"'{sym.name}' has {size} elements but {len(values)} values "
                             "are given", sym.name)
        arr = np.array([self.cast_value(v, dtype, sym.name) for v in values], dtype=dtype)
        return arr.reshape(shape, order="F")

    def cast_value(self, value, dtype, name):
        if (value.dtype.kind == "b") != (np.dtype(dtype).kind == "b"):
            raise self.error(f"value for '{name}' has the wrong type (logical and numeric "
                             "values do not mix)", name)
        return cast_value(value, dtype)

    def set_initializer(self, sym: Symbol, value_node):
        dtype = sym.dtype or self.symtab.implicit_type(sym.name)
        if dtype is None:
            raise self.error(f"'{sym.name}' has no type (implicit none)", sym.name)
        if sym.dims is None:
            sym.value = self.cast_value(self.constant(value_node), dtype, sym.name)
        else:
            sym.value = self.constant_array(sym, value_node, dtype)
        sym.attributes.add("initialized")

    def decl_Dimension_Stmt(self, stmt):
        for name_node, spec in stmt.items[0]:
            self.set_dims(self.declare(str(name_node)), spec)

    def decl_Optional_Stmt(self, stmt):
        optional_attribute(self, [str(n) for n in stmt.items[1].items])

    def decl_Value_Stmt(self, stmt):
        for name_node in stmt.items[1].items:
            self.declare(str(name_node)).attributes.add("value")

    def decl_Intent_Stmt(self, stmt):
        intent = str(stmt.items[0]).strip().lower().replace(" ", "")
        for name_node in stmt.items[1].items:
            self.set_intent(self.declare(str(name_node)), intent, str(name_node))

    def decl_Enum_Def(self, stmt):
        from f2loopy.frontend.enumerations import read_enum
        read_enum(self, stmt)

    def decl_Parameter_Stmt(self, stmt):
        for nc in stmt.items[1].items:
            name_node, value_node = nc.items
            self.set_parameter(self.declare(str(name_node)), value_node)

    def decl_Common_Stmt(self, stmt):
        for block, objects in stmt.items[0]:
            if block is None:
                raise self.error("blank 'common' is not supported (name the block: common "
                                 "/name/ ...)", "common", UnsupportedFeatureError)
            members = self.common_blocks.setdefault(str(block).lower(), [])
            for obj in objects.items:
                if isinstance(obj, F.Common_Block_Object):
                    name_node, spec = obj.items
                    sym = self.declare(str(name_node))
                    self.set_dims(sym, spec)
                else:
                    sym = self.declare(str(obj))
                if any(m is sym for blk in self.common_blocks.values() for m in blk):
                    raise self.error(f"'{sym.name}' is in a common block twice", sym.name)
                members.append(sym)

    def decl_Data_Stmt(self, stmt):
        self.data_stmts.append((stmt, self.lines))

    def decl_Intrinsic_Stmt(self, stmt):
        pass

    def decl_Access_Stmt(self, stmt):
        pass          # public/private: every entity of a module of the file is visible

    def decl_Save_Stmt(self, stmt):
        if self.in_module:
            return    # module variables keep their values anyway (module data)
        items = stmt.items[1]
        if items is None:
            self.saved.add("*")          # every local
            return
        for item in items.items:
            if isinstance(item, F.Name):
                self.saved.add(str(item).lower())
            else:
                raise self.error("saving a common block by name is not needed (common "
                                 "blocks are data the glue keeps)", "save",
                                 UnsupportedFeatureError)

    def decl_Interface_Block(self, node):
        """An interface block that only declares external procedures (``interface;
        subroutine abor1(...); end interface``): they are looked up like any
        called procedure (the file, then the search path) when called."""
        head = node.children[0]
        if self.in_module and is_generic_interface(node):
            return        # a generic name of the module: resolved at each call
        if isinstance(head, F.Interface_Stmt) and str(head).strip().upper() == \
                "ABSTRACT INTERFACE":
            return        # names for 'procedure(name)' dummies: no procedure of its own
        if not isinstance(head, F.Interface_Stmt) or str(head).strip().upper() != "INTERFACE":
            raise self.error("generic interfaces and operators are not supported"
                             + (" (only generic names declared in a module are)"
                                if is_generic_interface(node) else ""), "interface",
                             UnsupportedFeatureError)
        for body in node.children[1:-1]:
            if isinstance(body, (F.Subroutine_Body, F.Function_Body)):
                self.externals.add(str(body.children[0].items[1]).lower())
                self.symtab.interfaces.add(str(body.children[0].items[1]).lower())
            elif not isinstance(body, F.Comment):
                raise self.error("only subroutine and function interfaces are supported in an "
                                 "interface block", "interface", UnsupportedFeatureError)

    def decl_Procedure_Declaration_Stmt(self, stmt):
        """``procedure(iface) :: f`` of a dummy argument: a dummy procedure
        (bound to an actual procedure where the kernel is translated:
        :func:`f2loopy.frontend.procedure_dummies.bind_procedure_dummies`)."""
        _, attrs, decls = stmt.items
        names = [str(d) for d in decls.items]
        if attrs is not None or not all(isinstance(d, F.Name) for d in decls.items) or \
                not all(n.lower() in self.dummy_names for n in names):
            raise self.error(_PROCEDURE_POINTERS, "procedure", UnsupportedFeatureError)
        self.externals.update(n.lower() for n in names)

    def decl_External_Stmt(self, stmt):
        for name in stmt.items[1].items:
            self.externals.add(str(name).lower())

    def decl_Use_Stmt(self, stmt):
        nature, _, name_node, only_word, items = stmt.items
        name = str(name_node)
        intrinsic = str(nature or "").strip().upper() == "INTRINSIC"
        module = None
        if self.modules is not None and not intrinsic:
            module = self.modules(name)
        if module is None and str(nature or "").strip().upper() != "NON_INTRINSIC":
            module = intrinsic_module(name)
        if module is None and intrinsic:
            raise self.error(f"intrinsic module '{name}' is not supported (only "
                             "iso_fortran_env, iso_c_binding and ieee_arithmetic's "
                             "ieee_support_inf/ieee_support_nan are)", name,
                             UnsupportedFeatureError)
        if module is None and name.lower().endswith("_cl_mod") and self.in_program:
            # a program's use of f2loopy's glue: procedures only (_cl, f2l_*), no variables
            return
        library = library_module(name) if module is None and not intrinsic else None
        if library is not None:
            self.use_library(library, name, items)
            return
        if module is None:
            from f2loopy.frontend.search_path import not_found_message
            raise self.error(not_found_message("module", name, self.search), name,
                             UnsupportedFeatureError)
        available = {s.name.lower(): s for s in module.symtab.symbols()
                     if s.path is None}
        types = getattr(module.symtab, "types", {})
        procedures: set[str] = getattr(module, "procedure_names", set())
        wanted = []          # (local name, module name)
        if items is None:
            wanted = [(k, k) for k in available]
        else:
            for it in items.items:
                if isinstance(it, F.Rename):
                    _, local, remote = it.items
                    wanted.append((str(local).lower(), str(remote).lower()))
                else:
                    wanted.append((str(it).lower(), str(it).lower()))
        unprovided = getattr(module, "unprovided", None)
        if items is None:
            self.symtab.types.update(types)
            self.symtab.libraries.update(getattr(module.symtab, "libraries", {}))
            if unprovided is not None:
                self.symtab.libraries[unprovided.module] = (
                    unprovided, self.src.span_in_lines(*self.lines, name))
        for local, remote in wanted:
            if is_ieee_inquiry(self, module, local, remote):
                continue                 # an intrinsic of the expression converter
            if remote in types:
                self.symtab.types[local] = types[remote]
                if remote not in available:
                    continue
            sym = available.get(remote)
            if sym is None:
                if remote in procedures:
                    self.symtab.use_renames[local] = (module, remote)
                    continue
                if unprovided is not None and unprovided.provides(remote):
                    # known, not provided: refused where a kernel needs it
                    span = self.src.span_in_lines(*self.lines, remote)
                    if local != remote:
                        raise library_name_error(remote, unprovided, span)
                    self.symtab.libraries.setdefault(unprovided.module, (unprovided, span))
                    continue
                refused = getattr(module.symtab, "library_error", lambda _: None)(remote)
                if items is not None and refused is not None:
                    raise refused      # the module has it from a library module
                deferred = getattr(module, "deferred_errors", None)
                if items is not None and deferred:
                    raise deferred[0]      # why the module does not provide it
                if items is not None:
                    raise self.error(f"module '{name}' has no public entity '{remote}'",
                                     remote)
                continue
            if local != remote:
                sym = Symbol(**{**sym.__dict__, "name": local, "attributes": set(
                    sym.attributes)})
            self.symtab.imports[local] = sym
            import_components(self.symtab, sym)
        if items is None:
            for proc in procedures:
                self.symtab.use_renames.setdefault(proc, (module, proc))
        else:
            for local, remote in wanted:
                if remote in procedures:
                    self.symtab.use_renames[local] = (module, remote)
        self.symtab.used_modules.append(module)

    def use_library(self, library: Library, name: str, items) -> None:
        """``use`` of a library module without source (:mod:`.library_modules`)."""
        for it in (items.items if items is not None else ()):
            needle = str(it.items[1] if isinstance(it, F.Rename) else it)
            message = only_item_refusal(library, needle, isinstance(it, F.Rename))
            if message is not None:
                raise self.error(message, needle, UnsupportedFeatureError)
        span = self.src.span_in_lines(*self.lines, name)
        self.symtab.libraries[library.module] = (library, span)

    # }}}



def _arg_value(node):
    return node.items[1] if isinstance(node, F.Actual_Arg_Spec) else node


def _flatten_spec(spec_part):
    if spec_part is None:
        return
    for ch in spec_part.children:
        if isinstance(ch, F.Implicit_Part):
            yield from (c for c in ch.children if c is not None)
        elif ch is not None:
            yield ch


def _stmt_keyword(stmt) -> str:
    text = str(stmt).strip()
    word = text.split("(")[0].split()[0] if text else type(stmt).__name__
    return word.lower().split(",")[0].split("::")[0]
