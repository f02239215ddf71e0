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


# {{{ codecs, built once per type

#: (type, atoms, checks) -> the function that encodes or decodes a value of it
_CODECS: dict = {}
_NO_CHECKS: dict = {}


def _codec(kind: str, tp: Any, atoms: Atoms, checks: dict) -> Callable:
    key = (kind, tp, id(atoms), id(checks))
    fn = _CODECS.get(key)
    if fn is None:
        make = _make_encoder if kind == "enc" else _make_decoder
        fn = _CODECS[key] = make(tp, atoms, checks)
    return fn


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


def _record_type(tp: Any) -> type | None:
    base = _split(tp)[0]
    return base if isinstance(base, type) and dataclasses.is_dataclass(base) else None

# }}}


# {{{ encoding

def encode(value: Any, tp: Any, atoms: Atoms) -> Any:
    """*value* of type *tp* as JSON data."""
    return _codec("enc", tp, atoms, _NO_CHECKS)(value)


def encode_record(obj: Any, atoms: Atoms) -> dict:
    return _record_encoder(type(obj), atoms)(obj)


def _record_encoder(cls: type, atoms: Atoms) -> Callable[[Any], dict]:
    fields: list = []

    def enc(obj: Any) -> dict:
        if not fields:
            fields.extend((f.name, _codec("enc", f.type, atoms, _NO_CHECKS), f.default)
                          for f in record_fields(cls))
        out = {}
        for name, field_enc, default in fields:
            value = getattr(obj, name)
            if not _at_default(value, default):
                out[name] = field_enc(value)
        return out
    return enc


def _make_encoder(tp: Any, atoms: Atoms, checks: dict) -> Callable[[Any], Any]:
    base, meta = _split(tp)
    for m in meta:
        if isinstance(m, ExprOf):
            return atoms[ExprOf][0]
        if m in atoms:
            return atoms[m][0]
    if base in atoms:
        return atoms[base][0]
    if _is_union(base):
        members = typing.get_args(base)
        nullable = type(None) in members
        options = [m for m in members if m is not type(None)]
        if len(options) == 1:
            inner = _codec("enc", options[0], atoms, _NO_CHECKS)
            return (lambda v: None if v is None else inner(v)) if nullable else inner
        tagged = {c: _record_encoder(c, atoms) for c in map(_record_type, options) if c}
        plain = [_codec("enc", m, atoms, _NO_CHECKS) for m in options if not _record_type(m)]

        def enc_union(v: Any) -> Any:
            if v is None and nullable:
                return None
            rec = tagged.get(type(v))
            if rec is not None:
                return {"kind": type(v).__name__, **rec(v)}
            for option in plain:
                try:
                    return option(v)
                except (SerializationError, TypeError, ValueError):
                    continue
            fail(f"cannot serialize {type(v).__name__}")
        return enc_union
    if isinstance(base, type) and dataclasses.is_dataclass(base):
        kinds = _kinds(base)
        if kinds:
            encoders = {cls: _record_encoder(cls, atoms) for cls in kinds.values()}

            def enc_kind(v: Any) -> dict:
                rec = encoders.get(type(v))
                if rec is None:
                    fail(f"cannot serialize {type(v).__name__} as {base.__name__}")
                return {"kind": type(v).__name__, **rec(v)}
            return enc_kind
        rec = _record_encoder(base, atoms)

        def enc_record(v: Any) -> dict:
            if type(v) is not base:
                fail(f"cannot serialize {type(v).__name__} as {base.__name__}")
            return rec(v)
        return enc_record
    origin, args = typing.get_origin(base), typing.get_args(base)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _codec("enc", args[0], atoms, _NO_CHECKS)

            def enc_tuple(v: Any) -> list:
                if not isinstance(v, tuple):
                    fail(f"cannot serialize {type(v).__name__} as a tuple")
                return [item(x) for x in v]
            return enc_tuple
        items = [_codec("enc", a, atoms, _NO_CHECKS) for a in args]

        def enc_fixed(v: Any) -> list:
            if not isinstance(v, tuple) or len(v) != len(items):
                fail("not a tuple of the right length")
            return [e(x) for e, x in zip(items, v, strict=True)]
        return enc_fixed
    if origin is frozenset:
        item = _codec("enc", args[0], atoms, _NO_CHECKS)
        return lambda v: sorted((item(x) for x in v), key=repr)
    if origin is FrozenMap:
        kenc, venc = _codec("enc", args[0], atoms, _NO_CHECKS), _codec("enc", args[1], atoms, _NO_CHECKS)
        if _named_values(args[1]):
            return lambda v: [venc(x) for x in v.values()]
        return lambda v: {kenc(k): venc(x) for k, x in v.items()}
    if origin is Literal:
        def enc_literal(v: Any) -> Any:
            if v not in args:
                fail(f"cannot serialize {v!r}: not one of {args!r}")
            return v
        return enc_literal
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return lambda v: v.value
    if base is bool:
        return bool
    if base is int:
        def enc_int(v: Any) -> int:
            if isinstance(v, bool):
                fail("a bool where an int belongs")
            return int(v)
        return enc_int
    if base is str:
        def enc_str(v: Any) -> str:
            if not isinstance(v, str):
                fail(f"cannot serialize {type(v).__name__} as a string")
            return v
        return enc_str
    raise TypeError(f"no rule to serialize the type {tp!r}")

