"""The Python glue's function for one kernel, printed from its host plan
(:mod:`f2loopy.glue.plan`): the signature and docstring, the checks and
conversions of the arguments, the transfers, the launches
(:mod:`f2loopy.glue.python_launches`), the error buffer and the results.
"""

from __future__ import annotations

import numpy as np

from f2loopy.codegen import GeneratedKernel
from f2loopy.codegen.names import py_name
from f2loopy.diagnostics import CodegenError
from f2loopy.escape import py_docstring, py_literal
from f2loopy.glue.module_data import (
    allocation_reads, component_reads, component_writes, fortran_parameters, storage_reads,
    storage_writes)
from f2loopy.glue.optional_args import absent_array, absent_extent, presence_reads, signature
from f2loopy.glue.plan import Array, HostPlan, Scalar, host_plan
from f2loopy.glue.pyexpr import py_bool_expr, py_int_expr
from f2loopy.glue.python_launches import launch_sequence, one_launch
from f2loopy.ir.roles import Component
from f2loopy.ir.types import is_logical

_FORTRAN_TYPE = {
    "int8": "integer(1)", "int16": "integer(2)", "int32": "integer", "int64": "integer(8)",
    "float32": "real", "float64": "double precision", "complex64": "complex",
    "complex128": "complex(8)", "bool": "logical",
}


class _Names:
    """The argument roles of a kernel that the Python function treats apart."""

    def __init__(self, k, plan: HostPlan):
        self.result = k.result_arg
        self.stored = {a.name for a in k.storage_args}
        self.parts = {a.name: a for a in k.args if isinstance(a.role, Component)}
        self.hidden = {e.name for e in plan.extents} | {d.name for d in plan.dope} | \
            self.stored | set(self.parts)
        self.optional = dict(plan.presence)
        if self.result is not None:
            self.hidden.add(self.result.name)
        refs = [s for s in plan.scalars if s.role == "scalar_ref"]
        outs = [s for s in refs if s.name not in self.stored and s.name not in self.parts]
        if self.result is not None:
            # the function's value first, then the scalar arguments it changes
            outs = [s for s in outs if s.name == self.result.name] + \
                [s for s in outs if s.name != self.result.name]
        self.outs = outs
        self.stored_outs = [s for s in refs if s.name in self.stored or s.name in self.parts]


def kernel_function(gk: GeneratedKernel) -> str:
    """The text of the glue function of *gk*."""
    plan = host_plan(gk)
    k = gk.kernel
    names = _Names(k, plan)
    params = fortran_parameters(k)
    args = signature([py_name(n) for n in params], params, names.optional)
    lines = [f"def {py_name(k.name)}({', '.join(args)}{', ' if args else ''}*, queue=None):"]
    lines += _docstring(plan, k, names, params)
    lines.append("    if queue is None:")
    lines.append("        queue = _default_queue()")
    lines += _arguments_in(plan, k, names)
    lines += _transfers(plan)
    lines += _results(plan, k, names)
    return "\n".join(lines) + "\n"


# {{{ the docstring

def _docstring(plan: HostPlan, k, names: _Names, params: list) -> list[str]:
    where = f" ({py_docstring(k.span)})" if k.span else ""
    unit = "subroutine" if names.result is None else "function"
    doc = [f'    """OpenCL version of Fortran ``{unit} {k.name}({", ".join(params)})``{where}.',
           "", "    Arguments:"]
    for a in plan.arguments:
        if a.arg.name in names.hidden:
            continue
        what = _described(a, names.hidden)
        if a.arg.name in names.optional:
            what += "; optional (None: absent)"
        doc.append(f"      {a.arg.name}: {py_docstring(what)}")
    written = {a.name for a in plan.arguments
               if a.written or isinstance(a, Scalar) and a.role == "scalar_ref"}
    parts = names.parts
    for root in dict.fromkeys(a.role.root for a in parts.values()):
        members = [a for a in parts.values() if a.role.root == root]
        first = members[0].role
        module, tname, rank = first.type_module, first.type_name, first.type_rank
        comps = ", ".join("%".join(a.role.path[1:]) + (" (updated)" if a.name in written
                                                        else "")
                          + (" (allocatable: an array, (array, lower bounds) or None)"
                             if a.role.allocatable else "") for a in members)
        if rank:
            doc.append(f"      {root}: array of type({tname}), rank {rank}: a numpy structured "
                       f"array with the fields {comps}")
        else:
            doc.append(f"      {root}: type({tname}){f' of module {module}' if module else ''}: "
                       f"an object with the components {comps}")
    if names.stored:
        doc += ["", "    Module variables (attributes of this glue module's objects): "
                + ", ".join(".".join(a.role.key[1:]) for a in k.storage_args) + "."]
    outs = names.outs
    if names.result is not None:
        doc += ["", f"    Returns the value of {k.name}" + (
            ", then the new values of " + ", ".join(s.name for s in outs[1:])
            if len(outs) > 1 else "") + "."]
    elif outs:
        doc += ["", "    Returns the new value" + ("s" if len(outs) > 1 else "") + " of "
                + ", ".join(s.name for s in outs) + "."]
    doc.append('    """')
    return doc


