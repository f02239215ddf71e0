"""Module variables: data that outlives a call, passed to kernels as arguments.

A non-parameter variable of a module (``real :: alpha = 0.5``, ``real(8) ::
table(10)``, with or without ``save``) is *module data*: its symbol gets a
``storage`` origin ``("module", module, variable)``, a constant shape and
its initial value.  A kernel that reads or writes it gets it as an extra
argument (:attr:`~f2loopy.ir.kernel.ArrayArg.storage`), after the Fortran
arguments; the host glue passes the variable itself (the Python glue keeps
it in ``glue.<module>.<variable>``, the Fortran glue ``use`` s the module).
"""

from __future__ import annotations

import numpy as np

from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.ir.kernel import ArrayArg, ScalarArg


def declare_module_variables(module_name: str, symtab, reader) -> None:
    """Make the non-parameter variables of module *module_name* (its symbol
    table *symtab*, read by *reader*) module data."""
    for sym in symtab.local_symbols():
        if sym.is_parameter:
            continue
        if sym.dtype is None:
            sym.dtype = symtab.implicit_type(sym.name)
            if sym.dtype is None:
                raise FortranError(f"module variable '{sym.name}' has no type (implicit none "
                                   "is in effect; declare it)", sym.span)
        if sym.dims is not None:
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
        sym.storage = ("module", module_name.lower(), sym.name.lower())
        sym.storage_shape = shape
        sym.storage_lbs = lbs
        sym.storage_init = init


def storage_name(lowering, sym) -> str:
    """The IR name of module variable *sym* in the kernel being lowered (the
    same argument wherever the kernel and what it inlines use it)."""
    st = lowering.st
    name = st.storage_names.get(sym.storage)
    if name is None:
        name = lowering.root.fresh_name(sym.storage[2])
        st.storage_names[sym.storage] = name
    st.storage_used[sym.storage] = sym
    st.storage_by_name[name] = sym
    return name


def storage_bounds(sym):
    """``(lower bounds, upper bounds)`` of module array *sym*."""
    lbs = tuple(sym.storage_lbs)
    ubs = tuple(lb + n - 1 for lb, n in zip(sym.storage_lbs, sym.storage_shape))
    return lbs, ubs


def storage_arguments(symtab, lowering) -> list:
    """The kernel arguments of the module variables the kernel uses (the
    subroutine's own uses and those of the procedures inlined into it), in
    order of module and variable name."""
    st = lowering.st
    used = dict(st.storage_used)
    for sym in symtab.symbols():
        if sym.storage is not None and sym.name.lower() in lowering.used:
            used.setdefault(sym.storage, sym)
    args = []
    for origin in sorted(used):
        sym = used[origin]
        name = st.storage_names.get(origin, sym.name)
        dtype = np.dtype(sym.dtype)
        if sym.storage_shape:
            args.append(ArrayArg(name=name, dtype=dtype, shape=tuple(sym.storage_shape),
                                 lower_bounds=tuple(sym.storage_lbs), span=sym.span,
                                 storage=origin, storage_init=sym.storage_init))
        else:
            args.append(ScalarArg(name=name, dtype=dtype, span=sym.span, storage=origin,
                                  storage_init=sym.storage_init))
    return args
