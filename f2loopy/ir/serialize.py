"""Kernels as plain data (JSON), for crossing the sandbox boundary.

The transformation script runs in a separate, untrusted process; what it sends
back must not be able to run code in the parent, so kernels travel as JSON
made of lists, strings and numbers only, and :func:`kernels_from_data`
rebuilds them through the IR constructors after checking every field against
what the IR allows (known node kinds, identifier-shaped names, known dtypes,
bounded depth and size).  Nothing is unpickled.
"""

from __future__ import annotations

from typing import NoReturn

import json

import re

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import SourceSpan
from f2loopy.ir.expressions import Reduction, RuleArgument
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.kernel import (
    AddressSpace, ArrayArg, ArrayLayout, Assignment, BarrierInstruction, Kernel,
    KernelOptions, NoOpInstruction, ScalarArg, SubstitutionRule, Temporary)
from f2loopy.ir.roles import Character, Component, Dummy, Extent, Result, stored
from f2loopy.ir.tags import ArrayAxisTag, parse_iname_tag

FORMAT = "f2loopy-kernels"
VERSION = 1

_DTYPES = {n: np.dtype(n) for n in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128")}
# names and ids are checked with full matches: '^...$' with re.match lets a
# trailing newline through ("k\n" would reach the generated files)
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ID_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.$-]*")
_CMP_OPS = {"==", "!=", "<", "<=", ">", ">="}
_REDUCTION_OPS = {"sum", "product", "max", "min"}
MAX_DEPTH = 200
MAX_ISL_TEXT = 200_000


class SerializationError(ValueError):
    """The data is not a valid serialized kernel."""


# {{{ encoding

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


def _enc_span(s: SourceSpan | None):
    if s is None:
        return None
    return {"filename": s.filename, "line": s.line, "column": s.column, "length": s.length,
            "text": s.text}


def _enc_axis_tags(tags):
    return [str(t) for t in tags]


def _enc_array_common(a):
    return {"name": a.name, "dtype": _enc_dtype(a.dtype),
            "shape": [None if s is None else encode_expr(s) for s in a.shape],
            "lower_bounds": [encode_expr(lb) for lb in a.lower_bounds],
            "axis_tags": _enc_axis_tags(a.axis_tags),
            "axis_names": None if a.axis_names is None else list(a.axis_names),
            "span": _enc_span(a.span)}


def _enc_arg(a):
    if isinstance(a, ScalarArg):
        return {"kind": "scalar", "name": a.name, "dtype": _enc_dtype(a.dtype),
                "intent": a.intent, "span": _enc_span(a.span),
                "fixed_value": None if a.fixed_value is None else encode_expr(a.fixed_value),
                **_enc_storage(a)}
    d = _enc_array_common(a)
    d.update(kind="array", intent=a.intent, **_enc_storage(a))
    if a.fortran_layout is not None:
        d["fortran_layout"] = {"shape": [None if s is None else encode_expr(s)
                                         for s in a.fortran_layout.shape],
                               "lower_bounds": [encode_expr(lb) for lb in
                                                a.fortran_layout.lower_bounds],
                               "axis_tags": _enc_axis_tags(a.fortran_layout.axis_tags),
                               "splits": [[int(x), int(c), str(o)]
                                          for x, c, o in a.fortran_layout.splits]}
    return d


def _enc_values(value) -> dict:
    arr = np.asarray(value)
    return {"dtype": _enc_dtype(arr.dtype), "shape": list(arr.shape),
            "data": [encode_expr(arr.dtype.type(v)) for v in arr.reshape(-1, order="F")]}


def _dec_values(init) -> np.ndarray:
    if not isinstance(init, dict):
        _fail("invalid initializer")
    dt = _dtype(init["dtype"])
    shape = tuple(_int(s, "initializer shape") for s in _list(init["shape"], "shape", 64))
    data = [decode_expr(v) for v in _list(init["data"], "initializer data")]
    if int(np.prod(shape)) != len(data):
        _fail("initializer size mismatch")
    return np.array(data, dtype=dt).reshape(shape, order="F")