def _described(a, hidden: set) -> str:
    arg = a.arg
    ftype = _FORTRAN_TYPE.get(np.dtype(arg.dtype).name, str(arg.dtype))
    if isinstance(a, Array):
        shape = ", ".join("*" if s is None else ":" if str(s) in hidden else str(s)
                          for s in arg.shape)
        dtname = np.dtype(arg.dtype).name
        if is_logical(arg.dtype):
            dtname = {1: "bool", 2: "bool (or int16 holding 0/1)", 8: "bool (or int64 "
                      "holding 0/1)"}.get(arg.logical_kind, "bool (or int32 holding 0/1)")
        what = f"{ftype} array ({shape}), numpy dtype {dtname}, order 'F'"
        return what + ("; updated in place" if a.written else "")
    if a.character is not None and a.character.messages:
        return "character (a Python str): the text the subroutine assigns is returned (the " \
            "value passed if it assigns none)"
    if a.character is not None:
        return "character (a Python str)"
    return f"{ftype} scalar" + ("; new value returned" if a.role == "scalar_ref" else "")

# }}}


# {{{ checks and conversions

def _arguments_in(plan: HostPlan, k, names: _Names) -> list[str]:
    """Extents, module data, scalars converted, fixed values and assumptions
    checked (scalars first: shapes and grid sizes are computed from them)."""
    fn = plan.name
    lines = []
    for e in plan.extents:
        lines.append(f"    {py_name(e.name)} = _extent({fn!r}, {e.array!r}, "
                     f"{py_name(e.array)}, {e.axis}, {e.rank})")
        if e.optional:
            lines[-1] = absent_extent(lines[-1], py_name(e.array))
    lines += component_reads(k)
    lines += storage_reads(k)
    lines += allocation_reads(k)
    lines += presence_reads(k, names.optional)
    if names.result is not None and plan.array_result is None:
        zero = "False" if is_logical(names.result.dtype) else "0"
        lines.append(f"    {py_name(names.result.name)} = {zero}")
    fixed = {f.name: f for f in plan.fixed}
    for s in plan.scalars:
        v = py_name(s.name)
        if s.kind == "message":
            lines += _message_in(fn, s)
            continue
        lines.append(f"    {v} = _scalar({fn!r}, {s.name!r}, {v}, np.{s.dtype.name}, "
                     f"{s.kind!r})")
        if s.role == "fixed":
            f = fixed[s.name]
            lines.append(f"    if {v} != {_py_number(f.value)}:")
            message = f"{fn}: {f.what} was fixed to {f.value} when the kernel was translated; got "
            lines.append(f"        raise KernelArgumentError({py_literal(message)} + str({v}))")
    if plan.array_result is not None:
        # an array-valued function: a new array of the result's shape
        r = plan.array_result
        shape = _tuple(["None" if s is None else py_int_expr(s) for s in r.shape])
        lines.append(f"    {py_name(r.name)} = np.zeros({shape}, "
                     f"dtype=np.{np.dtype(r.dtype).name}, order='F')")
    if plan.assumption is not None:
        lines.append(f"    if not {py_bool_expr(plan.assumption.condition)}:")
        message = (f"{fn}: the kernel was translated assuming {plan.assumption.text}; the "
                   "arguments violate it")
        lines.append(f"        raise KernelArgumentError({py_literal(message)})")
    return lines


def _py_number(value) -> str:
    """Python text of the number *value* (a fixed argument's value)."""
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if np.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, complex):
        return f"complex({_py_number(value.real)}, {_py_number(value.imag)})"
    raise CodegenError(f"a fixed argument's value must be a number, not {type(value).__name__}")


def _tuple(items) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _array_line(a: Array, fn: str) -> str:
    v = py_name(a.name)
    head = f"    _{v}_buf, _{v}_back = "
    if a.relayout is not None:
        if a.logical_kind:
            raise ValueError("layout changes of logical arrays are not supported")
        r = a.relayout
        fshape = _tuple(["None" if x is None else py_int_expr(x) for x in r.fortran_shape])
        return (f"{head}_array_relaid({fn!r}, {a.name!r}, {v}, np.{a.dtype.name}, {fshape}, "
                f"{r.splits!r}, {r.perm!r}, {_tuple([py_int_expr(x) for x in r.device_shape])}"
                f", queue, {a.written})")
    shape = _tuple(["None" if s is None else py_int_expr(s) for s in a.shape])
    if a.logical_kind:
        return (f"{head}_logical_array({fn!r}, {a.name!r}, {v}, {shape}, queue, {a.written}"
                + (f", {a.logical_kind})" if a.logical_kind != 4 else ")"))
    return f"{head}_array({fn!r}, {a.name!r}, {v}, np.{a.dtype.name}, {shape}, queue, {a.written})"

