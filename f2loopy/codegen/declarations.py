"""Declarations of a kernel's temporaries in OpenCL C: private and local
arrays and scalars, storage shared by aliased temporaries, and tables of
constant values in ``__constant`` memory."""

from __future__ import annotations

import numpy as np

from f2loopy.codegen.c_expressions import c_constant, c_type
from f2loopy.codegen.names import c_name
from f2loopy.codegen.vectors import vec_axis
from f2loopy.diagnostics import CodegenError
from f2loopy.ir.kernel import AddressSpace, Temporary


def declare_storage(name: str, t: Temporary, size: int, space: AddressSpace) -> str:
    """Declaration of the storage area *name* shared by aliased temporaries."""
    prefix = "__local " if space == AddressSpace.LOCAL else ""
    if space == AddressSpace.GLOBAL:
        raise CodegenError(f"global temporaries cannot share storage ('{t.name}')", t.span)
    return f"{prefix}{c_type(t.dtype)} {c_name(name)}[{size}];"


def declare_temporary(t: Temporary, space: AddressSpace, kernel_name: str, *,
                      size_text: str | None = None) -> str:
    """The declaration of temporary *t*; *size_text*: its number of elements
    as C text where its extents are not all numbers (a kernel specialised
    for arguments: their macros)."""
    ctype = c_type(t.dtype)
    va = vec_axis(t)
    if va is not None:
        prefix = "__local " if space == AddressSpace.LOCAL else ""
        size = _constant_size(t)
        vtype = f"{ctype}{va[1]}"
        return (f"{prefix}{vtype} {c_name(t.name)}[{size // va[1]}];\n"
                f"{prefix}{ctype} *{c_name(t.name)}_flat = ({prefix}{ctype} *) "
                f"{c_name(t.name)};")
    if space == AddressSpace.LOCAL:
        prefix = "__local "
    elif space == AddressSpace.GLOBAL:
        raise CodegenError(f"global temporary '{t.name}' is a kernel argument, not a "
                           "declaration", t.span)
    else:
        prefix = ""
    if not t.shape:
        return f"{prefix}{ctype} {c_name(t.name)};"
    if size_text is not None:
        return f"{prefix}{ctype} {c_name(t.name)}[{size_text}];"
    size = _constant_size(t)
    return f"{prefix}{ctype} {c_name(t.name)}[{size}];"


def _constant_size(t: Temporary) -> int:
    """The elements of temporary *t*, whose extents are constants."""
    size = 1
    for s in t.shape:
        if not isinstance(s, (int, np.integer)):
            raise CodegenError(f"temporary '{t.name}' needs constant extents, not {s}", t.span)
        size *= int(s)
    return size


def constant_table(t: Temporary, kernel_name: str) -> str:
    """The `__constant` table of the values of temporary *t* (Fortran order)."""
    values = np.asarray(t.initializer).reshape(-1, order="F")
    body = ", ".join(c_constant(v, t.dtype) for v in values)
    return (f"__constant {c_type(t.dtype)} {c_name(f'{kernel_name}_{t.name}')}"
            f"[{len(values)}] = {{{body}}};")