def _enc_role(role) -> dict:
    if isinstance(role, Dummy):
        out: dict = {"kind": "dummy"}
        if role.by_value:
            out["by_value"] = True
        if role.character is not None:
            out["character"] = role.character.length or True
        return out
    if isinstance(role, Extent):
        return {"kind": "extent", "array": role.array, "axis": int(role.axis)}
    if isinstance(role, Result):
        return {"kind": "result"}
    if isinstance(role, Component):
        return {"kind": "component", "path": list(role.path),
                "type": [role.type_module, role.type_name, role.type_rank]}
    return {"kind": "stored", "storage": list(role.key),
            "init": None if role.init is None else _enc_values(role.init)}


def _dec_role(d):
    if not isinstance(d, dict):
        _fail("invalid role")
    kind = d.get("kind")
    if kind == "dummy":
        ch = d.get("character")
        if ch is not None and ch is not True and (type(ch) is not int
                                                  or not 1 <= ch <= 65535):
            _fail("a character length must be an integer from 1 to 65535")
        return Dummy(by_value=d.get("by_value") is True,
                     character=None if ch is None else Character(
                         length=None if ch is True else ch))
    if kind == "extent":
        axis = d.get("axis")
        if not (type(axis) is int and 0 <= axis < 64):
            _fail("invalid extent_of")
        return Extent(array=_name(d.get("array")), axis=axis)
    if kind == "result":
        return Result()
    if kind == "component":
        comp, ctype = d.get("path"), d.get("type")
        if not (isinstance(comp, list) and 2 <= len(comp) <= 32 and isinstance(ctype, list)
                and len(ctype) == 3 and all(isinstance(x, str) for x in ctype[:2])
                and type(ctype[2]) is int and 0 <= ctype[2] < 16):
            _fail("invalid component")
        return Component(path=tuple(_name(x) for x in comp),
                         type_module=ctype[0] and _name(ctype[0]), type_name=_name(ctype[1]),
                         type_rank=ctype[2])
    if kind == "stored":
        storage = d.get("storage")
        if not (isinstance(storage, list) and 3 <= len(storage) <= 32
                and storage[0] in ("module", "common", "save")):
            _fail("invalid storage")
        init = d.get("init")
        try:
            return stored((storage[0], *(_name(x) for x in storage[1:])),
                          None if init is None else _dec_values(init))
        except ValueError:
            _fail("invalid storage")
    _fail("invalid role")


#: the kinds of logical arguments (bytes per element)
LOGICAL_KINDS = (1, 2, 4, 8)


def _enc_storage(a) -> dict:
    out: dict = {}
    if a.logical_kind != 4:         # (absent for the default: records stay as they were)
        out["logical_kind"] = int(a.logical_kind)
    if a.role != Dummy():
        out["role"] = _enc_role(a.role)
    return out


def _dec_storage(d) -> dict:
    out: dict = {}
    lkind = d.get("logical_kind", 4)
    if type(lkind) is not int or lkind not in LOGICAL_KINDS:
        _fail("invalid logical kind")
    if lkind != 4:
        if _dtype(d.get("dtype")).kind != "b":
            _fail("a logical kind on an argument that is not logical")
        out["logical_kind"] = lkind
    role = d.get("role")
    if role is not None:
        out["role"] = _dec_role(role)
    return out


def _enc_temp(t: Temporary):
    d = _enc_array_common(t)
    d.update(address_space=None if t.address_space is None else t.address_space.value,
             read_only=bool(t.read_only), base_storage=t.base_storage)
    if t.initializer is not None:
        d["initializer"] = _enc_values(t.initializer)
    return d


