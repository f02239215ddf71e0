"""The Fortran glue of a kernel split at global barriers
(:mod:`f2loopy.codegen.phases`): one ``f2l_call`` whose arguments are
uploaded once, each launch's kernel given the arguments it takes by their
slots (the indices they were registered with), host loops as Fortran ``do``
loops whose index goes to the launches inside as a 32-bit value, and the
results copied back once after the last launch.
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p
from pymbolic.mapper.substitutor import substitute

from f2loopy.codegen import GeneratedKernel
from f2loopy.codegen.phases import HostLoop
from f2loopy.glue.fexpr import f_string, local_int

#: host loop indices in size expressions are renamed so (then printed as
#: 64-bit locals ``f2l_hostloop_t``), apart from every name of the glue
HOST_PREFIX = "hostloop_"


def _count(body, expr) -> str:
    if isinstance(expr, (int, np.integer)):
        return f"{max(0, int(expr))}_c_int64_t"
    return f"max(0_c_int64_t, {body.int_expr(expr)})"


def _host_name(iname: str, taken: set) -> str:
    """``hostloop_INAME`` (its locals ``f2l_hostloop_INAME`` and
    ``f2l_hostloop_INAME_32``), or ``hostloopN`` where that name, or the one
    of the 32-bit copy, is an argument's or too long for Fortran; added to
    *taken*."""
    name, n = HOST_PREFIX + iname, 0
    while name.lower() in taken or (name + "_32").lower() in taken or \
            len(local_int(name + "_32")) > 63:
        n += 1
        name = f"{HOST_PREFIX.rstrip('_')}{n}"
    taken.update((name.lower(), (name + "_32").lower()))
    return name


def launch_sequence(body, gk: GeneratedKernel, slots: dict, index: int, locals_: list,
                    launches: list) -> None:
    """Add to *body* the launches of *gk* (the arguments are registered in
    *slots*, the next free index is *index*; locals go to *locals_*)."""
    caches = {g.c_name: "f2l_kernel" if n == 0 else f"f2l_kernel_{n + 1}"
              for n, g in enumerate(launches)}
    used: set = set()
    rename: dict = {}
    # the 64-bit copy of an argument X is f2l_X (fexpr.local_int): a host
    # loop's locals must be named like no argument (Fortran ignores case)
    taken = {a.name.lower() for a in gk.kernel.args}

    def expr(e):
        return substitute(e, rename) if rename else e

    def steps(items, indent: int) -> None:
        nonlocal index
        for s in items:
            if isinstance(s, HostLoop):
                name = _host_name(s.iname, taken)
                v64, v32 = local_int(name), local_int(name + "_32")
                locals_.append(f"integer(c_int64_t) :: {v64}")
                locals_.append(f"integer(c_int32_t), target :: {v32}")
                lower, upper = body.int_expr(expr(s.lower)), body.int_expr(expr(s.upper))
                rename[s.iname] = p.Variable(name)
                used.add(name)
                slots[s.iname] = index
                index += 1
                body.add(f"do {v64} = {lower}, {upper}", indent)
                body.add(f"{v32} = int({v64}, c_int32_t)", indent + 2)
                body.add(f"call f2l_c%value({slots[s.iname]}, c_loc({v32}), 4_c_size_t)",
                         indent + 2)
                steps(s.body, indent + 2)
                body.add("end do", indent)
                del rename[s.iname]
                continue
            order = [slots[ka.name] for ka in s.arguments if ka.kind != "fixed"]
            order += [slots[sb.name] for sb in s.scratch]
            if s.kernel.error_sites:
                order.append(slots[" error"])
            groups = ", ".join(_count(body, expr(g)) for g in s.grid.num_groups)
            local = ", ".join(_count(body, expr(x)) for x in s.grid.local_size)
            listed = ", ".join(f"{x}_c_int" for x in order) if order else ""
            slot_text = f"[{listed}]" if order else "[integer(c_int) ::]"
            body.add(f"call f2l_c%launch_kernel({caches[s.c_name]}, {f_string(s.c_name)}, "
                     f"{slot_text}, [{groups}], [{local}])", indent)

    steps(gk.launches, 4)
    body.add("call f2l_c%complete()")
    # the 64-bit locals of host loop indices are set by their loops, not
    # copied from arguments
    body.used -= used
