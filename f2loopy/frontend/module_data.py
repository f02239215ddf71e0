"""Module variables: data that outlives a call, passed to kernels as arguments.

A non-parameter variable of a module (``real :: alpha = 0.5``, ``real(8) ::
table(10)``, with or without ``save``) is *module data*: its symbol gets a
``storage`` origin ``("module", module, variable)``, a constant shape and
its initial value.  A kernel that reads or writes it gets it as an extra
argument (role :class:`~f2loopy.ir.roles.Stored`), after the Fortran
arguments; the host glue passes the variable itself (the Python glue keeps
it in ``glue.<module>.<variable>``, the Fortran glue ``use`` s the module).
"""

from __future__ import annotations

import numpy as np

from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.ir.kernel import ArrayArg, ScalarArg
from f2loopy.ir.roles import Stored, stored


def declare_module_variables(module_name: str, symtab, reader) -> None:
    """Make the non-parameter variables of module *module_name* (its symbol
    table *symtab*, read by *reader*) module data."""
    _arrays_of_derived_type(symtab)
    for sym in symtab.local_symbols():
        if sym.is_parameter or sym.derived is not None or "poisoned" in sym.attributes:
            continue
        if sym.dtype is None:
            sym.dtype = symtab.implicit_type(sym.name)
            if sym.dtype is None:
                raise FortranError(f"module variable '{sym.name}' has no type (implicit none "
                                   "is in effect; declare it)", sym.span)
        shape: tuple[int, ...]
        lbs: tuple[int, ...]
        if "allocatable" in sym.attributes:
            shape, lbs = (), ()        # run-time bounds (f2loopy.frontend.allocatables)
        elif sym.dims is not None:
            if any(hi in ("*", ":") for _, hi in sym.dims):
                raise UnsupportedFeatureError(
                    f"module array '{sym.name}' must have constant bounds (allocatable and "
                    "deferred-shape module arrays are not supported)", sym.span)
            try:
                shape = tuple(int(n) for n in reader.array_shape(sym))
                lbs = tuple(int(b) for b in reader.array_lower_bounds(sym))
            except FortranError:
                raise UnsupportedFeatureError(
                    f"module array '{sym.name}' must have constant bounds", sym.span) from None
        else:
            shape, lbs = (), ()
        init = None
        if sym.is_initialized:
            init = np.array(sym.value, dtype=np.dtype(sym.dtype), order="F")
            if shape and init.shape != shape:
                init = np.full(shape, init, dtype=np.dtype(sym.dtype), order="F")
            sym.attributes.discard("initialized")
            sym.value = None
        if sym.path is not None:          # a component of a derived-type variable
            init = sym.component_init
            if init is not None and sym.struct_rank and shape:
                # (of an array of the type: every element starts so)
                own = np.asarray(init)
                init = np.asfortranarray(np.broadcast_to(
                    own.reshape(own.shape + (1,) * sym.struct_rank, order="F"), shape))
            sym.storage = ("module", module_name.lower(), *(x.lower() for x in sym.path))
        else:
            sym.storage = ("module", module_name.lower(), sym.name.lower())
        sym.storage_shape = shape
        sym.storage_lbs = lbs
        sym.storage_init = init


def _arrays_of_derived_type(symtab) -> None:
    """Prepare the module arrays of derived type (``type(particle),
    allocatable :: p(:)``): flattened into one module array per component
    (a structure of arrays, ``p(i)%x(k)`` is ``p_x(k, i)``), each allocatable
    with the variable.  Those that cannot be supported, and their components,
    are marked unusable: a kernel that uses one gets a located error saying
    what to write instead; the module's other variables and the kernels that
    do not use it are unaffected."""
    for sym in list(symtab.local_symbols()):
        if sym.derived is None or sym.dims is None or sym.components is None or \
                "poisoned" in sym.attributes:
            continue
        why = None
        if len(sym.dims) > 1:
            why = (f"module array of derived type '{sym.name}' has rank {len(sym.dims)}, which "
                   "is not supported (rank 1 only): keep one module array per component (a "
                   f"structure of arrays: {sym.name}_x for {sym.name}(i, j)%x), or pass the "
                   f"array as an argument")
        elif "pointer" in sym.attributes:
            why = (f"module pointer array of derived type '{sym.name}' is not supported: "
                   f"declare it allocatable, or pass the array it points to as an argument")
        if why is not None:
            exc = UnsupportedFeatureError(why, sym.span)
            for part in [sym, *_all_components(sym)]:
                part.attributes.add("poisoned")
                part.value = exc
            continue
        if "allocatable" in sym.attributes:
            for part in _all_components(sym):
                if part.derived is None:
                    part.attributes.add("allocatable")