# }}}


# {{{ transfers, launches, results

def _cl_value(a) -> str | None:
    """The Python text of an argument's OpenCL value (None: not passed)."""
    v = py_name(a.name)
    if isinstance(a, Array) or a.role == "scalar_ref":
        return f"_{v}_buf"
    return v if a.role == "value" else None


def _transfers(plan: HostPlan) -> list[str]:
    """Arrays and written scalars to the device, the error buffer, the launches."""
    fn = plan.name
    lines = []
    for a in plan.arguments:
        if isinstance(a, Array):
            lines.append(_array_line(a, fn))
            if a.optional:
                lines[-1] = absent_array(lines[-1], py_name(a.name))
        elif a.role == "scalar_ref":
            v = py_name(a.name)
            lines.append(f"    _{v}_buf, _{v}_host = _scalar_ref(queue, {v})")
    if plan.error is not None:
        lines.append("    _f2l_err_buf, _f2l_err_host = _error_buffer(queue)")
    values = {a.name: _cl_value(a) for a in plan.arguments}
    if plan.sequence:
        lines += launch_sequence(plan, values)
    else:
        launch = plan.launches[0]
        scratch = {s.name: f"_scratch(queue, ({py_int_expr(s.elements)}) * {s.itemsize})"
                   for s in plan.scratch}
        cl_args = [values.get(r) or scratch.get(r) or "_f2l_err_buf" for r in launch.arguments]
        lines += one_launch(launch, plan, cl_args, "    ")
    if plan.error is not None:
        table = tuple((f"{s.span.filename}:{s.span.line}" if s.span else "?", s.actions,
                       s.exit_code()) for s in plan.error.sites)
        lines.append(f"    _check_stop({fn!r}, {table!r}, _f2l_err_buf, _f2l_err_host, queue)")
    return lines


def _results(plan: HostPlan, k, names: _Names) -> list[str]:
    """Copies back, written scalars read, module data and components set, the return."""
    lines = []
    for a in plan.arguments:
        if isinstance(a, Array) and a.written:
            cb = f"_{py_name(a.name)}_back"
            lines.append(f"    if {cb} is not None:")
            lines.append(f"        {cb}()")
    for s in names.outs + names.stored_outs:
        v = py_name(s.name)
        lines.append(f"    cl.enqueue_copy(queue, _{v}_host, _{v}_buf)")
    # no queue.finish(): every copy back to the host above waits (blocking
    # copies on the in-order queue), and a call whose results all stay on the
    # device (pyopencl arrays) returns without waiting for its launches, as
    # pyopencl's own kernels do, so that a host loop of calls never waits
    stored_outs = {s.name for s in names.stored_outs}
    lines += storage_writes(k, stored_outs)
    lines += component_writes(k, stored_outs | {a.name for a in plan.arguments
                                                if isinstance(a, Array) and a.written})

    def returned(o: Scalar) -> str:
        # a logical comes back as a bool, whatever its kind's storage
        value = f"_{py_name(o.name)}_host[0]"
        value = f"bool({value})" if is_logical(o.dtype) else value
        if o.kind == "message":
            value = _message_out(o)
        flag = names.optional.get(o.name)
        if flag is not None:            # an absent optional's new value is None
            return f"(None if {py_name(flag)} == 0 else {value})"
        return value
    rets = [returned(o) for o in names.outs]
    if plan.array_result is not None:
        rets.insert(0, py_name(plan.array_result.name))
    if len(rets) == 1:
        lines.append(f"    return {rets[0]}")
    elif rets:
        lines.append("    return (" + ", ".join(rets) + ")")
    return lines

# }}}


# {{{ message dummies (f2loopy.frontend.messages)

def _message_in(fn: str, s: Scalar) -> list[str]:
    """The caller's string kept (returned if the kernel assigns no text),
    the kernel's code starting at 0."""
    v = py_name(s.name)
    message = f"{fn}: argument '{s.name}' must be a character (str), got "
    return [f"    if not isinstance({v}, str):",
            f"        raise KernelArgumentError({py_literal(message)} + type({v}).__name__)",
            f"    _{v}_text = {v}",
            f"    {v} = np.int32(0)"]


def _message_out(s: Scalar) -> str:
    """The text of the code the kernel wrote (0: the caller's string)."""
    v = py_name(s.name)
    assert s.character is not None
    length = s.character.length
    # (a declared length holds so many characters of the text)
    table = "(" + "".join(py_literal(t if length is None else t[:length]) + ", "
                          for t in s.character.messages) + ")"
    return (f"(_{v}_text if _{v}_host[0] == 0 else {table}[int(_{v}_host[0]) - 1])")

# }}}
