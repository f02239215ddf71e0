"""What a kernel argument stands for in the Fortran program: its *role*.

Every :class:`~f2loopy.ir.kernel.ScalarArg` and
:class:`~f2loopy.ir.kernel.ArrayArg` carries exactly one role, a value of the
sum type :data:`ArgRole`.  The role says where the host glue takes the
argument's value from:

* :class:`Dummy`: a dummy argument of the Fortran procedure, passed by the
  caller (the default);
* :class:`Component`: one component of a derived-type dummy argument (the
  caller passes the object, the glue passes its components);
* :class:`Result`: the result of a Fortran function translated as a kernel
  (the glue returns it);
* :class:`Extent`: the extent of an assumed-shape array argument (the glue
  takes it from the array the caller passes);
* :class:`Allocation`: an extent, lower bound or the allocation flag of an
  allocatable module array (the glue takes it from the module's allocation);
* :class:`Presence`: whether an optional dummy argument is present;
* :class:`ModuleVariable`, :class:`CommonMember`, :class:`SavedLocal`: data
  that lives outside the procedure (a :class:`Stored` role: the glue passes
  the variable itself, not an argument of the caller).

Readers dispatch on the role's class (``isinstance(arg.role, Extent)``),
never on loose flags.  A new kind of argument is a new role class (added to
:data:`ArgRole`) or a new field of one; the serializer follows the fields.
Where planned extensions go: an ``optional`` dummy (that may be absent) is a
field of :class:`Dummy`; an allocatable module array (its shape known only
at run time, possibly unallocated) is a field of :class:`ModuleVariable`,
with its extents as :class:`Extent` arguments of the array argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal, Union

import numpy as np

from f2loopy.ir.fieldtypes import Bounded, Name, NameOrEmpty, Text, Values


def _same_values(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and a.dtype == b.dtype and bool((a == b).all())


@dataclass(frozen=True)
class Character:
    """A ``character`` dummy: the kernel receives the int32 code of the
    caller's string (:func:`f2loopy.frontend.characters.character_code`),
    which the host glue computes.

    :attr length: the declared length (the dummy sees that many characters
        of the actual argument), None for an assumed length (``len=*``).
    """

    length: Annotated[int, Bounded(1, 65535)] | None = None
    #: a dummy the kernel assigns (an error message, as CCPP's ``errmsg``):
    #: the texts it may be given, in the order of their first assignment in
    #: the source.  The kernel's int32 argument then holds *which* text was
    #: assigned last: 0 while none was (the glue passes 0 and keeps the
    #: caller's value), ``i`` for ``messages[i - 1]``; the glues turn the code
    #: back into the text.  Empty for a dummy the kernel only reads (a flag).
    messages: Annotated[tuple[Annotated[str, Text(10_000)], ...], Bounded(0, 10_000)] = ()


@dataclass(frozen=True)
class Dummy:
    """A dummy argument of the Fortran procedure, passed by the caller.

    :attr by_value: the dummy has the ``value`` attribute (a copy of the
        actual argument, which the procedure leaves unchanged).
    :attr character: for a ``character`` dummy, how it is seen; None else.
    """

    by_value: bool = False
    character: Character | None = None
    #: the dummy is ``optional``: the caller may leave it out; the kernel
    #: learns whether it is present from a :class:`Presence` argument
    optional: bool = False


@dataclass(frozen=True)
class Component:
    """A component of a derived-type dummy argument: the host glue takes the
    object and passes this component of it.

    :attr path: the names from the dummy down (``("p", "q", "x")`` for
        ``p%q%x``), at least two.
    :attr type_module: the module that defines the dummy's type ("" if none).
    :attr type_name: the dummy's type.
    :attr type_rank: the dummy's rank (0: a scalar of the type; else an
        array of it, whose axes come after the component's own in the
        flattened array).
    """

    path: Annotated[tuple[Name, ...], Bounded(2, 32)]
    type_module: NameOrEmpty
    type_name: Name
    type_rank: Annotated[int, Bounded(0, 15)]
    #: an ``allocatable`` (or ``pointer``) array component of deferred shape
    #: (``real(8), allocatable :: data(:,:)``): its extents, lower bounds and
    #: allocation are the kernel's :class:`Allocation` arguments, which the
    #: host glue takes from the component of the object the caller passes
    allocatable: bool = False
    #: a ``pointer`` array component (with :attr:`allocatable`): the kernel
    #: only reads and writes the elements of the array it is associated with
    pointer: bool = False
    #: the places in :attr:`path` of scalar pointer components of derived
    #: type (``(1,)`` for ``fld%grid%dx`` of ``type(grid_type), pointer ::
    #: grid``): the kernel only reads through them; the host glue passes
    #: what they point to (``f2loopy check`` gives each a target)
    pointers: Annotated[tuple[Annotated[int, Bounded(1, 31)], ...], Bounded(0, 31)] = ()

    @property
    def root(self) -> str:
        """The dummy argument the component belongs to."""
        return self.path[0]


@dataclass(frozen=True)
class Result:
    """The result of a Fortran function translated as a kernel (intent
    out): not an argument of the Fortran function; the host glue returns it."""


@dataclass(frozen=True)
class Extent:
    """The extent of an assumed-shape array argument (``a(:)``): not an
    argument of the Fortran procedure; the host glue takes its value from the
    array the caller passes.  Such arguments come after the Fortran ones.

    :attr array: the array argument's name.
    :attr axis: the axis, from 0.
    """

    array: Name
    axis: Annotated[int, Bounded(0, 63)]


@dataclass(frozen=True)
class Allocation:
    """What the host glue knows of the allocation of an allocatable module
    array (:attr:`ModuleVariable.allocatable`) or of an allocatable or
    pointer component of a derived-type dummy (:attr:`Component.allocatable`):
    not an argument of the Fortran procedure.

    :attr array: the array argument's name.
    :attr what: ``"extent"`` or ``"lbound"`` of :attr:`axis` (0 and 1 while
        unallocated), or ``"allocated"`` (1 or 0; axis 0).
    :attr axis: the axis, from 0.
    """

    array: Name
    what: Literal["extent", "lbound", "allocated"]
    axis: Annotated[int, Bounded(0, 63)] = 0


@dataclass(frozen=True)
class Presence:
    """Whether optional dummy argument :attr:`dummy` is present (1 or 0): not
    an argument of the Fortran procedure; the host glue sets it."""

    dummy: Name


@dataclass(frozen=True, eq=False, kw_only=True)
class Stored:
    """Data that lives outside the procedure (a module variable, a common
    block member, a saved local): not an argument of the Fortran procedure;
    the host glue passes the variable itself.

    :attr init: its initial value (a numpy array in Fortran order, 0-d for a
        scalar) or None.
    """

    init: Values | None = None

    #: the first element of :attr:`key`
    kind: ClassVar[str] = ""

    @property
    def owner(self) -> str:
        """The module, common block or procedure the data belongs to."""
        raise NotImplementedError

    @property
    def names(self) -> tuple[str, ...]:
        """The variable's name, then the components down to the data."""
        raise NotImplementedError

    @property
    def key(self) -> tuple[str, ...]:
        """``(kind, owner, *names)``: identifies the storage (equal keys are
        the same data), e.g. ``("module", "phys", "table")``."""
        return (self.kind, self.owner, *self.names)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Stored)
        return self.key == other.key and _same_values(self.init, other.init)

    def __hash__(self) -> int:
        return hash(self.key)


