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

from f2loopy.glue.fexpr import f_string, local_int
from f2loopy.glue.plan import HostLoop, HostPlan, rename_host

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


def launch_sequence(proc, plan: HostPlan) -> None:
    """Add to the body of *proc* (a :class:`~f2loopy.glue.fortran_body.Procedure`
    whose arguments are registered in its slots) the launches of *plan*."""
    body, slots, locals_ = proc.body, proc.slots, proc.locals
    launches = plan.launch_list()
    caches = {g.c_name: "f2l_kernel" if n == 0 else f"f2l_kernel_{n + 1}"
              for n, g in enumerate(launches)}
    used: set = set()
    rename: dict = {}
    # the 64-bit copy of an argument X is f2l_X (fexpr.local_int): a host
    # loop's locals must be named like no argument (Fortran ignores case)
    taken = {name.lower() for name in plan.names}

    def steps(items, indent: int) -> None:
        for s in items:
            if isinstance(s, HostLoop):
                name = _host_name(s.iname, taken)
                v64, v32 = local_int(name), local_int(name + "_32")
                locals_.append(f"integer(c_int64_t) :: {v64}")
                locals_.append(f"integer(c_int32_t), target :: {v32}")
                lower = body.int_expr(rename_host(s.lower, rename))
                upper = body.int_expr(rename_host(s.upper, rename))
                rename[s.iname] = p.Variable(name)
                used.add(name)
                proc.slot(s.iname)
                body.add(f"do {v64} = {lower}, {upper}", indent)
                body.add(f"{v32} = int({v64}, c_int32_t)", indent + 2)
                body.add(f"call f2l_c%value({slots[s.iname]}, c_loc({v32}), 4_c_size_t)",
                         indent + 2)
                steps(s.body, indent + 2)
                body.add("end do", indent)
                del rename[s.iname]
                continue
            order = [slots[ref] for ref in s.arguments]
            groups = ", ".join(_count(body, rename_host(g, rename)) for g in s.num_groups)
            local = ", ".join(_count(body, rename_host(x, rename)) for x in s.local_size)
            listed = ", ".join(f"{x}_c_int" for x in order) if order else ""
            slot_text = f"[{listed}]" if order else "[integer(c_int) ::]"
            body.add(f"call f2l_c%launch_kernel({caches[s.c_name]}, {f_string(s.c_name)}, "
                     f"{slot_text}, [{groups}], [{local}], {f_string(' '.join(s.signature))})",
                     indent)

    steps(plan.launches, 4)
    body.add("call f2l_c%complete()")
    # the 64-bit locals of host loop indices are set by their loops, not
    # copied from arguments
    body.used -= used
