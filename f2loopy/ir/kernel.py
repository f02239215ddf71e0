"""The kernel IR: variables, instructions, and the kernel itself.

Everything here is an immutable (frozen) dataclass.  Transformations build new
objects with :func:`dataclasses.replace` (``obj.copy(...)``) and never mutate.

Conventions:

* Loop domains are :class:`islpy.Set` objects.  Each domain *introduces* the
  inames that are its set dimensions; its parameters are kernel parameters
  (scalar arguments), inames of enclosing domains, or data-dependent loop bound
  temporaries.  Inames keep Fortran values (``do i = 1, n`` gives
  ``{ [i] : 1 <= i <= n }``).
* Arrays keep Fortran semantics: subscripts are Fortran index values, each axis
  has a declared lower bound and an extent; memory order comes from the axis
  tags (Fortran order by default).
* Expressions are pymbolic expressions.  Fortran intrinsics appear as calls of
  their lower-case names; type conversions as calls of numpy dtype names
  (``float32(x)``, ``float64(x)``, ``int32(x)``); literals are numpy scalars so
  that their kind survives (``0.1`` is ``np.float32(0.1)``).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal

import islpy as isl
import numpy as np
from pymbolic.primitives import Subscript

from f2loopy.diagnostics import SourceSpan
from f2loopy.ir.control import ErrorSite, LoopExit
from f2loopy.ir.prints import PrintSite
from f2loopy.ir.fieldtypes import (
    Assignee, Bounded, Bounds, Expr, InsnId, Intent, LogicalKind, Name, Number, Shape, Text,
    Values)
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.roles import (
    CALLER_ROLES, Allocation, ArgRole, Dummy, Extent, Presence, Result, Stored)
from f2loopy.ir.tags import ArrayAxisTag, InameTag, fortran_axis_tags


class AddressSpace(enum.Enum):
    PRIVATE = "private"
    LOCAL = "local"
    GLOBAL = "global"

    def __str__(self) -> str:
        return self.value


class _Copyable:
    def copy(self, **changes):
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


# {{{ variables

@dataclass(frozen=True, kw_only=True)
class ArrayLayout(_Copyable):
    """The Fortran declaration of an array: extents and lower bounds per axis.

    Kept on an argument whose layout a transformation changed, so the host glue
    can convert from what the Fortran caller passes.

    :attr axis_tags: the caller's memory layout (Fortran order by default).
    :attr splits: ``(axis, count, order)`` of each :func:`split_array_axis`,
        in order, mapping the caller's axes to the kernel's.
    """

    shape: Shape
    lower_bounds: Bounds
    axis_tags: Annotated[tuple[ArrayAxisTag, ...], Bounded(0, 64)] = ()
    splits: Annotated[tuple[tuple[int, int, Literal["C", "F"]], ...], Bounded(0, 64)] = ()


@dataclass(frozen=True, kw_only=True)
class ArrayVariable(_Copyable):
    """Common part of array arguments and array temporaries.

    :attr shape: extent per axis (pymbolic expressions in the kernel
        parameters); ``None`` for an assumed-size last axis (``*``).
    :attr lower_bounds: Fortran lower bound per axis.
    :attr axis_tags: memory layout per axis (:class:`ArrayAxisTag`).
    :attr axis_names: optional names of the axes (used to name new inames).
    """

    name: Name
    dtype: np.dtype
    shape: Shape = ()
    lower_bounds: Bounds = ()
    axis_tags: Annotated[tuple[ArrayAxisTag, ...], Bounded(0, 64)] = ()
    axis_names: Annotated[tuple[Name | None, ...], Bounded(0, 64)] | None = None
    span: SourceSpan | None = None

    def __post_init__(self):
        if len(self.lower_bounds) != len(self.shape):
            raise ValueError("shape and lower_bounds differ in length")
        if not self.axis_tags and self.shape:
            object.__setattr__(self, "axis_tags", fortran_axis_tags(len(self.shape)))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_scalar(self) -> bool:
        return not self.shape


@dataclass(frozen=True, kw_only=True)
class ArrayArg(ArrayVariable):
    """An array dummy argument, passed as a global-memory buffer.

    :attr intent: ``"in"``, ``"out"``, ``"inout"`` or None (not declared).
    :attr fortran_layout: the caller's layout if a transformation changed it.
    :attr role: what the argument stands for (:mod:`f2loopy.ir.roles`): a
        dummy argument by default; a component of a derived-type dummy, or a
        module variable (:class:`~f2loopy.ir.roles.Stored`) the kernel uses.
    :attr logical_kind: for a logical argument, its kind: the bytes of an
        element in memory (1 for ``logical(c_bool)``: a ``char`` on the device,
        numpy ``bool`` in the glue; 4, the default, an ``int``).
    """

    intent: Intent | None = None
    fortran_layout: ArrayLayout | None = None
    address_space: AddressSpace = AddressSpace.GLOBAL
    role: ArgRole = Dummy()
    logical_kind: LogicalKind = 4
    #: (as :attr:`ScalarArg.fixed_value`: only scalars are fixed)
    fixed_value: ClassVar[None] = None

    @property
    def fortran_ndim(self) -> int:
        """The rank of the array the caller passes (the kernel's may differ
        after :func:`~f2loopy.transform.data.split_array_axis`)."""
        return len(self.fortran_layout.shape) if self.fortran_layout is not None \
            else self.ndim


@dataclass(frozen=True, kw_only=True)
class ScalarArg(_Copyable):
    """A scalar dummy argument.

    Read-only scalars are passed by value and may act as domain parameters;
    scalars the kernel writes are passed as one-element buffers.

    :attr fixed_value: set by :func:`~f2loopy.transform.parameters.fix_parameters`:
        the kernel was specialised for this value, no longer receives the
        argument, and the host glue checks that callers pass exactly it.
    :attr role: what the argument stands for (:mod:`f2loopy.ir.roles`): a
        dummy argument (by default), a component of a derived-type dummy, the
        function's result, the extent of an assumed-shape array, or data
        outside the procedure (:class:`~f2loopy.ir.roles.Stored`).
    :attr logical_kind: see :attr:`ArrayArg.logical_kind`.
    """

    name: Name
    dtype: np.dtype
    intent: Intent | None = None
    span: SourceSpan | None = None
    fixed_value: Number | None = None
    role: ArgRole = Dummy()
    logical_kind: LogicalKind = 4

    shape = ()
    lower_bounds = ()
    ndim = 0
    is_scalar = True
    #: (as :attr:`ArrayArg.fortran_layout`: a scalar keeps its layout)
    fortran_layout: ClassVar[ArrayLayout | None] = None

    @property
    def what(self) -> str:
        """The argument as messages name it."""
        role = self.role
        if isinstance(role, Extent):
            return f"the extent of axis {role.axis + 1} of argument '{role.array}'"
        if isinstance(role, Result):
            return f"the function result '{self.name}'"
        if isinstance(role, Presence):
            return f"whether argument '{role.dummy}' is present"
        if isinstance(role, Allocation):
            return f"the {role.what} of module array '{role.array}'"
        return f"argument '{self.name}'"


@dataclass(frozen=True, kw_only=True)
class Temporary(ArrayVariable):
    """A kernel-local variable (a Fortran local, or made by a transformation).

    :attr address_space: private, local or global; None lets code generation
        choose (local if written in parallel across local inames).
    :attr initializer: constant contents (``data`` statements, ``parameter``
        arrays), as a Fortran-ordered numpy array, or None.
    :attr read_only: True for constant tables.
    :attr base_storage: name of the storage area shared by aliased temporaries.
    """

    address_space: AddressSpace | None = None
    initializer: Values | None = None
    read_only: bool = False
    base_storage: Name | None = None

    def __eq__(self, other):
        if not isinstance(other, Temporary):
            return NotImplemented
        return (_tmp_key(self) == _tmp_key(other)
                and _arrays_equal(self.initializer, other.initializer))

    def __hash__(self):
        return hash(_tmp_key(self))


#: a kernel argument
Argument = ArrayArg | ScalarArg


def _tmp_key(t: Temporary):
    return (t.name, t.dtype, t.shape, t.lower_bounds, t.axis_tags, t.axis_names,
            t.address_space, t.read_only, t.base_storage)


def _arrays_equal(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and a.dtype == b.dtype and bool((a == b).all())

# }}}


# {{{ instructions

@dataclass(frozen=True, kw_only=True)
class Instruction(_Copyable):
    """Common attributes of instructions.

    :attr id: unique identifier.
    :attr within_inames: the loops (inames) the instruction runs in.
    :attr depends_on: ids of instructions that must run before it (within the
        loops both share; across loops the whole earlier loop comes first).
    :attr tags: names from ``!$loopy begin tagged: NAME`` and tag_instructions.
    :attr predicates: conditions (all must hold) guarding the instruction.
    :attr span: the Fortran statement it came from.
    :attr no_sync_with: ``(id_or_pattern, scope)`` pairs for which no barrier
        or race check is wanted (scope is ``"local"``, ``"global"`` or ``"any"``).
    :attr priority: higher runs earlier when the order is otherwise free.
    """

    id: InsnId
    within_inames: Annotated[frozenset[Name], Bounded(0, 256)] = frozenset()
    depends_on: frozenset[InsnId] = frozenset()
    tags: Annotated[frozenset[Name], Bounded(0, 256)] = frozenset()
    predicates: Annotated[tuple[Expr, ...], Bounded(0, 256)] = ()
    span: SourceSpan | None = None
    no_sync_with: frozenset[tuple[Annotated[str, Text(200)], Annotated[str, Text(10)]]] = \
        frozenset()
    priority: int = 0

    def read_expressions(self) -> tuple:
        return self.predicates

    def assignee_names(self) -> tuple[str, ...]:
        return ()

    # loopy's names, for scripts that inspect instructions
    def assignee_var_names(self) -> tuple[str, ...]:
        """The variables written (loopy's name of :meth:`assignee_names`)."""
        return self.assignee_names()

    def read_dependency_names(self) -> frozenset:
        """Names of the variables and inames the instruction reads (value,
        subscripts of the assignee, predicates), as loopy's method."""
        return self._read_names

    @cached_property
    def _read_names(self) -> frozenset:
        # computed once per instruction object (the instruction is immutable)
        from f2loopy.ir.expressions import variables_read
        return frozenset(variables_read(*self.read_expressions()))

    def read_accesses(self) -> tuple[tuple[str, tuple | None], ...]:
        """``(name, indices)`` of every variable use in the expressions the
        instruction reads (:func:`~f2loopy.ir.expressions.accesses` of each
        of :meth:`read_expressions`, in order)."""
        return self._read_accesses

    @cached_property
    def _read_accesses(self) -> tuple:
        # computed once per instruction object (the instruction is immutable):
        # a loop merge asks every instruction of the merged loop again
        from f2loopy.ir.expressions import accesses
        return tuple(acc for expr in self.read_expressions() for acc in accesses(expr))

    def write_dependency_names(self) -> frozenset:
        return frozenset(self.assignee_names())

    def dependency_names(self) -> frozenset:
        """Everything read or written."""
        return self._all_names

    @cached_property
    def _all_names(self) -> frozenset:
        return self.read_dependency_names() | self.write_dependency_names()


@dataclass(frozen=True, kw_only=True)
class Assignment(Instruction):
    """``assignee = expression``.

    :attr assignee: a Variable or a Subscript of one.
    :attr atomic: update with an atomic operation (for parallel accumulation).
    """

    assignee: Assignee
    expression: Expr
    atomic: bool = False

    @property
    def assignee_name(self) -> str:
        a = self.assignee
        return a.aggregate.name if isinstance(a, Subscript) else a.name

    def assignee_names(self) -> tuple[str, ...]:
        return (self.assignee_name,)

    def read_expressions(self) -> tuple:
        idx = self.assignee.index if isinstance(self.assignee, Subscript) else ()
        if not isinstance(idx, tuple):
            idx = (idx,)
        return (self.expression, *idx, *self.predicates)


@dataclass(frozen=True, kw_only=True)
class BarrierInstruction(Instruction):
    """An explicit barrier; *scope* is ``"local"`` or ``"global"``."""

    scope: Literal["local", "global"] = "local"


@dataclass(frozen=True, kw_only=True)
class NoOpInstruction(Instruction):
    """Does nothing; a place to hang dependencies."""

# }}}


@dataclass(frozen=True)
class SubstitutionRule:
    """``name(arguments) := expression``: a named, parametric expression."""

    name: Name
    arguments: Annotated[tuple[Name, ...], Bounded(0, 64)]
    expression: Expr
    span: SourceSpan | None = None


@dataclass(frozen=True, kw_only=True)
class KernelOptions(_Copyable):
    """Options that affect code generation.

    :attr build_options: OpenCL compiler flags (e.g. ``-cl-fast-relaxed-math``).
    :attr check_races: refuse parallel tags that break a dependence.
    :attr fp_contract: let the OpenCL compiler fuse ``a*b + c`` into one
        rounding.  On by default: OpenCL C's own default, and what Fortran
        allows and gfortran does on hardware with FMA; set it off to make
        results reproducible bit for bit across devices.
    :attr per_work_item: private temporaries that hold one work-item's part
        of an array by construction (:func:`~f2loopy.transform.scc.
        demote_temporaries`: every access of the array had the work-item's
        column as its first subscript); their values never cross work-items,
        so the check of private values against the sequential order, which
        reads them as one shared array, leaves them out.
    :attr specialized: integer scalar arguments the program is compiled for
        per value (:func:`~f2loopy.transform.parameters.specialize_parameters`):
        the generated code reads them as compile-time constants, and the host
        glue builds (and caches) one program per value the first time it is
        called with it.
    :attr hoist_guards: code generation tests the condition on the
        work-item's parallel indices (the column guard of a single-column
        kernel) once around consecutive statements and loops that share it,
        not on every statement, and lets statements that only write private
        variables read under that condition alone run inside it (set by
        :func:`~f2loopy.transform.scc.scc`: one guarded region per level loop
        lets the compiler see which value reaches a use, e.g. a species index
        read from an array, and keep small arrays in registers).
    """

    build_options: Annotated[tuple[Annotated[str, Text(200)], ...], Bounded(0, 64)] = ()
    check_races: bool = True
    fp_contract: bool = True
    write_code: bool = False
    index_dtype: np.dtype = np.dtype(np.int32)
    per_work_item: Annotated[tuple[Name, ...], Bounded(0, 100_000)] = ()
    specialized: Annotated[tuple[Name, ...], Bounded(0, 64)] = ()
    hoist_guards: bool = False


def _universe() -> isl.Set:
    return isl.Set("{ : }")


@dataclass(frozen=True, kw_only=True)
class BoundProcedure:
    """A dummy procedure of the subroutine that the kernel is specialised to
    (``--bind KERNEL:DUMMY=PROCEDURE``): calls of the dummy are inlined calls
    of the procedure, and the kernel takes no argument for it.

    :attr dummy: the dummy argument's name.
    :attr position: its place among the subroutine's dummy arguments (from 0):
        whoever calls the original Fortran passes :attr:`procedure` there.
    :attr procedure: the procedure's name.
    :attr module: the module that defines it, None for a procedure of a file.
    :attr result_dtype: a function's result type, None for a subroutine.
    """

    dummy: Name
    position: Annotated[int, Bounded(0, 10_000)]
    procedure: Name
    module: Name | None = None
    result_dtype: np.dtype | None = None


#: iterations peeled off a loop (:attr:`Kernel.iname_slabs`)
Slab = Annotated[int, Bounded(0, 1000)]


@dataclass(frozen=True, kw_only=True)
class Kernel(_Copyable):
    """One kernel: what a Fortran subroutine becomes.

    :attr name: kernel name (the subroutine's name as written).
    :attr args: arguments in Fortran order (:class:`ArrayArg`, :class:`ScalarArg`).
    :attr temporaries: name -> :class:`Temporary`.
    :attr domains: loop domains (see module docstring).
    :attr instructions: in program order.
    :attr iname_tags: iname -> :class:`InameTag` (absent means ``for``).
    :attr substitutions: name -> :class:`SubstitutionRule`.
    :attr assumptions: facts about the parameters (a parameter-only isl.Set).
    :attr loop_priority: tuples of inames, outermost first.
    :attr iname_slabs: iname -> ``(first, last)``: numbers of iterations at
        the start and at the end of a sequential loop that code generation
        peels off into loops of their own (so that the guards of a partial
        tile apply only there).
    :attr loop_exits: iname -> :class:`~f2loopy.ir.control.LoopExit`: loops
        that stop early (``do while``, ``exit``...) or must run sequentially.
    :attr error_sites: :class:`~f2loopy.ir.control.ErrorSite` s, numbered
        from 1: the ``stop`` statements (and the like) the kernel records in
        its error buffer.
    :attr prints: :class:`~f2loopy.ir.prints.PrintSite` s, numbered from 1:
        the list-directed ``write``/``print`` statements the kernel prints
        with ``printf`` (instructions ``f2l_print(site, values...)``).
    :attr span: the ``subroutine`` statement.
    :attr module: the Fortran module the subroutine belongs to, if any.
    :attr module_data: the variables of the modules the subroutine uses that
        it does not read or write (arguments of a :class:`~f2loopy.ir.roles.Stored` role,
        not passed): the Python glue exposes them with the others.
    :attr bind_name: the C name of a ``bind(c)`` procedure (its binding
        label), None for others.
    :attr bound_procedures: the dummy procedures the kernel is specialised
        to (:class:`BoundProcedure`), in the order of the dummies.
    :attr host_program: :attr:`module` names a main program: the kernel is
        one of its internal procedures, and the program's variables it uses
        by host association are its module data (a :class:`~f2loopy.ir.roles.ModuleVariable` of the program's
        name), which no other unit can ``use``.
    """

    name: Name
    args: Annotated[tuple[Argument, ...], Bounded(0, 10_000)] = ()
    temporaries: FrozenMap[Name, Temporary] = field(default_factory=FrozenMap)
    domains: tuple[isl.Set, ...] = ()
    instructions: tuple[Instruction, ...] = ()
    iname_tags: FrozenMap[Name, InameTag] = field(default_factory=FrozenMap)
    substitutions: FrozenMap[Name, SubstitutionRule] = field(default_factory=FrozenMap)
    assumptions: isl.Set = field(default_factory=_universe)
    loop_priority: frozenset[Annotated[tuple[Name, ...], Bounded(0, 64)]] = frozenset()
    iname_slabs: Annotated[FrozenMap[Name, tuple[Slab, Slab]], Bounded(0, 10_000)] = \
        field(default_factory=FrozenMap)
    loop_exits: Annotated[FrozenMap[Name, LoopExit], Bounded(0, 10_000)] = \
        field(default_factory=FrozenMap)
    error_sites: Annotated[tuple[ErrorSite, ...], Bounded(0, 100_000)] = ()
    prints: Annotated[tuple[PrintSite, ...], Bounded(0, 100_000)] = ()
    options: KernelOptions = field(default_factory=KernelOptions)
    span: SourceSpan | None = None
    module: Name | None = None
    module_data: Annotated[tuple[Argument, ...], Bounded(0, 10_000)] = ()
    bind_name: Name | None = None
    host_program: bool = False
    bound_procedures: Annotated[tuple[BoundProcedure, ...], Bounded(0, 10_000)] = ()

    def __post_init__(self):
        if self.assumptions is None:
            object.__setattr__(self, "assumptions", isl.Set("{ : }"))

    # {{{ lookups

    @property
    def arg_dict(self) -> dict:
        return {a.name: a for a in self.args}

    @property
    def id_to_insn(self) -> dict:
        return {insn.id: insn for insn in self.instructions}

    def insn(self, insn_id: str) -> Instruction:
        return self._insn_index[insn_id]

    @cached_property
    def _insn_index(self) -> dict:
        # built once per kernel object (the kernel is immutable)
        return {insn.id: insn for insn in self.instructions}

    @cached_property
    def _arg_index(self) -> dict:
        # the first argument of each name (built once per kernel object)
        out: dict = {}
        for a in self.args:
            out.setdefault(a.name, a)
        return out

    def variable(self, name: str):
        """The argument or temporary called *name* (KeyError if none)."""
        a = self._arg_index.get(name)
        return a if a is not None else self.temporaries[name]

    def has_variable(self, name: str) -> bool:
        return name in self.temporaries or name in self._arg_index

    def all_inames(self) -> tuple[str, ...]:
        """Every iname, in domain order (outer loops of the source first)."""
        return self._all_inames

    @cached_property
    def _all_inames(self) -> tuple[str, ...]:
        # computed once per kernel object (the kernel is immutable)
        out = []
        for dom in self.domains:
            out.extend(dom.get_var_names(isl.dim_type.set))
        return tuple(out)

    @cached_property
    def iname_domain_index(self) -> FrozenMap:
        """Each iname -> the index of the domain that introduces it."""
        out = {}
        for idx, dom in enumerate(self.domains):
            for name in dom.get_var_names(isl.dim_type.set):
                out[name] = idx
        return FrozenMap(out)

    def iname_tag(self, iname: str) -> InameTag:
        from f2loopy.ir.tags import SequentialTag
        return self.iname_tags.get(iname, SequentialTag())

    def hardware_inames(self) -> frozenset:
        return frozenset(i for i, t in self.iname_tags.items() if t.hardware)

    def all_variable_names(self) -> set[str]:
        return ({a.name for a in self.args} | set(self.temporaries)
                | set(self.all_inames()) | set(self.substitutions))

    def written_variables(self) -> frozenset:
        return self._written

    @cached_property
    def _written(self) -> frozenset:
        return frozenset(n for insn in self.instructions for n in insn.assignee_names())

    @property
    def extent_args(self) -> tuple[ScalarArg, ...]:
        """The extents of assumed-shape arrays (role :class:`~f2loopy.ir.roles.
        Extent`): kernel arguments that the host glue takes from the arrays."""
        return tuple(a for a in self.args
                     if isinstance(a, ScalarArg) and isinstance(a.role, Extent))

    @property
    def fortran_args(self) -> tuple[Argument, ...]:
        """The arguments of the Fortran subroutine, in order: :attr:`args`
        whose role is a dummy or a component of one."""
        return tuple(a for a in self.args if isinstance(a.role, CALLER_ROLES))

    @property
    def storage_args(self) -> tuple[Argument, ...]:
        """The module variables the kernel uses (role :class:`~f2loopy.ir.
        roles.Stored`)."""
        return tuple(a for a in self.args if isinstance(a.role, Stored))

    @property
    def result_arg(self) -> Argument | None:
        """The result of a Fortran function translated as a kernel (role
        :class:`~f2loopy.ir.roles.Result`: a scalar, or an array for an
        array-valued function), or None for a subroutine."""
        for a in self.args:
            if isinstance(a.role, Result):
                return a
        return None

    # }}}

    @property
    def temporary_variables(self) -> FrozenMap:
        """loopy's name of :attr:`temporaries`."""
        return self.temporaries

    def __call__(self, queue: Any, *args: Any, **kwargs: Any) -> tuple[Any, tuple]:
        """Run the kernel on *queue*, as loopy's kernels run: arguments by
        keyword, returns ``(event, outputs)``; see :func:`call_translation_unit`."""
        return call_translation_unit(self, queue, *args, **kwargs)

    def __str__(self) -> str:
        from f2loopy.ir.printing import kernel_to_str
        return kernel_to_str(self)


def call_translation_unit(what: Kernel | TranslationUnit, queue: Any, *args: Any,
                          **kwargs: Any) -> tuple[Any, tuple]:
    """Run a kernel (or a translation unit of one kernel) on *queue*.

    The IR does not know how to run code: the host glue does
    (:func:`f2loopy.glue.call.call_kernel`, which documents the arguments and
    the result), which the package installs in :mod:`f2loopy.kernel_runner`;
    the IR imports no later stage.
    """
    from f2loopy import kernel_runner
    return kernel_runner.run(what, queue, *args, **kwargs)


class TranslationUnit:
    """The kernels of one Fortran file, in file order.

    Unpacks like a sequence (``f_r, f_s = parse_fortran(...)``) and indexes
    like a mapping (``tu["refFluxR"]``, case-insensitively as Fortran is).
    """

    def __init__(self, kernels, filename: str = "<string>", source: str = ""):
        self.kernels = tuple(kernels)
        self.filename = filename
        self.source = source

    def __iter__(self):
        return iter(self.kernels)

    def __len__(self) -> int:
        return len(self.kernels)

    def __getitem__(self, key):
        if isinstance(key, int):
            return self.kernels[key]
        for k in self.kernels:
            if k.name == key:
                return k
        for k in self.kernels:
            if k.name.lower() == str(key).lower():
                return k
        raise KeyError(f"no subroutine named {key!r} (have: {', '.join(self.keys())})")

    def __contains__(self, key) -> bool:
        try:
            self[key]
        except KeyError:
            return False
        return True

    def keys(self):
        return [k.name for k in self.kernels]

    def values(self):
        return list(self.kernels)

    def items(self):
        return [(k.name, k) for k in self.kernels]

    def with_entrypoints(self, names: str | list[str] | tuple[str, ...]) -> "TranslationUnit":
        """The unit of the kernels *names* only (a name, a comma-separated
        string, or a list), as loopy's ``with_entrypoints``."""
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        return TranslationUnit([self[n] for n in names], self.filename, self.source)

    def _key(self) -> tuple:
        key = self.__dict__.get("_eq_key")
        if key is None:
            import json

            from f2loopy.ir.serialize import encode_kernel
            key = tuple(json.dumps(encode_kernel(k), sort_keys=True) for k in self.kernels)
            self.__dict__["_eq_key"] = key
        return key

    def __eq__(self, other: object) -> bool:
        """Equal when the kernels are, in order, down to the kind of every
        literal (``1.1`` and ``1.1d0`` differ)."""
        if not isinstance(other, TranslationUnit):
            return NotImplemented
        return self is other or self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __call__(self, queue: Any, *args: Any, **kwargs: Any) -> tuple[Any, tuple]:
        """Run the unit's kernel on *queue* (loopy's ``t_unit(queue, a=...)``):
        arguments by keyword, arrays the kernel only writes may be omitted
        (they are allocated); returns ``(event, outputs)``."""
        return call_translation_unit(self, queue, *args, **kwargs)

    def with_kernel(self, kernel: Kernel) -> "TranslationUnit":
        ks = [kernel if k.name == kernel.name else k for k in self.kernels]
        if kernel.name not in self.keys():
            ks.append(kernel)
        return TranslationUnit(ks, self.filename, self.source)

    @property
    def default_entrypoint(self) -> Kernel:
        if len(self.kernels) != 1:
            raise ValueError("translation unit has several kernels; index it by name")
        return self.kernels[0]

    def __repr__(self) -> str:
        return f"TranslationUnit({', '.join(self.keys())})"

    def __str__(self) -> str:
        return "\n".join(str(k) for k in self.kernels)