def _all_components(sym):
    for csym in (sym.components or {}).values():
        yield csym
        if csym.derived is not None:
            yield from _all_components(csym)


def declare_common_blocks(reader) -> None:
    """Make the members of the common blocks *reader* read storage: each
    ``("common", block, member)``, identified across procedures by position."""
    for block, members in reader.common_blocks.items():
        for k, sym in enumerate(members):
            if sym.is_dummy or sym.name.lower() in reader.dummy_names or sym.is_parameter:
                raise FortranError(f"'{sym.name}' cannot be in a common block (it is a "
                                   f"{'parameter' if sym.is_parameter else 'dummy argument'})",
                                   sym.span)
            if sym.is_initialized:
                raise UnsupportedFeatureError(
                    f"common block member '{sym.name}' has an initial value (only a "
                    "'block data' unit may give one)", sym.span)
            if sym.dtype is None:
                sym.dtype = reader.symtab.implicit_type(sym.name)
                if sym.dtype is None:
                    raise FortranError(f"'{sym.name}' has no type (implicit none is in "
                                       "effect; declare it)", sym.span)
            shape: tuple = ()
            lbs: tuple = ()
            if sym.dims is not None:
                try:
                    shape = tuple(int(n) for n in reader.array_shape(sym))
                    lbs = tuple(int(b) for b in reader.array_lower_bounds(sym))
                except FortranError:
                    raise UnsupportedFeatureError(
                        f"common block member '{sym.name}' must have constant bounds",
                        sym.span) from None
            sym.storage = ("common", block, sym.name.lower())
            sym.storage_key = ("common", block, k)
            sym.storage_shape, sym.storage_lbs = shape, lbs
            sym.common_members = members


def implicitly_saved(reader, body) -> None:
    """Add to the saved names of *reader* the locals with an initial value
    (declaration or ``data``) that *body* (the execution part's nodes)
    assigns, or passes to a procedure, or runs a loop over: Fortran keeps their
    values between calls (an implicit ``save``), as it does for a ``save``
    local.  The others stay constants."""
    from fparser.two import Fortran2003 as F
    from fparser.two.utils import walk
    candidates = {sym.name.lower() for sym in reader.symtab.local_symbols()
                  if sym.is_initialized and not sym.is_parameter and sym.storage is None
                  and sym.name.lower() not in reader.dummy_names}
    if not candidates or "*" in reader.saved:
        return
    def base(node):
        while isinstance(node, (F.Part_Ref, F.Data_Ref)):
            node = node.items[0]
        return str(node).lower() if isinstance(node, F.Name) else None
    written = set()
    for node in walk(body, (F.Assignment_Stmt, F.Loop_Control, F.Call_Stmt)):
        if isinstance(node, F.Assignment_Stmt):
            written.add(base(node.items[0]))
        elif isinstance(node, F.Loop_Control):
            if node.items[1] is not None:
                written.add(base(node.items[1][0]))
        else:
            written.update(str(n).lower() for n in walk(node.items[1], F.Name))
    reader.saved.update(candidates & written)