@dataclass(frozen=True, eq=False, kw_only=True)
class ModuleVariable(Stored):
    """A variable of a module (or of the main program hosting the kernel).

    :attr module: the module's name (lower-case).
    :attr path: the variable's name, then the components down to the data
        for a component of a derived-type module variable (lower-case).
    """

    module: Name
    path: Annotated[tuple[Name, ...], Bounded(1, 32)]
    #: an allocatable module array: its extents, lower bounds and allocation
    #: are the kernel's :class:`Allocation` arguments, which the host glue
    #: takes from the module's allocation (None in the Python glue while
    #: unallocated)
    allocatable: bool = False
    #: an allocatable-like module array that is a ``pointer`` (the kernel
    #: only reads and writes its elements; the Fortran glue asks
    #: ``associated`` where it asks ``allocated`` of an allocatable one)
    pointer: bool = False
    #: the variable (``path[0]``) is a pointer to a value of derived type
    #: (``type(grid_t), pointer :: u_grid``) whose components the kernel
    #: uses: the caller associates it (``f2loopy check`` allocates it)
    pointer_root: bool = False
    #: a component of a module array of derived type (``type(particle) ::
    #: p(n)``, ``p(i)%x(k)``), flattened into one array per component (a
    #: structure of arrays): the array's rank, whose axes come after the
    #: component's own (``p_x(k, i)``); 0 for any other variable
    type_rank: Annotated[int, Bounded(0, 15)] = 0
    kind: ClassVar[str] = "module"

    @property
    def owner(self) -> str:
        return self.module

    @property
    def names(self) -> tuple[str, ...]:
        return self.path


