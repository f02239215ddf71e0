"""Allocatable module arrays in the Fortran glue (see
:mod:`f2loopy.frontend.allocatables`).

The public glue procedure ``use`` s the module array as it does other module
variables and passes it on to the procedure doing the work, whose dummy is
allocatable too: the glue reads the module's own allocation (the caller
allocates in Fortran as before).  That procedure computes the extents, lower
bounds and allocation flag the kernel takes (its
:class:`~f2loopy.ir.roles.Allocation` arguments) and passes an
unallocated array as an empty buffer.  A module ``pointer`` array is passed
the same way (a pointer dummy; ``associated`` for ``allocated``); one
associated with a non-contiguous section stops the call with an error.
"""

from __future__ import annotations

from f2loopy.glue.fexpr import f_string


def dope_locals(dope, nm: dict, locals_: list, body,
                pointers: frozenset[str] = frozenset()) -> None:
    """Declare (in *locals_*) and compute (in *body*, before the sizes are)
    the *dope* arguments (:class:`~f2loopy.glue.plan.Dope` steps of the host
    plan) of a kernel's allocatable module arrays and optional arguments
    (*nm*: the names of the arguments in the glue; *pointers*: the arrays
    that are module pointer arrays)."""
    for d in dope:
        what, axis = d.what, d.axis
        v, arr = nm[d.name], nm[d.array]
        query = "associated" if d.array in pointers else "allocated"
        locals_.append(f"integer(c_int32_t), target :: {v}")
        if what == "extent":
            body.add(f"{v} = 0")
            body.add(f"if ({query}({arr})) {v} = int(size({arr}, {axis + 1}), c_int32_t)")
        elif what == "lbound":
            body.add(f"{v} = 1")
            body.add(f"if ({query}({arr})) {v} = int(lbound({arr}, {axis + 1}), c_int32_t)")
        elif what == "present":         # (f2loopy.glue.fortran_optional)
            body.add(f"{v} = merge(1_c_int32_t, 0_c_int32_t, present({arr}))")
        else:
            body.add(f"{v} = merge(1_c_int32_t, 0_c_int32_t, {query}({arr}))")


def is_pointer_array(a) -> bool:
    """Whether IR argument *a* is a module pointer array."""
    return bool(getattr(a.role, "pointer", False))


def allocatable_declaration(ftype: str, a) -> str:
    """The type and attributes of the glue's dummy for allocatable *a*."""
    dims = ", ".join(":" * a.ndim)
    if is_pointer_array(a):
        return f"{ftype}, dimension({dims}), pointer, intent(in)"
    return f"{ftype}, dimension({dims}), allocatable, intent(inout), target"


def pass_allocatable(body, index: int, a, v: str, decl_text: str, elements: str,
                     nbytes: int, written: bool) -> None:
    """Pass allocatable module array *a* (the glue's dummy *v*) as kernel
    argument *index*: an empty buffer while unallocated."""
    name, decl = f_string(a.name), f_string(decl_text)
    flag = ".true." if written else ".false."
    if is_pointer_array(a):
        body.add(f"if (associated({v})) then")
        body.add(f"  if (.not. is_contiguous({v})) call f2l_c%fail(F2L_ERROR_ARGUMENT, "
                 + f_string(f"module pointer '{a.name}' is associated with a non-contiguous "
                            "section: the kernel needs contiguous elements") + ")")
    else:
        body.add(f"if (allocated({v})) then")
    body.add(f"  call f2l_c%array({index}, {name}, {decl}, c_loc({v}), rank({v}), "
             f"size({v}, kind=c_int64_t), {elements}, {nbytes}_c_int64_t, {flag})")
    body.add("else")
    body.add(f"  call f2l_c%array({index}, {name}, {decl}, c_null_ptr, {a.ndim}, "
             f"0_c_int64_t, 0_c_int64_t, {nbytes}_c_int64_t, .false.)")
    body.add("end if")