def declare_saved_locals(reader, proc_name: str) -> None:
    """Make the saved locals (``save`` attribute or statement) of procedure
    *proc_name* storage ``("save", procedure, variable)``: data that keeps its
    value between calls, which the glue keeps and passes."""
    if not reader.saved:
        return
    everything = "*" in reader.saved
    for sym in reader.symtab.local_symbols():
        try:
            _declare_saved(reader, proc_name, sym, everything)
        except FortranError as exc:
            if reader.errors is None:
                raise
            reader.errors.append(exc)


def _declare_saved(reader, proc_name, sym, everything) -> None:
    """Make one local *sym* saved storage if the save statements name it."""
    low = sym.name.lower()
    if not (everything or low in reader.saved):
        return
    if everything and (sym.is_parameter or low in reader.dummy_names or
                       sym.storage is not None or sym.derived is not None or
                       low == proc_name.lower() or sym.dtype is None):
        return
    if sym.is_parameter or low in reader.dummy_names:
        raise FortranError(f"'{sym.name}' cannot be saved (it is a "
                           f"{'parameter' if sym.is_parameter else 'dummy argument'})",
                           sym.span)
    if "local_allocatable" in sym.attributes:
        sym.attributes.add("saved_work")    # (f2loopy.frontend.local_allocatables)
        return
    if sym.derived is not None or sym.path is not None:
        raise UnsupportedFeatureError(f"saved derived-type variable '{sym.name}' is not "
                                      "supported", sym.span)
    shape: tuple = ()
    lbs: tuple = ()
    if sym.dims is not None:
        try:
            shape = tuple(int(n) for n in reader.array_shape(sym))
            lbs = tuple(int(b) for b in reader.array_lower_bounds(sym))
        except FortranError:
            raise UnsupportedFeatureError(f"saved array '{sym.name}' must have constant "
                                          "bounds", sym.span) from None
    if sym.dtype is None:
        sym.dtype = reader.symtab.implicit_type(sym.name)
    init = None
    if sym.is_initialized:
        init = np.array(sym.value, dtype=np.dtype(sym.dtype), order="F")
        if shape and init.shape != shape:
            init = np.full(shape, init, dtype=np.dtype(sym.dtype), order="F")
        sym.attributes.discard("initialized")
        sym.value = None
    sym.storage = ("save", proc_name.lower(), low)
    sym.storage_shape, sym.storage_lbs, sym.storage_init = shape, lbs, init


def storage_name(lowering, sym) -> str:
    """The IR name of module variable *sym* in the kernel being lowered (the
    same argument wherever the kernel and what it inlines use it)."""
    st = lowering.st
    key = _key(sym)
    name = st.storage_names.get(key)
    if name is None:
        name = lowering.root.fresh_name("_".join(sym.storage[2:]))
        st.storage_names[key] = name
    used = st.storage_used.get(key) or st.storage_by_name.get(name)
    st.storage_used.setdefault(key, sym)
    if used is not None and _layout(used) != _layout(sym):
        raise lowering.error(f"common block /{sym.storage[1]}/ is declared differently in "
                             f"'{lowering.unit_name}' and where it was used before: "
                             f"'{sym.name}' does not match '{used.name}' (f2loopy needs the "
                             "same names, types and shapes everywhere)", sym.name,
                             UnsupportedFeatureError)
    st.storage_by_name[name] = sym
    return name


def _layout(sym) -> tuple:
    return np.dtype(sym.dtype), tuple(sym.storage_shape), sym.storage[2:]


def _key(sym) -> tuple:
    return sym.storage_key or sym.storage


def storage_bounds(sym):
    """``(lower bounds, upper bounds)`` of module array *sym*."""
    lbs = tuple(sym.storage_lbs)
    ubs = tuple(lb + n - 1 for lb, n in zip(sym.storage_lbs, sym.storage_shape, strict=True))
    return lbs, ubs


