"""The one typed declaration of the lowering object (for the type checker).

:class:`~f2loopy.frontend.lowering.UnitLowering` is composed of one mixin per
part of the language; every mixin types ``self`` against :class:`LoweringHost`
(its base while type checking, ``object`` at run time), so that each field
and each method one mixin uses of another is declared here, once, with its
type.  Nothing here runs: ``UnitLowering.__init__`` assigns the fields, the
mixins implement the methods (they are abstract here: mypy checks that the
signatures agree and, where ``UnitLowering`` is made, that every one is
implemented).

The fields are of three kinds:

* set once when the lowering is made (its unit, its caller, what is known of
  the procedure): never assigned afterwards;
* accumulated while the unit is lowered (names used, bindings, views...);
* scoped: changed only through the context managers of
  :class:`~f2loopy.frontend.scopes.ScopesMixin` (the statement being lowered,
  the array expression being converted, the names standing for values), and
  restored when the scope ends.

What one kernel shares between its subroutine and everything inlined into it
(instructions, domains, loop and predicate stacks...) is the
:class:`~f2loopy.frontend.lowering_state.LoweringState` in ``st``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    import islpy as isl
    import numpy as np

    from f2loopy.diagnostics import FortranError, SourceSpan
    from f2loopy.frontend.bindings import ArrayBinding, ArrayView, ScalarBinding
    from f2loopy.frontend.expressions import ExpressionConverter
    from f2loopy.frontend.lowering_state import (
        ElementalContext, LoopScope, LoweringState, NameTable, Region)
    from f2loopy.frontend.source import SourceFile
    from f2loopy.frontend.symbols import StatementFunction, Symbol, SymbolTable
    from f2loopy.ir.kernel import Assignment, Temporary

#: an IR expression: a pymbolic node or a numpy scalar (pymbolic ships no
#: types that f2loopy checks: see [tool.mypy] in pyproject.toml)
Expr = Any
#: a node of fparser's parse tree (fparser ships no types)
Node = Any


# {{{ what the lowering sees of the file's units (f2loopy.frontend.units, above it)

class ModuleScope(Protocol):
    """A module (:class:`~f2loopy.frontend.units.ModuleInfo`)."""

    @property
    def name(self) -> str: ...
    @property
    def procedures(self) -> dict[str, Any]: ...


class ProcedureRegistry(Protocol):
    """The procedures and modules of the file and of the search path
    (:class:`~f2loopy.frontend.units.FileRegistry`)."""

    def find(self, name: str, symtab: Any, module: Any) -> Any: ...


class PreparedCallee(Protocol):
    """A procedure's declarations read, ready to be lowered
    (:class:`~f2loopy.frontend.units.PreparedProcedure`)."""

    @property
    def symtab(self) -> SymbolTable: ...
    @property
    def dummies(self) -> list[str]: ...
    @property
    def host_names(self) -> list[str]: ...
    @property
    def written(self) -> set[str]: ...
    @property
    def do_variables(self) -> set[str]: ...
    @property
    def statement_functions(self) -> dict[str, StatementFunction]: ...
    @property
    def body(self) -> list[Node]: ...
    @property
    def result_name(self) -> str: ...


class CalledProcedure(Protocol):
    """A subroutine or function of the file or the search path
    (:class:`~f2loopy.frontend.units.Procedure`)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def node(self) -> Node: ...
    @property
    def module(self) -> Any: ...
    @property
    def src(self) -> SourceFile | None: ...
    @property
    def registry(self) -> Any: ...
    @property
    def host(self) -> Any: ...
    def prepare(self, src: SourceFile, registry: Any, errors: Any = None) -> Any: ...

# }}}


