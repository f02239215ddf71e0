"""Kernels as plain data (JSON), for crossing the sandbox boundary.

The transformation script runs in a separate, untrusted process; what it sends
back must not be able to run code in the parent, so kernels travel as JSON
made of lists, strings and numbers only, and :func:`kernels_from_data`
rebuilds them through the IR constructors after checking every field against
what the IR allows (known node kinds, identifier-shaped names, known dtypes,
bounded depth and size).  Nothing is unpickled.

The records follow the IR dataclasses field by field (:mod:`f2loopy.ir.
records`: a new field of an IR class travels, and is checked, by its type);
this module adds the leaves that are not IR classes (expressions, dtypes,
isl sets, tags, source spans, arrays of values) and the few invariants that
tie fields together.
"""

from __future__ import annotations

import json
import re
from typing import Any

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import SourceSpan
from f2loopy.ir.expressions import Reduction, RuleArgument
from f2loopy.ir.fieldtypes import VALUES, ExprOf
from f2loopy.ir.kernel import ArrayArg, ArrayLayout, ArrayVariable, Kernel, ScalarArg
from f2loopy.ir.records import (
    SerializationError, check_name, decode_record, encode_record, fail, record_classes)
from f2loopy.ir.tags import ArrayAxisTag, InameTag, parse_iname_tag

__all__ = ["SerializationError", "encode_expr", "decode_expr", "encode_kernel",
           "decode_kernel", "kernels_from_data", "kernels_to_json", "loads", "roundtrip"]

FORMAT = "f2loopy-kernels"
#: 2: records derived from the IR's fields (argument roles, kinds by class name)
VERSION = 2