def unused_module_data(symtab, args) -> tuple:
    """Descriptors of the variables of the modules *symtab*'s unit uses that
    are not among the kernel arguments *args*: the glue exposes them."""
    passed = {a.role.key for a in args if isinstance(a.role, Stored)}
    out: list[ArrayArg | ScalarArg] = []
    candidates = list(symtab.symbols())
    for info in symtab.used_modules:
        table = getattr(info, "symtab", None)
        if table is not None:
            candidates += [s for s in table.local_symbols() if "poisoned" not in s.attributes]
    for sym in candidates:
        if sym.storage is None or sym.storage[0] != "module" or sym.storage in passed:
            continue
        passed.add(sym.storage)
        _check_logical_kind(sym)
        dtype = np.dtype(sym.dtype)
        if "allocatable" in sym.attributes:
            from f2loopy.frontend.allocatables import exposed_allocatable
            out.append(exposed_allocatable(sym))
        elif sym.storage_shape:
            out.append(ArrayArg(name=sym.name, dtype=dtype, shape=tuple(sym.storage_shape),
                                lower_bounds=tuple(sym.storage_lbs), span=sym.span,
                                role=stored(sym.storage, sym.storage_init,
                                            pointer_root="pointer_root" in sym.attributes,
                                            type_rank=sym.struct_rank)))
        else:
            out.append(ScalarArg(name=sym.name, dtype=dtype, span=sym.span,
                                 role=stored(sym.storage, sym.storage_init,
                                             pointer_root="pointer_root" in sym.attributes)))
    return tuple(sorted(out, key=lambda a: a.role.key))


def _check_logical_kind(sym) -> None:
    """Module and common variables keep 4-byte logicals only (the glue shares
    their storage with the kernel as it is)."""
    if sym.logical_kind != 4 and sym.storage is not None and sym.storage[0] != "save":
        raise UnsupportedFeatureError(
            f"logical({sym.logical_kind}) variable '{sym.name}' of a "
            f"{'module' if sym.storage[0] == 'module' else 'common block'} is not supported "
            "(declare it 'logical', or pass it as an argument)", sym.span)


def storage_arguments(symtab, lowering) -> list:
    """The kernel arguments of the module variables the kernel uses (the
    subroutine's own uses and those of the procedures inlined into it), in
    order of module and variable name."""
    st = lowering.st
    used = dict(st.storage_used)
    for sym in symtab.symbols():
        if sym.storage is not None and sym.name.lower() in lowering.used:
            used.setdefault(_key(sym), sym)
    # a common block is passed whole (the Fortran glue declares all of it)
    for sym in list(used.values()):
        for member in sym.common_members or ():
            key = _key(member)
            if key not in used:
                used[key] = member
                if key not in st.storage_names:
                    st.storage_names[key] = lowering.root.fresh_name(
                        "_".join(member.storage[2:]))
    args: list[ArrayArg | ScalarArg] = []
    with_dope: set = set()        # arrays of derived type whose dope is passed
    for key in sorted(used, key=lambda x: (x[0], x[1], x[2] if isinstance(x[2], int) else 0,
                                           str(x[2]))):
        sym = used[key]
        origin = sym.storage
        name = st.storage_names.get(key, sym.name)
        if "allocatable" in sym.attributes:
            from f2loopy.frontend.allocatables import allocatable_arguments
            _check_logical_kind(sym)
            root = origin[:3] if sym.struct_rank else origin
            args += allocatable_arguments(lowering, sym, name, dope=root not in with_dope)
            with_dope.add(root)
            continue
        _check_logical_kind(sym)
        dtype = np.dtype(sym.dtype)
        root = "pointer_root" in sym.attributes
        if sym.storage_shape:
            args.append(ArrayArg(name=name, dtype=dtype, shape=tuple(sym.storage_shape),
                                 lower_bounds=tuple(sym.storage_lbs), span=sym.span,
                                 role=stored(origin, sym.storage_init, pointer_root=root,
                                             type_rank=sym.struct_rank)))
        else:
            args.append(ScalarArg(name=name, dtype=dtype, span=sym.span,
                                  role=stored(origin, sym.storage_init, pointer_root=root)))
    return args