# }}}


# {{{ decoding (validating)

def decode(data: Any, tp: Any, atoms: Atoms, what: str,
           checks: dict[type, Callable[[Any], None]]) -> Any:
    """A value of type *tp* from JSON *data*, checked (:class:`SerializationError`)."""
    return _codec("dec", tp, atoms, checks)(data, what)


def decode_record(data: Any, cls: type, atoms: Atoms, what: str,
                  checks: dict[type, Callable[[Any], None]]) -> Any:
    return _codec("dec", cls, atoms, checks)(data, what)


def _record_decoder(cls: type, atoms: Atoms, checks: dict) -> Callable[[Any, str], Any]:
    fields: list = []
    known: set = set()
    class_checks = [c for c in (checks.get(k) for k in cls.__mro__) if c is not None]

    def dec(data: Any, what: str) -> Any:
        if not fields:
            for f in record_fields(cls):
                fields.append((f.name, _codec("dec", f.type, atoms, checks), _label(f.name),
                               f.required))
                known.add(f.name)
        if not isinstance(data, dict):
            fail(f"invalid {what}")
        for key in data:
            if key not in known and key != "kind":
                fail(f"unknown field {key!r} in {what}")
        kw = {}
        for name, field_dec, label, required in fields:
            if name in data:
                kw[name] = field_dec(data[name], label)
            elif required:
                fail(f"missing field {name!r}")
        try:
            obj = cls(**kw)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, SerializationError):
                raise
            fail(f"invalid {what}: {exc}")
        for check in class_checks:
            check(obj)
        return obj
    return dec


def _sequence_limits(what: str, data: Any, bound: Bounded | None) -> None:
    limit = bound.high if bound is not None else MAX_ITEMS
    if not isinstance(data, list) or len(data) > limit or \
            (bound is not None and len(data) < bound.low):
        fail(f"invalid {what}")


def _make_decoder(tp: Any, atoms: Atoms, checks: dict) -> Callable[[Any, str], Any]:
    base, meta = _split(tp)
    for m in meta:
        if isinstance(m, ExprOf):
            dec_expr = atoms[ExprOf][1]
            if not m.kinds:
                return dec_expr

            def dec_kind(data: Any, what: str, m: ExprOf = m) -> Any:
                value = dec_expr(data, what)
                if not isinstance(value, m.kinds):
                    article = "an" if what[:1] in "aeiou" else "a"
                    fail(f"{article} {what} must be {m.noun}")
                return value
            return dec_kind
        if m in atoms:
            return atoms[m][1]
    if base in atoms:
        return atoms[base][1]
    bound = _bounded(meta)
    if _is_union(base):
        return _union_decoder(base, atoms, checks)
    if isinstance(base, type) and dataclasses.is_dataclass(base):
        return _dataclass_decoder(base, atoms, checks)
    origin, args = typing.get_origin(base), typing.get_args(base)
    if origin in (tuple, frozenset, FrozenMap):
        return _container_decoder(origin, args, bound, atoms, checks)
    plain = _plain_decoder(base, origin, args, meta, bound)
    if plain is None:
        raise TypeError(f"no rule to decode the type {tp!r}")
    return plain


def _union_decoder(base: Any, atoms: Atoms, checks: dict) -> Callable[[Any, str], Any]:
    """A decoder of an optional value or of one of several records (told by
    their ``kind``) or other types (the first that decodes)."""
    members = typing.get_args(base)
    nullable = type(None) in members
    options = [m for m in members if m is not type(None)]
    if len(options) == 1:
        inner = _codec("dec", options[0], atoms, checks)
        return (lambda d, what: None if d is None else inner(d, what)) if nullable \
            else inner
    records = {c.__name__: _codec("dec", c, atoms, checks)
               for c in map(_record_type, options) if c}
    if records and len(records) == len(options):
        def dec_tagged(data: Any, what: str) -> Any:
            if data is None and nullable:
                return None
            if not isinstance(data, dict) or data.get("kind") not in records:
                fail(f"invalid {what} kind")
            return records[data["kind"]](data, what)
        return dec_tagged
    decoders = [_codec("dec", m, atoms, checks) for m in options]

    def dec_union(data: Any, what: str) -> Any:
        if data is None and nullable:
            return None
        for option in decoders:
            try:
                return option(data, what)
            except SerializationError:
                continue
        fail(f"invalid {what}")
    return dec_union


