"""Constant folding with Fortran semantics, and integer polynomial normal form.

* :func:`fold_constants` evaluates constant subexpressions exactly as Fortran
  would (integer ``/`` truncates, ``mod``/``modulo``/``sign`` signs, kinds kept:
  ``0.1 * 2`` stays single precision).
* :func:`normalize_integer` rewrites an integer polynomial expression (sums
  and products of variables and integer constants) into a canonical, simplified
  sum, so that index arithmetic such as ``(ii + 1) - 1`` prints as ``ii``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import math

import numpy as np
import pymbolic.primitives as p

from f2loopy.ir.types import (
    BIT_FUNCTIONS, BOOL, CONVERSIONS, constant_dtype, intrinsic_result_type, is_complex,
    is_integer, promote)
from f2loopy.ir.expressions import Rewriter, is_constant


class NotConstant(ValueError):
    pass


def cast_value(value, dtype: np.dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.bool_(bool(value))
    if is_integer(dtype) and not isinstance(value, (int, np.integer)):
        if np.iscomplexobj(value):
            value = np.real(value)
        return dtype.type(math.trunc(float(value)))
    if not is_complex(dtype) and np.iscomplexobj(value):
        return dtype.type(np.real(value))
    return dtype.type(value)


def tdiv(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Fortran and C divide."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _binary(op: str, a, b):
    dt = promote(constant_dtype(a), constant_dtype(b))
    a, b = cast_value(a, dt), cast_value(b, dt)
    if is_integer(dt):
        x, y = int(a), int(b)
        if op == "+":
            r = x + y
        elif op == "*":
            r = x * y
        elif op == "/":
            if y == 0:
                raise NotConstant("integer division by zero")
            r = tdiv(x, y)
        elif op == "mod":
            if y == 0:
                raise NotConstant("mod by zero")
            r = x - tdiv(x, y) * y
        elif op == "modulo":
            if y == 0:
                raise NotConstant("modulo by zero")
            r = x % y
        elif op == "//":
            if y == 0:
                raise NotConstant("division by zero")
            r = x // y
        else:
            raise NotConstant(op)
        return cast_value(r, dt)
    with np.errstate(all="ignore"):
        if op == "+":
            return dt.type(a + b)
        if op == "*":
            return dt.type(a * b)
        if op == "/":
            return dt.type(a / b)
        if op == "mod":
            return dt.type(np.fmod(a, b))
        if op == "modulo":
            return dt.type(a - np.floor(a / b) * b)
    raise NotConstant(op)


_UNARY_MATH: dict[str, Callable] = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log10": np.log10, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "erf": lambda x: math.erf(float(x)), "erfc": lambda x: math.erfc(float(x)),
    "gamma": lambda x: math.gamma(float(x)), "log_gamma": lambda x: math.lgamma(float(x)),
}


def _wrap(value: int, dtype: np.dtype):
    """*value* reduced to the two's complement integer type *dtype*."""
    bits = dtype.itemsize * 8
    value &= (1 << bits) - 1
    return dtype.type(value - (1 << bits) if value >> (bits - 1) else value)


def _evaluate_bits(name: str, args: list, res_dt: np.dtype):
    """The bit intrinsics on constants (two's complement, as gfortran)."""
    if name in ("iand", "ior", "ieor"):
        a, b = int(cast_value(args[0], res_dt)), int(cast_value(args[1], res_dt))
        return _wrap(a & b if name == "iand" else a | b if name == "ior" else a ^ b, res_dt)
    a = int(args[0])
    bits = res_dt.itemsize * 8
    if name == "not":
        return _wrap(~a, res_dt)
    if name == "popcnt":
        return np.int32(bin(a & ((1 << bits) - 1)).count("1"))
    s = int(args[1])
    if name in ("ibset", "ibclr", "btest"):
        if not 0 <= s < bits:
            raise NotConstant(f"bit position {s} out of range")
        if name == "btest":
            return np.bool_((a >> s) & 1)
        return _wrap(a | (1 << s) if name == "ibset" else a & ~(1 << s), res_dt)
    if name == "shifta":
        return _wrap(a >> min(s, bits), res_dt) if s >= 0 else _raise(name)
    if name in ("shiftl", "shiftr"):
        if s < 0:
            _raise(name)
        s = s if name == "shiftl" else -s
    if abs(s) >= bits:
        return res_dt.type(0)
    u = a & ((1 << bits) - 1)
    return _wrap(u << s if s >= 0 else u >> -s, res_dt)


