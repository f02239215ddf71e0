"""The Python glue's launches (:mod:`f2loopy.glue.python`), printed from the
host plan (:mod:`f2loopy.glue.plan`): the lines that launch one kernel, with
the signature the glue checks its arguments against, and the launch sequence
of a kernel split at global barriers, whose host loops set each kernel's
arguments once and then only the loop indices.
"""

from __future__ import annotations

import pymbolic.primitives as prim

from f2loopy.codegen.names import py_name
from f2loopy.glue.plan import ERROR, HostLoop, HostPlan, Launch, rename_host
from f2loopy.glue.pyexpr import py_int_expr


def build_options(plan: HostPlan) -> str:
    """The Python expression of the build options of *plan*'s program: a
    literal tuple, and for a kernel compiled per value of some arguments
    (:attr:`HostPlan.specialized`) their values added as macros (the
    program cache of ``_kernel`` is keyed by the options: one program per
    value).  The arguments are integers by then (``_scalar`` converted them)."""
    if not plan.specialized:
        return repr(plan.build_options)
    parts = [f"{('-D' + macro + '=')!r} + str(int({py_name(name)}))"
             for name, macro in plan.specialized]
    return f"{plan.build_options!r} + ({', '.join(parts)},)"


def one_launch(launch: Launch, plan: HostPlan, cl_args: list, indent: str, *,
               knl: str | None = None, rename: dict | None = None) -> list:
    """Lines running *launch*: its kernel in the variable *knl*, or fetched here
    (*rename*: host loop indices -> the variables the glue holds them in)."""
    fn = plan.name

    def size(e):
        return py_int_expr(rename_host(e, rename))
    lines = []
    groups = "(" + ", ".join(size(g) for g in launch.num_groups) + ")"
    local = "(" + ", ".join(size(x) for x in launch.local_size) + ")"
    if not launch.fixed_local_size:
        # computed from the arguments: checked against the device's limit
        lines.append(f"{indent}_check_local({fn!r}, {local}, queue)")
    if knl is None:
        knl = "_knl"
        lines.append(f"{indent}_knl = _kernel(queue, {launch.c_name!r}, {build_options(plan)})")
        lines.append(f"{indent}with _lock:")
        indent += "    "
    lines.append(f"{indent}_launch(queue, {knl}, [{', '.join(cl_args)}], {groups}, {local}, "
                 f"{launch.signature!r})")
    return lines


def launch_sequence(plan: HostPlan, values: dict) -> list:
    """Lines running the launches of a kernel split at global barriers: the
    buffers of the arguments are shared (uploaded once, read back once after
    the last launch), global temporaries allocated once, host loops as
    Python loops whose index each launch inside gets as an int32.

    Nothing waits between launches, and a host loop does little per launch:
    each kernel's arguments are set once before the loops (while the lock is
    held, so no other call changes them), a launch inside a loop sets only
    the loop indices it takes, and its sizes are computed before the loops
    where they do not depend on those indices.  (Where two launches share one
    kernel name, each launch sets all its arguments.)"""
    lines = []
    scratch = {}             # global temporaries: allocated once, by number
    for k, sb in enumerate(plan.scratch, 1):
        scratch[sb.name] = f"_scratch_{k}"
        lines.append(f"    _scratch_{k} = _scratch(queue, ({py_int_expr(sb.elements)}) * "
                     f"{sb.itemsize})")
    number = {}
    launches = plan.launch_list()
    for n, launch in enumerate(launches, 1):
        number[id(launch)] = n
        lines.append(f"    _knl_{n} = _kernel(queue, {launch.c_name!r}, {build_options(plan)})")
    once = len({launch.c_name for launch in launches}) == len(launches)
    lines.append("    with _lock:")
    prologue_at = len(lines)
    prologue: list = []      # before the host loops: arguments and sizes set once
    # a host loop's index is a variable of its own: py_name of the index
    # could be an argument's ('queue_' for a loop 'queue'), which the loop
    # would overwrite; then it is '_hN_' (no argument's py_name)
    taken = {py_name(a) for a in plan.names}
    rename: dict = {}
    fn = plan.name

    def steps(items, indent):
        for s in items:
            if isinstance(s, HostLoop):
                lower = py_int_expr(rename_host(s.lower, rename))
                upper = py_int_expr(rename_host(s.upper, rename))
                name, n = s.iname, 0
                while py_name(name) in taken:
                    n += 1
                    name = f"_h{n}"
                v = py_name(name)
                taken.add(v)
                rename[s.iname] = prim.Variable(name)
                lines.append(f"{indent}for {v} in range({lower}, {upper} + 1):")
                lines.append(f"{indent}    {v} = np.int32({v})")
                steps(s.body, indent + "    ")
                del rename[s.iname]
                continue
            args: list = []
            changing: list = []
            for ref in s.arguments:
                if ref in s.host:
                    changing.append((len(args), py_int_expr(rename[ref])))
                    args.append("np.int32(0)")
                else:
                    args.append(scratch.get(ref) or ("_f2l_err_buf" if ref == ERROR
                                                     else values[ref]))
            knl = f"_knl_{number[id(s)]}"
            if not once or not s.host:
                # outside host loops (or a kernel shared by two launches): as given
                direct = list(args)
                for position, text in changing:
                    direct[position] = text
                lines.extend(one_launch(s, plan, direct, indent, knl=knl, rename=dict(rename)))
                continue
            # checked once: in the loop only the indices change, int32 by construction
            n = number[id(s)]
            prologue.append(f"        _set_args({knl}, [{', '.join(args)}], {s.signature!r})")
            if changing:
                prologue.append(f"        _set_{n} = _arg_setter({knl})")
            for position, text in changing:
                lines.append(f"{indent}_set_{n}({position}, {text})")
            if not s.sizes_vary:
                prologue.extend(_sizes(s, fn, f"_gs_{n}", f"_ls_{n}", "        "))
            else:
                lines.extend(_sizes(s, fn, f"_gs_{n}", f"_ls_{n}", indent, rename=dict(rename)))
            lines.append(f"{indent}if _gs_{n}:")
            lines.append(f"{indent}    _enq(queue, {knl}, _gs_{n}, _ls_{n})")
    steps(plan.launches, "        ")
    if prologue:
        prologue.append("        _enq = _enqueuer()")
    lines[prologue_at:prologue_at] = prologue
    return lines


def _sizes(launch: Launch, fn: str, gsize: str, lsize: str, indent: str, *,
           rename: dict | None = None) -> list:
    """Lines setting *gsize* to the global size of *launch* (() when a size
    is 0: no launch) and *lsize* to its work-group size, checked against the
    device where it is computed from the arguments."""
    def size(e):
        return py_int_expr(rename_host(e, rename))
    groups = "(" + ", ".join(size(g) for g in launch.num_groups) + ")"
    local = "(" + ", ".join(size(x) for x in launch.local_size) + ")"
    lines = [f"{indent}{lsize} = {local}"]
    if not launch.fixed_local_size:
        lines.append(f"{indent}_check_local({fn!r}, {lsize}, queue)")
    lines.append(f"{indent}{gsize} = _global_size({groups}, {lsize})")
    return lines