_DTYPES = {n: np.dtype(n) for n in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128")}
_CMP_OPS = {"==", "!=", "<", "<=", ">", ">="}
_REDUCTION_OPS = {"sum", "product", "max", "min"}
MAX_DEPTH = 200
MAX_ISL_TEXT = 200_000


# {{{ expressions

def _enc_dtype(dt) -> str:
    name = np.dtype(dt).name
    if name not in _DTYPES:
        raise SerializationError(f"dtype {name} cannot be serialized")
    return name


def encode_expr(e):
    if isinstance(e, (bool, np.bool_)):
        return ["b", bool(e)]
    if isinstance(e, np.integer):
        return ["i", _enc_dtype(e.dtype), int(e)]
    if isinstance(e, int):
        return ["pyint", str(e)]
    if isinstance(e, np.floating):
        return ["f", _enc_dtype(e.dtype), float(e).hex()]
    if isinstance(e, float):
        return ["pyfloat", e.hex()]
    if isinstance(e, np.complexfloating):
        return ["c", _enc_dtype(e.dtype), float(e.real).hex(), float(e.imag).hex()]
    if isinstance(e, complex):
        return ["c", "complex128", e.real.hex(), e.imag.hex()]
    if isinstance(e, p.Variable):
        return ["var", e.name]
    if isinstance(e, p.Subscript):
        idx = e.index if isinstance(e.index, tuple) else (e.index,)
        return ["sub", e.aggregate.name, [encode_expr(i) for i in idx]]
    if isinstance(e, p.Sum):
        return ["sum", [encode_expr(c) for c in e.children]]
    if isinstance(e, p.Product):
        return ["prod", [encode_expr(c) for c in e.children]]
    if isinstance(e, p.Quotient):
        return ["quot", encode_expr(e.numerator), encode_expr(e.denominator)]
    if isinstance(e, p.FloorDiv):
        return ["floordiv", encode_expr(e.numerator), encode_expr(e.denominator)]
    if isinstance(e, p.Remainder):
        return ["rem", encode_expr(e.numerator), encode_expr(e.denominator)]
    if isinstance(e, p.Power):
        return ["pow", encode_expr(e.base), encode_expr(e.exponent)]
    if isinstance(e, p.Comparison):
        return ["cmp", encode_expr(e.left), e.operator, encode_expr(e.right)]
    if isinstance(e, p.LogicalAnd):
        return ["and", [encode_expr(c) for c in e.children]]
    if isinstance(e, p.LogicalOr):
        return ["or", [encode_expr(c) for c in e.children]]
    if isinstance(e, p.LogicalNot):
        return ["not", encode_expr(e.child)]
    if isinstance(e, p.If):
        return ["if", encode_expr(e.condition), encode_expr(e.then), encode_expr(e.else_)]
    if isinstance(e, p.Call):
        return ["call", e.function.name, [encode_expr(a) for a in e.parameters]]
    if isinstance(e, Reduction):
        return ["red", e.operation, list(e.inames), encode_expr(e.expr)]
    if isinstance(e, RuleArgument):
        return ["rarg", int(e.index)]
    raise SerializationError(f"cannot serialize expression node {type(e).__name__}")


def _name(v, what="name"):
    return check_name(v, what)


def _str(v, what, maxlen=100_000):
    if not isinstance(v, str) or len(v) > maxlen:
        fail(f"invalid {what}")
    return v


def _int(v, what):
    if isinstance(v, bool) or not isinstance(v, int):
        fail(f"invalid {what}: {v!r}")
    return v


def _list(v, what, maxlen=1_000_000):
    if not isinstance(v, list) or len(v) > maxlen:
        fail(f"invalid {what}")
    return v


def _dtype(v, what="dtype"):
    if not isinstance(v, str) or v not in _DTYPES:
        fail(f"unknown dtype {v!r}")
    return _DTYPES[v]


def _float_from_hex(h):
    if not isinstance(h, str) or len(h) > 64:
        fail("invalid float")
    try:
        return float.fromhex(h)
    except ValueError:
        fail("invalid float")


def decode_expr(d, depth=0):
    if depth > MAX_DEPTH:
        fail("expression nested too deeply")
    if not isinstance(d, list) or not d or not isinstance(d[0], str):
        fail("invalid expression")
    kind, rest = d[0], d[1:]
    rec = lambda x: decode_expr(x, depth + 1)  # noqa: E731
    try:
        if kind == "b":
            if not isinstance(rest[0], bool):
                fail("invalid bool")
            return np.bool_(rest[0])
        if kind == "i":
            dt = _dtype(rest[0])
            if dt.kind not in "iu":
                fail("integer constant with non-integer dtype")
            v = _int(rest[1], "integer")
            info = np.iinfo(dt)
            if not info.min <= v <= info.max:
                fail("integer constant out of range")
            return dt.type(v)
        if kind == "pyint":
            s = _str(rest[0], "integer", 40)
            if not re.fullmatch(r"-?[0-9]+", s):
                fail("invalid integer")
            return int(s)
        if kind == "f":
            dt = _dtype(rest[0])
            if dt.kind != "f":
                fail("float constant with non-float dtype")
            return dt.type(_float_from_hex(rest[1]))
        if kind == "pyfloat":
            return _float_from_hex(rest[0])
        if kind == "c":
            dt = _dtype(rest[0])
            if dt.kind != "c":
                fail("complex constant with non-complex dtype")
            return dt.type(complex(_float_from_hex(rest[1]), _float_from_hex(rest[2])))
        if kind == "var":
            return p.Variable(_name(rest[0]))
        if kind == "sub":
            idx = tuple(rec(i) for i in _list(rest[1], "subscript", 64))
            if not idx:
                fail("empty subscript")
            return p.Subscript(p.Variable(_name(rest[0])), idx if len(idx) != 1 else idx[0])
        if kind in ("sum", "prod", "and", "or"):
            ch = tuple(rec(c) for c in _list(rest[0], kind, 100_000))
            if not ch:
                fail(f"empty {kind}")
            return {"sum": p.Sum, "prod": p.Product, "and": p.LogicalAnd,
                    "or": p.LogicalOr}[kind](ch)
        if kind in ("quot", "floordiv", "rem", "pow"):
            a, b = rec(rest[0]), rec(rest[1])
            return {"quot": p.Quotient, "floordiv": p.FloorDiv, "rem": p.Remainder,
                    "pow": p.Power}[kind](a, b)
        if kind == "cmp":
            if rest[1] not in _CMP_OPS:
                fail("invalid comparison")
            return p.Comparison(rec(rest[0]), rest[1], rec(rest[2]))
        if kind == "not":
            return p.LogicalNot(rec(rest[0]))
        if kind == "if":
            return p.If(rec(rest[0]), rec(rest[1]), rec(rest[2]))
        if kind == "call":
            args = tuple(rec(a) for a in _list(rest[1], "call arguments", 1000))
            return p.Call(p.Variable(_name(rest[0], "function name")), args)
        if kind == "red":
            if rest[0] not in _REDUCTION_OPS:
                fail("invalid reduction")
            inames = tuple(_name(n) for n in _list(rest[1], "reduction inames", 64))
            return Reduction(rest[0], inames, rec(rest[2]))
        if kind == "rarg":
            return RuleArgument(_int(rest[0], "rule argument"))
    except (IndexError, TypeError):
        fail(f"malformed {kind!r} expression")
    fail(f"unknown expression kind {kind!r}")

# }}}


# {{{ the leaves that are not IR records

def _enc_values(value) -> dict:
    arr = np.asarray(value)
    return {"dtype": _enc_dtype(arr.dtype), "shape": list(arr.shape),
            "data": [encode_expr(arr.dtype.type(v)) for v in arr.reshape(-1, order="F")]}


def _dec_values(init, what="initializer") -> np.ndarray:
    if not isinstance(init, dict) or set(init) != {"dtype", "shape", "data"}:
        fail(f"invalid {what}")
    dt = _dtype(init["dtype"])
    shape = tuple(_int(s, f"{what} shape") for s in _list(init["shape"], "shape", 64))
    if any(s < 0 for s in shape):
        fail(f"invalid {what} shape")
    data = [decode_expr(v) for v in _list(init["data"], f"{what} data")]
    if int(np.prod(shape)) != len(data):
        fail(f"{what} size mismatch")
    return np.array(data, dtype=dt).reshape(shape, order="F")


def _enc_span(s: SourceSpan) -> dict:
    return {"filename": s.filename, "line": s.line, "column": s.column, "length": s.length,
            "text": s.text}


def _dec_span(d, what="span") -> SourceSpan:
    if not isinstance(d, dict):
        fail(f"invalid {what}")
    return SourceSpan(_str(d.get("filename"), "span filename", 4096), _int(d.get("line"), "line"),
                      _int(d.get("column"), "column"), _int(d.get("length"), "length"),
                      _str(d.get("text"), "span text", 100_000))


def _dec_axis_tag(t, what="axis tag") -> ArrayAxisTag:
    t = _str(t, what, 16)
    if re.fullmatch(r"N[0-9]+", t):
        return ArrayAxisTag("nest", int(t[1:]))
    if t in ("vec", "sep"):
        return ArrayAxisTag(t)
    fail(f"invalid axis tag {t!r}")


def _dec_iname_tag(t, what="iname tag") -> InameTag:
    try:
        return parse_iname_tag(_str(t, what, 16))
    except ValueError:
        fail(f"invalid iname tag {t!r}")


def _isl_set(text, what="set"):
    text = _str(text, what, MAX_ISL_TEXT)
    if not re.fullmatch(r"[A-Za-z0-9_ \n\[\]{}()\-+*/:;,.=<>&|!%^]*", text):
        fail(f"invalid characters in {what}")
    try:
        return isl.Set(text)
    except isl.Error:
        fail(f"invalid {what}")


#: type (or annotation mark) -> (encode, decode)
_ATOMS: dict[Any, tuple] = {
    ExprOf: (encode_expr, lambda d, what: decode_expr(d)),
    VALUES: (_enc_values, _dec_values),
    np.dtype: (_enc_dtype, _dtype),
    SourceSpan: (_enc_span, _dec_span),
    isl.Set: (str, _isl_set),
    ArrayAxisTag: (str, _dec_axis_tag),
    InameTag: (str, _dec_iname_tag),
}
# }}}


# {{{ invariants that tie fields together

def _check_axes(a: ArrayVariable | ArrayLayout) -> None:
    if len(a.axis_tags) != len(a.shape):
        fail("axis tags do not match the shape")
    if isinstance(a, ArrayVariable) and a.axis_names is not None \
            and len(a.axis_names) != len(a.shape):
        fail("axis names do not match the shape")


def _check_logical(a: ArrayArg | ScalarArg) -> None:
    if a.logical_kind != 4 and np.dtype(a.dtype).kind != "b":
        fail("a logical kind on an argument that is not logical")


def _check_kernel(k: Kernel) -> None:
    if not k.assumptions.is_params():
        fail("assumptions must only constrain parameters")


#: class -> check of a decoded record (for the class and its subclasses)
_CHECKS: dict = {ArrayVariable: _check_axes, ArrayLayout: _check_axes,
                 ArrayArg: _check_logical, ScalarArg: _check_logical,
                 Kernel: _check_kernel}

# }}}


# {{{ kernels

#: the IR's record classes, resolved now (see :func:`records.record_classes`)
IR_CLASSES = record_classes(Kernel, _ATOMS)


def encode_kernel(k: Kernel) -> dict:
    return encode_record(k, _ATOMS)


def decode_kernel(d) -> Kernel:
    try:
        return decode_record(d, Kernel, _ATOMS, "kernel", _CHECKS)
    except RecursionError:
        fail("kernel nested too deeply")


def kernels_to_json(payload: dict) -> str:
    """JSON text for *payload*, whose kernel lists have been :func:`encode_kernel` d."""
    return json.dumps(payload, separators=(",", ":"), allow_nan=False)


def kernels_from_data(items) -> list[Kernel]:
    return [decode_kernel(k) for k in _list(items, "kernels", 10_000)]


def loads(text: str, max_bytes: int = 256 * 1024 * 1024) -> dict:
    if len(text) > max_bytes:
        fail("payload too large")

    def no_constants(name):
        fail(f"invalid JSON constant {name}")
    try:
        return json.loads(text, parse_constant=no_constants)
    except (json.JSONDecodeError, RecursionError):
        fail("invalid JSON")


def roundtrip(kernel: Kernel) -> Kernel:
    """Encode and decode *kernel* (for tests)."""
    return decode_kernel(loads(kernels_to_json(encode_kernel(kernel))))

# }}}
