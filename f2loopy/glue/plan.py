"""The host plan of a generated kernel: what every glue does around it.

A glue (Python ``NAME_cl.py``, Fortran ``NAME_cl.f90``, the C file's
description of the kernels) takes the caller's arguments, checks them,
converts and transfers them, runs one launch or a sequence of launches in
host loops, reads the error buffer and copies results back.  What to do is
the same for every target; :func:`host_plan` computes it once per generated
kernel as an immutable value, and the glues only print it
(:mod:`f2loopy.glue.python`, :mod:`f2loopy.glue.fortran`,
:mod:`f2loopy.glue.fortran_c`).

The steps, in the order a glue runs them:

1. :class:`Extent`: an assumed-shape extent taken from the array passed;
   :class:`Dope`: an extent, lower bound or allocation flag of an
   allocatable module array, or the presence flag of an optional argument;
2. :class:`Scalar`: each scalar argument converted to the kernel's type;
3. :class:`FixedValue` and :class:`Assumption`: values the translation
   assumed, checked;
4. the kernel's parameters in order (:attr:`HostPlan.passed`): the
   arguments (:class:`Scalar`, :class:`Array`, whose :class:`Relayout`
   says how the kernel's layout differs from the caller's), the global
   temporaries (:class:`Scratch`) and the :class:`ErrorBuffer`;
5. the launches (:class:`Launch`, inside :class:`HostLoop`), each with the
   signature its kernel is checked against before the launch;
6. the error buffer read, results copied back, written scalars returned.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from pymbolic.mapper.substitutor import substitute

from f2loopy.codegen import GeneratedKernel
from f2loopy.diagnostics import CodegenError
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.roles import (
    Allocation, Character, Presence, character_of, has_allocation, is_optional)
from f2loopy.ir.roles import Extent as ExtentRole
from f2loopy.ir.types import is_complex, is_integer, is_logical

#: the reference of the error buffer among a launch's arguments
ERROR = " error"


@dataclass(frozen=True)
class Extent:
    """Argument *name* is extent *axis* (from 0) of array *array*, an
    assumed-shape dummy of Fortran rank *rank*: taken from the array passed."""

    name: str
    array: str
    axis: int
    rank: int
    optional: bool = False    # the array is an optional argument (0 where absent)


@dataclass(frozen=True)
class Dope:
    """Argument *name* (int32, not the caller's) is what the host knows of
    argument *array*: its extent or lower bound along *axis* (from 0) or
    whether it is allocated (an allocatable module array:
    :class:`~f2loopy.ir.roles.Allocation`; 0 and 1 and 0 while
    unallocated), or whether the optional dummy *array* is present (*what*
    ``"present"``: :class:`~f2loopy.ir.roles.Presence`)."""

    name: str
    what: str                 # "extent", "lbound", "allocated" or "present"
    array: str
    axis: int


@dataclass(frozen=True)
class Scalar:
    """A scalar argument, converted to the kernel's type.

    :attr role: ``"value"`` (passed by value), ``"scalar_ref"`` (the kernel
        writes it: a one-element buffer) or ``"fixed"`` (fixed at translation
        time: checked, not passed).
    :attr kind: what the caller passes: ``"integer"``, ``"real"``,
        ``"complex"``, ``"logical"`` (kind 4) or ``"logicalK"``, and for a
        character flag ``"character"`` (assumed length) or ``"characterL"``,
        ``"message"`` for a character dummy the kernel assigns
        (:mod:`f2loopy.frontend.messages`: the kernel gets 0 and writes the
        code of the text assigned, ``character.messages``).
    :attr hidden: an :class:`Extent` or a :class:`Dope` (the caller does
        not pass it).
    :attr optional: an optional dummy (absent: zero is passed, a written
        one's new value is not stored).
    """

    name: str
    role: str
    dtype: np.dtype
    kind: str
    logical_kind: int
    character: Character | None   # how a character dummy is seen (None: no character)
    hidden: bool
    written: bool
    arg: Any                  # the IR argument (for documentation)
    optional: bool = False


@dataclass(frozen=True)
class FixedValue:
    """Argument *name* must equal *value* (``fix_parameters``); *what* names it."""

    name: str
    dtype: np.dtype
    value: Any
    what: str


@dataclass(frozen=True)
class Assumption:
    """The kernel's assumptions: *condition* (a pymbolic condition of its
    scalar arguments), as isl wrote it (*text*), over the arguments *names*."""

    condition: Any
    text: str
    names: tuple


@dataclass(frozen=True)
class Relayout:
    """The kernel stores an array in another layout than the caller's.

    :attr fortran_shape, fortran_lower_bounds: the caller's declaration.
    :attr splits: ``(axis, count, order)`` of each split, in order.
    :attr perm: the kernel's axes, slowest-varying first.
    :attr device_shape: the kernel's extents in the order of *perm*.
    """

    fortran_shape: tuple
    fortran_lower_bounds: tuple
    splits: tuple
    perm: tuple
    device_shape: tuple


@dataclass(frozen=True)
class Array:
    """An array argument: checked against its declaration, transferred to the
    device and, if *written*, back.  *logical_kind* is 0 for other types.
    An *optional* one may be absent (an empty buffer is passed); an
    *allocatable* one is a module array or an array component of a derived-type
    argument, an empty buffer while unallocated."""

    name: str
    dtype: np.dtype
    shape: tuple
    written: bool
    logical_kind: int
    relayout: Relayout | None
    arg: Any                  # the IR argument (declaration, layout details)
    optional: bool = False
    allocatable: bool = False


@dataclass(frozen=True)
class Scratch:
    """A global temporary: *elements* x *itemsize* bytes, not initialised."""

    name: str
    elements: Any
    itemsize: int


@dataclass(frozen=True)
class ErrorBuffer:
    """The kernel's error buffer (zeroed, read after the launches): *sites*
    are the error sites of the kernel (``stop``, ``error stop``, ...)."""

    sites: tuple


@dataclass(frozen=True)
class Launch:
    """One launch of the OpenCL kernel *c_name*.

    :attr arguments: what the kernel gets, in order: a kernel argument's
        name, a :class:`Scratch`'s name, :data:`ERROR`, or the iname of an
        enclosing :class:`HostLoop` (in *host*).
    :attr signature: what the kernel takes, read from its generated code:
        ``"buffer"`` or the numpy dtype name of a scalar; every glue checks
        the arguments it sets against it before the launch.
    :attr sizes_vary: the launch's sizes depend on host loop indices.
    :attr parameters: the kernel's own arguments (:class:`Scalar`,
        :class:`Array`; a host loop index is a scalar), in order.
    """

    c_name: str
    arguments: tuple
    parameters: tuple
    host: frozenset
    num_groups: tuple
    local_size: tuple
    fixed_local_size: bool
    signature: tuple
    sizes_vary: bool
    generated: GeneratedKernel


@dataclass(frozen=True)
class HostLoop:
    """``for iname = lower .. upper`` on the host, running *body* each time."""

    iname: str
    lower: Any
    upper: Any
    body: tuple


@dataclass(frozen=True)
class HostPlan:
    """Everything a glue does around one generated kernel (see the module
    docstring).  *sequence* is false for a kernel of one launch (then
    *launches* holds that launch alone)."""

    name: str
    c_name: str
    build_options: tuple
    extents: tuple
    scalars: tuple
    fixed: tuple
    assumption: Assumption | None
    passed: tuple             # Scalar | Array | Scratch | ErrorBuffer, the kernel's order
    arguments: tuple          # Scalar | Array, the kernel's argument order
    scratch: tuple
    error: ErrorBuffer | None
    launches: tuple           # Launch | HostLoop
    sequence: bool
    names: tuple              # every argument of the kernel (names a printer must not reuse)
    dope: tuple = ()          # Dope, the kernel's order
    #: (optional dummy, its presence flag) of each optional argument
    presence: tuple = ()
    #: the function's result is an array (the glue makes it and returns it)
    array_result: Any = None
    #: (argument name, macro) of each argument the program is compiled for per
    #: value (:attr:`~f2loopy.codegen.GeneratedKernel.specialized`): the glue
    #: adds ``-DMACRO=value`` to :attr:`build_options` and caches a program
    #: per value
    specialized: tuple = ()

    def presence_flag(self, name: str) -> str | None:
        """The presence flag of optional argument *name* (None: not optional)."""
        return dict(self.presence).get(name)

    def launch_list(self) -> list:
        """Every :class:`Launch`, in order."""
        out: list = []

        def walk(items):
            for s in items:
                if isinstance(s, HostLoop):
                    walk(s.body)
                else:
                    out.append(s)
        walk(self.launches)
        return out


# {{{ building the plan

#: id of a generated kernel -> (weak reference to it, its plan)
_PLANS: dict[int, tuple[Any, HostPlan]] = {}


def host_plan(gk: GeneratedKernel) -> HostPlan:
    """The plan of *gk*, computed once per generated kernel (the Python and
    the Fortran glue of a translation share it)."""
    hit = _PLANS.get(id(gk))
    if hit is not None and hit[0]() is gk:
        return hit[1]
    plan = _build(gk)
    key = id(gk)

    def forget(_ref: object, plans: dict = _PLANS) -> None:
        # (called when gk is freed: its id may then be another kernel's; the table
        # is bound here, as the module's globals may be gone at interpreter exit)
        plans.pop(key, None)
    _PLANS[key] = (weakref.ref(gk, forget), plan)
    return plan


def _build(gk: GeneratedKernel) -> HostPlan:
    k = gk.kernel
    dope = tuple(_dope(a) for a in k.args if isinstance(a.role, (Allocation, Presence)))
    presence = tuple((d.array, d.name) for d in dope if d.what == "present")
    optional = {d for d, _ in presence}
    extents = tuple(_extent(k, a, optional) for a in k.extent_args)
    hidden = {e.name for e in extents} | {d.name for d in dope}
    arguments = tuple(_argument(ka, hidden) for ka in gk.arguments)
    scalars = tuple(a for a in arguments if isinstance(a, Scalar))
    fixed = tuple(FixedValue(ka.name, np.dtype(ka.dtype), ka.ir_arg.fixed_value, ka.ir_arg.what)
                  for ka in gk.arguments if ka.kind == "fixed")
    scratch = tuple(Scratch(sb.name, sb.elements, sb.itemsize) for sb in gk.scratch)
    error = ErrorBuffer(tuple(k.error_sites)) if k.error_sites else None
    passed = tuple(a for a in arguments if not (isinstance(a, Scalar) and a.role == "fixed"))
    passed += scratch + ((error,) if error is not None else ())
    if gk.launches:
        launches = _launches(gk.launches, frozenset(), hidden)
    else:
        refs = tuple(ERROR if isinstance(p, ErrorBuffer) else p.name for p in passed)
        launches = (_launch(gk, refs, frozenset(), arguments),)
    return HostPlan(k.name, gk.c_name, tuple(gk.build_options), extents, scalars, fixed,
                    _assumption(k), passed, arguments, scratch, error, launches,
                    bool(gk.launches), tuple(a.name for a in k.args), dope, presence,
                    k.result_arg if k.result_arg is not None and k.result_arg.shape else None,
                    gk.specialized)


def _extent(k, arg, optional: set) -> Extent:
    role = arg.role
    if not isinstance(role, ExtentRole):
        raise CodegenError(f"internal error: '{arg.name}' is no extent of an array")
    return Extent(arg.name, role.array, role.axis, k.variable(role.array).fortran_ndim,
                  role.array in optional)


def _dope(arg) -> Dope:
    role = arg.role
    if isinstance(role, Presence):
        return Dope(arg.name, "present", role.dummy, 0)
    assert isinstance(role, Allocation)
    return Dope(arg.name, role.what, role.array, role.axis)


def _argument(ka, hidden: set):
    a = ka.ir_arg
    if ka.kind == "array":
        lkind = a.logical_kind if is_logical(ka.dtype) else 0
        return Array(ka.name, np.dtype(ka.dtype), tuple(a.shape), bool(ka.written), lkind,
                     _relayout(a), a, is_optional(a.role), has_allocation(a.role))
    character = character_of(a.role)
    lkind = a.logical_kind
    if character is not None and character.messages:
        kind = "message"        # the kernel writes which text it assigned
    elif character is not None:
        kind = "character" if character.length is None else f"character{character.length}"
    else:
        kind = _kind(ka.dtype)
        if kind == "logical" and lkind != 4:
            kind = f"logical{lkind}"
    return Scalar(ka.name, ka.kind, np.dtype(ka.dtype), kind, lkind, character,
                  ka.name in hidden, bool(ka.written), a, is_optional(a.role))


def _kind(dtype) -> str:
    dt = np.dtype(dtype)
    if is_logical(dt):
        return "logical"
    if is_integer(dt):
        return "integer"
    if is_complex(dt):
        return "complex"
    return "real"


def slowest_first(arg) -> list:
    """Kernel axes of *arg* from the slowest- to the fastest-varying in memory."""
    def rank(a):
        t = arg.axis_tags[a]
        return -1 if t.kind == "vec" else t.order
    return sorted(range(arg.ndim), key=rank, reverse=True)


def _relayout(arg) -> Relayout | None:
    layout = arg.fortran_layout
    if layout is None:
        return None
    perm = tuple(slowest_first(arg))
    return Relayout(tuple(layout.shape), tuple(layout.lower_bounds), tuple(layout.splits), perm,
                    tuple(arg.shape[a] for a in perm))


def _assumption(k) -> Assumption | None:
    from f2loopy.ir.isl_tools import expr_from_set
    import islpy as isl
    a = k.assumptions
    if a.plain_is_universe():
        return None
    cond = expr_from_set(a)
    if cond is True:
        return None
    text = str(a)
    text = text[text.index(":") + 1:].rstrip("} ").strip() if ":" in text else text
    names = tuple(n for n in a.get_var_names(isl.dim_type.param)
                  if any(x.name == n for x in k.args))
    return Assumption(cond, text, names)


def _launches(steps, host: frozenset, hidden: set) -> tuple:
    from f2loopy.codegen.phases import HostLoop as PhaseLoop
    out: list = []
    for s in steps:
        if isinstance(s, PhaseLoop):
            out.append(HostLoop(s.iname, s.lower, s.upper,
                                _launches(s.body, host | {s.iname}, hidden)))
            continue
        refs = [ka.name for ka in s.arguments if ka.kind != "fixed"]
        refs += [sb.name for sb in s.scratch]
        if s.kernel.error_sites:
            refs.append(ERROR)
        out.append(_launch(s, tuple(refs), host,
                           tuple(_argument(ka, hidden) for ka in s.arguments)))
    return tuple(out)


def _launch(gk: GeneratedKernel, refs: tuple, host: frozenset, parameters: tuple) -> Launch:
    signature = launch_signature(gk)
    if len(signature) != len(refs):
        raise CodegenError(f"internal error: the glue passes {len(refs)} arguments to "
                           f"kernel {gk.c_name}, which takes {len(signature)}")
    sizes = [*gk.grid.num_groups, *gk.grid.local_size]
    vary = any(not isinstance(x, (int, np.integer)) and bool(variables_read(x) & host)
               for x in sizes)
    return Launch(gk.c_name, refs, parameters, host, tuple(gk.grid.num_groups),
                  tuple(gk.grid.local_size),
                  bool(gk.grid.fixed_local_size), signature, vary, gk)


#: OpenCL C scalar type -> the numpy dtype the glue passes for it
_SCALAR_DTYPES = {"char": "int8", "short": "int16", "int": "int32", "long": "int64",
                  "uchar": "uint8", "ushort": "uint16", "uint": "uint32", "ulong": "uint64",
                  "float": "float32", "double": "float64", "float2": "complex64",
                  "double2": "complex128", "cfloat_t": "complex64", "cdouble_t": "complex128"}


def launch_signature(gk: GeneratedKernel) -> tuple:
    """What each parameter of the OpenCL kernel *gk* is, in order, read from
    the generated C (``__kernel void name(...)``): ``"buffer"`` or the numpy
    dtype name of a scalar passed by value.  It must agree with what the glue
    passes (the kernel's arguments, then its global temporaries, then the
    error buffer): a disagreement is an internal error here, at translation
    time, and the glue checks every launch against it at run time."""
    # (the first line that is no preprocessor line: a kernel compiled per
    # value is inside '#if defined(MACRO)')
    header = next((line for line in gk.device_code.split("\n")
                   if not line.startswith("#")), "")
    head, _, rest = header.partition(f"{gk.c_name}(")
    params = [x.strip() for x in rest.rstrip(")").split(",") if x.strip()] \
        if head.startswith("__kernel void") and rest.endswith(")") else None
    declared = []
    for param in params or ():
        if param.startswith("__global") or "*" in param:
            declared.append("buffer")
            continue
        ctype = param.split()[0]
        if ctype not in _SCALAR_DTYPES:
            raise CodegenError(f"kernel {gk.c_name}: parameter '{param}' has a type the glue "
                               "cannot pass")
        declared.append(_SCALAR_DTYPES[ctype])
    passed = []
    for ka in gk.arguments:
        if ka.kind in ("array", "scalar_ref"):
            passed.append("buffer")
        elif ka.kind == "value":
            dt = np.dtype(ka.dtype)
            # (a logical is passed as an int, as the glue converts it)
            passed.append("int32" if dt == np.bool_ else dt.name)
    passed += ["buffer"] * len(gk.scratch)
    if gk.kernel.error_sites:
        passed.append("buffer")
    if params is None or declared != passed:
        raise CodegenError(f"internal error: the glue would pass {tuple(passed)} to kernel "
                           f"{gk.c_name}, whose parameters are {tuple(declared)}")
    return tuple(declared)


def rename_host(expr, rename: dict | None):
    """*expr* with host loop indices renamed as a printer holds them."""
    return substitute(expr, rename) if rename else expr

# }}}
