"""The scopes of the lowering: what holds while part of a unit is lowered
and is undone when that part is done.

Each is a context manager of :class:`ScopesMixin` (mixed into
:class:`~f2loopy.frontend.lowering.UnitLowering`); the fields and stacks they
manage change nowhere else:

* :meth:`~ScopesMixin.at`: the lines errors point at (the statement being
  lowered);
* :meth:`~ScopesMixin.guarded`: conditions every instruction added inside
  is predicated on; :meth:`~ScopesMixin.block_guards`: those the rest of a
  block gets after a statement that may leave a region;
* :meth:`~ScopesMixin.loop_nest`: the loops opened inside are closed at its
  end;
* :meth:`~ScopesMixin.region`: a body that ``cycle``, ``exit``, ``return``
  or ``goto`` can leave;
* :meth:`~ScopesMixin.array_expression`: the array expression whose
  element is being converted (None: a scalar expression);
* :meth:`~ScopesMixin.inlining`: a procedure being inlined (recursion and
  depth checks);
* :meth:`~ScopesMixin.where_branches`, :meth:`~ScopesMixin.where_assignment`:
  the masks of the ``where`` constructs around, and an assignment they mask;
* ``names.scope(values)`` (a :class:`~f2loopy.frontend.lowering_state.NameTable`):
  Fortran names that stand for IR values in an expression (statement
  function arguments, implied-do variables, the assignments of an expanded
  elemental function).

``goto_regions`` (:mod:`f2loopy.frontend.control`) and ``associated``
(:mod:`f2loopy.frontend.associate`) are the scopes of their constructs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from f2loopy.frontend.declarations import statement_lines

if TYPE_CHECKING:
    import islpy as isl

    from f2loopy.frontend.lowering_state import ElementalContext, LoopScope, Region
    from f2loopy.ir.kernel import Assignment, Temporary
    from f2loopy.frontend.lowering_host import Expr, LoweringHost as _Host, Node
else:
    _Host = object


class ScopesMixin(_Host):
    """The context managers of the lowering, and its views of the kernel's
    shared state (mixed into UnitLowering)."""

    # {{{ shared state

    @property
    def instructions(self) -> list[Assignment]:
        return self.st.instructions

    @property
    def domains(self) -> list[isl.Set]:
        return self.st.domains

    @property
    def extra_temporaries(self) -> dict[str, Temporary]:
        return self.st.extra_temporaries

    @property
    def loops(self) -> list[LoopScope]:
        return self.st.loops

    @property
    def predicates(self) -> list[Expr]:
        return self.st.predicates

    @property
    def taken_names(self) -> set[str]:
        return self.st.taken_names

    @property
    def claimed_inames(self) -> set[str]:
        return self.st.claimed_inames

    # }}}

    @contextmanager
    def at(self, lines: tuple[int, int]) -> Iterator[None]:
        """Errors inside point at *lines* (first, last)."""
        saved = self.lines
        self.lines = lines
        try:
            yield
        finally:
            self.lines = saved

    def at_statement(self, node: Node) -> AbstractContextManager[None]:
        """:meth:`at` the lines of statement *node*, or where we are if it
        has none (a construct fparser gives no lines)."""
        lines = statement_lines(node)
        return self.at(lines if lines != (0, 0) else self.lines)

    @contextmanager
    def guarded(self, *conds: Expr) -> Iterator[None]:
        """The instructions added inside run only where *conds* hold."""
        depth = len(self.st.predicates)
        self.st.predicates.extend(conds)
        try:
            yield
        finally:
            del self.st.predicates[depth:]

    @contextmanager
    def block_guards(self) -> Iterator[list[Expr]]:
        """Conditions the rest of a block is guarded by (from the statement
        after one that may leave a region on): the list they are added to,
        besides the predicates; they are gone at the end of the block."""
        guards: list[Expr] = []
        try:
            yield guards
        finally:
            for guard in reversed(guards):
                self.st.predicates.remove(guard)

    @contextmanager
    def loop_nest(self) -> Iterator[None]:
        """The loops opened inside (``open_*_loop``) are closed at its end."""
        depth = len(self.st.loops)
        try:
            yield
        finally:
            del self.st.loops[depth:]

    @contextmanager
    def region(self, region: Region) -> Iterator[Region]:
        """*region* is open inside (``cycle``, ``exit``, ``return`` and
        ``goto`` find it)."""
        self.st.regions.append(region)
        try:
            yield region
        finally:
            self.st.regions.remove(region)

    @contextmanager
    def array_expression(self, ctx: ElementalContext | None) -> Iterator[None]:
        """Convert expressions inside as the element of array expression
        *ctx* (None: as scalar expressions)."""
        saved = self.elemental
        self.elemental = ctx
        try:
            yield
        finally:
            self.elemental = saved

    @contextmanager
    def inlining(self, name: str) -> Iterator[None]:
        """Procedure *name* is being inlined inside."""
        self.st.call_stack.append(name)
        try:
            yield
        finally:
            self.st.call_stack.pop()

    @contextmanager
    def where_branches(self) -> Iterator[None]:
        """The masks a ``where`` construct adds inside are gone at its end."""
        depth = len(self.where_guards)
        try:
            yield
        finally:
            del self.where_guards[depth:]

    @contextmanager
    def where_assignment(self) -> Iterator[None]:
        """The element assignments made inside are those of a ``where``
        (masked by its guards: :meth:`where_element_guard`)."""
        saved = self.where_assigning
        self.where_assigning = True
        try:
            yield
        finally:
            self.where_assigning = saved