def _raise(name):
    raise NotConstant(f"negative shift in '{name}'")


def evaluate_call(name: str, args: list):
    """Evaluate the IR function *name* on constant *args* (Fortran semantics)."""
    dts = [constant_dtype(a) for a in args]
    res_dt = intrinsic_result_type(name, dts)
    with np.errstate(all="ignore"):
        if name in CONVERSIONS:
            return cast_value(args[0], res_dt)
        if name in _UNARY_MATH:
            return res_dt.type(_UNARY_MATH[name](cast_value(args[0], res_dt)))
        if name == "abs":
            return res_dt.type(abs(args[0]))
        if name in ("min", "max"):
            vals = [cast_value(a, res_dt) for a in args]
            return (min if name == "min" else max)(vals)
        if name in ("mod", "modulo"):
            return _binary(name, args[0], args[1])
        if name == "sign":
            a, b = cast_value(args[0], res_dt), cast_value(args[1], res_dt)
            if is_integer(res_dt):
                return res_dt.type(abs(int(a)) if int(b) >= 0 else -abs(int(a)))
            return res_dt.type(np.copysign(abs(a), b))
        if name == "nint":
            x = float(args[0])
            return np.int32(math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1))
        if name == "floor":
            return np.int32(math.floor(float(args[0])))
        if name == "ceiling":
            return np.int32(math.ceil(float(args[0])))
        if name == "atan2":
            return res_dt.type(np.arctan2(cast_value(args[0], res_dt), cast_value(args[1], res_dt)))
        if name == "hypot":
            return res_dt.type(np.hypot(cast_value(args[0], res_dt), cast_value(args[1], res_dt)))
        if name in BIT_FUNCTIONS:
            return _evaluate_bits(name, args, res_dt)
    raise NotConstant(name)


