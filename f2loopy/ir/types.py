"""Types of expressions, with Fortran's promotion rules.

Fortran promotes differently from numpy: ``integer + real`` is ``real`` of the
real operand's kind (numpy would give float64 for int32 + float32), and a
real combined with a complex gives the complex of the larger kind.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pymbolic.primitives as p
from pymbolic.mapper import Mapper

BOOL: np.dtype = np.dtype(np.bool_)
INT32: np.dtype = np.dtype(np.int32)
INT64: np.dtype = np.dtype(np.int64)
FLOAT32: np.dtype = np.dtype(np.float32)
FLOAT64: np.dtype = np.dtype(np.float64)
COMPLEX64: np.dtype = np.dtype(np.complex64)
COMPLEX128: np.dtype = np.dtype(np.complex128)

#: conversion functions of the IR (see f2loopy.ir.kernel) and their results
CONVERSIONS: dict[str, np.dtype] = {
    "int8": np.dtype(np.int8), "int16": np.dtype(np.int16), "int32": INT32, "int64": INT64,
    "float32": FLOAT32, "float64": FLOAT64,
    "complex64": COMPLEX64, "complex128": COMPLEX128, "bool": BOOL,
}

#: elemental math intrinsics whose result has the argument's type
SAME_TYPE_MATH = frozenset({
    "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "aint", "anint", "conjg", "asinh", "acosh", "atanh", "erf",
    "erfc", "gamma", "log_gamma",
})

#: bit intrinsics (integer arguments; the shift or bit position is the second)
BIT_FUNCTIONS = frozenset({"iand", "ior", "ieor", "not", "ishft", "shiftl", "shiftr",
                           "shifta", "ibset", "ibclr", "btest", "popcnt"})

#: intrinsics whose result is a default integer
INTEGER_RESULT = frozenset({"nint", "floor", "ceiling"})


class FortranTypeError(TypeError):
    """An expression combines types that Fortran does not allow."""


def is_integer(dt: np.dtype) -> bool:
    return dt.kind in "iu"


def is_real(dt: np.dtype) -> bool:
    return dt.kind == "f"


def is_complex(dt: np.dtype) -> bool:
    return dt.kind == "c"


def is_logical(dt: np.dtype) -> bool:
    return dt.kind == "b"


#: the kind of Fortran's default logical (the only logical kind f2loopy
#: supports: its numpy dtype, bool, has a size of 1)
LOGICAL_KIND = 4


def fortran_kind(dt: np.dtype) -> int:
    """The Fortran kind number of numeric or logical *dt* (gfortran's: the
    size in bytes; half of it for complex; 4 for the default logical)."""
    dt = np.dtype(dt)
    if is_logical(dt):
        return LOGICAL_KIND
    if is_complex(dt):
        return dt.itemsize // 2
    return dt.itemsize


def real_kind_of(dt: np.dtype) -> np.dtype:
    """float32 for complex64, float64 for complex128, else *dt*."""
    if dt == COMPLEX64:
        return FLOAT32
    if dt == COMPLEX128:
        return FLOAT64
    return dt


def promote(*dtypes: np.dtype) -> np.dtype:
    """Result type of a Fortran arithmetic operation on *dtypes*."""
    dts = [np.dtype(d) for d in dtypes]
    if not dts:
        raise ValueError("no types")
    if any(is_logical(d) for d in dts):
        if all(is_logical(d) for d in dts):
            return BOOL
        raise FortranTypeError("logical and numeric operands mixed")
    if any(is_complex(d) for d in dts):
        kinds = [real_kind_of(d) for d in dts if not is_integer(d)]
        return COMPLEX128 if FLOAT64 in kinds else COMPLEX64
    reals = [d for d in dts if is_real(d)]
    if reals:
        return max(reals, key=lambda d: d.itemsize)
    return max(dts, key=lambda d: d.itemsize)


def reduction_neutral(op: str, dtype) -> np.generic:
    """The value of *dtype* that reduction *op* (``sum``, ``product``, ``max``,
    ``min``) leaves unchanged: where partials start."""
    dt = np.dtype(dtype)
    if op == "sum":
        return dt.type(0)
    if op == "product":
        return dt.type(1)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return dt.type(info.min if op == "max" else info.max)
    return dt.type(-np.inf if op == "max" else np.inf)


def constant_dtype(value) -> np.dtype:
    """The type of a literal: numpy scalars keep theirs, Python numbers get
    the Fortran default kinds (int -> int32, float -> float32)."""
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if isinstance(value, np.generic):
        return value.dtype
    if isinstance(value, int):
        return INT32 if -2**31 <= value < 2**31 else INT64
    if isinstance(value, float):
        return FLOAT32
    if isinstance(value, complex):
        return COMPLEX64
    raise FortranTypeError(f"constant {value!r} has no Fortran type")


class TypeInferrer(Mapper):
    """Infer the numpy dtype of an IR expression.

    :arg var_dtype: maps a variable name to its dtype (raise KeyError if unknown).
    """

    def __init__(self, var_dtype: Callable[[str], np.dtype]):
        self.var_dtype = var_dtype
        self._memo: dict = {}

    def __call__(self, expr, *args, **kwargs):
        # compound expressions are memoized: code generation asks for the type
        # of every subexpression, which would otherwise be quadratic
        if not isinstance(expr, p.ExpressionNode) or isinstance(expr, p.Variable):
            return Mapper.__call__(self, expr, *args, **kwargs)
        try:
            return self._memo[expr]
        except KeyError:
            pass
        except TypeError:           # unhashable contents
            return Mapper.__call__(self, expr, *args, **kwargs)
        dt = self._memo[expr] = Mapper.__call__(self, expr, *args, **kwargs)
        return dt

    rec = __call__

    def map_constant(self, expr):
        return constant_dtype(expr)

    def map_variable(self, expr):
        return np.dtype(self.var_dtype(expr.name))

    def map_subscript(self, expr):
        return np.dtype(self.var_dtype(expr.aggregate.name))

    def map_sum(self, expr):
        return promote(*(self.rec(c) for c in expr.children))

    map_product = map_sum

    def map_quotient(self, expr):
        return promote(self.rec(expr.numerator), self.rec(expr.denominator))

    map_floor_div = map_quotient
    map_remainder = map_quotient

    def map_power(self, expr):
        base, exp = self.rec(expr.base), self.rec(expr.exponent)
        if is_integer(exp) and not is_integer(base):
            return base
        return promote(base, exp)

    def map_comparison(self, expr):
        return BOOL

    def map_logical_and(self, expr):
        return BOOL

    map_logical_or = map_logical_and
    map_logical_not = map_logical_and

    def map_if(self, expr):
        return promote(self.rec(expr.then), self.rec(expr.else_))

    def map_min(self, expr):
        return promote(*(self.rec(c) for c in expr.children))

    map_max = map_min

    def map_reduction(self, expr):
        return self.rec(expr.expr)

    def map_rule_argument(self, expr):
        return INT32

    def map_call(self, expr):
        name = expr.function.name
        if name in INTEGER_RESULT and len(expr.parameters) == 2:
            return INT64       # nint(x, 8): the kind argument is a constant
        if name == "cmplx":
            return COMPLEX128 if int(expr.parameters[2]) == 8 else COMPLEX64
        args = [self.rec(a) for a in expr.parameters]
        return intrinsic_result_type(name, args)


def intrinsic_result_type(name: str, args: list[np.dtype]) -> np.dtype:
    """Result type of the IR function *name* applied to arguments of *args* types."""
    if name in ("f2l_raise", "f2l_print"):
        return INT32       # records an error site (f2loopy.frontend.errors), prints one

    if name in CONVERSIONS:
        return CONVERSIONS[name]
    if name == "realpart" or name == "imagpart":
        return real_kind_of(args[0])
    if name == "abs":
        return real_kind_of(args[0])
    if name in SAME_TYPE_MATH:
        if is_integer(args[0]):
            raise FortranTypeError(f"intrinsic '{name}' needs a real or complex argument")
        return args[0]
    if name in ("atan2", "hypot"):
        return promote(*args)
    if name in ("min", "max", "mod", "modulo", "dim", "sign"):
        return promote(*args)
    if name in INTEGER_RESULT:
        return INT32
    if name == "cmplx":
        return COMPLEX64
    if name == "dcmplx":
        return COMPLEX128
    if name in BIT_FUNCTIONS:
        if not all(is_integer(a) for a in args):
            raise FortranTypeError(f"intrinsic '{name}' needs integer arguments")
        if name == "btest":
            return BOOL
        if name == "popcnt":
            return INT32
        return promote(*args) if name in ("ieor", "ior", "iand") else args[0]
    raise FortranTypeError(f"unknown function {name!r}")


def infer_type(expr, var_dtype: Callable[[str], np.dtype]) -> np.dtype:
    return TypeInferrer(var_dtype)(expr)


def kernel_type_inferrer(kernel) -> TypeInferrer:
    """A :class:`TypeInferrer` for the variables and inames of *kernel*."""
    inames = set(kernel.all_inames())
    index_dtype = kernel.options.index_dtype

    def var_dtype(name):
        if name in inames:
            return index_dtype
        return kernel.variable(name).dtype

    return TypeInferrer(var_dtype)


def type_name(dt) -> str:
    """The Fortran spelling of dtype *dt* (``real``, ``integer(8)``...), for messages."""
    dt = np.dtype(dt)
    base = {"i": "integer", "u": "integer", "f": "real", "c": "complex",
            "b": "logical"}.get(dt.kind, str(dt))
    default = {"i": 4, "u": 4, "f": 4, "c": 8, "b": 1}.get(dt.kind)
    if dt.itemsize != default:
        kind = dt.itemsize // 2 if dt.kind == "c" else dt.itemsize
        return f"{base}({kind})"
    return base