def _dataclass_decoder(base: Any, atoms: Atoms, checks: dict) -> Callable[[Any, str], Any]:
    """A decoder of a record type (of one of its kinds, if it has several)."""
    kinds = _kinds(base)
    if kinds:
        by_name = {n: _record_decoder(c, atoms, checks) for n, c in kinds.items()}

        def dec_kind_record(data: Any, what: str) -> Any:
            if not isinstance(data, dict) or data.get("kind") not in by_name:
                fail(f"invalid {what} kind")
            return by_name[data["kind"]](data, what)
        return dec_kind_record
    return _record_decoder(base, atoms, checks)


def _container_decoder(origin: Any, args: tuple, bound: Any, atoms: Atoms,
                       checks: dict) -> Callable[[Any, str], Any]:
    """A decoder of a tuple, frozenset or FrozenMap of *args* (at most
    *bound* items where given)."""
    if origin in (tuple, frozenset):
        variadic = len(args) == 2 and args[1] is Ellipsis
        if origin is frozenset or variadic:
            item = _codec("dec", args[0], atoms, checks)
            build = frozenset if origin is frozenset else tuple

            def dec_items(data: Any, what: str) -> Any:
                _sequence_limits(what, data, bound)
                return build(item(x, what) for x in data)
            return dec_items
        items = [_codec("dec", a, atoms, checks) for a in args]

        def dec_fixed(data: Any, what: str) -> tuple:
            if not isinstance(data, list) or len(data) != len(items):
                fail(f"invalid {what}")
            return tuple(d(x, what) for d, x in zip(items, data, strict=True))
        return dec_fixed
    if origin is FrozenMap:
        kdec, vdec = _codec("dec", args[0], atoms, checks), _codec("dec", args[1], atoms, checks)
        limit = bound.high if bound is not None else MAX_ITEMS
        if _named_values(args[1]):
            def dec_named(data: Any, what: str) -> FrozenMap:
                if not isinstance(data, list) or len(data) > limit:
                    fail(f"invalid {what}")
                out: dict = {}
                for item in data:
                    value = vdec(item, what)
                    if value.name in out:
                        fail(f"duplicate {what} {value.name!r}")
                    out[value.name] = value
                return FrozenMap(out)
            return dec_named

        def dec_map(data: Any, what: str) -> FrozenMap:
            if not isinstance(data, dict) or len(data) > limit:
                fail(f"invalid {what}")
            return FrozenMap((kdec(k, what), vdec(v, what)) for k, v in data.items())
        return dec_map
    raise TypeError(f"no rule to decode {origin!r}")


def _plain_decoder(base: Any, origin: Any, args: tuple, meta: tuple,
                   bound: Any) -> Callable[[Any, str], Any] | None:
    """A decoder of a literal, an enumeration, a bool, an int (within
    *bound*) or a string (a name of a pattern or a text of a length in
    *meta*); None for any other type."""
    if origin is Literal:
        def dec_literal(data: Any, what: str) -> Any:
            if not any(data == a and type(data) is type(a) for a in args):
                fail(f"invalid {what}: {data!r}")
            return data
        return dec_literal
    if isinstance(base, type) and issubclass(base, enum.Enum):
        def dec_enum(data: Any, what: str) -> Any:
            try:
                return base(data)
            except ValueError:
                fail(f"invalid {what}: {data!r}")
        return dec_enum
    if base is bool:
        def dec_bool(data: Any, what: str) -> bool:
            if not isinstance(data, bool):
                fail(f"invalid {what}: {data!r}")
            return data
        return dec_bool
    if base is int:
        def dec_int(data: Any, what: str) -> int:
            if isinstance(data, bool) or not isinstance(data, int) or \
                    (bound is not None and not bound.low <= data <= bound.high):
                fail(f"invalid {what}: {data!r}")
            return data
        return dec_int
    if base is str:
        pattern = next((m for m in meta if isinstance(m, Pattern)), None)
        if pattern is not None:
            return lambda data, what: check_name(data, what, pattern.kind, pattern.max_len)
        text = next((m for m in meta if isinstance(m, Text)), None)
        max_len = text.max_len if text is not None else MAX_TEXT

        def dec_str(data: Any, what: str) -> str:
            if not isinstance(data, str) or len(data) > max_len:
                fail(f"invalid {what}")
            return data
        return dec_str
    return None

# }}}
