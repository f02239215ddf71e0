"""The IR's records are derived from the dataclass fields: every field of
every IR class travels (and is checked) by its type, with no hand-written
rule per field; argument roles and their hostile variants."""

from __future__ import annotations

import dataclasses
import enum
import json
import typing
from typing import Annotated, Literal

import islpy as isl
import numpy as np
import pymbolic.primitives as p
import pytest

from f2loopy.diagnostics import SourceSpan
from f2loopy.ir import records, serialize
from f2loopy.ir.fieldtypes import VALUES, Bounded, ExprOf, Pattern
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.kernel import ArrayArg, Kernel, ScalarArg
from f2loopy.ir.roles import (
    Allocation, Character, CommonMember, Component, Dummy, Extent, ModuleVariable, Presence,
    Result, SavedLocal)
from f2loopy.ir.tags import ArrayAxisTag, InameTag, LocalAxisTag

ATOMS = serialize._ATOMS
CHECKS = serialize._CHECKS


def ir_classes() -> list[type]:
    return serialize.IR_CLASSES


class _Sampler:
    """A value of every type, away from the field defaults."""

    def __init__(self):
        self.count = 0

    def name(self) -> str:
        self.count += 1
        return f"x{self.count}"

    def __call__(self, tp, field: str = ""):
        base, meta = records._split(tp)
        for m in meta:
            if isinstance(m, ExprOf):
                if m.noun == "a number":
                    return np.float32(1.5)
                if m.kinds:
                    return p.Subscript(p.Variable("a"), p.Variable("i"))
                return p.Sum((p.Variable(self.name()), np.int32(2)))
            if m is VALUES:
                return np.arange(6.0).reshape(2, 3, order="F")
        bound = records._bounded(meta)
        if base is np.dtype:
            return np.dtype(np.int64) if field == "index_dtype" else np.dtype(np.bool_)
        if base is SourceSpan:
            return SourceSpan("f.f90", 3, 2, 4, "  x = 1")
        if base is isl.Set:
            return isl.Set("[n] -> { : n >= 2 }")
        if base is ArrayAxisTag:
            return ArrayAxisTag("nest", 0)
        if base is InameTag:
            return LocalAxisTag(1)
        if records._is_union(base):
            options = [m for m in typing.get_args(base) if m is not type(None)]
            return self(options[0], field)
        if isinstance(base, type) and dataclasses.is_dataclass(base):
            kinds = records._kinds(base)
            cls = kinds.get("Assignment", base) if kinds else base
            return self.record(cls)
        origin, args = typing.get_origin(base), typing.get_args(base)
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                n = max(1, bound.low) if bound is not None else 1
                return tuple(self(args[0], field) for _ in range(n))
            return tuple(self(a, field) for a in args)
        if origin is frozenset:
            return frozenset({self(args[0], field)})
        if origin is FrozenMap:
            value = self(args[1], field)
            key = value.name if records._named_values(args[1]) else self(args[0], field)
            return FrozenMap({key: value})
        if origin is Literal:
            return args[-1]
        if isinstance(base, type) and issubclass(base, enum.Enum):
            return list(base)[-1]
        if base is bool:
            return True
        if base is int:
            return bound.high if bound is not None else 7
        if base is str:
            pattern = next((m for m in meta if isinstance(m, Pattern)), None)
            if pattern is not None and pattern.kind == "id":
                return f"insn.{self.name()}"
            return self.name() if pattern is not None else "some text"
        raise AssertionError(f"no sample for {tp!r}")

    def record(self, cls):
        values = {}
        for f in records.record_fields(cls):
            value = self(f.type, f.name)
            if records._at_default(value, f.default):      # away from the default
                base = records._split(f.type)[0]
                choices = list(base) if isinstance(base, type) and \
                    issubclass(base, enum.Enum) else [False, True] if base is bool else \
                    list(typing.get_args(base))
                value = next(c for c in choices if c != f.default)
            values[f.name] = value
        return cls(**values)


