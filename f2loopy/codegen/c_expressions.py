"""IR expressions to OpenCL C, with Fortran semantics.

Integer ``/`` and ``mod`` truncate in both languages; the rest of the Fortran
intrinsics (``modulo``, ``sign``, ``nint``, integer powers, ...) map to C
built-ins or to the small helper functions of :mod:`f2loopy.codegen.helpers`.
Arguments of built-ins are converted to the result type explicitly, since
OpenCL overloads would otherwise be ambiguous for mixed kinds.
"""

from __future__ import annotations

import math

import numpy as np
import pymbolic.primitives as p

from f2loopy.ir.kernel import Argument
from f2loopy.ir.types import (
    BIT_FUNCTIONS, CONVERSIONS, FLOAT32, FLOAT64, INT32, constant_dtype, is_complex, is_integer,
    is_logical, is_real, promote)
from f2loopy.diagnostics import CodegenError

PREC_CALL = 15
PREC_UNARY = 14
PREC_MUL = 13
PREC_ADD = 12
PREC_REL = 10
PREC_EQ = 9
PREC_AND = 5
PREC_OR = 4
PREC_COND = 3
PREC_NONE = 0

_C_TYPES = {
    "int8": "char", "int16": "short", "int32": "int", "int64": "long",
    "uint8": "uchar", "uint16": "ushort", "uint32": "uint", "uint64": "ulong",
    "float32": "float", "float64": "double", "bool": "int",
    # the vector types themselves (cfloat_t/cdouble_t are typedefs of them, emitted with
    # the complex helpers): declarations and constant tables need no helper then
    "complex64": "float2", "complex128": "double2",
}