def _enc_insn(insn):
    d = {"id": insn.id, "within_inames": sorted(insn.within_inames),
         "depends_on": sorted(insn.depends_on), "tags": sorted(insn.tags),
         "predicates": [encode_expr(x) for x in insn.predicates], "span": _enc_span(insn.span),
         "no_sync_with": sorted([list(x) for x in insn.no_sync_with]),
         "priority": int(insn.priority)}
    if isinstance(insn, Assignment):
        d.update(kind="assign", assignee=encode_expr(insn.assignee),
                 expression=encode_expr(insn.expression), atomic=bool(insn.atomic))
    elif isinstance(insn, BarrierInstruction):
        d.update(kind="barrier", scope=insn.scope)
    elif isinstance(insn, NoOpInstruction):
        d.update(kind="noop")
    else:
        raise SerializationError(f"cannot serialize instruction {type(insn).__name__}")
    return d


def encode_kernel(k: Kernel) -> dict:
    opts = k.options
    bind: dict = {} if k.bind_name is None else {"bind_name": k.bind_name}
    if k.host_program:
        bind["host_program"] = True
    return {**bind,
        "name": k.name, "module": k.module, "span": _enc_span(k.span),
        "args": [_enc_arg(a) for a in k.args],
        "module_data": [_enc_arg(a) for a in k.module_data],
        "temporaries": [_enc_temp(t) for t in k.temporaries.values()],
        "domains": [str(d) for d in k.domains],
        "instructions": [_enc_insn(i) for i in k.instructions],
        "iname_tags": {n: str(t) for n, t in k.iname_tags.items()},
        "substitutions": [{"name": r.name, "arguments": list(r.arguments),
                           "expression": encode_expr(r.expression), "span": _enc_span(r.span)}
                          for r in k.substitutions.values()],
        "assumptions": str(k.assumptions),
        "loop_priority": sorted(list(t) for t in k.loop_priority),
        "iname_slabs": {n: list(s) for n, s in k.iname_slabs.items()},
        "loop_exits": {n: {"flags": list(e.flags), "sequential": e.sequential,
                           "span": _enc_span(e.span)} for n, e in k.loop_exits.items()},
        "error_sites": [{"actions": [list(_enc_action(a)) for a in s.actions],
                         "span": _enc_span(s.span)} for s in k.error_sites],
        "options": {"build_options": list(opts.build_options),
                    "check_races": bool(opts.check_races),
                    "fp_contract": bool(opts.fp_contract),
                    "write_code": bool(opts.write_code),
                    "index_dtype": _enc_dtype(opts.index_dtype),
                    **({"per_work_item": list(opts.per_work_item)}
                       if opts.per_work_item else {})},
    }


def kernels_to_json(payload: dict) -> str:
    """JSON text for *payload*, whose kernel lists have been :func:`encode_kernel` d."""
    return json.dumps(payload, separators=(",", ":"), allow_nan=False)

# }}}


# {{{ decoding (validating)

def _fail(msg) -> NoReturn:
    raise SerializationError(msg)


def _name(v, what="name"):
    if not isinstance(v, str) or len(v) > 200 or not _NAME_RE.fullmatch(v):
        _fail(f"invalid {what}: {v!r}")
    return v


def _insn_id(v):
    if not isinstance(v, str) or len(v) > 200 or not _ID_RE.fullmatch(v):
        _fail(f"invalid instruction id: {v!r}")
    return v


def _str(v, what, maxlen=100_000, allow_none=False):
    if v is None and allow_none:
        return None
    if not isinstance(v, str) or len(v) > maxlen:
        _fail(f"invalid {what}")
    return v


def _int(v, what):
    if isinstance(v, bool) or not isinstance(v, int):
        _fail(f"invalid {what}: {v!r}")
    return v


def _list(v, what, maxlen=1_000_000):
    if not isinstance(v, list) or len(v) > maxlen:
        _fail(f"invalid {what}")
    return v


def _dtype(v):
    if v not in _DTYPES:
        _fail(f"unknown dtype {v!r}")
    return _DTYPES[v]