class _Folder(Rewriter):
    def map_sum(self, expr):
        children = [self.rec(c) for c in expr.children]
        return self._combine(expr, children, "+", p.Sum)

    def map_product(self, expr):
        children = [self.rec(c) for c in expr.children]
        return self._combine(expr, children, "*", p.Product)

    def _combine(self, expr, children, op, cls):
        # only fold a leading run of constants (keeps Fortran's left-to-right
        # evaluation order for the non-constant part)
        if all(is_constant(c) for c in children):
            value = children[0]
            for c in children[1:]:
                value = _binary(op, value, c)
            return value
        if all(a is b for a, b in zip(children, expr.children, strict=True)):
            return expr
        return cls(tuple(children))

    def map_quotient(self, expr):
        num, den = self.rec(expr.numerator), self.rec(expr.denominator)
        if is_constant(num) and is_constant(den):
            try:
                return _binary("/", num, den)
            except NotConstant:
                pass
        if num is expr.numerator and den is expr.denominator:
            return expr
        return p.Quotient(num, den)

    def map_floor_div(self, expr):
        num, den = self.rec(expr.numerator), self.rec(expr.denominator)
        if is_constant(num) and is_constant(den):
            try:
                return _binary("//", num, den)
            except NotConstant:
                pass
        if num is expr.numerator and den is expr.denominator:
            return expr
        return p.FloorDiv(num, den)

    def map_power(self, expr):
        base, ex = self.rec(expr.base), self.rec(expr.exponent)
        if is_constant(base) and is_constant(ex):
            bdt, edt = constant_dtype(base), constant_dtype(ex)
            if is_integer(bdt) and is_integer(edt):
                if int(ex) >= 0:
                    return cast_value(_integer_power(int(base), int(ex)), promote(bdt, edt))
            else:
                dt = bdt if is_integer(edt) else promote(bdt, edt)
                with np.errstate(all="ignore"):
                    if is_integer(edt):
                        return _exact_real_power(cast_value(base, dt), int(ex))
                    return dt.type(np.power(cast_value(base, dt), cast_value(ex, dt)))
        if base is expr.base and ex is expr.exponent:
            return expr
        return p.Power(base, ex)

    def map_call(self, expr):
        args = [self.rec(a) for a in expr.parameters]
        if all(is_constant(a) for a in args):
            try:
                return evaluate_call(expr.function.name, args)
            except (NotConstant, TypeError, ValueError, OverflowError):
                pass
        if all(a is b for a, b in zip(args, expr.parameters, strict=True)):
            return expr
        return p.Call(expr.function, tuple(args))

    def map_comparison(self, expr):
        left, right = self.rec(expr.left), self.rec(expr.right)
        if is_constant(left) and is_constant(right):
            dt = promote(constant_dtype(left), constant_dtype(right)) \
                if not (constant_dtype(left) == BOOL) else BOOL
            a, b = cast_value(left, dt), cast_value(right, dt)
            return np.bool_({"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b,
                             ">": a > b, ">=": a >= b}[expr.operator])
        if left is expr.left and right is expr.right:
            return expr
        return p.Comparison(left, expr.operator, right)

    def map_logical_not(self, expr):
        ch = self.rec(expr.child)
        if is_constant(ch):
            return np.bool_(not bool(ch))
        return expr if ch is expr.child else p.LogicalNot(ch)

    def map_logical_and(self, expr):
        children = [self.rec(c) for c in expr.children]
        if any(is_constant(c) and not bool(c) for c in children):
            return np.bool_(False)
        rest = [c for c in children if not is_constant(c)]
        if not rest:
            return np.bool_(True)
        if len(rest) == 1:
            return rest[0]
        if all(a is b for a, b in zip(children, expr.children, strict=True)):
            return expr
        return p.LogicalAnd(tuple(rest))

    def map_logical_or(self, expr):
        children = [self.rec(c) for c in expr.children]
        if any(is_constant(c) and bool(c) for c in children):
            return np.bool_(True)
        rest = [c for c in children if not is_constant(c)]
        if not rest:
            return np.bool_(False)
        if len(rest) == 1:
            return rest[0]
        if all(a is b for a, b in zip(children, expr.children, strict=True)):
            return expr
        return p.LogicalOr(tuple(rest))

    def map_if(self, expr):
        cond = self.rec(expr.condition)
        if is_constant(cond):
            return self.rec(expr.then if bool(cond) else expr.else_)
        then, else_ = self.rec(expr.then), self.rec(expr.else_)
        if cond is expr.condition and then is expr.then and else_ is expr.else_:
            return expr
        return p.If(cond, then, else_)


def _integer_power(base: int, n: int) -> int:
    """``base ** n`` for ``n >= 0``, computed only while it fits in 64 bits
    (a larger result overflows every integer kind: OverflowError), so that
    ``3**2147483647`` costs nothing."""
    if base in (0, 1) or n == 0:
        return base ** n if n else 1
    if base == -1:
        return -1 if n & 1 else 1
    if n >= 64:         # |base| >= 2: at least 2**64
        raise OverflowError(f"{base}**{n} overflows")
    return base ** n


def _exact_real_power(base, n: int):
    """``base ** n`` for an integer exponent, by repeated multiplication in the
    base's own precision (what Fortran compilers do)."""
    dt = base.dtype
    if n == 0:
        return dt.type(1)
    result = dt.type(1)
    b = base
    k = abs(n)
    while k:
        if k & 1:
            result = dt.type(result * b)
        b = dt.type(b * b)
        k >>= 1
    return dt.type(1) / result if n < 0 else result


