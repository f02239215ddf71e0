"""Optional dummy arguments in the Python glue (see
:mod:`f2loopy.frontend.optionals`): the function's parameter defaults to
None (absent), and so do the parameters after it (Python's rule); the
kernel's presence flag says which were given, an absent scalar is passed as
zero and an absent array as an empty buffer, and the new value of an absent
scalar the kernel writes is None."""

from __future__ import annotations

from f2loopy.codegen.names import py_name


def signature(names: list, params: list, optional: dict) -> list:
    """The parameters of the glue function: *names* (Python spellings of the
    Fortran *params*), ``=None`` from the first optional one on."""
    out, default = [], False
    for name, param in zip(names, params, strict=True):
        default = default or param in optional
        out.append(f"{name}=None" if default else name)
    return out


def presence_reads(k, optional: dict) -> list[str]:
    """Lines setting the presence flags, and the stand-in zero of absent
    scalars (the kernel does not read them)."""
    out = []
    arrays = {a.name for a in k.args if a.shape}
    for name, flag in optional.items():
        a = k.variable(name)
        v = py_name(name)
        out.append(f"    {py_name(flag)} = 0 if {v} is None else 1")
        if name not in arrays:
            zero = "False" if a.dtype.kind == "b" else "0"
            out.append(f"    if {v} is None:")
            out.append(f"        {v} = {zero}")
    return out


def absent_array(line: str, v: str) -> str:
    """The line taking array *v*'s buffer, with an empty one where it is absent."""
    return (f"{line} if {v} is not None else (cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, "
            "1), None)")


def absent_extent(line: str, v: str) -> str:
    """The line taking an extent of assumed-shape array *v*: 0 where absent."""
    return f"{line} if {v} is not None else np.int32(0)"