@dataclass(frozen=True, eq=False, kw_only=True)
class CommonMember(Stored):
    """A member of a common block (lower-case names)."""

    block: Name
    member: Name
    kind: ClassVar[str] = "common"

    @property
    def owner(self) -> str:
        return self.block

    @property
    def names(self) -> tuple[str, ...]:
        return (self.member,)


@dataclass(frozen=True, eq=False, kw_only=True)
class SavedLocal(Stored):
    """A ``save`` local variable of a procedure, kept by the glue between
    calls (lower-case names)."""

    procedure: Name
    name: Name
    kind: ClassVar[str] = "save"

    @property
    def owner(self) -> str:
        return self.procedure

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name,)


#: the role of an argument (see the module docstring)
ArgRole = Union[Dummy, Component, Result, Extent, Allocation, Presence, ModuleVariable,
                CommonMember, SavedLocal]

#: the roles of arguments the caller of the Fortran procedure passes
CALLER_ROLES = (Dummy, Component)


def stored(key: tuple[str, ...], init: np.ndarray | None = None, *,
           allocatable: bool = False, pointer: bool = False,
           pointer_root: bool = False,
           type_rank: int = 0) -> ModuleVariable | CommonMember | SavedLocal:
    """The role of the storage identified by *key* (see :attr:`Stored.key`)."""
    kind, owner, *names = key
    if kind == "module":
        return ModuleVariable(module=owner, path=tuple(names), init=init,
                              allocatable=allocatable, pointer=pointer,
                              pointer_root=pointer_root, type_rank=type_rank)
    if kind == "common" and len(names) == 1:
        return CommonMember(block=owner, member=names[0], init=init)
    if kind == "save" and len(names) == 1:
        return SavedLocal(procedure=owner, name=names[0], init=init)
    raise ValueError(f"invalid storage {key!r}")


def character_of(role: ArgRole) -> Character | None:
    """How a ``character`` dummy is seen (None for any other argument)."""
    return role.character if isinstance(role, Dummy) else None


def is_allocatable(role: ArgRole) -> bool:
    """Whether *role* is that of an allocatable module array."""
    return isinstance(role, ModuleVariable) and role.allocatable


def has_allocation(role: ArgRole) -> bool:
    """Whether *role* is that of an array whose bounds and allocation are
    :class:`Allocation` arguments: an allocatable (or pointer) module array or
    array component of a derived-type dummy."""
    return isinstance(role, (ModuleVariable, Component)) and role.allocatable


def is_optional(role: ArgRole) -> bool:
    """Whether *role* is that of an optional dummy argument."""
    return isinstance(role, Dummy) and role.optional