def fold_constants(expr):
    """Evaluate constant subexpressions of *expr* (Fortran semantics)."""
    return _Folder()(expr)


def evaluate_constant(expr):
    """The value of a constant expression, as a numpy scalar (NotConstant if not)."""
    value = fold_constants(expr)
    if not is_constant(value):
        raise NotConstant(f"{expr} is not constant")
    if not isinstance(value, np.generic):
        value = cast_value(value, constant_dtype(value))
    return value


# {{{ integer polynomial normal form

class _NotPolynomial(Exception):
    pass


def _poly(expr) -> dict:
    """expr -> {monomial (sorted tuple of atom keys): int coefficient}."""
    if isinstance(expr, (int, np.integer)) and not isinstance(expr, (bool, np.bool_)):
        return {(): int(expr)} if expr else {}
    if isinstance(expr, p.Variable):
        return {((expr.name, expr),): 1}
    if isinstance(expr, p.Sum):
        out: dict = {}
        for ch in expr.children:
            for k, v in _poly(ch).items():
                out[k] = out.get(k, 0) + v
        return {k: v for k, v in out.items() if v}
    if isinstance(expr, p.Product):
        out = {(): 1}
        for ch in expr.children:
            cp = _poly(ch)
            new: dict = {}
            for k1, v1 in out.items():
                for k2, v2 in cp.items():
                    k = tuple(sorted(k1 + k2, key=lambda a: a[0]))
                    new[k] = new.get(k, 0) + v1 * v2
            out = {k: v for k, v in new.items() if v}
        return out
    if isinstance(expr, p.ExpressionNode):
        # an opaque integer-valued atom (array read, division, call...)
        key = (repr(expr), expr)
        return {(key,): 1}
    raise _NotPolynomial


def _from_poly(poly: dict):
    terms = []
    const = 0
    # order: by degree then name, so `n*j + i - 1` reads naturally
    for mono, coeff in sorted(poly.items(), key=lambda kv: (-len(kv[0]), [a[0] for a in kv[0]])):
        if not mono:
            const = coeff
            continue
        factors = [atom for _, atom in mono]
        body = factors[0] if len(factors) == 1 else p.Product(tuple(factors))
        if coeff == 1:
            terms.append(body)
        elif coeff == -1:
            terms.append(p.Product((-1, body)))
        else:
            terms.append(p.Product((coeff, *factors)))
    if const:
        terms.append(const)
    if not terms:
        return 0
    return terms[0] if len(terms) == 1 else p.Sum(tuple(terms))


def normalize_integer(expr):
    """Canonical simplified form of an integer expression (sums and products
    of integer constants and atoms); other expressions are returned folded."""
    if isinstance(expr, (int, np.integer)):
        return int(expr)
    # memoized only where equality means identity (1 == 1.0 in Python)
    if _integers_only(expr):
        return _normalize_memo(expr)
    return _normalize(expr)


def _integers_only(expr) -> bool:
    """Whether *expr* is built of Python ints and variables by the node types
    integer index arithmetic uses."""
    stack = [expr]
    while stack:
        e = stack.pop()
        t = type(e)
        if t is int or t is p.Variable:
            continue
        if t is p.Sum or t is p.Product:
            stack.extend(e.children)
        elif t is p.FloorDiv or t is p.Remainder or t is p.Quotient:
            stack.append(e.numerator)
            stack.append(e.denominator)
        elif t is p.Subscript:
            idx = e.index
            stack.extend(idx if isinstance(idx, tuple) else (idx,))
            stack.append(e.aggregate)
        else:
            return False
    return True


@functools.lru_cache(maxsize=16384)
def _normalize_memo(expr):
    return _normalize(expr)


def _normalize(expr):
    expr = fold_constants(expr)
    try:
        return _from_poly(_poly(expr))
    except _NotPolynomial:
        return expr

# }}}
