"""Scalar pointer components of derived type (``type(grid_type), pointer ::
grid`` in GOcean's field type): a kernel reads through them.

The target's components are flattened like those of a nested type
(``fld%grid%dx`` is the kernel argument ``fld_grid_dx``, role
:class:`~f2loopy.ir.roles.Component` with the pointer's place in
:attr:`~f2loopy.ir.roles.Component.pointers`); the glues pass what the pointer
points to (``fld%grid%dx`` in Fortran, ``fld.grid.dx`` in Python).

Several objects may point to one target (two fields on one grid), and the
target may be another variable the kernel sees, so the kernel receives the
same data under several names.  That is safe only while nobody writes it:
:func:`check_pointer_reads` refuses a kernel that writes through a pointer
component, or writes data the target may be (any variable or component of
the target's type, a ``pointer`` or ``target`` variable of the same element
type) while it reads through one.
"""

from __future__ import annotations

import numpy as np

from f2loopy.diagnostics import UnsupportedFeatureError


def pointer_positions(tdef, path) -> tuple[int, ...]:
    """The places in component *path* (``("fld", "grid", "dx")``) of a
    variable of type *tdef* that are pointer components of derived type
    (``(1,)``: ``fld%grid``)."""
    out = []
    for k, name in enumerate(path[1:], 1):
        if tdef is None:
            break
        comp = next((c for c in tdef.components if c.name.lower() == name.lower()), None)
        if comp is None:            # (an extended type's parent component)
            continue
        if comp.type is not None and comp.deferred == "pointer":
            out.append(k)
        tdef = comp.type
    return tuple(out)


def _pointer_types(symtab, leaf) -> list:
    """The types pointed to along the component path of *leaf* (those of
    its pointer components)."""
    root = symtab.get(leaf.path[0])
    if root is None or root.derived is None:
        return []
    tdef, out = root.derived, []
    for name in leaf.path[1:]:
        comp = next((c for c in (tdef.components if tdef else ())
                     if c.name.lower() == name.lower()), None)
        if comp is None:
            continue
        if comp.type is not None and comp.deferred == "pointer":
            out.append(comp.type.name.lower())
        tdef = comp.type
    return out


def _types_along(symtab, sym) -> set:
    """The derived types of the variable of *sym* and of every component on
    its path (lower-case names)."""
    if sym.path is None:
        return {sym.derived.name.lower()} if sym.derived is not None else set()
    out = set()
    node = symtab.get(sym.path[0])
    for name in sym.path[1:]:
        if node is None:
            break
        if node.derived is not None:
            out.add(node.derived.name.lower())
            out.update(node.derived.parents)
        node = (node.components or {}).get(name.lower())
    return out


def check_pointer_reads(lowering, symtab, instructions) -> None:
    """Refuse (located) what makes reading through pointer components of
    derived type unsafe in the kernel lowered by *lowering* (symbols
    *symtab*, IR *instructions*): a write through such a component, a
    component read through one of a module variable, or a write of data
    that may be the target (see the module's docstring)."""
    writes: dict = {}
    for insn in instructions:
        for name in insn.assignee_names():
            writes.setdefault(name.lower(), insn)
    read = []
    for name in sorted(lowering.used):
        sym = symtab.get(name)
        if sym is None or "through_pointer" not in sym.attributes or sym.derived is not None:
            continue
        spelled = "%".join(sym.path)
        insn = writes.get(sym.name.lower())
        if insn is not None:
            raise UnsupportedFeatureError(
                f"'{spelled}' is assigned through pointer component "
                f"'{'%'.join(sym.path[:_last_pointer(symtab, sym) + 1])}', whose target other "
                "arguments may share (two fields on one grid): a kernel only reads through "
                "pointer components (pass the target itself as an argument to assign it)",
                insn.span or sym.span)
        if sym.storage is not None:
            raise UnsupportedFeatureError(
                f"'{spelled}' is read through a pointer component of module variable "
                f"'{sym.path[0]}', which is not supported (pass the variable as an argument)",
                sym.span)
        read.append(sym)
    if not read:
        return
    targets = {t for sym in read for t in _pointer_types(symtab, sym)}
    dtypes = {np.dtype(sym.dtype) for sym in read if sym.dtype is not None}
    for name, insn in writes.items():
        sym = symtab.get(name)
        if sym is None or "through_pointer" in sym.attributes:
            continue
        root = symtab.get(sym.path[0]) if sym.path is not None else sym
        shared = targets & _types_along(symtab, sym)
        aliasable = root is not None and ({"pointer", "target"} & root.attributes) and \
            sym.dtype is not None and np.dtype(sym.dtype) in dtypes
        if shared or aliasable:
            what = f"of type({sorted(shared)[0]})" if shared else \
                "with the pointer or target attribute"
            spelled = "%".join(sym.path) if sym.path is not None else sym.name
            raise UnsupportedFeatureError(
                f"the kernel assigns '{spelled}', data {what}, and reads "
                f"'{'%'.join(read[0].path)}' through a pointer component, which may point to "
                "it: pass the data read through the pointer as an argument of its own",
                insn.span or sym.span)


def _last_pointer(symtab, sym) -> int:
    root = symtab.get(sym.path[0])
    places = pointer_positions(root.derived if root is not None else None, sym.path)
    return places[-1] if places else len(sym.path) - 1