def _roundtrip(value, tp):
    data = json.loads(json.dumps(records.encode(value, tp, ATOMS)))
    return data, records.decode(data, tp, ATOMS, "value", CHECKS)


def test_the_ir_classes_are_found():
    names = {c.__name__ for c in ir_classes()}
    assert {"Kernel", "ArrayArg", "ScalarArg", "Temporary", "Assignment",
            "BarrierInstruction", "NoOpInstruction", "SubstitutionRule", "KernelOptions",
            "ArrayLayout", "LoopExit", "ErrorSite", "Dummy", "Character", "Component",
            "Result", "Extent", "ModuleVariable", "CommonMember", "SavedLocal"} <= names


@pytest.mark.parametrize("cls", ir_classes(), ids=lambda c: c.__name__)
def test_every_field_of_every_ir_class_round_trips(cls):
    """A record built from the class's own field types, every field away
    from its default: every field is written, and comes back equal."""
    sample = _Sampler().record(cls)
    data, again = _roundtrip(sample, cls)
    assert set(data) - {"kind"} == {f.name for f in records.record_fields(cls)}
    assert type(again) is cls
    assert records.encode(again, cls, ATOMS) == records.encode(sample, cls, ATOMS)
    if cls is not Kernel:       # (isl sets compare by identity of their spaces)
        assert again == sample


def test_a_new_field_needs_no_serializer_edit():
    """A role with one more field travels, and is checked, by the field's
    type alone (Dummy.optional came so; here a made-up 'asynchronous')."""
    Extended = dataclasses.make_dataclass(
        "Dummy", [(f.name, f.type, dataclasses.field(default=f.default))
                  for f in dataclasses.fields(Dummy)] + [("asynchronous", bool, False)],
        frozen=True)
    Extended.__module__ = Dummy.__module__
    value = Extended(by_value=True, character=None, optional=True, asynchronous=True)
    data, again = _roundtrip(value, Extended)
    assert data == {"by_value": True, "optional": True, "asynchronous": True} and again == value
    with pytest.raises(records.SerializationError, match="invalid asynchronous"):
        records.decode({"asynchronous": "yes"}, Extended, ATOMS, "role", CHECKS)
    limited = dataclasses.make_dataclass(
        "Extent2", [("array", Annotated[str, Pattern("name")]),
                    ("rank", Annotated[int, Bounded(1, 3)])], frozen=True)
    with pytest.raises(records.SerializationError, match="invalid rank"):
        records.decode({"array": "a", "rank": 4}, limited, ATOMS, "x", CHECKS)
    with pytest.raises(records.SerializationError, match="invalid array"):
        records.decode({"array": "a\n", "rank": 1}, limited, ATOMS, "x", CHECKS)


def _scalar(role, **kw):
    return ScalarArg(name="n", dtype=np.dtype(np.int32), role=role, **kw)


@pytest.mark.parametrize("role", [
    Dummy(), Dummy(by_value=True), Dummy(character=Character()),
    Dummy(character=Character(length=3)), Result(), Extent(array="a", axis=1),
    Dummy(optional=True), Presence(dummy="x"), Allocation(array="u", what="lbound", axis=1),
    ModuleVariable(module="m", path=("u",), allocatable=True),
    Component(path=("p", "q", "x"), type_module="", type_name="t", type_rank=0),
    ModuleVariable(module="m", path=("v", "c"), init=np.array(2, dtype=np.int32)),
    CommonMember(block="blk", member="v"), SavedLocal(procedure="s", name="v")],
    ids=repr)
def test_roles_round_trip(role):
    _, again = _roundtrip(_scalar(role), ScalarArg)
    assert again.role == role and type(again.role) is type(role)


