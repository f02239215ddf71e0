"""The state of the lowering: what one kernel's lowering shares between the
lowering of its subroutine and of every procedure inlined into it (every
mixin of :class:`~f2loopy.frontend.lowering.UnitLowering` reaches it as
``self.st``), and the values its scopes hold: the loops and regions open, the
array expression being converted, the names standing for values.  (Below
the lowering's mixins: :mod:`f2loopy.frontend.lowering_host` declares their
fields with these types.)"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import islpy as isl
import pymbolic.primitives as p

from f2loopy.ir.folding import NotConstant, evaluate_constant
from f2loopy.ir.kernel import Temporary


@dataclass(eq=False)
class Region:
    """A body that ``cycle`` or ``return`` can leave: a loop body or a whole
    procedure body.

    :attr depth: number of loops (of the shared stack) around the body.
    :attr flag: name of the logical temporary set when the body is left.
    :attr count: how many ``cycle``/``return`` statements set the flag so far.
    """

    kind: str
    owner: object
    name: str | int | None          # a construct's name, a goto region's label
    depth: int
    body_start: int
    flag: str | None = None
    count: int = 0
    trailing: object = None        # a procedure's final 'return' statement


@dataclass(eq=False)
class LoopScope:
    var: str | None           # lower-case Fortran variable (None: array-syntax loop)
    iname: str
    value: object             # the value of the Fortran variable, in terms of the iname
    owner: object
    region: Region | None = None
    body_start: int = 0
    final: object = None       # the variable's value after the loop (normal completion)
    #: flags of enclosing regions a cycle or return in the body sets: they
    #: guard the whole body (later iterations run nothing)
    skip_flags: list = field(default_factory=list)
    #: the region 'exit' leaves (a loop of the procedure that has an exit)
    exit_region: Region | None = None
    #: flags that end the loop (see f2loopy.ir.control.LoopExit)
    exit_flags: list = field(default_factory=list)
    #: why the loop must run sequentially, or None
    sequential: str | None = None
    span: object = None
    concurrent: bool = False


class NameTable:
    """Fortran names (lower-case) standing for IR values, in nested scopes:
    the innermost scope that has a name decides."""

    def __init__(self) -> None:
        self._scopes: list[dict[str, Any]] = []

    def lookup(self, name: str) -> tuple[bool, Any]:
        """``(True, value)`` of *name* (any case), else ``(False, None)``."""
        low = name.lower()
        for values in reversed(self._scopes):
            if low in values:
                return True, values[low]
        return False, None

    @contextmanager
    def scope(self, values: dict[str, Any]) -> Iterator[None]:
        """The names of *values* (lower-case) stand for their values inside."""
        self._scopes.append(values)
        try:
            yield
        finally:
            self._scopes.pop()


class _Lowering(Protocol):
    """What an :class:`ElementalContext` uses of the lowering."""

    st: LoweringState

    def fresh_name(self, base: str) -> str: ...


class ElementalContext:
    """The iteration of an array expression: the first array operand met
    fixes the rank and the index ranges; later operands must conform.

    :attr positions: placeholder variables, one per axis: the zero-based
        position along that axis.
    :attr axes: ``(lower, upper, step)`` per axis of the defining operand.
    :attr limits: per axis, extents of the arrays whose sections the operands
        take along it, where no variable the kernel changes is in them: each
        bounds the axis's length (a section lies within its array).
    """

    def __init__(self, lowering: _Lowering) -> None:
        self.lowering = lowering
        self.rank: int | None = None
        self.axes: list[tuple[Any, Any, int]] = []
        self.positions: list[p.Variable] = []
        self.extents: list[int | None] = []
        self.names: list[str] = []
        self.operands = 0           # array operands met (see ArraySyntaxMixin.conform)
        self.limits: list[list] = []

    def define(self, axes, name):
        self.rank = len(axes)
        self.axes = list(axes)
        self.names = [name] * len(axes)
        self.positions = [p.Variable(self.lowering.fresh_name(f"_{name}_pos{k + 1}"))
                          for k in range(len(axes))]
        self.lowering.st.placeholders.update(v.name for v in self.positions)
        self.extents = [triplet_extent(*ax) for ax in axes]
        self.limits = [[] for _ in axes]


def triplet_extent(lo, hi, st):
    try:
        lo_v, hi_v = int(evaluate_constant(lo)), int(evaluate_constant(hi))
    except (NotConstant, TypeError, ValueError):
        return None
    return max(0, (hi_v - lo_v + st) // st)


class LoweringState:
    """What one kernel accumulates while its subroutine (and everything
    inlined into it) is lowered.

    :attr errors: a list collecting statement errors (collecting mode), or
        None to raise the first error.
    """

    def __init__(self, *, collect: bool = False):
        self.instructions: list = []
        self.domains: list[isl.Set] = []
        self.extra_temporaries: dict[str, Temporary] = {}
        self.taken_names: set[str] = set()
        self.insn_ids: set[str] = set()
        #: base -> the next suffix to try for fresh names and ids: every
        #: smaller one is taken (linear, not quadratic, in the number of
        #: names of one base; a LAPACK routine inlines thousands of 'i' loops)
        self.next_name_suffix: dict[str, int] = {}
        self.next_id_suffix: dict[str, int] = {}
        self.claimed_inames: set[str] = set()
        self.loops: list[LoopScope] = []
        self.predicates: list = []
        self.regions: list[Region] = []
        self.errors: list | None = [] if collect else None
        self.call_stack: list[str] = []
        self.shared_tables: dict = {}
        self.placeholders: set[str] = set()     # array-syntax positions (integers)
        #: pairs of extents (IR expressions in the kernel's scalar arguments)
        #: that Fortran requires to be equal: conforming array operands
        self.conformance: list = []
        #: (lowering, loop variable) -> the temporary holding the variable's
        #: value outside its loops (see :meth:`UnitLowering.loop_scalar`)
        self.loop_scalars: dict = {}
        #: (array, axis) -> name of the kernel argument holding the extent of
        #: an assumed-shape dummy argument's axis (lower-case array name)
        self.assumed_extents: dict[tuple[str, int], str] = {}
        #: iname -> LoopExit (f2loopy.ir.control)
        self.loop_exits: dict = {}
        #: ids of instructions that run whatever the conditions around them
        #: (the flag ending a 'do while' loop, see ControlFlowMixin)
        self.unguarded: set = set()
        #: ErrorSite s of the kernel (f2loopy.frontend.errors), the output
        #: statements waiting for their stop, the temporary f2l_raise sets
        self.error_sites: list = []
        self.pending_output: list = []
        #: the list-directed output printed with printf (f2loopy.frontend.prints)
        self.prints: list = []
        #: message dummy (lower-case) -> the texts assigned to it, in order
        #: (f2loopy.frontend.messages)
        self.messages: dict[str, list[str]] = {}
        self.print_temporary: str | None = None
        self.stop_temporary: str | None = None
        #: module variables: origin -> IR name, and origin -> symbol of those
        #: the procedures inlined use (:mod:`f2loopy.frontend.module_data`)
        self.storage_names: dict = {}
        self.storage_used: dict = {}
        self.storage_by_name: dict = {}          # IR name -> symbol
        #: allocatable module arrays: origin -> names of their dope arguments
        #: (:mod:`f2loopy.frontend.allocatables`)
        self.allocatable_dope: dict = {}
        #: optional dummy arguments of the kernel -> names of their presence
        #: flags (:mod:`f2loopy.frontend.optionals`)
        self.presence_flags: dict = {}
        #: (lowering, label) -> (region, guard) of a forward goto into the
        #: statements a backward goto repeats, while they are lowered up to
        #: the label (:meth:`ControlFlowMixin.stmt_BackwardGotoLoop`)
        self.entry_guards: dict = {}
        self.dope_names: set = set()             # all those names (int32)
        #: allocatable local arrays: (id of lowering, name) -> WorkArray, and
        #: the saved ones to check (f2loopy.frontend.local_allocatables)
        self.work_arrays: dict = {}
        self.saved_work: list = []