def _float_from_hex(h):
    if not isinstance(h, str) or len(h) > 64:
        _fail("invalid float")
    try:
        return float.fromhex(h)
    except ValueError:
        _fail("invalid float")


def decode_expr(d, depth=0):
    if depth > MAX_DEPTH:
        _fail("expression nested too deeply")
    if not isinstance(d, list) or not d or not isinstance(d[0], str):
        _fail("invalid expression")
    kind, rest = d[0], d[1:]
    rec = lambda x: decode_expr(x, depth + 1)  # noqa: E731
    try:
        if kind == "b":
            if not isinstance(rest[0], bool):
                _fail("invalid bool")
            return np.bool_(rest[0])
        if kind == "i":
            dt = _dtype(rest[0])
            if dt.kind not in "iu":
                _fail("integer constant with non-integer dtype")
            v = _int(rest[1], "integer")
            info = np.iinfo(dt)
            if not info.min <= v <= info.max:
                _fail("integer constant out of range")
            return dt.type(v)
        if kind == "pyint":
            s = _str(rest[0], "integer", 40)
            if not re.fullmatch(r"-?[0-9]+", s):
                _fail("invalid integer")
            return int(s)
        if kind == "f":
            dt = _dtype(rest[0])
            if dt.kind != "f":
                _fail("float constant with non-float dtype")
            return dt.type(_float_from_hex(rest[1]))
        if kind == "pyfloat":
            return _float_from_hex(rest[0])
        if kind == "c":
            dt = _dtype(rest[0])
            if dt.kind != "c":
                _fail("complex constant with non-complex dtype")
            return dt.type(complex(_float_from_hex(rest[1]), _float_from_hex(rest[2])))
        if kind == "var":
            return p.Variable(_name(rest[0]))
        if kind == "sub":
            idx = tuple(rec(i) for i in _list(rest[1], "subscript", 64))
            if not idx:
                _fail("empty subscript")
            return p.Subscript(p.Variable(_name(rest[0])), idx if len(idx) != 1 else idx[0])
        if kind in ("sum", "prod", "and", "or"):
            ch = tuple(rec(c) for c in _list(rest[0], kind, 100_000))
            if not ch:
                _fail(f"empty {kind}")
            return {"sum": p.Sum, "prod": p.Product, "and": p.LogicalAnd,
                    "or": p.LogicalOr}[kind](ch)
        if kind in ("quot", "floordiv", "rem", "pow"):
            a, b = rec(rest[0]), rec(rest[1])
            return {"quot": p.Quotient, "floordiv": p.FloorDiv, "rem": p.Remainder,
                    "pow": p.Power}[kind](a, b)
        if kind == "cmp":
            if rest[1] not in _CMP_OPS:
                _fail("invalid comparison")
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
                _fail("invalid reduction")
            inames = tuple(_name(n) for n in _list(rest[1], "reduction inames", 64))
            return Reduction(rest[0], inames, rec(rest[2]))
        if kind == "rarg":
            return RuleArgument(_int(rest[0], "rule argument"))
    except (IndexError, TypeError):
        _fail(f"malformed {kind!r} expression")
    _fail(f"unknown expression kind {kind!r}")


def _dec_span(d):
    if d is None:
        return None
    if not isinstance(d, dict):
        _fail("invalid span")
    return SourceSpan(_str(d.get("filename"), "span filename", 4096), _int(d.get("line"), "line"),
                      _int(d.get("column"), "column"), _int(d.get("length"), "length"),
                      _str(d.get("text"), "span text", 100_000))


def _dec_axis_tags(v, n):
    tags = []
    for t in _list(v, "axis tags", 64):
        t = _str(t, "axis tag", 16)
        if re.fullmatch(r"N[0-9]+", t):
            tags.append(ArrayAxisTag("nest", int(t[1:])))
        elif t in ("vec", "sep"):
            tags.append(ArrayAxisTag(t))
        else:
            _fail(f"invalid axis tag {t!r}")
    if len(tags) != n:
        _fail("axis tags do not match the shape")
    return tuple(tags)