class LoweringHost:
    """Every field and every shared method of the lowering of one unit."""

    # {{{ fields set once, when the lowering is made

    src: SourceFile
    symtab: SymbolTable
    dummies: list[str]                  # lower-case dummy argument names
    written: set[str]                   # lower-case names assigned in the unit
    do_variables: set[str]              # lower-case names of loop variables
    st: LoweringState                   # shared by the kernel's lowerings
    registry: ProcedureRegistry | None
    parent: LoweringHost | None         # the caller's lowering (inlined)
    root: LoweringHost                  # the kernel's subroutine's lowering
    unit_name: str
    statement_functions: dict[str, StatementFunction]
    module_info: ModuleScope | None     # the module the unit is in
    callees_may_stop: bool              # a procedure of another file may stop
    single_assignments: frozenset[str]  # see UnitLowering.note_constant
    #: inlined: what the call passes for each optional dummy (lower-case; None:
    #: left out), for ``present()`` (f2loopy.frontend.optionals)
    optional_actuals: dict[str, Node | None]
    entry_predicates: int               # conditions around the call

    # }}}

    # {{{ fields accumulated while the unit is lowered

    used: set[str]                      # lower-case variables used (root)
    bindings: dict[str, ScalarBinding | ArrayBinding]   # dummy -> actual
    renames: dict[str, str]             # local (lower) -> IR name (inlined)
    views: dict[str, ArrayView]         # array (lower) -> its view
    known_constants: dict[str, Expr]    # see UnitLowering.note_constant
    labels_seen: set[int]               # labels of the statements so far
    formats: dict[str, str]             # label -> format of the body's format statements
    #: the statement being lowered and those after it in its block
    block_rest: tuple[Node, list[Node]] | None

    # }}}

    # {{{ scoped fields (ScopesMixin)

    lines: tuple[int, int]              # the statement's lines (errors)
    elemental: ElementalContext | None  # the array expression converted
    names: NameTable                    # names standing for IR values
    where_guards: list[Callable[[ElementalContext], Expr]]
    where_assigning: bool               # an assignment of a 'where'

    # }}}

    # {{{ the kernel's shared state (properties of st)

    @property
    @abstractmethod
    def instructions(self) -> list[Assignment]: ...
    @property
    @abstractmethod
    def domains(self) -> list[isl.Set]: ...
    @property
    @abstractmethod
    def extra_temporaries(self) -> dict[str, Temporary]: ...
    @property
    @abstractmethod
    def loops(self) -> list[LoopScope]: ...
    @property
    @abstractmethod
    def predicates(self) -> list[Expr]: ...
    @property
    @abstractmethod
    def taken_names(self) -> set[str]: ...
    @property
    @abstractmethod
    def claimed_inames(self) -> set[str]: ...

    # }}}

    # {{{ scopes (f2loopy.frontend.scopes)

    @abstractmethod
    def at(self, lines: tuple[int, int]) -> AbstractContextManager[None]: ...
    @abstractmethod
    def at_statement(self, node: Node) -> AbstractContextManager[None]: ...
    @abstractmethod
    def guarded(self, *conds: Expr) -> AbstractContextManager[None]: ...
    @abstractmethod
    def loop_nest(self) -> AbstractContextManager[None]: ...
    @abstractmethod
    def region(self, region: Region) -> AbstractContextManager[Region]: ...
    @abstractmethod
    def array_expression(self, ctx: ElementalContext | None
                         ) -> AbstractContextManager[None]: ...
    @abstractmethod
    def inlining(self, name: str) -> AbstractContextManager[None]: ...
    @abstractmethod
    def where_branches(self) -> AbstractContextManager[None]: ...
    @abstractmethod
    def where_assignment(self) -> AbstractContextManager[None]: ...

    # }}}

    # {{{ utilities (f2loopy.frontend.lowering)

    @abstractmethod
    def error(self, message: str, needle: str | None = None,
              cls: type[FortranError] = ..., *,
              last_occurrence: bool = False) -> FortranError: ...
    @abstractmethod
    def statement_span(self) -> SourceSpan: ...
    @abstractmethod
    def fresh_name(self, base: str) -> str: ...
    @abstractmethod
    def fresh_id(self, base: str) -> str: ...
    @abstractmethod
    def new_temporary(self, base: str, dtype: Any, **kw: Any) -> str: ...
    @abstractmethod
    def symbol(self, name: str) -> Symbol: ...
    @abstractmethod
    def var_dtype(self, name: str) -> np.dtype: ...
    @abstractmethod
    def current_inames(self) -> frozenset[str]: ...
    @abstractmethod
    def loop_for(self, var: str) -> LoopScope | None: ...
    @abstractmethod
    def is_invariant_param(self, name: str) -> bool: ...
    @abstractmethod
    def assumed_extent(self, sym: Symbol, axis: int) -> str: ...
    @abstractmethod
    def record(self, exc: FortranError) -> None: ...
    @abstractmethod
    def inlined_lowering(self, proc: CalledProcedure, callee: PreparedCallee,
                         dummies: list[str], actuals: list[Node | None]
                         ) -> LoweringHost: ...

    # }}}

    # {{{ expressions and names (f2loopy.frontend.lowering)

    @abstractmethod
    def converter(self) -> ExpressionConverter: ...
    @abstractmethod
    def checked_dtype(self, expr: Expr) -> np.dtype: ...
    @abstractmethod
    def constant(self, node: Node) -> Any: ...
    @abstractmethod
    def expr(self, node: Node) -> Expr: ...
    @abstractmethod
    def int_expr(self, node: Node, what: str) -> Expr: ...
    @abstractmethod
    def resolve_name(self, name: str, node: Node) -> Expr: ...
    @abstractmethod
    def is_array_symbol(self, sym: Symbol) -> bool: ...
    @abstractmethod
    def scalar_value(self, sym: Symbol, name: str) -> Expr: ...
    @abstractmethod
    def scalar_target(self, sym: Symbol, name: str) -> tuple[Expr, np.dtype]: ...
    @abstractmethod
    def loop_scalar(self, sym: Symbol) -> Expr: ...
    @abstractmethod
    def check_not_initialized(self, sym: Symbol, name: str) -> None: ...
    @abstractmethod
    def local_name(self, sym: Symbol) -> str: ...

    # }}}

    # {{{ statements (f2loopy.frontend.lowering)

    @abstractmethod
    def lower_body(self, nodes: list[Node]) -> None: ...
    @abstractmethod
    def lower_block(self, nodes: list[Node], *,
                    skip_labels: frozenset[int] | set[int] = ...) -> None: ...
    @abstractmethod
    def lower_statement(self, node: Node, is_last: bool = False) -> None: ...
    @abstractmethod
    def stmt_Assignment_Stmt(self, node: Node) -> None: ...
    @abstractmethod
    def lower_assignee(self, lhs_node: Node) -> tuple[Expr, np.dtype]: ...
    @abstractmethod
    def convert_for_assignment(self, rhs: Expr, lhs_dtype: Any,
                               needle: str | None) -> Expr: ...
    @abstractmethod
    def add_raw_assignment(self, name: str, value: Expr,
                           predicates: Sequence[Expr] | None = None) -> Assignment: ...
    @abstractmethod
    def add_assignment(self, assignee: Expr, lhs_dtype: Any, rhs: Expr,
                       needle: str | None, *, base_id: str | None = None,
                       predicates: Sequence[Expr] | None = None) -> Assignment: ...

    # }}}

    # {{{ loops and control (f2loopy.frontend.loops, .control, .conditionals)

    @abstractmethod
    def _after_leading(self, content: list[Node], head_types: Any) -> list[Node]: ...
    @abstractmethod
    def open_body_regions(self, opened: list[LoopScope], name: str | None,
                          exit_flag: str | None, exit_depth: int,
                          cycled: str | None) -> Region: ...
    @abstractmethod
    def claim_iname(self, base: str) -> str: ...
    @abstractmethod
    def bound_temporary(self, iname: str, which: str, expr: Expr,
                        empty: Expr = None) -> Expr: ...
    @abstractmethod
    def make_domain(self, iname: str, lo: Expr, hi: Expr, step: int) -> isl.Set: ...
    @abstractmethod
    def open_counter_loop(self, base: str, lo: Expr, hi: Expr,
                          step: int = 1) -> LoopScope: ...
    @abstractmethod
    def open_trip_loop(self, base: str, *, reason: str) -> LoopScope: ...
    @abstractmethod
    def open_runtime_step_loop(self, sym: Symbol, lo: Expr, hi: Expr, step: Expr,
                               step_text: str) -> LoopScope: ...
    @abstractmethod
    def leave_region(self, region: Region, sequential: str | None = None) -> None: ...
    @abstractmethod
    def guard_loop_body(self, scope: LoopScope) -> None: ...
    @abstractmethod
    def new_exit_flag(self, base: str, *, ends_loop: bool) -> str: ...
    @abstractmethod
    def while_condition(self, scope: LoopScope, cond_node: Node, flag: str) -> None: ...
    @abstractmethod
    def add_loop_exit(self, scope: LoopScope, flag: str,
                      sequential: str | None = None) -> None: ...
    @abstractmethod
    def record_loop_exit(self, scope: LoopScope) -> None: ...
    @abstractmethod
    def condition(self, node: Node) -> Expr: ...
    @abstractmethod
    def with_predicate(self, cond: Expr, body: Callable[[], object]) -> None: ...

    # }}}

    # {{{ arrays (f2loopy.frontend.arrays, .where, .elemental)

    @abstractmethod
    def view(self, sym: Symbol, name: str) -> ArrayView: ...
    @abstractmethod
    def array_ref(self, name: str, index_nodes: list[Node], node: Node) -> Expr: ...
    @abstractmethod
    def subscript(self, node: Node, array_name: str) -> Expr: ...
    @abstractmethod
    def triplet(self, view: ArrayView, k: int,
                node: Node) -> tuple[Expr, Expr, int]: ...
    @abstractmethod
    def conforming_element(self, view: ArrayView, axes: list[tuple[Expr, Expr, int]],
                           parts: list[tuple[str, Any]], name: str) -> Expr: ...
    @abstractmethod
    def in_context(self, ctx: ElementalContext | None, func: Callable[..., Any],
                   *args: Any) -> Any: ...
    @abstractmethod
    def conform(self, axes: list[tuple[Expr, Expr, int]], name: str,
                label: str | None = None) -> ElementalContext: ...
    @abstractmethod
    def require_equal(self, a: Expr, b: Expr) -> None: ...
    @abstractmethod
    def is_array_assignment(self, lhs_node: Node) -> bool: ...
    @abstractmethod
    def emit_elemental(self, ctx: ElementalContext, order: str, base: str,
                       emit: Callable[[], object], subst_targets: bool = False) -> None: ...
    @abstractmethod
    def where_element_guard(self, ctx: ElementalContext) -> Expr | None: ...
    @abstractmethod
    def elemental_call(self, proc: CalledProcedure, actual_nodes: list[Node]) -> Expr: ...

    # }}}

    # {{{ calls and characters (f2loopy.frontend.inline, .characters, .strings)

    @abstractmethod
    def defined_elsewhere(self, name: str) -> bool: ...
    @abstractmethod
    def match_arguments(self, proc: CalledProcedure, dummies: list[str],
                        actual_nodes: list[Node]) -> list[Node]: ...
    @abstractmethod
    def bind_scalar(self, proc: CalledProcedure, callee: PreparedCallee, dummy: str,
                    node: Node) -> ScalarBinding: ...
    @abstractmethod
    def char_selector(self, node: Node) -> tuple[Expr, int] | None: ...
    @abstractmethod
    def char_case_value(self, node: Node, length: int, in_range: bool) -> Expr: ...
    @abstractmethod
    def bind_character(self, proc: CalledProcedure, dsym: Symbol, node: Node) -> Any: ...
    @abstractmethod
    def char_operand(self, node: Node) -> tuple[Any, Any, bool] | None: ...
    @abstractmethod
    def string_operand(self, node: Node) -> tuple[Any, int, bool] | None: ...
    @abstractmethod
    def string_comparison(self, rel: str, left: Node, right: Node) -> Any: ...
    @abstractmethod
    def string_assignment(self, lhs_node: Node, rhs_node: Node) -> bool: ...
    @abstractmethod
    def string_length(self, arg_nodes: list[Node]) -> Any: ...
    @abstractmethod
    def bind_string(self, dsym: Symbol, node: Node) -> Any: ...

    # }}}
