"""The Python glue's launches (:mod:`f2loopy.glue.python`): the lines that
launch one kernel, the signature the glue checks its arguments against, and
the launch sequence of a kernel split at global barriers, whose host loops
set each kernel's arguments once and then only the loop indices.
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as prim
from pymbolic.mapper.substitutor import substitute

from f2loopy.codegen import GeneratedKernel
from f2loopy.codegen.names import py_name
from f2loopy.diagnostics import CodegenError
from f2loopy.glue.pyexpr import py_int_expr
from f2loopy.ir.expressions import variables_read


def _one_launch(gk: GeneratedKernel, fn: str, cl_args: list, indent: str, *,
                knl: str | None = None, rename: dict | None = None) -> list:
    """Lines launching *gk*: its kernel in the variable *knl*, or fetched here
    (*rename*: host loop indices -> the variables the glue holds them in)."""
    def size(e):
        return py_int_expr(substitute(e, rename) if rename else e)
    lines = []
    groups = "(" + ", ".join(size(g) for g in gk.grid.num_groups) + ")"
    local = "(" + ", ".join(size(x) for x in gk.grid.local_size) + ")"
    if not gk.grid.fixed_local_size:
        # computed from the arguments: checked against the device's limit
        lines.append(f"{indent}_check_local({fn!r}, {local}, queue)")
    if knl is None:
        knl = "_knl"
        options = tuple(gk.build_options)
        lines.append(f"{indent}_knl = _kernel(queue, {gk.c_name!r}, {options!r})")
        lines.append(f"{indent}with _lock:")
        indent += "    "
    signature = _signature(gk, cl_args)
    lines.append(f"{indent}_launch(queue, {knl}, [{', '.join(cl_args)}], {groups}, {local}, "
                 f"{signature!r})")
    return lines


def _signature(gk: GeneratedKernel, cl_args: list) -> tuple:
    """launch_signature(gk), which must have an entry for each of *cl_args*."""
    signature = launch_signature(gk)
    if len(signature) != len(cl_args):
        raise CodegenError(f"internal error: the glue passes {len(cl_args)} arguments to "
                           f"kernel {gk.c_name}, which takes {len(signature)}")
    return signature


#: OpenCL C scalar type -> the numpy dtype the glue passes for it
_SCALAR_DTYPES = {"char": "int8", "short": "int16", "int": "int32", "long": "int64",
                  "uchar": "uint8", "ushort": "uint16", "uint": "uint32", "ulong": "uint64",
                  "float": "float32", "double": "float64", "float2": "complex64",
                  "double2": "complex128", "cfloat_t": "complex64", "cdouble_t": "complex128"}


def launch_signature(gk: GeneratedKernel) -> tuple:
    """What each parameter of the OpenCL kernel *gk* is, in order, read from
    the generated C (``__kernel void name(...)``): ``"buffer"`` or the numpy
    dtype name of a scalar passed by value.  It must agree with what the glue
    passes (the kernel's arguments, then its global temporaries, then the
    error buffer): a disagreement is an internal error here, at translation
    time, and the glue checks every launch against it at run time."""
    header = gk.device_code.split("\n", 1)[0]
    head, _, rest = header.partition(f"{gk.c_name}(")
    params = [x.strip() for x in rest.rstrip(")").split(",") if x.strip()] \
        if head.startswith("__kernel void") and rest.endswith(")") else None
    declared = []
    for param in params or ():
        if param.startswith("__global") or "*" in param:
            declared.append("buffer")
            continue
        ctype = param.split()[0]
        if ctype not in _SCALAR_DTYPES:
            raise CodegenError(f"kernel {gk.c_name}: parameter '{param}' has a type the glue "
                               "cannot pass")
        declared.append(_SCALAR_DTYPES[ctype])
    passed = []
    for ka in gk.arguments:
        if ka.kind in ("array", "scalar_ref"):
            passed.append("buffer")
        elif ka.kind == "value":
            dt = np.dtype(ka.dtype)
            # (a logical is passed as an int, as the glue converts it)
            passed.append("int32" if dt == np.bool_ else dt.name)
    passed += ["buffer"] * len(gk.scratch)
    if gk.kernel.error_sites:
        passed.append("buffer")
    if params is None or declared != passed:
        raise CodegenError(f"internal error: the glue would pass {tuple(passed)} to kernel "
                           f"{gk.c_name}, whose parameters are {tuple(declared)}")
    return tuple(declared)


def _launch_sequence(gk: GeneratedKernel, fn: str, values: dict) -> list:
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
    from f2loopy.codegen.phases import HostLoop, phase_kernels
    lines = []
    scratch = {}             # global temporaries: allocated once, by number
    for k, sb in enumerate(gk.scratch, 1):
        scratch[sb.name] = f"_scratch_{k}"
        lines.append(f"    _scratch_{k} = _scratch(queue, ({py_int_expr(sb.elements)}) * "
                     f"{sb.itemsize})")
    options = tuple(gk.build_options)
    number = {}
    launches = phase_kernels(gk.launches)
    for n, launch in enumerate(launches, 1):
        number[id(launch)] = n
        lines.append(f"    _knl_{n} = _kernel(queue, {launch.c_name!r}, {options!r})")
    once = len({launch.c_name for launch in launches}) == len(launches)
    lines.append("    with _lock:")
    prologue_at = len(lines)
    prologue: list = []      # before the host loops: arguments and sizes set once
    # a host loop's index is a variable of its own: py_name of the index
    # could be an argument's ('queue_' for a loop 'queue'), which the loop
    # would overwrite; then it is '_hN_' (no argument's py_name)
    taken = {py_name(a.name) for a in gk.kernel.args}
    rename: dict = {}

    def steps(items, indent, host):
        for s in items:
            if isinstance(s, HostLoop):
                lower = py_int_expr(substitute(s.lower, rename) if rename else s.lower)
                upper = py_int_expr(substitute(s.upper, rename) if rename else s.upper)
                name, n = s.iname, 0
                while py_name(name) in taken:
                    n += 1
                    name = f"_h{n}"
                v = py_name(name)
                taken.add(v)
                rename[s.iname] = prim.Variable(name)
                lines.append(f"{indent}for {v} in range({lower}, {upper} + 1):")
                lines.append(f"{indent}    {v} = np.int32({v})")
                steps(s.body, indent + "    ", host | {s.iname})
                del rename[s.iname]
                continue
            args, changing = [], []
            for ka in s.arguments:
                if ka.name in host:
                    changing.append((len(args), py_int_expr(rename[ka.name])))
                    args.append("np.int32(0)")
                elif ka.kind != "fixed":
                    args.append(values[ka.name])
            args += [scratch[sb.name] for sb in s.scratch]
            if s.kernel.error_sites:
                args.append("_f2l_err_buf")
            knl = f"_knl_{number[id(s)]}"
            sizes = [*s.grid.num_groups, *s.grid.local_size]
            fixed_sizes = not any(not isinstance(x, (int, np.integer)) and
                                  variables_read(x) & host for x in sizes)
            if not once or not host:
                # outside host loops (or a kernel shared by two launches): as given
                direct = list(args)
                for position, text in changing:
                    direct[position] = text
                lines.extend(_one_launch(s, fn, direct, indent, knl=knl, rename=dict(rename)))
                continue
            # checked once: in the loop only the indices change, int32 by construction
            prologue.append(f"        _set_args({knl}, [{', '.join(args)}], "
                            f"{_signature(s, args)!r})")
            if changing:
                prologue.append(f"        _set_{number[id(s)]} = _arg_setter({knl})")
            for position, text in changing:
                lines.append(f"{indent}_set_{number[id(s)]}({position}, {text})")
            n = number[id(s)]
            if fixed_sizes:
                prologue.extend(_sizes(s, fn, f"_gs_{n}", f"_ls_{n}", "        "))
            else:
                lines.extend(_sizes(s, fn, f"_gs_{n}", f"_ls_{n}", indent, rename=dict(rename)))
            lines.append(f"{indent}if _gs_{n}:")
            lines.append(f"{indent}    _enq(queue, {knl}, _gs_{n}, _ls_{n})")
    steps(gk.launches, "        ", frozenset())
    if prologue:
        prologue.append("        _enq = _enqueuer()")
    lines[prologue_at:prologue_at] = prologue
    return lines


def _sizes(gk: GeneratedKernel, fn: str, gsize: str, lsize: str, indent: str, *,
           rename: dict | None = None) -> list:
    """Lines setting *gsize* to the global size of a launch of *gk* (() when
    a size is 0: no launch) and *lsize* to its work-group size, checked
    against the device where it is computed from the arguments."""
    def size(e):
        return py_int_expr(substitute(e, rename) if rename else e)
    groups = "(" + ", ".join(size(g) for g in gk.grid.num_groups) + ")"
    local = "(" + ", ".join(size(x) for x in gk.grid.local_size) + ")"
    lines = [f"{indent}{lsize} = {local}"]
    if not gk.grid.fixed_local_size:
        lines.append(f"{indent}_check_local({fn!r}, {lsize}, queue)")
    lines.append(f"{indent}{gsize} = _global_size({groups}, {lsize})")
    return lines