def _dec_array_common(d):
    shape = tuple(None if s is None else decode_expr(s) for s in _list(d["shape"], "shape", 64))
    lbs = tuple(decode_expr(x) for x in _list(d["lower_bounds"], "lower bounds", 64))
    names = d.get("axis_names")
    if names is not None:
        names = tuple(None if n is None else _name(n) for n in _list(names, "axis names", 64))
    return dict(name=_name(d["name"]), dtype=_dtype(d["dtype"]), shape=shape,
                lower_bounds=lbs, axis_tags=_dec_axis_tags(d["axis_tags"], len(shape)),
                axis_names=names, span=_dec_span(d.get("span")))


def _intent(v):
    if v not in (None, "in", "out", "inout"):
        _fail("invalid intent")
    return v


def _dec_arg(d):
    if not isinstance(d, dict):
        _fail("invalid argument")
    if d.get("kind") == "scalar":
        fixed = d.get("fixed_value")
        if fixed is not None:
            fixed = decode_expr(fixed)
            if not isinstance(fixed, (bool, int, float, complex, np.bool_, np.number)):
                _fail("a fixed value must be a number")
        return ScalarArg(name=_name(d["name"]), dtype=_dtype(d["dtype"]),
                         intent=_intent(d.get("intent")), span=_dec_span(d.get("span")),
                         fixed_value=fixed, **_dec_storage(d))
    if d.get("kind") != "array":
        _fail("invalid argument kind")
    kw = _dec_array_common(d)
    layout = d.get("fortran_layout")
    if layout is not None:
        lshape = tuple(None if s is None else decode_expr(s)
                       for s in _list(layout["shape"], "layout shape", 64))
        splits = []
        for sp in _list(layout.get("splits", []), "splits", 64):
            ax, cnt, order = sp
            if order not in ("C", "F"):
                _fail("invalid split order")
            splits.append((_int(ax, "split axis"), _int(cnt, "split count"), order))
        layout = ArrayLayout(
            shape=lshape,
            lower_bounds=tuple(decode_expr(x) for x in layout["lower_bounds"]),
            axis_tags=_dec_axis_tags(layout.get("axis_tags", ["N%d" % k for k in
                                                              range(len(lshape))]), len(lshape)),
            splits=tuple(splits))
    return ArrayArg(**kw, intent=_intent(d.get("intent")), fortran_layout=layout,
                    **_dec_storage(d))


def _dec_temp(d):
    if not isinstance(d, dict):
        _fail("invalid temporary")
    kw = _dec_array_common(d)
    space = d.get("address_space")
    if space is not None:
        if space not in ("private", "local", "global"):
            _fail("invalid address space")
        space = AddressSpace(space)
    init = d.get("initializer")
    if init is not None:
        init = _dec_values(init)
    base = d.get("base_storage")
    return Temporary(**kw, address_space=space, initializer=init,
                     read_only=bool(d.get("read_only")),
                     base_storage=None if base is None else _name(base))


