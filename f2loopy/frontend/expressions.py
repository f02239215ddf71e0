"""fparser.two expression nodes to IR (pymbolic) expressions.

Literals become numpy scalars of their Fortran kind, intrinsics become calls
of their IR names (see :mod:`f2loopy.ir.kernel`), names are resolved by the
caller (parameters fold to constants, loop variables become inames).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.ir.types import (
    COMPLEX64, COMPLEX128, FLOAT32, FLOAT64, INT32, INT64, FortranTypeError, is_complex,
    is_integer, is_logical, promote)
from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend.boz import boz_integer, is_boz
from f2loopy.frontend.default_kinds import default_complex, default_real
from f2loopy.frontend.literals import int_literal, negate, real_literal

_REL_OPS = {
    ".EQ.": "==", "==": "==", ".NE.": "!=", "/=": "!=", ".LT.": "<", "<": "<",
    ".LE.": "<=", "<=": "<=", ".GT.": ">", ">": ">", ".GE.": ">=", ">=": ">=",
}

#: F77 specific intrinsic names and the generic they stand for
SPECIFIC_INTRINSICS = {
    "dsqrt": "sqrt", "csqrt": "sqrt", "dexp": "exp", "cexp": "exp", "alog": "log",
    "dlog": "log", "clog": "log", "alog10": "log10", "dlog10": "log10",
    "dsin": "sin", "csin": "sin", "dcos": "cos", "ccos": "cos", "dtan": "tan",
    "dasin": "asin", "dacos": "acos", "datan": "atan", "datan2": "atan2",
    "dsinh": "sinh", "dcosh": "cosh", "dtanh": "tanh",
    "dabs": "abs", "iabs": "abs", "cabs": "abs",
    "amax1": "max", "amin1": "min", "max0": "max", "min0": "min", "dmax1": "max",
    "dmin1": "min", "amod": "mod", "dmod": "mod", "dsign": "sign", "isign": "sign",
    "idint": "int", "ifix": "int", "idnint": "nint", "dint": "aint", "dnint": "anint",
    "dimag": "aimag", "dconjg": "conjg", "dreal": "dble",
    "derf": "erf", "derfc": "erfc", "dgamma": "gamma", "algama": "log_gamma",
    "dlgama": "log_gamma", "lgamma": "log_gamma",
}

#: elemental functions the generated code implements for complex arguments
_COMPLEX_MATH = {"sqrt", "exp", "log", "sin", "cos"}

_MATH_1 = {"sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
           "sinh", "cosh", "tanh", "aint", "anint", "asinh", "acosh", "atanh", "erf", "erfc",
           "gamma", "log_gamma"}


class ConversionContext:
    """What the converter needs from its caller.

    :attr error: ``error(message, needle, cls=FortranError)`` -> exception
        located at the statement (pointing at *needle* if found).
    :attr resolve_name: ``(name, node) -> expr`` for a bare name.
    :attr array_ref: ``(name, index_nodes, node) -> expr`` or None if *name*
        is not an array.
    :attr function_call: ``(name, arg_nodes, node) -> expr`` or None if
        *name* is not a known function.
    :attr dtype_of: ``expr -> np.dtype``.
    :attr kind_value: ``node -> int`` (a kind parameter's value).
    :attr array_intrinsic: ``(name, arg_nodes, node) -> expr`` for the array
        intrinsics, or None where they cannot be used.
    :attr array_constructor: ``node -> expr`` for ``(/ ... /)``, or None.
    :attr component_ref: ``node -> expr`` for ``a%b(i)``, or None.
    """

    def __init__(self, *, error: Callable, resolve_name: Callable, array_ref: Callable,
                 function_call: Callable, dtype_of: Callable, kind_value: Callable,
                 array_intrinsic: Callable | None = None,
                 array_constructor: Callable | None = None,
                 char_comparison: Callable | None = None,
                 component_ref: Callable | None = None):
        self.component_ref = component_ref
        self.error = error
        self.resolve_name = resolve_name
        self.array_ref = array_ref
        self.function_call = function_call
        self.dtype_of = dtype_of
        self.kind_value = kind_value
        self.array_intrinsic = array_intrinsic
        self.array_constructor = array_constructor
        #: ``(op, left node, right node) -> expr`` for a comparison of
        #: characters, None for others (f2loopy.frontend.characters)
        self.char_comparison = char_comparison
        #: ``name -> np.dtype or None``: the declared type of a variable, for
        #: the inquiry intrinsics (``epsilon(x)`` of a dummy in a parameter
        #: needs its type, not its value); None where conversion does it
        self.type_of_name: Callable | None = None
        #: ``node -> expr or None`` for an operator expression: the value of a
        #: defined operator on derived types (None: an intrinsic operation)
        self.defined_operation: Callable | None = None


#: the expression nodes of operators (a defined operator may apply)
_OPERATOR_NODES = frozenset((F.Level_2_Expr, F.Add_Operand, F.Mult_Operand, F.Level_3_Expr,
                             F.Level_4_Expr, F.And_Operand, F.Or_Operand, F.Equiv_Operand,
                             F.Level_5_Expr, F.Expr, F.Level_2_Unary_Expr, F.Level_1_Expr))


class ExpressionConverter:
    def __init__(self, ctx: ConversionContext):
        self.ctx = ctx

    def __call__(self, node):
        return self.convert(node)

    def convert(self, node):
        if self.ctx.defined_operation is not None and type(node) in _OPERATOR_NODES:
            value = self.ctx.defined_operation(node)
            if value is not None:
                return value
        method = getattr(self, "conv_" + type(node).__name__, None)
        if method is None:
            raise self.ctx.error(f"unsupported expression '{node}'", str(node),
                                 UnsupportedFeatureError)
        return method(node)

    # {{{ leaves

    def _kind(self, kind_node):
        if kind_node is None:
            return None
        if isinstance(kind_node, str):
            if kind_node.isdigit():
                return int(kind_node)
            kind_node = F.Name(kind_node)
        return self.ctx.kind_value(kind_node)

    def conv_Int_Literal_Constant(self, node):
        text, kind = node.items
        try:
            return int_literal(text, self._kind(kind))
        except ValueError as exc:
            raise self.ctx.error(str(exc), str(node)) from None

    conv_Signed_Int_Literal_Constant = conv_Int_Literal_Constant

    def conv_Real_Literal_Constant(self, node):
        text, kind = node.items
        try:
            return real_literal(text, self._kind(kind))
        except ValueError as exc:
            raise self.ctx.error(str(exc), str(node)) from None

    conv_Signed_Real_Literal_Constant = conv_Real_Literal_Constant

    def conv_Logical_Literal_Constant(self, node):
        return np.bool_(node.items[0].upper() == ".TRUE.")

    def conv_Complex_Literal_Constant(self, node):
        re, im = (self.convert(x) for x in node.items)
        for part in (re, im):
            if not isinstance(part, (np.integer, np.floating, int, float)) or \
                    isinstance(part, (bool, np.bool_)):
                raise self.ctx.error("the parts of a complex constant must be integer or "
                                     "real constants (cmplx(x, y) builds one from variables)",
                                     str(node))
        dt = promote(_const_dtype(re), _const_dtype(im), default_real())
        cdt = COMPLEX128 if dt == FLOAT64 or dt == COMPLEX128 else COMPLEX64
        return cdt.type(complex(float(re), float(im)))

    def conv_Char_Literal_Constant(self, node):
        raise self.ctx.error("character strings are not supported", str(node)[:20],
                             UnsupportedFeatureError)

    def conv_Name(self, node):
        return self.ctx.resolve_name(str(node), node)

    def conv_Parenthesis(self, node):
        return self.convert(node.items[1])

    # }}}

    # {{{ operators

    def _left_chain(self, node):
        """``a op b op c ...`` (parsed left-deep) as the leftmost operand and
        the ``(op, operand node)`` pairs in order, without recursion: a sum of
        hundreds of terms must not exhaust the Python stack."""
        cls = type(node)
        tail = []
        while isinstance(node, cls):
            left, op, right = node.items
            tail.append((op, right))
            node = left
        return node, tail[::-1]

    def _joins_flat(self, a, b) -> bool:
        """Whether *b* may join the flat sum or product *a*: same type."""
        try:
            return self.ctx.dtype_of(a) == self.ctx.dtype_of(b)
        except Exception:  # noqa: BLE001 - a type error is reported by _check_numeric
            return False

    def conv_Level_2_Expr(self, node):
        first, tail = self._left_chain(node)
        a = self.convert(first)
        for op, right in tail:
            b = self.convert(right)
            self._check_numeric(op, a, b)
            if op not in ("+", "-"):
                raise self.ctx.error(f"unsupported operator '{op}'", op,
                                     UnsupportedFeatureError)
            b = b if op == "+" else negate(b)
            # (a + b) + c is one flat sum evaluated left to right, as Fortran
            # does, as long as every term has the type of the sum so far
            if isinstance(a, p.Sum) and self._joins_flat(a, b):
                a = p.Sum((*a.children, b))
            else:
                a = p.Sum((a, b))
        return a

    def conv_Level_2_Unary_Expr(self, node):
        op, operand = node.items
        a = self.convert(operand)
        self._check_numeric(op, a)
        return negate(a) if op == "-" else a

    def conv_Add_Operand(self, node):
        first, tail = self._left_chain(node)
        a = self.convert(first)
        for op, right in tail:
            b = self.convert(right)
            self._check_numeric(op, a, b)
            if op == "*":
                if isinstance(a, p.Product) and self._joins_flat(a, b) and \
                        not (isinstance(a.children[0], int) and a.children[0] == -1):
                    a = p.Product((*a.children, b))
                else:
                    a = p.Product((a, b))
            elif op == "/":
                if _is_zero_int(b) and is_integer(self.ctx.dtype_of(a)):
                    raise self.ctx.error("integer division by zero", str(node))
                a = p.Quotient(a, b)
            else:
                raise self.ctx.error(f"unsupported operator '{op}'", op,
                                     UnsupportedFeatureError)
        return a

    def conv_Mult_Operand(self, node):
        left, op, right = node.items
        a, b = self.convert(left), self.convert(right)
        self._check_numeric(op, a, b)
        if op == "**":
            return p.Power(a, b)
        raise self.ctx.error(f"unsupported operator '{op}'", op, UnsupportedFeatureError)

    def conv_Level_4_Expr(self, node):
        left, op, right = node.items
        if self.ctx.char_comparison is not None:
            chars = self.ctx.char_comparison(op, left, right)
            if chars is not None:
                return chars
        a, b = self.convert(left), self.convert(right)
        try:
            rel = _REL_OPS[op.upper()]
        except KeyError:
            raise self.ctx.error(f"unsupported operator '{op}'", op,
                                 UnsupportedFeatureError) from None
        self._check_numeric(op, a, b)
        if rel not in ("==", "!=") and any(is_complex(self.ctx.dtype_of(x)) for x in (a, b)):
            raise self.ctx.error(f"complex values cannot be compared with '{op}'", op)
        return p.Comparison(a, rel, b)

    def _logical_operands(self, op, *exprs):
        for e in exprs:
            if not is_logical(self.ctx.dtype_of(e)):
                raise self.ctx.error(f"operand of '{op}' is not logical", op)

    def conv_And_Operand(self, node):
        op, operand = node.items
        a = self.convert(operand)
        self._logical_operands(op, a)
        return p.LogicalNot(a)

    def conv_Level_1_Expr(self, node):
        op, operand = node.items
        if op.upper() == ".NOT.":
            return self.conv_And_Operand(node)
        raise self.ctx.error(f"defined operator '{op}' is not supported", op,
                             UnsupportedFeatureError)

    def conv_Or_Operand(self, node):
        left, op, right = node.items
        a, b = self.convert(left), self.convert(right)
        self._logical_operands(op, a, b)
        return p.LogicalAnd((a, b))

    def conv_Equiv_Operand(self, node):
        left, op, right = node.items
        a, b = self.convert(left), self.convert(right)
        self._logical_operands(op, a, b)
        return p.LogicalOr((a, b))

    def conv_Level_5_Expr(self, node):
        left, op, right = node.items
        a, b = self.convert(left), self.convert(right)
        self._logical_operands(op, a, b)
        if op.upper() == ".EQV.":
            return p.Comparison(a, "==", b)
        if op.upper() == ".NEQV.":
            return p.Comparison(a, "!=", b)
        raise self.ctx.error(f"unsupported operator '{op}'", op, UnsupportedFeatureError)

    def conv_Level_3_Expr(self, node):
        raise self.ctx.error("character concatenation is not supported", "//",
                             UnsupportedFeatureError)

    def _check_numeric(self, op, *exprs):
        for e in exprs:
            try:
                dt = self.ctx.dtype_of(e)
            except FortranTypeError as exc:
                raise self.ctx.error(str(exc), op) from None
            if is_logical(dt) and op not in (".EQ.", "==", ".NE.", "/="):
                raise self.ctx.error(f"logical operand of arithmetic operator '{op}'", op)
            if is_logical(dt):
                raise self.ctx.error(f"logical values are compared with .eqv./.neqv., "
                                     f"not '{op}'", op)

    # }}}

    # {{{ references and calls

    def _subscripts(self, node):
        if isinstance(node, F.Section_Subscript_List):
            return list(node.items)
        return [node]

    def conv_Part_Ref(self, node):
        name_node, subs = node.items
        name = str(name_node)
        index_nodes = self._subscripts(subs)
        ref = self.ctx.array_ref(name, index_nodes, node)
        if ref is not None:
            return ref
        call = self.ctx.function_call(name, index_nodes, node)
        if call is not None:
            return call
        if name.lower() in SPECIFIC_INTRINSICS or name.lower() in _ALL_INTRINSICS:
            return self.intrinsic(name.lower(), index_nodes, node)
        raise self.ctx.error(f"'{name}' is neither an array nor a known function", name)

    def conv_Function_Reference(self, node):
        name_node, args = node.items
        arg_nodes = list(args.items) if args is not None else []
        return self._call(str(name_node), arg_nodes, node)

    def _call(self, name, arg_nodes, node):
        ref = self.ctx.array_ref(name, arg_nodes, node)
        if ref is not None:
            return ref
        call = self.ctx.function_call(name, arg_nodes, node)
        if call is not None:
            return call
        if name.lower() in SPECIFIC_INTRINSICS or name.lower() in _ALL_INTRINSICS:
            return self.intrinsic(name.lower(), arg_nodes, node)
        raise self.ctx.error(f"function '{name}' is not known", name)

    def conv_Intrinsic_Function_Reference(self, node):
        name_node, args = node.items
        name = str(name_node).lower()
        arg_nodes = list(args.items) if args is not None else []
        ref = self.ctx.array_ref(name, arg_nodes, node)  # an array shadowing an intrinsic
        if ref is not None:
            return ref
        call = self.ctx.function_call(name, arg_nodes, node)
        if call is not None:
            return call
        return self.intrinsic(name, arg_nodes, node)

    def conv_Data_Ref(self, node):
        if self.ctx.component_ref is not None:
            return self.ctx.component_ref(node)
        raise self.ctx.error("derived types ('%' component access) are not supported",
                             "%", UnsupportedFeatureError)

    def conv_Structure_Constructor(self, node):
        # fparser reads f(1.5) as a structure constructor when f is unknown to it:
        # treat it as an array reference or a function call.
        name_node, comps = node.items
        if comps is None:
            arg_nodes = []
        elif isinstance(comps, F.Component_Spec_List):
            arg_nodes = list(comps.items)
        else:
            arg_nodes = [comps]
        arg_nodes = [F.Actual_Arg_Spec(str(a)) if isinstance(a, F.Component_Spec) else a
                     for a in arg_nodes]
        return self._call(str(name_node), arg_nodes, node)

    def conv_Array_Constructor(self, node):
        if self.ctx.array_constructor is None:
            raise self.ctx.error("array constructors are not supported here",
                                 str(node)[:10], UnsupportedFeatureError)
        return self.ctx.array_constructor(node)

    def conv_Subscript_Triplet(self, node):
        raise self.ctx.error("array section here is not supported", ":",
                             UnsupportedFeatureError)

    # }}}

    # {{{ intrinsics

    def _split_args(self, name, arg_nodes, allowed_keywords):
        positional, keywords = [], {}
        for a in arg_nodes:
            if isinstance(a, F.Actual_Arg_Spec):
                key, val = a.items
                key = str(key).lower()
                if key not in allowed_keywords:
                    raise self.ctx.error(f"intrinsic '{name}' has no argument '{key}'", key)
                keywords[key] = val
            else:
                if keywords:
                    raise self.ctx.error("positional argument after a keyword argument", name)
                positional.append(a)
        return positional, keywords

    def intrinsic(self, name: str, arg_nodes, node):
        generic = SPECIFIC_INTRINSICS.get(name, name)
        if generic in _ARRAY_INTRINSICS:
            if self.ctx.array_intrinsic is None:
                raise self.ctx.error(f"intrinsic '{name}' is not supported here", name,
                                     UnsupportedFeatureError)
            return self.ctx.array_intrinsic(generic, arg_nodes, node)
        handler = _INTRINSIC_HANDLERS.get(generic)
        if handler is None:
            raise self.ctx.error(f"intrinsic '{name}' is not supported", name,
                                 UnsupportedFeatureError)
        return handler(self, name, generic, arg_nodes)

    def _args(self, name, arg_nodes, nmin, nmax, keywords=()):
        positional, kw = self._split_args(name, arg_nodes, set(keywords))
        ordered = list(positional)
        for k in keywords:
            if k in kw:
                idx = list(keywords).index(k)
                while len(ordered) < idx:
                    ordered.append(None)
                if idx < len(ordered):
                    if ordered[idx] is not None:
                        raise self.ctx.error(f"argument '{k}' given twice", k)
                    ordered[idx] = kw[k]
                else:
                    ordered.append(kw[k])
        n = len(ordered)
        if n < nmin or (nmax is not None and n > nmax):
            want = f"{nmin}" if nmin == nmax else (f"{nmin} or more" if nmax is None
                                                   else f"{nmin} to {nmax}")
            raise self.ctx.error(f"intrinsic '{name}' takes {want} arguments, got {n}", name)
        return ordered

    def _typed(self, name, expr):
        try:
            return self.ctx.dtype_of(expr)
        except FortranTypeError as exc:
            raise self.ctx.error(str(exc), name) from None

    def _h_math1(self, name, generic, arg_nodes):
        (x,) = self._args(name, arg_nodes, 1, 1, ("x",))
        x = self.convert(x)
        dt = self._typed(name, x)
        if not (dt.kind in "fc"):
            raise self.ctx.error(f"argument of '{name}' must be real or complex, not "
                                 f"{_type_name(dt)}", name)
        if dt.kind == "c" and generic not in _COMPLEX_MATH:
            raise self.ctx.error(f"intrinsic '{name}' of a complex argument is not supported",
                                 name, UnsupportedFeatureError)
        if generic == "atan":
            return p.Call(p.Variable("atan"), (x,))
        return p.Call(p.Variable(generic), (x,))

    def _h_atan(self, name, generic, arg_nodes):
        args = self._args(name, arg_nodes, 1, 2, ("y", "x"))
        if len(args) == 2:
            return self._h_real2(name, "atan2", arg_nodes)
        return self._h_math1(name, generic, arg_nodes)

    def _h_real2(self, name, generic, arg_nodes):
        """``atan2(y, x)`` and ``hypot(x, y)``: two real arguments."""
        keywords = ("y", "x") if generic == "atan2" else ("x", "y")
        args = tuple(self.convert(a) for a in self._args(name, arg_nodes, 2, 2, keywords))
        for v in args:
            if self._typed(name, v).kind != "f":
                raise self.ctx.error(f"arguments of '{name}' must be real", name)
        return p.Call(p.Variable(generic), args)

    def _h_abs(self, name, generic, arg_nodes):
        (x,) = self._args(name, arg_nodes, 1, 1, ("a",))
        x = self.convert(x)
        if is_logical(self._typed(name, x)):
            raise self.ctx.error(f"argument of '{name}' must be numeric", name)
        return p.Call(p.Variable("abs"), (x,))

    def _h_minmax(self, name, generic, arg_nodes):
        args = [self.convert(a) for a in self._args(name, arg_nodes, 2, None)]
        kinds = set()
        for a in args:
            dt = self._typed(name, a)
            if dt.kind not in "iuf":
                raise self.ctx.error(f"arguments of '{name}' must be integer or real", name)
            kinds.add("f" if dt.kind == "f" else "i")
        if len(kinds) > 1 and name in ("max", "min"):
            # Fortran (and gfortran) require one type; kinds may differ (the result
            # has the largest kind, as gfortran does)
            raise self.ctx.error(f"arguments of '{name}' mix integer and real values "
                                 "(convert them with real() or int())", name)
        result = p.Call(p.Variable(generic), tuple(args))
        if name in ("amax1", "amin1", "dmax1", "dmin1", "max0", "min0"):
            target = {"a": default_real(), "d": FLOAT64, "m": INT32}[name[0]]
            return _convert_call(target, result)
        return result

    def _same_type(self, name, *args):
        """Arguments of one type (integer or real; kinds may differ, as gfortran allows)."""
        kinds = set()
        for v in args:
            k = self._typed(name, v).kind
            if k not in "iuf":
                raise self.ctx.error(f"arguments of '{name}' must be integer or real", name)
            kinds.add("f" if k == "f" else "i")
        if len(kinds) > 1:
            raise self.ctx.error(f"arguments of '{name}' mix integer and real values "
                                 "(convert them with real() or int())", name)

    def _h_mod(self, name, generic, arg_nodes):
        a, b = (self.convert(x) for x in self._args(name, arg_nodes, 2, 2, ("a", "p")))
        self._same_type(name, a, b)
        if _is_zero_int(b):
            raise self.ctx.error(f"'{name}' with a zero second argument", name)
        return p.Call(p.Variable(generic), (a, b))

    def _h_sign(self, name, generic, arg_nodes):
        a, b = (self.convert(x) for x in self._args(name, arg_nodes, 2, 2, ("a", "b")))
        self._same_type(name, a, b)
        return p.Call(p.Variable("sign"), (a, b))

    def _h_dim(self, name, generic, arg_nodes):
        a, b = (self.convert(x) for x in self._args(name, arg_nodes, 2, 2, ("x", "y")))
        self._same_type(name, a, b)
        return p.Call(p.Variable("dim"), (a, b))

    def _kind_arg(self, name, node):
        if node is None:
            return None
        try:
            return self.ctx.kind_value(node)
        except FortranError:
            raise
        except Exception:
            raise self.ctx.error(f"kind argument of '{name}' must be a constant", name) from None

    def _h_to_int(self, name, generic, arg_nodes):
        args = self._args(name, arg_nodes, 1, 2, ("a", "kind"))
        kind = self._kind_arg(name, args[1] if len(args) > 1 else None)
        target = {None: INT32, 4: INT32, 8: INT64}.get(kind)
        if target is None:
            raise self.ctx.error(f"integer kind {kind} is not supported", name)
        if generic == "int" and is_boz(args[0]):
            try:                # (read in int() only)
                return boz_integer(args[0], target)
            except ValueError as exc:
                raise self.ctx.error(str(exc), str(args[0]), UnsupportedFeatureError) from None
        x = self.convert(args[0])
        dt = self._typed(name, x)
        if dt.kind not in "iufc":
            raise self.ctx.error(f"argument of '{name}' must be numeric", name)
        if generic == "int":
            if is_complex(dt):
                x = p.Call(p.Variable("realpart"), (x,))
            return _convert_call(target, x)
        # nint, floor, ceiling: result kind from the optional kind argument
        if dt.kind not in "f":
            if is_integer(dt) and generic in ("floor", "ceiling"):
                return _convert_call(target, x)
            raise self.ctx.error(f"argument of '{name}' must be real", name)
        call = p.Call(p.Variable(generic), (x,))
        return call if target == INT32 else p.Call(p.Variable(generic), (x, np.int32(8)))

    def _h_to_real(self, name, generic, arg_nodes):
        args = self._args(name, arg_nodes, 1, 2, ("a", "kind"))
        x = self.convert(args[0])
        dt = self._typed(name, x)
        if dt.kind not in "iufc":
            raise self.ctx.error(f"argument of '{name}' must be numeric", name)
        if name in ("dble", "dfloat", "dreal"):
            target = FLOAT64
        elif name in ("float", "sngl"):
            target = default_real()      # (kind 8 under -fdefault-real-8, as gfortran)
        else:
            kind = self._kind_arg(name, args[1] if len(args) > 1 else None)
            if kind is None and is_complex(dt):
                target = FLOAT64 if dt == COMPLEX128 else FLOAT32
            else:
                found = {None: default_real(), 4: FLOAT32, 8: FLOAT64}.get(kind)
                if found is None:
                    raise self.ctx.error(f"real kind {kind} is not supported", name)
                target = found
        if is_complex(dt):
            x = p.Call(p.Variable("realpart"), (x,))
        return _convert_call(target, x)

    def _h_aint(self, name, generic, arg_nodes):
        (x,) = self._args(name, arg_nodes, 1, 1, ("a",))
        x = self.convert(x)
        if self._typed(name, x).kind != "f":
            raise self.ctx.error(f"argument of '{name}' must be real", name)
        return p.Call(p.Variable(generic), (x,))

    def _h_cmplx(self, name, generic, arg_nodes):
        args = self._args(name, arg_nodes, 1, 3, ("x", "y", "kind"))
        x = self.convert(args[0])
        y = self.convert(args[1]) if len(args) > 1 and args[1] is not None else np.float32(0)
        kind = self._kind_arg(name, args[2] if len(args) > 2 else None)
        if name == "dcmplx" or kind == 8:
            target = COMPLEX128
        elif kind is None:
            target = default_complex()
        elif kind == 4:
            target = COMPLEX64
        else:
            raise self.ctx.error(f"complex kind {kind} is not supported", name)
        return p.Call(p.Variable("cmplx"), (x, y, np.int32(8 if target == COMPLEX128 else 4)))

    def _inquiry_type(self, name, x):
        """The type of the argument of an inquiry intrinsic (only its type
        matters: a variable's declared type, without its value)."""
        if isinstance(x, F.Name) and self.ctx.type_of_name is not None:
            dt = self.ctx.type_of_name(str(x))
            if dt is not None:
                return dt
        return self._typed(name, self.convert(x))

    def _h_numeric_inquiry(self, name, generic, arg_nodes):
        (x,) = self._args(name, arg_nodes, 1, 1, ("x",))
        dt = self._inquiry_type(name, x)
        if generic == "huge":
            if dt.kind in "iu":
                return dt.type(np.iinfo(dt).max)
            if dt.kind == "f":
                return dt.type(np.finfo(dt).max)
        elif dt.kind == "f":
            info = np.finfo(dt)
            return dt.type(info.tiny if generic == "tiny" else info.eps)
        raise self.ctx.error(f"argument of '{name}' must be "
                             f"{'integer or real' if generic == 'huge' else 'real'}", name)

    def _h_ieee_support(self, name, generic, arg_nodes):
        """``ieee_support_inf(x)``, ``ieee_support_nan(x)`` (``use
        ieee_arithmetic``): true for a real *x*, or with no argument."""
        args = self._args(name, arg_nodes, 0, 1, ("x",))
        if args and self._inquiry_type(name, args[0]).kind != "f":
            raise self.ctx.error(f"argument of '{name}' must be real", name)
        return np.bool_(True)

    def _h_model_inquiry(self, name, generic, arg_nodes):
        """``radix``, ``digits``, ``minexponent``, ``maxexponent`` of the IEEE
        model of the argument's kind (constants; LAPACK's la_constants)."""
        (x,) = self._args(name, arg_nodes, 1, 1, ("x",))
        dt = self._inquiry_type(name, x)
        if generic == "radix" and dt.kind in "iuf":
            return np.int32(2)
        if generic == "digits" and dt.kind in "iu":
            return np.int32(np.iinfo(dt).bits - 1)
        if dt.kind == "f":
            info = np.finfo(dt)
            return np.int32({"digits": info.nmant + 1, "minexponent": info.minexp + 1,
                             "maxexponent": info.maxexp}[generic])
        raise self.ctx.error(f"argument of '{name}' must be "
                             f"{'integer or real' if generic in ('radix', 'digits') else 'real'}",
                             name)

    def _h_aimag(self, name, generic, arg_nodes):
        (z,) = self._args(name, arg_nodes, 1, 1, ("z",))
        z = self.convert(z)
        if not is_complex(self._typed(name, z)):
            raise self.ctx.error(f"argument of '{name}' must be complex", name)
        return p.Call(p.Variable("imagpart"), (z,))

    def _h_conjg(self, name, generic, arg_nodes):
        (z,) = self._args(name, arg_nodes, 1, 1, ("z",))
        z = self.convert(z)
        if not is_complex(self._typed(name, z)):
            raise self.ctx.error(f"argument of '{name}' must be complex", name)
        return p.Call(p.Variable("conjg"), (z,))

    def _h_merge(self, name, generic, arg_nodes):
        t, f, mask = (self.convert(a) for a in self._args(
            name, arg_nodes, 3, 3, ("tsource", "fsource", "mask")))
        if not is_logical(self._typed(name, mask)):
            raise self.ctx.error(f"the mask of '{name}' must be logical", name)
        dt_t, dt_f = self._typed(name, t), self._typed(name, f)
        if dt_t != dt_f:
            raise self.ctx.error(f"arguments of '{name}' differ in type ({_type_name(dt_t)}"
                                 f"({dt_t.itemsize}) and {_type_name(dt_f)}"
                                 f"({dt_f.itemsize})): gfortran rejects this", name)
        return p.If(mask, t, f)

    def _h_bits(self, name, generic, arg_nodes):
        """iand, ior, ieor, not, ishft, ibset, ibclr, btest, shiftl/r/a, popcnt."""
        second = _BIT_SECOND.get(generic)
        keywords = ("i",) if second is None else ("i", second)
        args = [self.convert(a) for a in self._args(name, arg_nodes, len(keywords),
                                                    len(keywords), keywords)]
        for a in args:
            if not is_integer(self._typed(name, a)):
                raise self.ctx.error(f"arguments of '{name}' must be integers", name)
        return p.Call(p.Variable(generic), tuple(args))

    # }}}


_BIT_SECOND = {"iand": "j", "ior": "j", "ieor": "j", "ishft": "shift", "shiftl": "shift",
               "shiftr": "shift", "shifta": "shift", "ibset": "pos", "ibclr": "pos",
               "btest": "pos", "not": None, "popcnt": None}


def _convert_call(dtype: np.dtype, expr):
    return p.Call(p.Variable(np.dtype(dtype).name), (expr,))


def _is_zero_int(e) -> bool:
    return isinstance(e, (int, np.integer)) and not isinstance(e, np.bool_) and int(e) == 0


def _const_dtype(v):
    return v.dtype if isinstance(v, np.generic) else np.dtype(type(v))


def _type_name(dt: np.dtype) -> str:
    return {"i": "integer", "u": "integer", "f": "real", "c": "complex",
            "b": "logical"}.get(dt.kind, str(dt))


_INTRINSIC_HANDLERS = {
    **{n: ExpressionConverter._h_math1 for n in _MATH_1 - {"aint", "anint", "atan"}},
    "atan": ExpressionConverter._h_atan,
    "atan2": ExpressionConverter._h_real2,
    "hypot": ExpressionConverter._h_real2,
    "abs": ExpressionConverter._h_abs,
    "min": ExpressionConverter._h_minmax, "max": ExpressionConverter._h_minmax,
    "mod": ExpressionConverter._h_mod, "modulo": ExpressionConverter._h_mod,
    "sign": ExpressionConverter._h_sign, "dim": ExpressionConverter._h_dim,
    "int": ExpressionConverter._h_to_int, "nint": ExpressionConverter._h_to_int,
    "floor": ExpressionConverter._h_to_int, "ceiling": ExpressionConverter._h_to_int,
    "real": ExpressionConverter._h_to_real, "dble": ExpressionConverter._h_to_real,
    "float": ExpressionConverter._h_to_real, "sngl": ExpressionConverter._h_to_real,
    "dfloat": ExpressionConverter._h_to_real,
    "aint": ExpressionConverter._h_aint, "anint": ExpressionConverter._h_aint,
    "cmplx": ExpressionConverter._h_cmplx, "dcmplx": ExpressionConverter._h_cmplx,
    "aimag": ExpressionConverter._h_aimag, "conjg": ExpressionConverter._h_conjg,
    "huge": ExpressionConverter._h_numeric_inquiry,
    "tiny": ExpressionConverter._h_numeric_inquiry,
    "epsilon": ExpressionConverter._h_numeric_inquiry,
    "radix": ExpressionConverter._h_model_inquiry,
    "digits": ExpressionConverter._h_model_inquiry,
    "minexponent": ExpressionConverter._h_model_inquiry,
    "maxexponent": ExpressionConverter._h_model_inquiry,
    "merge": ExpressionConverter._h_merge,
    "ieee_support_inf": ExpressionConverter._h_ieee_support,
    "ieee_support_nan": ExpressionConverter._h_ieee_support,
    **{n: ExpressionConverter._h_bits for n in _BIT_SECOND},
}

_ARRAY_INTRINSICS = frozenset({"sum", "product", "maxval", "minval", "dot_product",
                               "count", "any", "all", "matmul", "transpose", "norm2",
                               "maxloc", "minloc", "cshift", "eoshift", "spread",
                               "size", "lbound", "ubound", "allocated", "associated",
                               "present", "shape"})
_ALL_INTRINSICS = frozenset(_INTRINSIC_HANDLERS) | _ARRAY_INTRINSICS


def is_intrinsic_name(name: str) -> bool:
    """Whether *name* is a Fortran intrinsic procedure f2loopy knows."""
    low = name.lower()
    return low in SPECIFIC_INTRINSICS or low in _ALL_INTRINSICS
