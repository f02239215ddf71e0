"""Precise types of IR fields, with what a record of them must satisfy.

The IR's dataclasses annotate their fields with these types; the serializer
(:mod:`f2loopy.ir.serialize`) reads the annotations to encode, decode and
validate every field, so a new field needs no edit of the serializer.  The
constraints ride along as :class:`typing.Annotated` metadata and are
invisible to type checkers (``Name`` is a ``str`` to mypy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, TypeAlias, Union

import numpy as np
import pymbolic.primitives as p


@dataclass(frozen=True)
class Bounded:
    """An int from *low* to *high*, or a sequence of that many items."""

    low: int
    high: int


@dataclass(frozen=True)
class Pattern:
    """A string that fully matches one of the serializer's patterns:
    ``"name"`` (an identifier), ``"id"`` (an instruction id, which may also
    hold ``.$-``), ``"name?"`` (an identifier or the empty string)."""

    kind: str
    max_len: int = 200


@dataclass(frozen=True)
class Text:
    """Free text of at most *max_len* characters (printed escaped)."""

    max_len: int


@dataclass(frozen=True)
class ExprOf:
    """A pymbolic expression (the IR's expression language); one of *kinds*
    (described as *noun* in messages) if given."""

    kinds: tuple[type, ...] = ()
    noun: str = ""


class _Mark:
    """A kind of value the serializer encodes by its own rule."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"<{self.what}>"


#: a numpy array of values (initial values), Fortran order
VALUES = _Mark("values")

#: an identifier (variable, iname, kernel, module, tag name)
Name: TypeAlias = Annotated[str, Pattern("name")]
#: an identifier or ""
NameOrEmpty: TypeAlias = Annotated[str, Pattern("name?")]
#: an instruction id
InsnId: TypeAlias = Annotated[str, Pattern("id")]

#: the expressions of the IR (numbers keep their numpy kind)
ExpressionValue: TypeAlias = Union[int, float, complex, np.generic, p.ExpressionNode]
Expr: TypeAlias = Annotated[ExpressionValue, ExprOf()]
#: what an assignment writes
Assignee: TypeAlias = Annotated[Union[p.Variable, p.Subscript], ExprOf(
    (p.Variable, p.Subscript), "a variable or an array element")]
#: a constant number (a fixed parameter's value)
Number: TypeAlias = Annotated[Union[bool, int, float, complex, np.bool_, np.number], ExprOf(
    (bool, int, float, complex, np.bool_, np.number), "a number")]
#: an array of constant values (Fortran order)
Values: TypeAlias = Annotated[np.ndarray, VALUES]

#: extents per axis (None: an assumed-size last axis) and lower bounds
Shape: TypeAlias = Annotated[tuple[Union[Expr, None], ...], Bounded(0, 64)]
Bounds: TypeAlias = Annotated[tuple[Expr, ...], Bounded(0, 64)]
#: ``intent(...)`` of a dummy argument
Intent: TypeAlias = Literal["in", "out", "inout"]
#: the kinds of logical arguments (bytes per element)
LogicalKind: TypeAlias = Literal[1, 2, 4, 8]