def _dec_insn(d):
    if not isinstance(d, dict):
        _fail("invalid instruction")
    common = dict(
        id=_insn_id(d["id"]),
        within_inames=frozenset(_name(n) for n in _list(d["within_inames"], "inames", 256)),
        depends_on=frozenset(_insn_id(n) for n in _list(d["depends_on"], "deps")),
        tags=frozenset(_name(t, "tag") for t in _list(d["tags"], "tags", 256)),
        predicates=tuple(decode_expr(x) for x in _list(d["predicates"], "predicates", 256)),
        span=_dec_span(d.get("span")),
        no_sync_with=frozenset((_str(a, "nosync id", 200), _str(s, "nosync scope", 10))
                               for a, s in _list(d.get("no_sync_with", []), "nosync")),
        priority=_int(d.get("priority", 0), "priority"))
    kind = d.get("kind")
    if kind == "assign":
        assignee = decode_expr(d["assignee"])
        if not isinstance(assignee, (p.Variable, p.Subscript)):
            _fail("assignee must be a variable or an array element")
        return Assignment(**common, assignee=assignee, expression=decode_expr(d["expression"]),
                          atomic=bool(d.get("atomic", False)))
    if kind == "barrier":
        if d.get("scope") not in ("local", "global"):
            _fail("invalid barrier scope")
        return BarrierInstruction(**common, scope=d["scope"])
    if kind == "noop":
        return NoOpInstruction(**common)
    _fail(f"unknown instruction kind {kind!r}")


def _isl_set(text, what):
    text = _str(text, what, MAX_ISL_TEXT)
    if not re.fullmatch(r"[A-Za-z0-9_ \n\[\]{}()\-+*/:;,.=<>&|!%^]*", text):
        _fail(f"invalid characters in {what}")
    try:
        return isl.Set(text)
    except isl.Error:
        _fail(f"invalid {what}")


def decode_kernel(d) -> Kernel:
    if not isinstance(d, dict):
        _fail("invalid kernel")
    try:
        opts = d.get("options", {})
        options = KernelOptions(
            build_options=tuple(_str(o, "build option", 200)
                                for o in _list(opts.get("build_options", []), "options", 64)),
            check_races=bool(opts.get("check_races", True)),
            fp_contract=bool(opts.get("fp_contract", True)),
            write_code=bool(opts.get("write_code", False)),
            index_dtype=_dtype(opts.get("index_dtype", "int32")),
            per_work_item=tuple(_name(n) for n in _list(opts.get("per_work_item", []),
                                                        "options", 100_000)))
        tags = {}
        for n, t in (d.get("iname_tags") or {}).items():
            try:
                tags[_name(n)] = parse_iname_tag(_str(t, "tag", 16))
            except ValueError:
                _fail(f"invalid iname tag {t!r}")
        subst = {}
        for r in _list(d.get("substitutions", []), "substitutions"):
            rule = SubstitutionRule(_name(r["name"]),
                                    tuple(_name(a) for a in _list(r["arguments"], "rule args", 64)),
                                    decode_expr(r["expression"]), _dec_span(r.get("span")))
            subst[rule.name] = rule
        temps = {}
        for t in _list(d["temporaries"], "temporaries"):
            tmp = _dec_temp(t)
            temps[tmp.name] = tmp
        assumptions = _isl_set(d.get("assumptions", "{ : }"), "assumptions")
        if not assumptions.is_params():
            _fail("assumptions must only constrain parameters")
        return Kernel(
            name=_name(d["name"]),
            module=None if d.get("module") is None else _name(d["module"]),
            span=_dec_span(d.get("span")),
            args=tuple(_dec_arg(a) for a in _list(d["args"], "args", 10_000)),
            module_data=tuple(_dec_arg(a) for a in _list(d.get("module_data", []),
                                                         "module data", 10_000)),
            temporaries=FrozenMap(temps),
            domains=tuple(_isl_set(x, "domain") for x in _list(d["domains"], "domains")),
            instructions=tuple(_dec_insn(i) for i in _list(d["instructions"], "instructions")),
            iname_tags=FrozenMap(tags), substitutions=FrozenMap(subst),
            assumptions=assumptions,
            loop_priority=frozenset(tuple(_name(n) for n in _list(t, "priority", 64))
                                    for t in _list(d.get("loop_priority", []), "priorities")),
            iname_slabs=FrozenMap(_dec_slabs(d.get("iname_slabs") or {})),
            loop_exits=FrozenMap(_dec_exits(d.get("loop_exits") or {})),
            error_sites=_dec_error_sites(d.get("error_sites") or []),
            options=options,
            bind_name=None if d.get("bind_name") is None else _name(d["bind_name"]),
            host_program=d.get("host_program") is True)
    except KeyError as exc:
        _fail(f"missing field {exc}")
    except (TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, SerializationError):
            raise
        _fail(f"malformed kernel: {exc}")


