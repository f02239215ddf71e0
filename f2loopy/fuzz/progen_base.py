"""What the mixins of the random program generator share (the Generator of
:mod:`f2loopy.fuzz.progen` combines them): the random choices, the state of
the program being built, and the methods one mixin calls in another, declared
once with their types so that each mixin can be checked on its own."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence, TypeVar

import numpy as np

if TYPE_CHECKING:
    from f2loopy.fuzz.program import Assign, Expr, Helper, Variable

T = TypeVar("T")


class GeneratorBase:
    """The random choices and the declared state of a Generator."""

    rng: np.random.Generator
    #: the size arguments (``n``, ``m``)
    sizes: list[str]
    #: the arguments and locals of the kernel being generated, by name
    vars: dict[str, Variable]
    args: list[Variable]
    #: helper procedures the kernel may call; the functions among them
    helpers: list[Helper]
    functions: list[Helper]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, seq: Sequence[T]) -> T:
        return seq[int(self.rng.integers(len(seq)))]

    def int_in(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    if TYPE_CHECKING:
        # defined by one mixin or the Generator, called from another
        def expr(self, env: Any, kind: str, det: bool = False, depth: int = 0) -> Expr: ...

        def logical(self, env: Any, depth: int) -> Expr: ...

        def kind_suffix(self, text: str, kind: str, env: Any) -> str: ...

        def index_for(self, env: Any, lb: str, ub: str) -> str | None: ...

        def constant_leaf(self, kind: str, env: Any) -> Expr | None: ...

        def array_ref(self, env: Any, var: Variable) -> Expr | None: ...

        def indirect_ref(self, env: Any, var: Variable) -> Expr | None: ...

        def stored(self, target: Expr, value: Expr) -> Assign: ...

        def target(self, env: Any, want_kind: str | None = None) -> Expr | None: ...
