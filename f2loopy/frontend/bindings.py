"""What a dummy argument of an inlined procedure stands for in the caller."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(eq=False)
class ScalarBinding:
    """A scalar dummy bound to an expression of the caller (*writable* when
    it is a variable the callee may assign; *what* names it in messages)."""

    expr: object
    writable: bool
    what: str = "an expression"
    is_array = False


@dataclass(eq=False)
class ArrayBinding:
    """An array dummy bound to a view of an array of the caller."""

    view: object
    is_array = True