def kernels_from_data(items) -> list[Kernel]:
    return [decode_kernel(k) for k in _list(items, "kernels", 10_000)]


def loads(text: str, max_bytes: int = 256 * 1024 * 1024) -> dict:
    if len(text) > max_bytes:
        _fail("payload too large")

    def no_constants(name):
        _fail(f"invalid JSON constant {name}")
    try:
        return json.loads(text, parse_constant=no_constants)
    except (json.JSONDecodeError, RecursionError):
        _fail("invalid JSON")

# }}}


def roundtrip(kernel: Kernel) -> Kernel:
    """Encode and decode *kernel* (for tests)."""
    return decode_kernel(loads(kernels_to_json(encode_kernel(kernel))))


def _dec_slabs(d) -> dict:
    if not isinstance(d, dict) or len(d) > 10_000:
        _fail("invalid iname_slabs")
    out = {}
    for n, pair in d.items():
        pair = _list(pair, "slabs", 2)
        if len(pair) != 2 or not all(isinstance(x, int) and not isinstance(x, bool)
                                     and 0 <= x <= 1000 for x in pair):
            _fail(f"invalid slabs {pair!r}")
        out[_name(n)] = (pair[0], pair[1])
    return out


def _dec_exits(d) -> dict:
    from f2loopy.ir.control import LoopExit
    if not isinstance(d, dict) or len(d) > 10_000:
        _fail("invalid loop_exits")
    out = {}
    for n, e in d.items():
        if not isinstance(e, dict):
            _fail("invalid loop exit")
        flags = tuple(_name(f) for f in _list(e.get("flags", []), "exit flags", 1000))
        out[_name(n)] = LoopExit(flags, _str(e.get("sequential"), "reason", 1000,
                                             allow_none=True), _dec_span(e.get("span")))
    return out


def _enc_action(a):
    if a[0] == "write":
        return ["write", a[1], a[2], [list(i) for i in a[3]]]
    return list(a)


def _dec_scalar(v, what):
    if v is None or (isinstance(v, int) and not isinstance(v, bool)):
        return v
    return _str(v, what, 10_000)


def _dec_error_sites(items) -> tuple:
    from f2loopy.ir.control import ERROR_VALUES, ErrorSite

    def slot(k):
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < ERROR_VALUES:
            _fail("invalid error value slot")
        return k
    sites = []
    for s in _list(items, "error sites", 100_000):
        if not isinstance(s, dict):
            _fail("invalid error site")
        actions: list[tuple] = []
        for a in _list(s.get("actions"), "error actions", 1000):
            a = _list(a, "error action", 4)
            if not a:
                _fail("invalid error action")
            kind = a[0]
            if kind == "write" and len(a) == 4:
                parts = []
                for item in _list(a[3], "write items", 1000):
                    item = _list(item, "write item", 2)
                    if len(item) != 2 or item[0] not in ("text", "value"):
                        _fail("invalid write item")
                    parts.append(("text", _str(item[1], "text", 10_000)) if item[0] == "text"
                                 else ("value", slot(item[1])))
                actions.append(("write", _str(a[1], "unit", 20), _str(a[2], "format", 10_000),
                                tuple(parts)))
            elif kind in ("stop", "error stop") and len(a) == 2:
                actions.append((kind, _dec_scalar(a[1], "stop code")))
            elif kind == "xerbla" and len(a) == 3:
                actions.append(("xerbla", _str(a[1], "name", 100), slot(a[2])))
            else:
                _fail("invalid error action")
        sites.append(ErrorSite(tuple(actions), _dec_span(s.get("span"))))
    return tuple(sites)