_MATH = {"sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
         "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "gamma", "log_gamma"}
#: Fortran names of OpenCL functions spelled otherwise
_C_MATH_NAMES = {"gamma": "tgamma", "log_gamma": "lgamma"}


#: the device type of a logical argument's element, by kind (bytes)
_LOGICAL_STORAGE = {1: "char", 2: "short", 4: "int", 8: "long"}


def arg_c_type(arg: Argument) -> str:
    """The device type of argument *arg*'s elements: a logical argument's
    follows its kind (``logical(c_bool)``: ``char``)."""
    if np.dtype(arg.dtype).kind == "b":
        return _LOGICAL_STORAGE[arg.logical_kind]
    return c_type(arg.dtype)


def c_type(dtype) -> str:
    try:
        return _C_TYPES[np.dtype(dtype).name]
    except KeyError:
        raise CodegenError(f"type {dtype} has no OpenCL equivalent") from None


def c_constant(value, dtype=None) -> str:
    """C literal for *value* as type *dtype* (default: the value's own type)."""
    dtype = np.dtype(dtype) if dtype is not None else constant_dtype(value)
    if is_logical(dtype):
        return "1" if bool(value) else "0"
    if is_integer(dtype):
        n = int(value.real if isinstance(value, complex) else value)
        if dtype.itemsize == 8:
            return f"{n}L"
        return str(n)
    if is_real(dtype):
        v = float(np.real(value))
        if math.isnan(v):
            return "NAN"
        if math.isinf(v):
            return "INFINITY" if v > 0 else "-INFINITY"
        if dtype == FLOAT32:
            text = str(np.float32(v))
            if "e" not in text and "." not in text:
                text += ".0"
            return text + "f"
        text = repr(v)
        if "e" not in text and "." not in text:
            text += ".0"
        return text
    if is_complex(dtype):
        # a vector literal: a constant expression, valid in __constant tables too
        rdt = FLOAT32 if dtype == np.complex64 else FLOAT64
        return (f"({c_type(dtype)})({c_constant(np.real(value), rdt)}, "
                f"{c_constant(np.imag(value), rdt)})")
    raise CodegenError(f"cannot print constant {value!r}")


def assigned_constant(value, dtype) -> str | None:
    """The literal to assign the real constant *value* to a variable of type
    *dtype*, where a single precision literal reads better and means the same.

    A double that is exactly a single precision value (``1.1`` written in
    Fortran and stored in a ``real*8``: 1.100000023841858) is printed as the
    shortest single precision literal (``1.1f``): the assignment widens it to
    exactly that double.  Only an assignment: inside an expression a ``float``
    operand could change the arithmetic or pick another overload.  None when
    nothing is to be gained.
    """
    if np.dtype(dtype) != FLOAT64 or isinstance(value, (bool, np.bool_)) or \
            not isinstance(value, (float, np.floating)):
        return None
    v = float(value)
    if not math.isfinite(v) or abs(v) > float(np.finfo(np.float32).max) or \
            float(np.float32(v)) != v:
        return None
    single = c_constant(np.float32(v))
    double = c_constant(v, FLOAT64)
    return single if len(single) - 1 < len(double) else None


def _is_negative_term(expr):
    if isinstance(expr, p.Product) and len(expr.children) >= 2 and \
            _is_negative_number(expr.children[0]):
        return True
    if isinstance(expr, (int, np.integer, float, np.floating)) and \
            not isinstance(expr, (bool, np.bool_)) and expr < 0:
        return True
    return False


def _is_negative_number(x) -> bool:
    return bool(isinstance(x, (int, np.integer, float, np.floating)) and \
        not isinstance(x, (bool, np.bool_)) and x < 0)


def _is_minus_one(x) -> bool:
    return isinstance(x, (int, np.integer, float, np.floating)) and \
        not isinstance(x, (bool, np.bool_)) and x == -1


def _negated(expr):
    if isinstance(expr, p.Product):
        coeff, rest = expr.children[0], expr.children[1:]
        if not _is_minus_one(coeff):
            return p.Product((_negated(coeff), *rest))
        return rest[0] if len(rest) == 1 else p.Product(rest)
    if isinstance(expr, np.number):
        return expr.dtype.type(-expr)
    return -expr


class CExpressionPrinter:
    """Print IR expressions as C.

    :arg dtype_of: expression -> numpy dtype.
    :arg variable: ``name -> C text`` for a bare variable (e.g. ``s[0]`` for a
        scalar the kernel writes through a pointer).
    :arg subscript: ``(name, indices) -> C text`` for an array element.
    """

    def __init__(self, dtype_of, variable, subscript, helpers):
        self.dtype_of = dtype_of
        self.variable = variable
        self.subscript = subscript
        self.helpers = helpers
        #: the lane count while a vector statement is printed (a ``vec``
        #: iname's loop emitted as one statement), else None
        self.vector_width: int | None = None

    def __call__(self, expr, target_dtype=None) -> str:
        if target_dtype is not None:
            return self.converted(expr, np.dtype(target_dtype), PREC_NONE)
        return self.rec(expr, PREC_NONE)

    def converted(self, expr, dtype, prec) -> str:
        """*expr* converted to *dtype* (a cast only where the type differs)."""
        if isinstance(expr, (int, float, complex, np.generic)) and \
                (is_complex(dtype) or not np.iscomplexobj(expr)):
            text = c_constant(expr, dtype)
            return self._paren(text, PREC_UNARY, prec) if text.startswith("-") else text
        have = self.dtype_of(expr)
        if have == dtype or (is_logical(have) and is_logical(dtype)):
            return self.rec(expr, prec)
        if is_complex(dtype):
            return self.complex_from(expr, have, dtype)
        return self._paren(f"({c_type(dtype)}){self.rec(expr, PREC_UNARY)}", PREC_UNARY, prec)

    def complex_from(self, expr, have, dtype):
        ctor = "cfloat_fromreal" if dtype == np.complex64 else "cdouble_fromreal"
        if is_complex(have):
            conv = self.helpers.need("ccast", dtype)
            return f"{conv}({self.rec(expr, PREC_NONE)})"
        self.helpers.need_complex(dtype)
        real = FLOAT32 if dtype == np.complex64 else FLOAT64
        return f"{ctor}({self.converted(expr, real, PREC_NONE)})"

    @staticmethod
    def _paren(text, own, enclosing):
        return f"({text})" if own < enclosing else text

    def rec(self, expr, prec) -> str:
        if isinstance(expr, (bool, np.bool_)):
            return "1" if expr else "0"
        if isinstance(expr, (int, float, complex, np.generic)):
            text = c_constant(expr)
            return self._paren(text, PREC_UNARY, prec) if text.startswith("-") else text
        method = getattr(self, "map_" + type(expr).__name__, None)
        if method is None:
            raise CodegenError(f"cannot generate code for expression {expr!r}")
        return method(expr, prec)

    # {{{ leaves

    def map_Variable(self, expr, prec):
        return self.variable(expr.name)

    def map_Subscript(self, expr, prec):
        idx = expr.index if isinstance(expr.index, tuple) else (expr.index,)
        return self.subscript(expr.aggregate.name, idx)

    # }}}

    # {{{ arithmetic

    def _complex_op(self, expr):
        return is_complex(self.dtype_of(expr))

    def map_Sum(self, expr, prec):
        if self._complex_op(expr):
            return self.complex_nary(expr, "add")
        parts = []
        for k, ch in enumerate(expr.children):
            if k == 0:
                parts.append(self.rec(ch, PREC_ADD))
            elif _is_negative_term(ch):
                parts.append(" - " + self.rec(_negated(ch), PREC_ADD + 1))
            else:
                parts.append(" + " + self.rec(ch, PREC_ADD + 1))
        return self._paren("".join(parts), PREC_ADD, prec)

    def map_Product(self, expr, prec):
        if self._complex_op(expr):
            return self.complex_nary(expr, "mul")
        children = list(expr.children)
        if len(children) >= 2 and _is_minus_one(children[0]):
            rest = children[1:]
            inner = rest[0] if len(rest) == 1 else p.Product(tuple(rest))
            text = self.rec(inner, PREC_UNARY)
            if text.startswith("-"):
                text = f"({text})"          # '--x' would be C's decrement
            return self._paren("-" + text, PREC_UNARY, prec)
        parts = [self.rec(children[0], PREC_MUL)]
        for ch in children[1:]:
            parts.append(" * " + self.rec(ch, PREC_MUL + 1))
        return self._paren("".join(parts), PREC_MUL, prec)

    def map_Quotient(self, expr, prec):
        if self._complex_op(expr):
            return self.complex_binary("divide", expr.numerator, expr.denominator,
                                       self.dtype_of(expr))
        text = f"{self.rec(expr.numerator, PREC_MUL)} / {self.rec(expr.denominator, PREC_MUL + 1)}"
        return self._paren(text, PREC_MUL, prec)

    def map_FloorDiv(self, expr, prec):
        dt = self.dtype_of(expr)
        if not is_integer(dt):
            return f"floor({self.rec(expr.numerator, PREC_MUL)} / " \
                   f"{self.rec(expr.denominator, PREC_MUL + 1)})"
        name = self.helpers.need("floor_div", dt)
        return f"{name}({self.converted(expr.numerator, dt, PREC_NONE)}, " \
               f"{self.converted(expr.denominator, dt, PREC_NONE)})"

    def map_Remainder(self, expr, prec):
        text = f"{self.rec(expr.numerator, PREC_MUL)} % {self.rec(expr.denominator, PREC_MUL + 1)}"
        return self._paren(text, PREC_MUL, prec)

    def map_Power(self, expr, prec):
        dt = self.dtype_of(expr)
        base, ex = expr.base, expr.exponent
        ex_dt = self.dtype_of(ex)
        if is_complex(dt):
            return self.complex_power(expr, dt)
        if is_integer(ex_dt):
            if isinstance(ex, (int, np.integer)):
                n = int(ex)
                if n == 1:
                    return self.converted(base, dt, prec)
                if n == 0:
                    return c_constant(1, dt)
                if n == 2 and isinstance(base, (p.Variable, p.Subscript)):
                    b = self.converted(base, dt, PREC_MUL)
                    return self._paren(f"{b} * {b}", PREC_MUL, prec)
            name = self.helpers.need("powi", dt)
            return f"{name}({self.converted(base, dt, PREC_NONE)}, " \
                   f"{self.converted(ex, INT32 if ex_dt.itemsize <= 4 else ex_dt, PREC_NONE)})"
        b, e = self.converted(base, dt, PREC_NONE), self.converted(ex, dt, PREC_NONE)
        if self.vector_width is not None:
            # OpenCL's pow takes two vectors of one type: a scalar operand of
            # a vector statement is broadcast (a cast of a vector is a no-op)
            vt = f"{c_type(dt)}{self.vector_width}"
            return f"pow(({vt})({b}), ({vt})({e}))"
        return f"pow({b}, {e})"

    # }}}

    # {{{ logic

    def map_Comparison(self, expr, prec):
        own = PREC_EQ if expr.operator in ("==", "!=") else PREC_REL
        lt, rt = self.dtype_of(expr.left), self.dtype_of(expr.right)
        if is_complex(lt) or is_complex(rt):
            dt = promote(lt, rt)
            eq = self.complex_binary("eq", expr.left, expr.right, dt, result_bool=True)
            return eq if expr.operator == "==" else self._paren("!" + eq, PREC_UNARY, prec)
        text = f"{self.rec(expr.left, own)} {expr.operator} {self.rec(expr.right, own + 1)}"
        return self._paren(text, own, prec)

    def map_LogicalAnd(self, expr, prec):
        text = " && ".join(self.rec(ch, PREC_AND + 1) for ch in expr.children)
        return self._paren(text, PREC_AND, prec)

    def map_LogicalOr(self, expr, prec):
        text = " || ".join(self.rec(ch, PREC_OR + 1) for ch in expr.children)
        return self._paren(text, PREC_OR, prec)

    def map_LogicalNot(self, expr, prec):
        return self._paren("!" + self.rec(expr.child, PREC_UNARY), PREC_UNARY, prec)

    def map_If(self, expr, prec):
        dt = self.dtype_of(expr)
        text = (f"{self.rec(expr.condition, PREC_COND + 1)} ? "
                f"{self.converted(expr.then, dt, PREC_COND + 1)} : "
                f"{self.converted(expr.else_, dt, PREC_COND)}")
        return self._paren(text, PREC_COND, prec)

    # }}}

    # {{{ calls

    def map_Call(self, expr, prec):
        name = expr.function.name
        args = list(expr.parameters)
        dt = self.dtype_of(expr)
        arg_dts = [self.dtype_of(a) for a in args]
        if any(is_complex(a) for a in arg_dts) or is_complex(dt):
            return self.complex_call(name, args, arg_dts, dt)
        if name in CONVERSIONS:
            return self.converted(args[0], CONVERSIONS[name], prec)
        if name in _MATH:
            return f"{_C_MATH_NAMES.get(name, name)}({self.converted(args[0], dt, PREC_NONE)})"
        if name in ("atan2", "hypot"):
            return f"{name}({self.converted(args[0], dt, PREC_NONE)}, " \
                   f"{self.converted(args[1], dt, PREC_NONE)})"
        if name == "abs":
            if is_integer(dt):
                return f"{self.helpers.need('iabs', dt)}({self.converted(args[0], dt, PREC_NONE)})"
            return f"fabs({self.converted(args[0], dt, PREC_NONE)})"
        if name in ("min", "max"):
            fn = ("f" + name) if is_real(dt) else name
            conv = [self.converted(a, dt, PREC_NONE) for a in args]
            text = conv[0]
            for c in conv[1:]:
                text = f"{fn}({text}, {c})"
            return text
        if name == "mod":
            if is_integer(dt):
                text = (f"{self.converted(args[0], dt, PREC_MUL)} % "
                        f"{self.converted(args[1], dt, PREC_MUL + 1)}")
                return self._paren(text, PREC_MUL, prec)
            return f"fmod({self.converted(args[0], dt, PREC_NONE)}, " \
                   f"{self.converted(args[1], dt, PREC_NONE)})"
        if name in ("modulo", "sign", "dim"):
            fn = self.helpers.need(name, dt)
            return f"{fn}({self.converted(args[0], dt, PREC_NONE)}, " \
                   f"{self.converted(args[1], dt, PREC_NONE)})"
        if name == "nint":
            src_dt = arg_dts[0]
            return self._paren(f"({c_type(dt)})round({self.rec(args[0], PREC_NONE)})",
                               PREC_UNARY, prec) if is_real(src_dt) else \
                self.converted(args[0], dt, prec)
        if name in ("floor", "ceiling"):
            fn = "floor" if name == "floor" else "ceil"
            if is_integer(arg_dts[0]):
                return self.converted(args[0], dt, prec)
            return self._paren(f"({c_type(dt)}){fn}({self.rec(args[0], PREC_NONE)})",
                               PREC_UNARY, prec)
        if name in BIT_FUNCTIONS:
            return self.bit_call(name, args, arg_dts, dt)
        if name == "aint":
            return f"trunc({self.converted(args[0], dt, PREC_NONE)})"
        if name == "anint":
            return f"round({self.converted(args[0], dt, PREC_NONE)})"
        raise CodegenError(f"function '{name}' has no OpenCL implementation")

    def bit_call(self, name, args, arg_dts, dt):
        """The bit intrinsics, on the two's complement integers of OpenCL."""
        if name in ("iand", "ior", "ieor"):
            op = {"iand": "&", "ior": "|", "ieor": "^"}[name]
            return f"({self.converted(args[0], dt, PREC_NONE)} {op} " \
                   f"{self.converted(args[1], dt, PREC_NONE)})"
        t = c_type(arg_dts[0])
        a = self.rec(args[0], PREC_NONE)
        if name == "not":
            return f"(({t})~{self.rec(args[0], PREC_UNARY)})"
        if name == "popcnt":
            return f"((int)popcount(({t})({a})))"
        pos = self.converted(args[1], INT32, PREC_NONE)
        if name == "btest":
            return f"((int)(((u{t})({a}) >> ({pos})) & 1))"
        if name in ("ibset", "ibclr"):
            bit = f"(({t})1 << ({pos}))"
            return f"(({t})(({a}) | {bit}))" if name == "ibset" else \
                f"(({t})(({a}) & ~{bit}))"
        fn = self.helpers.need("shifta" if name == "shifta" else "ishft", arg_dts[0])
        if name == "shiftr":
            pos = f"-({pos})"
        return f"{fn}({a}, {pos})"

    # }}}

    # {{{ complex arithmetic (via helper functions)

    def _cprefix(self, dt):
        self.helpers.need_complex(dt)
        return "cfloat" if dt == np.complex64 else "cdouble"

    def complex_nary(self, expr, op):
        dt = self.dtype_of(expr)
        pre = self._cprefix(dt)
        children = list(expr.children)
        if op == "mul" and _is_minus_one(children[0]):
            inner = children[1] if len(children) == 2 else p.Product(tuple(children[1:]))
            return f"{pre}_neg({self.converted(inner, dt, PREC_NONE)})"
        text = self.converted(children[0], dt, PREC_NONE)
        for ch in children[1:]:
            if op == "add" and _is_negative_term(ch):
                text = f"{pre}_sub({text}, {self.converted(_negated(ch), dt, PREC_NONE)})"
            else:
                text = f"{pre}_{op}({text}, {self.converted(ch, dt, PREC_NONE)})"
        return text

    def complex_binary(self, op, a, b, dt, result_bool=False):
        pre = self._cprefix(dt)
        return f"{pre}_{op}({self.converted(a, dt, PREC_NONE)}, {self.converted(b, dt, PREC_NONE)})"

    def complex_power(self, expr, dt):
        pre = self._cprefix(dt)
        ex_dt = self.dtype_of(expr.exponent)
        if is_integer(ex_dt):
            return f"{pre}_powi({self.converted(expr.base, dt, PREC_NONE)}, " \
                   f"{self.converted(expr.exponent, INT32, PREC_NONE)})"
        return f"{pre}_pow({self.converted(expr.base, dt, PREC_NONE)}, " \
               f"{self.converted(expr.exponent, dt, PREC_NONE)})"

    def complex_call(self, name, args, arg_dts, dt):
        if name in ("realpart", "imagpart"):
            cdt = arg_dts[0]
            pre = self._cprefix(cdt)
            part = "real" if name == "realpart" else "imag"
            return f"{pre}_{part}({self.rec(args[0], PREC_NONE)})"
        if name == "cmplx":
            cdt = dt
            pre = self._cprefix(cdt)
            real = FLOAT32 if cdt == np.complex64 else FLOAT64
            if is_complex(arg_dts[0]):
                return self.converted(args[0], cdt, PREC_NONE)
            return f"{pre}_new({self.converted(args[0], real, PREC_NONE)}, " \
                   f"{self.converted(args[1], real, PREC_NONE)})"
        if name in CONVERSIONS:
            target = CONVERSIONS[name]
            if is_complex(target):
                return self.converted(args[0], target, PREC_NONE)
            return self.converted(p.Call(p.Variable("realpart"), (args[0],)), target, PREC_NONE)
        cdt = dt if is_complex(dt) else arg_dts[0]
        pre = self._cprefix(cdt)
        if name == "abs":
            return f"{pre}_abs({self.rec(args[0], PREC_NONE)})"
        if name == "conjg":
            return f"{pre}_conj({self.rec(args[0], PREC_NONE)})"
        if name in ("sqrt", "exp", "log", "sin", "cos"):
            return f"{pre}_{name}({self.converted(args[0], cdt, PREC_NONE)})"
        raise CodegenError(f"function '{name}' is not supported for complex values")

    # }}}
