"""Allocatable module arrays (``double precision, allocatable :: u(:,:)`` in a
module).

Such an array is module data (:mod:`f2loopy.frontend.module_data`) whose
bounds are known only at run time: the kernel receives, after the array, one
argument of role :class:`~f2loopy.ir.roles.Allocation` per axis for the extent and
one for the lower bound (``u_n1``, ``u_lb1``, ...), and, where the kernel asks
``allocated(u)``, a flag.  The host glue takes them from the module's
allocation: the Python glue from ``glue.<module>.<var>`` (None while
unallocated, else a Fortran-ordered array whose lower bounds are 1), the
Fortran glue from the module variable itself.  A kernel cannot allocate or
deallocate (that stays with the caller).
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.ir.kernel import ArrayArg, ScalarArg
from f2loopy.ir.roles import Allocation, Component, stored

#: what the kernel says for an ``allocate``/``deallocate`` statement
ALLOCATE_MESSAGE = (
    "'{stmt}' is not supported in a kernel (kernels cannot allocate memory): allocate "
    "the module array before the call (from Python assign a Fortran-ordered numpy array "
    "to glue.<module>.<array>, from Fortran allocate it as before) and deallocate it after")


def is_allocatable(sym) -> bool:
    return "allocatable" in sym.attributes


def is_pointer(sym) -> bool:
    return "pointer" in sym.attributes


def in_pointer(sym) -> bool:
    """Whether *sym* is a component of a module pointer to a derived-type
    value (``u_grid%ocean`` of ``type(grid_t), pointer :: u_grid``)."""
    return "pointer_root" in sym.attributes


def pointer_attribute(reader, entities) -> None:
    """Record the ``pointer`` attribute of the *entities* of a type
    declaration read by *reader*.  A pointer array of a module whose kernels
    only read and write its elements is treated as an allocatable module
    array (:func:`allocatable_attribute`): the glue takes the array it is
    associated with.  Pointer dummies and locals are located errors that
    say what to write instead."""
    for ent in entities.items:
        name = str(ent.items[0])
        if name.lower() in reader.dummy_names:
            raise reader.error(
                f"pointer dummy argument '{name}' is not supported (a kernel cannot change "
                f"what it points to): declare it as an assumed-shape array '{name}(:)' and "
                "pass the array it points to", name, UnsupportedFeatureError)
        if not reader.in_module or reader.in_program:
            where = "variable of a main program" if reader.in_program else "local variable"
            raise reader.error(
                f"pointer {where} '{name}' is not supported (pointer assignment is not "
                "translated): use the array it would point to directly (e.g. u(:, k) where "
                f"'{name} => u(:, k)'), or pass that array as an argument", name,
                UnsupportedFeatureError)
        sym = reader.declare(name)
        sym.attributes.add("allocatable")
        sym.attributes.add("pointer")


def allocatable_attribute(reader, entities) -> None:
    """Record the ``allocatable`` attribute of the *entities* of a type
    declaration read by *reader*: only module variables may have it."""
    for ent in entities.items:
        name = str(ent.items[0])
        if not reader.in_module and not reader.in_program and \
                name.lower() not in reader.dummy_names:
            # a work array of the procedure (f2loopy.frontend.local_allocatables)
            reader.declare(name).attributes.update(("allocatable", "local_allocatable"))
            continue
        if not reader.in_module or reader.in_program:
            where = "dummy argument" if name.lower() in reader.dummy_names else \
                "variable of a main program" if reader.in_program else \
                "local variable"
            raise reader.error(
                f"allocatable {where} '{name}' is not supported (only allocatable arrays of a "
                "module are: declare it in a module, or pass an explicit-shape array "
                f"{name}(n) allocated by the caller)", name, UnsupportedFeatureError)
        reader.declare(name).attributes.add("allocatable")


def deferred_entity(reader, sym) -> None:
    """Check that allocatable (or pointer) module variable *sym*, just
    declared, is an array of deferred shape."""
    what = "pointer" if is_pointer(sym) else "allocatable"
    if sym.dims is None and sym.derived is not None and is_pointer(sym):
        # a pointer to a value of derived type whose components kernels use
        # (type(grid_t), pointer :: u_grid): the caller associates it
        sym.attributes.discard("allocatable")
        return
    if sym.dims is None:
        where, plain = ("", "variable") if "local_allocatable" in sym.attributes else \
            (" of a module", "module variable")
        raise reader.error(f"{what} scalar '{sym.name}' is not supported (only {what} arrays"
                           f"{where} are: use a plain {plain})", sym.name,
                           UnsupportedFeatureError)
    if any(d[0] is not None or d[1] != ":" for d in sym.dims):
        raise reader.error(f"{what} array '{sym.name}' must have a deferred shape "
                           f"({sym.name}(:))", sym.name)


def deferred_dims(reader, sym, spec) -> list | None:
    """The axes ``(None, ":")`` of allocatable *sym* declared with the
    deferred shape *spec* (``u(:,:)``), or None if *sym* is not allocatable."""
    if not is_allocatable(sym):
        return None
    if any(s.items[0] is not None for s in spec.items):
        what = "pointer" if is_pointer(sym) else "allocatable"
        raise reader.error(f"{what} array '{sym.name}' must have a deferred shape "
                           f"({sym.name}(:))", sym.name)
    return [(None, ":") for _ in spec.items]


def _names(lowering, sym, base: str) -> dict:
    """``{"extent": [...], "lbound": [...]}`` names of the dope arguments of
    allocatable module array *sym* (IR name *base*) in the kernel being
    lowered (made once)."""
    st = lowering.root.st
    key = sym.storage_key or sym.storage or ("component", base.lower())
    rank = len(sym.dims)
    if is_struct_component(sym):
        # a component of an allocatable module array of derived type: the
        # array's own dope, shared by its components
        key, rank, base = sym.storage[:3], sym.struct_rank, sym.storage[2]
    names = st.allocatable_dope.get(key)
    if names is None:
        names = {"base": base, "extent": [lowering.root.fresh_name(f"{base}_n{k + 1}") for k in range(rank)],
                 "lbound": [lowering.root.fresh_name(f"{base}_lb{k + 1}")
                            for k in range(rank)]}
        st.allocatable_dope[key] = names
        st.dope_names.update(names["extent"] + names["lbound"])
    return names


def is_module_struct_array(sym) -> bool:
    """Whether *sym* is a module array of derived type (whose flattened
    components are module arrays)."""
    if sym.derived is None or not sym.dims or not sym.components or sym.storage is not None:
        return False
    from f2loopy.frontend.derived_types import leaves
    return any(leaf.storage is not None for leaf in leaves(sym))


def is_struct_component(sym) -> bool:
    """Whether *sym* is a component of an allocatable module array of
    derived type (``p_x`` of ``type(particle), allocatable :: p(:)``)."""
    return bool(sym.struct_rank) and sym.storage is not None and is_allocatable(sym)


def _own_bounds(sym) -> tuple:
    """``(lower bounds, upper bounds)`` of the component's own axes (constant)
    of component *sym* of an array of derived type."""
    own = sym.dims[:len(sym.dims) - sym.struct_rank]
    return (tuple(int(str(lo)) for lo, _ in own), tuple(int(str(hi)) for _, hi in own))


def allocatable_bounds(lowering, sym, name: str) -> tuple:
    """``(lower bounds, upper bounds)`` of allocatable module array *sym* (IR
    name *name*): expressions in its dope arguments (a component of an
    array of derived type: its own axes constant, then the array's)."""
    names = _names(lowering, sym, name)
    lbs = tuple(p.Variable(n) for n in names["lbound"])
    ubs = tuple(p.Sum((lb, p.Variable(n), -1)) for lb, n in zip(lbs, names["extent"], strict=True))
    if is_struct_component(sym):
        own_lbs, own_ubs = _own_bounds(sym)
        return own_lbs + lbs, own_ubs + ubs
    return lbs, ubs


def component_bounds(lowering, sym) -> tuple:
    """``(lower bounds, upper bounds)`` of allocatable or pointer array
    component *sym* of a derived-type dummy argument of the kernel: its
    extents and lower bounds are arguments (role
    :class:`~f2loopy.ir.roles.Allocation`) that the host glue takes from the
    component of the object the caller passes.  A component of a local
    variable is a located error (a kernel cannot allocate memory)."""
    root = sym.path[0]
    if lowering.parent is not None or sym.name.lower() not in lowering.root.dummies:
        what = "pointer" if is_pointer(sym) else "allocatable"
        raise lowering.error(
            f"{what} component '{'%'.join(sym.path)}' of local variable '{root}' is not "
            "supported (a kernel cannot allocate memory): pass the variable as an argument, "
            f"or use a local array of fixed size instead of '{'%'.join(sym.path)}'",
            sym.path[-1], UnsupportedFeatureError)
    return allocatable_bounds(lowering, sym, sym.name)


def allocated_flag(lowering, arg_nodes, ir_name, intrinsic: str = "allocated"):
    """The value of ``allocated(array)`` (or ``associated(pointer)`` of a
    module pointer array, *intrinsic*): a comparison of its flag argument
    (*ir_name*: symbol -> the array's IR name in the kernel)."""
    from fparser.two import Fortran2003 as F
    conv = lowering.converter()
    key = "pointer" if intrinsic == "associated" else "array"
    positional, kw = conv._split_args(intrinsic, arg_nodes, {key})
    args = list(positional) + ([kw[key]] if key in kw else [])
    if len(args) != 1:
        raise lowering.error(f"intrinsic '{intrinsic}' takes 1 argument here (the target "
                             "argument of 'associated' is not supported)", intrinsic,
                             UnsupportedFeatureError)
    sym = lowering.symtab.get(str(args[0])) if isinstance(args[0], F.Name) else None
    if isinstance(args[0], F.Data_Ref):
        from f2loopy.frontend.derived_types import selector_symbol
        sym = selector_symbol(lowering.symtab, args[0])
        if sym is not None and "allocatable" in sym.attributes and sym.storage is None:
            # a component of a derived-type dummy: the flag of the array it is
            # (in a procedure being inlined, the caller's)
            what = "associated" if is_pointer(sym) else "allocated"
            if intrinsic != what:
                spelled = "%".join(sym.path)
                raise lowering.error(f"'{spelled}' is "
                                     f"{'a pointer' if is_pointer(sym) else 'allocatable'}: "
                                     f"ask {what}({spelled}), not {intrinsic}", intrinsic)
            return _flag(lowering, sym, lowering.view(sym, sym.name).ir_name)
    if intrinsic == "associated":
        if sym is None or not is_pointer(sym) or sym.storage is None:
            raise lowering.error("the argument of 'associated' must be a pointer array of a "
                                 "module (one argument: pointer locals, dummies and the "
                                 "target argument are not supported)", "associated",
                                 UnsupportedFeatureError)
    elif sym is not None and is_pointer(sym):
        raise lowering.error(f"'{sym.name}' is a pointer: ask associated({sym.name}), not "
                             "allocated", "allocated")
    elif sym is not None and is_module_struct_array(sym) and is_allocatable(sym):
        # an allocatable module array of derived type: the flag its components share
        from f2loopy.frontend.derived_types import leaves
        leaf = next(iter(leaves(sym)))
        return _flag(lowering, leaf, ir_name(lowering, leaf))
    elif sym is None or not is_allocatable(sym) or sym.storage is None:
        raise lowering.error("the argument of 'allocated' must be an allocatable array (of a "
                             "module, a local array of the procedure, or an array component; "
                             "allocatable dummies are not supported)", "allocated",
                             UnsupportedFeatureError)
    return _flag(lowering, sym, ir_name(lowering, sym))


def _flag(lowering, sym, base: str):
    names = _names(lowering, sym, base)
    flag = names.get("allocated")
    if flag is None:
        flag = names["allocated"] = lowering.root.fresh_name(f"{names['base']}_allocated")
        lowering.root.st.dope_names.add(flag)
    return p.Comparison(p.Variable(flag), "!=", np.int32(0))


def allocatable_arguments(lowering, sym, name: str, *, dope: bool = True) -> list:
    """The kernel arguments of allocatable module array *sym* (IR name
    *name*): the array, then its extents, lower bounds and flag.  A
    component of an array of derived type has its own constant axes first
    and the array's dope after them; without *dope* (another component of
    the same array carries it) only the array."""
    names = _names(lowering, sym, name)
    lbs, ubs = allocatable_bounds(lowering, sym, name)
    shape = tuple(p.Variable(n) for n in names["extent"])
    own = 0
    if is_struct_component(sym):
        own_lbs, own_ubs = _own_bounds(sym)
        own = len(own_lbs)
        shape = tuple(hi - lo + 1 for lo, hi in zip(own_lbs, own_ubs, strict=True)) + shape
    out: list = [ArrayArg(name=name, dtype=np.dtype(sym.dtype), shape=shape, lower_bounds=lbs,
                          span=sym.span, role=stored(sym.storage, allocatable=True,
                                                     pointer=is_pointer(sym),
                                                     pointer_root=in_pointer(sym),
                                                     type_rank=sym.struct_rank))]
    if not dope:
        return out
    int32 = np.dtype(np.int32)
    for what in ("extent", "lbound"):
        out += [ScalarArg(name=n, dtype=int32, intent="in", span=sym.span,
                          role=Allocation(array=name, what=what, axis=own + k))
                for k, n in enumerate(names[what])]
    if "allocated" in names:
        out.append(ScalarArg(name=names["allocated"], dtype=int32, intent="in", span=sym.span,
                             role=Allocation(array=name, what="allocated")))
    return out


def has_dope(lowering, sym) -> bool:
    """Whether the kernel being lowered uses the bounds or allocation of
    allocatable component *sym* (it then needs its arguments)."""
    return ("component", sym.name.lower()) in lowering.root.st.allocatable_dope


def component_arguments(lowering, sym, role: Component) -> list:
    """The kernel arguments of allocatable or pointer array component *sym*
    of a derived-type dummy (*role*: its role, without the allocation): the
    array, then its extents, lower bounds and flag (as
    :func:`allocatable_arguments`)."""
    what = "pointer" if is_pointer(sym) else "allocatable"
    if sym.intent == "out":
        raise UnsupportedFeatureError(
            f"intent(out) argument '{sym.path[0]}' has {what} component "
            f"'{'%'.join(sym.path)}', "
            + ("which Fortran deallocates on entry" if what == "allocatable" else
               "whose association Fortran undefines on entry")
            + " (a kernel cannot allocate it again): declare the argument intent(inout)",
            sym.span)
    names = _names(lowering, sym, sym.name)
    lbs, _ = allocatable_bounds(lowering, sym, sym.name)
    shape = tuple(p.Variable(n) for n in names["extent"])
    import dataclasses
    out: list = [ArrayArg(name=sym.name, dtype=np.dtype(sym.dtype), shape=shape,
                          lower_bounds=lbs, intent=sym.intent, span=sym.span,
                          role=dataclasses.replace(role, allocatable=True,
                                                   pointer=is_pointer(sym)))]
    int32 = np.dtype(np.int32)
    for kind in ("extent", "lbound"):
        out += [ScalarArg(name=n, dtype=int32, intent="in", span=sym.span,
                          role=Allocation(array=sym.name, what=kind, axis=k))
                for k, n in enumerate(names[kind])]
    if "allocated" in names:
        out.append(ScalarArg(name=names["allocated"], dtype=int32, intent="in", span=sym.span,
                             role=Allocation(array=sym.name, what="allocated")))
    return out


def exposed_allocatable(sym) -> ArrayArg:
    """The glue's description of allocatable module array *sym* that no kernel
    uses (``glue.<module>.<var>`` starts as None): only its dtype and rank
    matter."""
    rank = len(sym.dims)
    return ArrayArg(name=sym.name, dtype=np.dtype(sym.dtype), shape=(None,) * rank,
                    lower_bounds=(1,) * rank, span=sym.span,
                    role=stored(sym.storage, allocatable=True, pointer=is_pointer(sym),
                                pointer_root=in_pointer(sym), type_rank=sym.struct_rank))