@pytest.mark.parametrize("role, message", [
    ({"kind": "Extent", "array": "a\n", "axis": 0}, "invalid array"),
    ({"kind": "Extent", "array": "a", "axis": 64}, "invalid axis"),
    ({"kind": "Extent", "array": "a", "axis": True}, "invalid axis"),
    ({"kind": "Component", "path": ["p"], "type_module": "", "type_name": "t",
      "type_rank": 0}, "invalid path"),
    ({"kind": "Component", "path": ["p", "x"], "type_module": "m;", "type_name": "t",
      "type_rank": 0}, "invalid type module"),
    ({"kind": "Dummy", "character": {"length": 0}}, "invalid length"),
    ({"kind": "Dummy", "character": {"length": 65536}}, "invalid length"),
    ({"kind": "Dummy", "by_value": 1}, "invalid by value"),
    ({"kind": "Dummy", "sneaky": True}, "unknown field 'sneaky'"),
    ({"kind": "ModuleVariable", "module": "m", "path": []}, "invalid path"),
    ({"kind": "ModuleVariable", "module": "m", "path": ["v"],
      "init": {"dtype": "object", "shape": [], "data": []}}, "unknown dtype"),
    ({"kind": "Stored", "init": None}, "invalid role kind"),
    ({"kind": "os.system"}, "invalid role kind"),
    (["Dummy"], "invalid role kind"),
])
def test_hostile_roles_are_refused(role, message):
    data = records.encode(_scalar(Dummy()), ScalarArg, ATOMS)
    data["role"] = role
    with pytest.raises(records.SerializationError, match=message):
        records.decode(data, ScalarArg, ATOMS, "argument", CHECKS)


def test_array_roles_and_invariants():
    a = ArrayArg(name="t", dtype=np.dtype(np.bool_), shape=(4,), lower_bounds=(1,),
                 logical_kind=1, role=ModuleVariable(module="m", path=("t",)))
    data, again = _roundtrip(a, ArrayArg)
    assert again == a
    data["axis_tags"] = ["N0", "N1"]
    with pytest.raises(records.SerializationError, match="axis tags do not match"):
        records.decode(data, ArrayArg, ATOMS, "argument", CHECKS)
    data["axis_tags"], data["dtype"] = ["N0"], "int32"
    with pytest.raises(records.SerializationError, match="not logical"):
        records.decode(data, ArrayArg, ATOMS, "argument", CHECKS)


@pytest.mark.usefixtures("python_process")
def test_records_need_no_compile_once_imported(tmp_path):
    """The sandbox forbids compile() while a script runs, and resolving an
    annotation compiles it: every IR class is resolved when the serializer
    is imported, so a kernel of every part of the IR is written and read
    back under an audit hook that refuses compile."""
    import subprocess
    import sys
    src = tmp_path / "k.f90"
    src.write_text(
        "module m\n  real :: table(3) = (/1.0, 2.0, 3.0/)\nend module\n"
        "subroutine k(n, x, flag)\n  use m\n  integer n, i\n  real x(n), w(2)\n"
        "  character flag\n  data w /0.5, 0.25/\n  i = 1\n"
        "  do while (i <= n)\n    if (x(i) < 0) stop 3\n"
        "    if (flag == 'y') x(i) = x(i) * w(1) + table(2)\n    i = i + 1\n  end do\n"
        "end subroutine\n")
    code = (
        "import sys\n"
        "from f2loopy.frontend import parse_fortran\n"
        "from f2loopy.ir.serialize import roundtrip, encode_kernel\n"
        f"(k,) = parse_fortran(open({str(src)!r}).read(), 'k.f90')\n"
        "def refuse(event, args):\n"
        "    if event == 'compile':\n"
        "        raise RuntimeError('compile')\n"
        "sys.addaudithook(refuse)\n"
        "again = roundtrip(k)\n"
        "assert encode_kernel(again) == encode_kernel(k)\n"
        "assert k.temporaries and k.loop_exits and k.error_sites and k.storage_args\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "ok", out.stderr
