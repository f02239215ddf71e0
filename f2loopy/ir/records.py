"""IR dataclasses as plain data, derived from their fields and field types.

:func:`encode` and :func:`decode` walk a value along its type annotation
(:func:`typing.get_type_hints`): a dataclass is a JSON object of its fields
(fields at their default left out), a union of dataclasses adds ``"kind"``
(the class name), tuples and frozensets are lists, a
:class:`~f2loopy.ir.frozen.FrozenMap` is an object (or, when its values are
records with a ``name`` that is the key, a list of them), ``X | None`` is
null or X.  The leaves are JSON scalars checked against their types and the
:mod:`~f2loopy.ir.fieldtypes` metadata (identifier patterns, bounds, text
lengths), and the types that are not the IR's own (expressions, dtypes, isl
sets, tags, spans, arrays of values) go through the *atoms* the caller
passes.  Decoding rebuilds every record through its constructor, so the IR's
own invariants hold; anything else is a :class:`SerializationError`.

Adding a field to an IR class needs no edit here: its type says how it
travels and what a record of it must satisfy.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, NoReturn, Union

from f2loopy.ir.fieldtypes import Bounded, ExprOf, Pattern, Text
from f2loopy.ir.frozen import FrozenMap


class SerializationError(ValueError):
    """The data is not a valid serialized kernel."""


def fail(msg: str) -> NoReturn:
    raise SerializationError(msg)


# names and ids are checked with full matches: '^...$' with re.match lets a
# trailing newline through ("k\n" would reach the generated files)
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ID_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.$-]*")
_PATTERNS = {"name": NAME_RE, "id": ID_RE, "name?": NAME_RE}
#: limits of what no annotation bounds
MAX_TEXT = 100_000
MAX_ITEMS = 1_000_000

#: how a type that is not a record travels: type -> (encode, decode(data, what))
Atoms = dict[Any, tuple[Callable[[Any], Any], Callable[[Any, str], Any]]]


def check_name(v: Any, what: str = "name", kind: str = "name", max_len: int = 200) -> str:
    if kind == "name?" and v == "":
        return v
    if not isinstance(v, str) or len(v) > max_len or not _PATTERNS[kind].fullmatch(v):
        fail(f"invalid {what}: {v!r}")
    return v


# {{{ the fields of a record

@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    type: Any
    required: bool
    default: Any          # dataclasses.MISSING when there is none or a factory


_FIELDS: dict[type, tuple[_Field, ...]] = {}


def record_fields(cls: type) -> tuple[_Field, ...]:
    """The constructor fields of dataclass *cls* with their resolved types."""
    out = _FIELDS.get(cls)
    if out is None:
        hints = typing.get_type_hints(cls, include_extras=True)
        out = tuple(
            _Field(f.name, hints[f.name],
                   f.default is dataclasses.MISSING
                   and f.default_factory is dataclasses.MISSING,
                   f.default if f.default is not dataclasses.MISSING
                   else f.default_factory() if f.default_factory is not dataclasses.MISSING
                   else dataclasses.MISSING)
            for f in dataclasses.fields(cls) if f.init)
        _FIELDS[cls] = out
    return out


def record_classes(tp: Any, atoms: Atoms, seen: dict | None = None) -> list[type]:
    """Every record class reachable from type *tp*, its field types resolved.

    Resolving a field type compiles its annotation text, which the sandbox
    forbids once a script runs: :mod:`f2loopy.ir.serialize` resolves every IR
    class when it is imported, before any script.
    """
    seen = {} if seen is None else seen
    base, meta = _split(tp)
    if any(isinstance(m, ExprOf) or m in atoms for m in meta) or base in atoms:
        return list(seen)
    if isinstance(base, type) and dataclasses.is_dataclass(base):
        for cls in (_kinds(base) or {base.__name__: base}).values():
            if cls not in seen:
                seen[cls] = None
                for f in record_fields(cls):
                    record_classes(f.type, atoms, seen)
        return list(seen)
    for arg in typing.get_args(base):
        if arg is not Ellipsis and not isinstance(arg, (str, int)):
            record_classes(arg, atoms, seen)
    return list(seen)


def _at_default(value: Any, default: Any) -> bool:
    """Left out of a record: a field at its default scalar or empty sequence
    (maps and records are always written)."""
    if default is None or isinstance(default, (bool, int, str, enum.Enum)):
        return value is default or (type(value) is type(default) and value == default)
    if isinstance(default, (tuple, frozenset)):
        return type(value) is type(default) and len(value) == 0 and len(default) == 0
    return False

# }}}


# {{{ type structure

def _split(tp: Any) -> tuple[Any, tuple]:
    """The type under any ``Annotated`` and the metadata."""
    meta: tuple = ()
    while typing.get_origin(tp) is Annotated:
        args = typing.get_args(tp)
        tp, meta = args[0], meta + tuple(args[1:])
    return tp, meta


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (Union, types.UnionType)


def _label(name: str) -> str:
    return name.replace("_", " ")


def _bounded(meta: tuple) -> Bounded | None:
    return next((m for m in meta if isinstance(m, Bounded)), None)

# }}}


# {{{ encoding

def encode(value: Any, tp: Any, atoms: Atoms) -> Any:
    base, meta = _split(tp)
    for m in meta:
        if isinstance(m, ExprOf):
            return atoms[ExprOf][0](value)
        if m in atoms:
            return atoms[m][0](value)
    if base in atoms:
        return atoms[base][0](value)
    if _is_union(base):
        members = typing.get_args(base)
        if value is None and type(None) in members:
            return None
        options = [m for m in members if m is not type(None)]
        if len(options) == 1:
            return encode(value, options[0], atoms)
        for m in options:
            cls = _split(m)[0]
            if isinstance(cls, type) and dataclasses.is_dataclass(cls) and type(value) is cls:
                return {"kind": cls.__name__, **encode_record(value, atoms)}
        for m in options:
            try:
                return encode(value, m, atoms)
            except (SerializationError, TypeError, ValueError):
                continue
        fail(f"cannot serialize {type(value).__name__}")
    if isinstance(base, type) and dataclasses.is_dataclass(base):
        kinds = _kinds(base)
        if kinds:
            if kinds.get(type(value).__name__) is not type(value):
                fail(f"cannot serialize {type(value).__name__} as {base.__name__}")
            return {"kind": type(value).__name__, **encode_record(value, atoms)}
        if type(value) is not base:
            fail(f"cannot serialize {type(value).__name__} as {base.__name__}")
        return encode_record(value, atoms)
    origin = typing.get_origin(base)
    args = typing.get_args(base)
    if origin is tuple:
        if not isinstance(value, tuple):
            fail(f"cannot serialize {type(value).__name__} as a tuple")
        if len(args) == 2 and args[1] is Ellipsis:
            return [encode(v, args[0], atoms) for v in value]
        if len(args) != len(value):
            fail("a tuple of the wrong length")
        return [encode(v, t, atoms) for v, t in zip(value, args)]
    if origin is frozenset:
        items = [encode(v, args[0], atoms) for v in value]
        return sorted(items, key=repr)
    if origin is FrozenMap:
        ktype, vtype = args
        if _named_values(vtype):
            return [encode(v, vtype, atoms) for v in value.values()]
        return {encode(k, ktype, atoms): encode(v, vtype, atoms) for k, v in value.items()}
    if origin is Literal:
        if value not in args:
            fail(f"cannot serialize {value!r}: not one of {args!r}")
        return value
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return value.value
    if base is bool:
        return bool(value)
    if base is int:
        if isinstance(value, bool):
            fail("a bool where an int belongs")
        return int(value)
    if base is str:
        if not isinstance(value, str):
            fail(f"cannot serialize {type(value).__name__} as a string")
        return value
    raise TypeError(f"no rule to serialize the type {tp!r}")


def encode_record(obj: Any, atoms: Atoms) -> dict:
    out = {}
    for f in record_fields(type(obj)):
        value = getattr(obj, f.name)
        if not _at_default(value, f.default):
            out[f.name] = encode(value, f.type, atoms)
    return out


def _kinds(cls: type) -> dict[str, type]:
    """A record type with subclasses (``Instruction``) is a sum type of
    them: class name -> class, *cls* included; empty for a plain record."""
    subclasses: list[type] = cls.__subclasses__()
    if not subclasses:
        return {}
    out = {cls.__name__: cls}
    for sub in subclasses:
        out.update(_kinds(sub) or {sub.__name__: sub})
    return out


def _named_values(vtype: Any) -> bool:
    """Values of a map that are records named by their key travel as a list."""
    cls = _split(vtype)[0]
    return isinstance(cls, type) and dataclasses.is_dataclass(cls) and \
        any(f.name == "name" for f in record_fields(cls))

# }}}


# {{{ decoding (validating)

def decode(data: Any, tp: Any, atoms: Atoms, what: str,
           checks: dict[type, Callable[[Any], None]]) -> Any:
    base, meta = _split(tp)
    for m in meta:
        if isinstance(m, ExprOf):
            value = atoms[ExprOf][1](data, what)
            if m.kinds and not isinstance(value, m.kinds):
                article = "an" if what[:1] in "aeiou" else "a"
                fail(f"{article} {what} must be {m.noun}")
            return value
        if m in atoms:
            return atoms[m][1](data, what)
    if base in atoms:
        return atoms[base][1](data, what)
    if _is_union(base):
        members = typing.get_args(base)
        if data is None and type(None) in members:
            return None
        options = [m for m in members if m is not type(None)]
        if len(options) == 1:
            return decode(data, options[0], atoms, what, checks)
        classes = {_split(m)[0].__name__: m for m in options
                   if isinstance(_split(m)[0], type) and dataclasses.is_dataclass(_split(m)[0])}
        if classes and len(classes) == len(options):
            if not isinstance(data, dict) or data.get("kind") not in classes:
                fail(f"invalid {what} kind")
            return decode(data, classes[data["kind"]], atoms, what, checks)
        for m in options:
            try:
                return decode(data, m, atoms, what, checks)
            except SerializationError:
                continue
        fail(f"invalid {what}")
    if isinstance(base, type) and dataclasses.is_dataclass(base):
        kinds = _kinds(base)
        if kinds:
            if not isinstance(data, dict) or data.get("kind") not in kinds:
                fail(f"invalid {what} kind")
            return decode_record(data, kinds[data["kind"]], atoms, what, checks)
        return decode_record(data, base, atoms, what, checks)
    origin = typing.get_origin(base)
    args = typing.get_args(base)
    bound = _bounded(meta)
    if origin in (tuple, frozenset):
        limit = bound.high if bound is not None else MAX_ITEMS
        if not isinstance(data, list) or len(data) > limit:
            fail(f"invalid {what}")
        if bound is not None and len(data) < bound.low:
            fail(f"invalid {what}")
        if origin is frozenset:
            return frozenset(decode(v, args[0], atoms, what, checks) for v in data)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(v, args[0], atoms, what, checks) for v in data)
        if len(data) != len(args):
            fail(f"invalid {what}")
        return tuple(decode(v, t, atoms, what, checks) for v, t in zip(data, args))
    if origin is FrozenMap:
        ktype, vtype = args
        if _named_values(vtype):
            if not isinstance(data, list) or len(data) > MAX_ITEMS:
                fail(f"invalid {what}")
            out: dict = {}
            for item in data:
                value = decode(item, vtype, atoms, what, checks)
                if value.name in out:
                    fail(f"duplicate {what} {value.name!r}")
                out[value.name] = value
            return FrozenMap(out)
        limit = bound.high if bound is not None else MAX_ITEMS
        if not isinstance(data, dict) or len(data) > limit:
            fail(f"invalid {what}")
        return FrozenMap((decode(k, ktype, atoms, what, checks),
                          decode(v, vtype, atoms, what, checks)) for k, v in data.items())
    if origin is Literal:
        if not any(data == a and type(data) is type(a) for a in args):
            fail(f"invalid {what}: {data!r}")
        return data
    if isinstance(base, type) and issubclass(base, enum.Enum):
        try:
            return base(data)
        except ValueError:
            fail(f"invalid {what}: {data!r}")
    if base is bool:
        if not isinstance(data, bool):
            fail(f"invalid {what}: {data!r}")
        return data
    if base is int:
        if isinstance(data, bool) or not isinstance(data, int):
            fail(f"invalid {what}: {data!r}")
        if bound is not None and not bound.low <= data <= bound.high:
            fail(f"invalid {what}: {data!r}")
        return data
    if base is str:
        pattern = next((m for m in meta if isinstance(m, Pattern)), None)
        if pattern is not None:
            return check_name(data, what, pattern.kind, pattern.max_len)
        text = next((m for m in meta if isinstance(m, Text)), None)
        if not isinstance(data, str) or len(data) > (text.max_len if text else MAX_TEXT):
            fail(f"invalid {what}")
        return data
    raise TypeError(f"no rule to decode the type {tp!r}")


def decode_record(data: Any, cls: type, atoms: Atoms, what: str,
                  checks: dict[type, Callable[[Any], None]]) -> Any:
    if not isinstance(data, dict):
        fail(f"invalid {what}")
    fields = record_fields(cls)
    unknown = set(data) - {f.name for f in fields} - {"kind"}
    if unknown:
        fail(f"unknown field {sorted(unknown)[0]!r} in {what}")
    kw = {}
    for f in fields:
        if f.name in data:
            kw[f.name] = decode(data[f.name], f.type, atoms, _label(f.name), checks)
        elif f.required:
            fail(f"missing field {f.name!r}")
    try:
        obj = cls(**kw)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, SerializationError):
            raise
        fail(f"invalid {what}: {exc}")
    for klass in cls.__mro__:
        check = checks.get(klass)
        if check is not None:
            check(obj)
    return obj

# }}}
