"""The Python host glue ``NAME_cl.py``: one function per subroutine.

The generated module depends only on numpy and pyopencl.  Each function takes
the Fortran arguments in Fortran order, checks every array (dtype, shape,
Fortran order: never a silent copy), runs the kernel and leaves the arrays as
the Fortran subroutine would have; scalars the subroutine writes are returned.
"""

from __future__ import annotations

import hashlib

import numpy as np

from f2loopy.ir.types import is_complex, is_integer, is_logical
from f2loopy.ir.roles import (
    Allocation, Character, Component, Extent, Presence, character_of)
from f2loopy.codegen import GeneratedKernel
from f2loopy.codegen.names import py_name
from f2loopy.diagnostics import CodegenError
from f2loopy.escape import py_docstring, py_literal
from f2loopy.glue.module_data import (
    allocation_reads, component_reads, component_writes, fortran_parameters,
    python_module_objects, storage_reads, storage_writes)
from f2loopy.glue.optional_args import (
    absent_array, absent_extent, optional_names, presence_reads, signature)
from f2loopy.glue.pyexpr import py_int_expr
from f2loopy.glue.python_launches import _launch_sequence, _one_launch
from f2loopy.version import __version__

_FORTRAN_TYPE = {
    "int8": "integer(1)", "int16": "integer(2)", "int32": "integer", "int64": "integer(8)",
    "float32": "real", "float64": "double precision", "complex64": "complex",
    "complex128": "complex(8)", "bool": "logical",
}

_RUNTIME = '''
import atexit as _atexit
import os
import sys
import threading
import time as _time

import numpy as np
import pyopencl as cl

_HERE = os.path.dirname(os.path.abspath(__file__))
_lock = threading.Lock()
_programs = {}
_kernels = {}


class KernelArgumentError(TypeError):
    """An argument does not match the Fortran declaration."""


class KernelStopError(RuntimeError):
    """The Fortran would have stopped the program here ('stop', 'error stop',
    'call xerbla'): *where* is FILE:LINE of that statement, *code* the exit
    status the program would have had, *values* the integers it printed."""

    def __init__(self, message, where, code, values):
        super().__init__(message)
        self.where, self.code, self.values = where, code, values


def _error_buffer(queue):
    host = np.zeros(__ERROR_SLOTS__, dtype=np.int32)
    mf = cl.mem_flags
    return cl.Buffer(queue.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host), host


def _check_stop(fn, sites, buf, host, queue):
    """Raise KernelStopError if the kernel reached one of its error *sites*
    (the first one reached is in the buffer)."""
    cl.enqueue_copy(queue, host, buf)
    queue.finish()
    site = int(host[0])
    if not 0 < site <= len(sites):
        return
    where, actions, code = sites[site - 1]
    values = [int(v) for v in host[1:]]
    parts = []
    for act in actions:
        if act[0] == "write":
            parts.append(" ".join(str(values[x]) if kind == "value" else x
                                  for kind, x in act[3]))
        elif act[0] == "xerbla":
            parts.append(f"On entry to {act[1].strip()} parameter number {values[act[2]]} "
                         "had an illegal value")
        else:
            word = "STOP" if act[0] == "stop" else "ERROR STOP"
            parts.append(word if act[1] is None else f"{word} {act[1]}")
    message = "; ".join(x for x in parts if x)
    raise KernelStopError(f"{fn}: {where}: {message}", where, code, values)


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _tmod(a, b):
    return a - _tdiv(a, b) * b


__DEVICE_FUNCTIONS__


def _default_queue():
    """The queue of this process's device (one device per MPI rank)."""
    return _rank_queue()


def _kernel(queue, name, options):
    key = (queue.context.int_ptr, options)
    with _lock:
        knl = _kernels.get(key + (name,))
        if knl is not None:
            return knl
        prg = _programs.get(key)
        if prg is None:
            path = os.path.join(_HERE, CL_FILE)
            try:
                with open(path, encoding="utf-8") as f:
                    source = f.read()
            except OSError as exc:
                raise RuntimeError(f"cannot read the OpenCL source {path}: {exc}") from None
            import hashlib
            if hashlib.sha256(source.encode()).hexdigest() != CL_SHA256:
                raise RuntimeError(f"{path} does not match this glue module; translate the "
                                   "Fortran file again so both are regenerated together")
            prg = cl.Program(queue.context, source).build(options=list(options))
            _programs[key] = prg
        knl = cl.Kernel(prg, name)
        _kernels[key + (name,)] = knl
        return knl


_IINFO = {}     # np.iinfo by dtype (built once: a call checks every integer scalar)


def _scalar(fn, name, value, dtype, kind):
    if kind.startswith("character"):
        # a character flag: the kernel gets the code of the first character,
        # plus 256 if more non-blank ones follow (f2loopy.frontend.characters)
        if not isinstance(value, str):
            raise KernelArgumentError(f"{fn}: argument '{name}' must be a character (str), "
                                      f"got {type(value).__name__}")
        if kind != "character":
            value = value[:int(kind[len("character"):])]  # the declared length sees so much
        if value and ord(value[0]) > 255:
            raise KernelArgumentError(f"{fn}: argument '{name}' must start with a one-byte "
                                      f"character, got {value[0]!r}")
        code = ord(value[0]) if value else 32
        return np.int32(code + (256 if len(value.rstrip(" ")) > 1 else 0))
    if kind.startswith("logical"):
        if not isinstance(value, (bool, np.bool_)):
            raise KernelArgumentError(f"{fn}: argument '{name}' must be a logical (bool), "
                                      f"got {type(value).__name__}")
        # the device holds a logical of kind k in k bytes ('logical' is kind 4)
        store = {"logical1": np.int8, "logical2": np.int16, "logical8": np.int64}
        return store.get(kind, np.int32)(bool(value))
    if kind == "integer":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise KernelArgumentError(f"{fn}: argument '{name}' must be an integer, got "
                                      f"{type(value).__name__}")
        info = _IINFO.get(dtype)
        if info is None:
            info = _IINFO[dtype] = np.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise KernelArgumentError(f"{fn}: argument '{name}' = {value} does not fit in "
                                      f"{np.dtype(dtype).name}")
        return np.dtype(dtype).type(value)
    if kind == "complex":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, complex,
                                                                         np.number)):
            raise KernelArgumentError(f"{fn}: argument '{name}' must be a number, got "
                                      f"{type(value).__name__}")
        return np.dtype(dtype).type(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                     np.floating)):
        raise KernelArgumentError(f"{fn}: argument '{name}' must be a real number, got "
                                  f"{type(value).__name__}")
    return np.dtype(dtype).type(value)


def _extent(fn, name, value, axis, rank):
    """Extent of *axis* of assumed-shape array argument *value*."""
    shape = getattr(value, "shape", None)
    if not isinstance(shape, tuple):
        raise KernelArgumentError(f"{fn}: argument '{name}' must be a numpy or pyopencl "
                                  f"array, got {type(value).__name__}")
    if len(shape) != rank:
        raise KernelArgumentError(f"{fn}: argument '{name}' must have {rank} dimension(s) as "
                                  f"declared in Fortran, got {len(shape)}")
    if shape[axis] > np.iinfo(np.int32).max:
        raise KernelArgumentError(f"{fn}: argument '{name}' is too large (extent "
                                  f"{shape[axis]} does not fit in int32)")
    return np.int32(shape[axis])


def _check_shape(fn, name, have, want):
    if len(have) != len(want) or any(w is not None and h != w for h, w in zip(have, want)):
        shown = "(" + ", ".join("*" if w is None else str(w) for w in want) + ")"
        raise KernelArgumentError(f"{fn}: argument '{name}' must have shape {shown} as "
                                  f"declared in Fortran, got {tuple(have)}")


def _array(fn, name, value, dtype, shape, queue, written):
    """Device buffer for *value* and a function that copies results back."""
    import pyopencl.array as cla
    if isinstance(value, cla.Array):
        if value.dtype != dtype:
            raise KernelArgumentError(f"{fn}: argument '{name}' must have dtype "
                                      f"{np.dtype(dtype).name}, got {value.dtype}")
        _check_shape(fn, name, value.shape, shape)
        if value.ndim > 1 and not value.flags.f_contiguous:
            raise KernelArgumentError(f"{fn}: argument '{name}' must be a Fortran-ordered "
                                      "array (order='F')")
        if value.offset:
            raise KernelArgumentError(f"{fn}: argument '{name}' must not be an offset view")
        # (an array made on this very queue is in its context: no query per call)
        if value.queue is not queue and value.context != queue.context:
            raise KernelArgumentError(f"{fn}: argument '{name}' lives in another OpenCL "
                                      "context than the queue")
        return value.data, None
    if not isinstance(value, np.ndarray):
        raise KernelArgumentError(f"{fn}: argument '{name}' must be a numpy or pyopencl "
                                  f"array, got {type(value).__name__}")
    if value.dtype != dtype:
        raise KernelArgumentError(f"{fn}: argument '{name}' must have dtype "
                                  f"{np.dtype(dtype).name}, got {value.dtype} (convert it "
                                  "with .astype() before the call)")
    _check_shape(fn, name, value.shape, shape)
    if not value.flags.f_contiguous:
        raise KernelArgumentError(f"{fn}: argument '{name}' must be a Fortran-ordered "
                                  "contiguous array (np.asfortranarray)")
    if written and not value.flags.writeable:
        raise KernelArgumentError(f"{fn}: argument '{name}' is written by the subroutine "
                                  "but the array is read-only")
    mf = cl.mem_flags
    if value.nbytes == 0:
        return cl.Buffer(queue.context, mf.READ_WRITE, 1), None
    started = _time.perf_counter()
    buf = cl.Buffer(queue.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=value)
    if _PROFILE:
        _profile_transfer(started, up=value.nbytes)
    if not written:
        return buf, None
    return buf, lambda: _copy_back(queue, value, buf)


def _copy_back(queue, host, buf):
    started = _time.perf_counter()
    cl.enqueue_copy(queue, host, buf)
    if _PROFILE:
        _profile_transfer(started, down=host.nbytes)


def _logical_array(fn, name, value, shape, queue, written, kind=4):
    """Logical arrays of kind 4 (Fortran's default) are 4-byte integers on the
    device: numpy bool arrays are converted (and copied back if written),
    int32 arrays holding 0/1 are used as they are.  Kind 1 (``c_bool``) is
    numpy bool itself; kinds 2 and 8 are int16/int64 as kind 4 is int32."""
    if kind == 1:
        if isinstance(value, np.ndarray) and value.dtype != np.bool_:
            raise KernelArgumentError(f"{fn}: argument '{name}' must have dtype bool (a "
                                      f"logical(1) array), got {value.dtype}")
        return _array(fn, name, value, np.bool_, shape, queue, written)
    store_type = {2: np.int16, 8: np.int64}.get(kind, np.int32)
    if isinstance(value, np.ndarray) and value.dtype == np.bool_:
        _check_shape(fn, name, value.shape, shape)
        if not value.flags.f_contiguous:
            raise KernelArgumentError(f"{fn}: argument '{name}' must be a Fortran-ordered "
                                      "contiguous array (np.asfortranarray)")
        if written and not value.flags.writeable:
            raise KernelArgumentError(f"{fn}: argument '{name}' is written by the "
                                      "subroutine but the array is read-only")
        store = value.astype(store_type, order="F")
        buf, back = _array(fn, name, store, store_type, shape, queue, written)
        if back is None:
            return buf, None

        def copy_back():
            back()
            value[...] = store != 0
        return buf, copy_back
    return _array(fn, name, value, store_type, shape, queue, written)


__LAYOUT_FUNCTIONS__


def _array_relaid(fn, name, value, dtype, shape, splits, perm, dev_shape, queue, written):
    """Like _array, for an argument the kernel stores in another layout: numpy
    arrays are converted on the way in and out; pyopencl arrays must already
    be in the kernel's layout."""
    import pyopencl.array as cla
    if isinstance(value, cla.Array):
        if value.dtype != dtype or tuple(value.shape) != tuple(dev_shape) or \
                not value.flags.c_contiguous:
            raise KernelArgumentError(
                f"{fn}: argument '{name}' is stored by the kernel in a transformed layout; "
                f"pass a numpy array in the Fortran layout {tuple(shape)} (converted here) or "
                f"a C-contiguous pyopencl array of shape {tuple(dev_shape)} and dtype "
                f"{np.dtype(dtype).name}")
        return value.data, None
    if not isinstance(value, np.ndarray):
        raise KernelArgumentError(f"{fn}: argument '{name}' must be a numpy or pyopencl "
                                  f"array, got {type(value).__name__}")
    if value.dtype != dtype:
        raise KernelArgumentError(f"{fn}: argument '{name}' must have dtype "
                                  f"{np.dtype(dtype).name}, got {value.dtype}")
    _check_shape(fn, name, value.shape, shape)
    if not value.flags.f_contiguous:
        raise KernelArgumentError(f"{fn}: argument '{name}' must be a Fortran-ordered "
                                  "contiguous array (np.asfortranarray)")
    if written and not value.flags.writeable:
        raise KernelArgumentError(f"{fn}: argument '{name}' is written by the subroutine "
                                  "but the array is read-only")
    host = relaid(value, splits, perm)
    mf = cl.mem_flags
    started = _time.perf_counter()
    buf = cl.Buffer(queue.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
    if _PROFILE:
        _profile_transfer(started, up=host.nbytes)
    if not written:
        return buf, None

    def back():
        _copy_back(queue, host, buf)
        unrelaid(host, value, splits, perm)
    return buf, back


def _scalar_ref(queue, value):
    """A one-element buffer holding a scalar the kernel writes."""
    arr = np.array([value])
    buf = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                    hostbuf=arr)
    return buf, arr


def _scratch(queue, nbytes):
    """Device memory for a global temporary of the kernel (not initialised)."""
    return cl.Buffer(queue.context, cl.mem_flags.READ_WRITE, size=max(1, int(nbytes)))


def _check_local(fn, local, queue):
    """A work-group size computed from the arguments must fit the device."""
    dev = queue.device
    limit, dims = dev.max_work_group_size, tuple(dev.max_work_item_sizes)
    if local[0] * local[1] * local[2] > limit or any(x > d for x, d in zip(local, dims)):
        raise KernelArgumentError(
            f"{fn}: the work-group size {local[0]} x {local[1]} x {local[2]} that the arguments "
            f"give exceeds the limit of the device {dev.name.strip()!r} ({limit} work-items, "
            f"at most {dims[0]} x {dims[1]} x {dims[2]})")


def _arg_setter(kernel):
    """kernel's method that sets one argument from a numpy scalar (every
    scalar the glue passes is one): pyopencl's raw setter where it has one
    (Kernel.set_arg of a scalar costs tens of microseconds in pyopencl 2026,
    too much for a launch in a host loop), else Kernel.set_arg."""
    raw = getattr(kernel, "_set_arg_buf", None)
    return raw if raw is not None else kernel.set_arg


def _set_args(kernel, args, signature):
    """Set the arguments of kernel: memory objects and numpy scalars, checked
    against the kernel's *signature* first."""
    _check_args(kernel, args, signature)
    scalar = _arg_setter(kernel)
    for index, value in enumerate(args):
        if isinstance(value, cl.MemoryObjectHolder):
            kernel.set_arg(index, value)
        else:
            scalar(index, value)


def _global_size(groups, local):
    """The global size of a launch of groups work-groups of local work-items
    on each axis; () where an axis has no groups (then nothing is launched)."""
    if all(g > 0 for g in groups):
        return tuple(g * l for g, l in zip(groups, local))
    return ()


def _launch(queue, kernel, args, groups, local, signature):
    _set_args(kernel, args, signature)
    if all(g > 0 for g in groups):
        gsize = tuple(g * l for g, l in zip(groups, local))
        _enqueuer()(queue, kernel, gsize, local)


def _enqueuer():
    """cl.enqueue_nd_range_kernel, or with F2LOOPY_PROFILE a function that
    times each kernel alone (a host loop takes it once, before its launches)."""
    return _profiled_enqueue if _PROFILE else cl.enqueue_nd_range_kernel


def _profiled_enqueue(queue, kernel, gsize, local):
    queue.finish()          # what came before is not this kernel's time
    started = _time.perf_counter()
    cl.enqueue_nd_range_kernel(queue, kernel, gsize, local)
    queue.finish()
    _profile_kernel(started)


def _check_args(kernel, args, signature):
    # what the kernel takes, checked before its arguments are set: a wrong
    # argument is an error here, never a crash inside the OpenCL implementation
    count = kernel.get_info(cl.kernel_info.NUM_ARGS)
    if len(args) != len(signature) or count != len(signature):
        raise KernelArgumentError(
            f"{kernel.function_name}: {len(args)} arguments for a kernel of {count} (the glue "
            "and the OpenCL program do not match: translate again)")
    for k, (a, want) in enumerate(zip(args, signature), 1):
        if want == "buffer":
            if not isinstance(a, cl.MemoryObjectHolder):
                raise KernelArgumentError(f"{kernel.function_name}: argument {k} must be a "
                                          f"device buffer, not {type(a).__name__}")
        elif not isinstance(a, np.generic) or a.dtype != np.dtype(want):
            raise KernelArgumentError(f"{kernel.function_name}: argument {k} must be a "
                                      f"numpy {want} scalar, not {type(a).__name__}")


__PROFILE_FUNCTIONS__
'''


def runtime_source() -> str:
    """The helper code every glue module carries (it must not import f2loopy)."""
    from f2loopy.glue import devices
    from f2loopy.glue.layout import source
    from f2loopy.ir.control import ERROR_VALUES
    from f2loopy.glue import profile
    return _RUNTIME.replace("__LAYOUT_FUNCTIONS__", source().rstrip()).replace(
        "__PROFILE_FUNCTIONS__", profile.source().rstrip()).replace(
        "__DEVICE_FUNCTIONS__", devices.source().rstrip()).replace(
        "__ERROR_SLOTS__", str(ERROR_VALUES + 1))


def _character_kind(character: Character) -> str:
    """``'character'`` (assumed length) or ``'characterL'`` (declared L)."""
    if character.length is None:
        return "character"
    return f"character{character.length}"


def _kind(dtype) -> str:
    dt = np.dtype(dtype)
    if is_logical(dt):
        return "logical"
    if is_integer(dt):
        return "integer"
    if is_complex(dt):
        return "complex"
    return "real"


def _assumption_check(kernel):
    """Python condition (and its isl text) for the kernel's assumptions, or None."""
    from f2loopy.glue.pyexpr import py_bool_expr
    from f2loopy.ir.isl_tools import expr_from_set
    a = kernel.assumptions
    if a.plain_is_universe():
        return None
    cond = expr_from_set(a)
    if cond is True:
        return None
    text = str(a)
    text = text[text.index(":") + 1:].rstrip("} ").strip() if ":" in text else text
    return py_bool_expr(cond), text


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


def slowest_first(arg) -> list:
    """Kernel axes of *arg* from the slowest- to the fastest-varying in memory."""
    def rank(a):
        t = arg.axis_tags[a]
        return -1 if t.kind == "vec" else t.order
    return sorted(range(arg.ndim), key=rank, reverse=True)


def _shape_tuple(arg) -> str:
    items = ["None" if s is None else py_int_expr(s) for s in arg.shape]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _kernel_function(gk: GeneratedKernel, source_name: str) -> str:
    k = gk.kernel
    params = fortran_parameters(k)
    names = [py_name(n) for n in params]
    fn = k.name
    optional = optional_names(k)
    names = signature(names, params, optional)
    lines = [f"def {py_name(fn)}({', '.join(names)}{', ' if names else ''}*, queue=None):"]
    decl = ", ".join(params)
    hidden = {a.name for a in k.extent_args} | {a.name for a in k.args
                                                 if isinstance(a.role, (Allocation, Presence))}
    where = f" ({py_docstring(k.span)})" if k.span else ""
    result = k.result_arg
    unit = "subroutine" if result is None else "function"
    if result is not None:
        hidden.add(result.name)
    stored = {a.name for a in k.storage_args}
    hidden |= stored
    parts = {a.name: a for a in k.args if isinstance(a.role, Component)}
    hidden |= set(parts)
    doc = [f'    """OpenCL version of Fortran ``{unit} {k.name}({decl})``{where}.', "",
           "    Arguments:"]
    for ka in gk.arguments:
        a = ka.ir_arg
        ftype = _FORTRAN_TYPE.get(np.dtype(a.dtype).name, str(a.dtype))
        if a.name in hidden:
            continue
        if ka.kind == "array":
            shape = ", ".join("*" if s is None else ":" if str(s) in hidden else str(s)
                              for s in a.shape)
            dtname = np.dtype(a.dtype).name
            if is_logical(a.dtype):
                dtname = {1: "bool", 2: "bool (or int16 holding 0/1)", 8: "bool (or int64 "
                          "holding 0/1)"}.get(a.logical_kind, "bool (or int32 holding 0/1)")
            what = f"{ftype} array ({shape}), numpy dtype {dtname}, order 'F'"
            what += "; updated in place" if ka.written else ""
        elif character_of(a.role) is not None:
            what = "character (a Python str)"
        else:
            what = f"{ftype} scalar" + ("; new value returned" if ka.kind == "scalar_ref"
                                        else "")
        if a.name in optional:
            what += "; optional (None: absent)"
        doc.append(f"      {a.name}: {py_docstring(what)}")
    written = {ka.name for ka in gk.arguments if ka.kind == "scalar_ref" or ka.written}
    for root in dict.fromkeys(a.role.root for a in parts.values()):
        members = [a for a in parts.values() if a.role.root == root]
        first = members[0].role
        module, tname, rank = first.type_module, first.type_name, first.type_rank
        comps = ", ".join("%".join(a.role.path[1:]) + (" (updated)" if a.name in written
                                                        else "") for a in members)
        if rank:
            doc.append(f"      {root}: array of type({tname}), rank {rank}: a numpy structured "
                       f"array with the fields {comps}")
        else:
            doc.append(f"      {root}: type({tname}){f' of module {module}' if module else ''}: "
                       f"an object with the components {comps}")
    outs = [ka for ka in gk.arguments if ka.kind == "scalar_ref" and ka.name not in stored
            and ka.name not in parts]
    stored_outs = [ka for ka in gk.arguments if ka.kind == "scalar_ref"
                   and (ka.name in stored or ka.name in parts)]
    if stored:
        doc += ["", "    Module variables (attributes of this glue module's objects): "
                + ", ".join(".".join(a.role.key[1:]) for a in k.storage_args) + "."]
    if result is not None:
        # the function's value first, then the scalar arguments it changes
        outs = [ka for ka in outs if ka.name == result.name] + \
            [ka for ka in outs if ka.name != result.name]
        doc += ["", f"    Returns the value of {k.name}" + (
            ", then the new values of " + ", ".join(ka.name for ka in outs[1:])
            if len(outs) > 1 else "") + "."]
    elif outs:
        doc += ["", "    Returns the new value" + ("s" if len(outs) > 1 else "") + " of "
                + ", ".join(ka.name for ka in outs) + "."]
    doc.append('    """')
    lines += doc
    lines.append("    if queue is None:")
    lines.append("        queue = _default_queue()")
    # the extents of assumed-shape arrays come from the arrays passed
    for a in k.extent_args:
        role = a.role
        assert isinstance(role, Extent)
        array = k.variable(role.array)
        lines.append(f"    {py_name(a.name)} = _extent({fn!r}, {array.name!r}, "
                     f"{py_name(array.name)}, {role.axis}, {array.fortran_ndim})")
        if array.name in optional:
            lines[-1] = absent_extent(lines[-1], py_name(array.name))
    lines += component_reads(k)
    lines += storage_reads(k)
    lines += allocation_reads(k)
    lines += presence_reads(k, optional)
    if result is not None and not result.shape:
        zero = "False" if is_logical(result.dtype) else "0"
        lines.append(f"    {py_name(result.name)} = {zero}")
    # scalars first: shapes and grid sizes are computed from them
    for ka in gk.arguments:
        if ka.kind in ("value", "scalar_ref", "fixed"):
            v = py_name(ka.name)
            character = character_of(ka.ir_arg.role)
            kind = _character_kind(character) if character is not None else _kind(ka.dtype)
            if kind == "logical" and ka.ir_arg.logical_kind != 4:
                kind = f"logical{ka.ir_arg.logical_kind}"
            lines.append(f"    {v} = _scalar({fn!r}, {ka.name!r}, {v}, np.{np.dtype(ka.dtype).name}, "
                         f"{kind!r})")
        if ka.kind == "fixed":
            fixed = ka.ir_arg.fixed_value
            what = ka.ir_arg.what
            lines.append(f"    if {v} != {_py_number(fixed)}:")
            message = f"{fn}: {what} was fixed to {fixed} when the kernel was translated; got "
            lines.append(f"        raise KernelArgumentError({py_literal(message)} + str({v}))")
    if result is not None and result.shape:
        # an array-valued function: a new array of the result's shape
        lines.append(f"    {py_name(result.name)} = np.zeros({_shape_tuple(result)}, "
                     f"dtype=np.{np.dtype(result.dtype).name}, order='F')")
    check = _assumption_check(gk.kernel)
    if check is not None:
        cond, text = check
        lines.append(f"    if not {cond}:")
        message = f"{fn}: the kernel was translated assuming {text}; the arguments violate it"
        lines.append(f"        raise KernelArgumentError({py_literal(message)})")
    copy_backs = []
    cl_args = []
    for ka in gk.arguments:
        v = py_name(ka.name)
        if ka.kind == "array":
            dtype = np.dtype(ka.dtype)
            layout = ka.ir_arg.fortran_layout
            if layout is not None:
                if is_logical(dtype):
                    raise ValueError("layout changes of logical arrays are not supported")
                perm = slowest_first(ka.ir_arg)
                dev_shape = "(" + ", ".join(py_int_expr(ka.ir_arg.shape[a]) for a in perm) + \
                    ("," if len(perm) == 1 else "") + ")"
                fshape = "(" + ", ".join("None" if x is None else py_int_expr(x)
                                         for x in layout.shape) + \
                    ("," if len(layout.shape) == 1 else "") + ")"
                lines.append(f"    _{v}_buf, _{v}_back = _array_relaid({fn!r}, {ka.name!r}, {v}, "
                             f"np.{dtype.name}, {fshape}, {tuple(layout.splits)!r}, "
                             f"{tuple(perm)!r}, {dev_shape}, queue, {ka.written})")
            elif is_logical(dtype):
                lkind = ka.ir_arg.logical_kind
                lines.append(f"    _{v}_buf, _{v}_back = _logical_array({fn!r}, {ka.name!r}, "
                             f"{v}, {_shape_tuple(ka.ir_arg)}, queue, {ka.written}"
                             + (f", {lkind})" if lkind != 4 else ")"))
            else:
                lines.append(f"    _{v}_buf, _{v}_back = _array({fn!r}, {ka.name!r}, {v}, "
                             f"np.{dtype.name}, {_shape_tuple(ka.ir_arg)}, queue, "
                             f"{ka.written})")
            if ka.name in optional:
                lines[-1] = absent_array(lines[-1], v)
            cl_args.append(f"_{v}_buf")
            if ka.written:
                copy_backs.append(f"_{v}_back")
        elif ka.kind == "scalar_ref":
            lines.append(f"    _{v}_buf, _{v}_host = _scalar_ref(queue, {v})")
            cl_args.append(f"_{v}_buf")
        elif ka.kind == "value":
            cl_args.append(v)
    sites = gk.kernel.error_sites
    if sites:
        lines.append("    _f2l_err_buf, _f2l_err_host = _error_buffer(queue)")
    if gk.launches:
        lines += _launch_sequence(gk, fn, {ka.name: a for ka, a in zip(gk.arguments, cl_args_of(
            gk.arguments))})
    else:
        for sb in gk.scratch:
            cl_args.append(f"_scratch(queue, ({py_int_expr(sb.elements)}) * {sb.itemsize})")
        if sites:
            cl_args.append("_f2l_err_buf")
        lines += _one_launch(gk, fn, cl_args, "    ")
    if sites:
        table = tuple((f"{s.span.filename}:{s.span.line}" if s.span else "?", s.actions,
                       s.exit_code()) for s in sites)
        lines.append(f"    _check_stop({fn!r}, {table!r}, _f2l_err_buf, _f2l_err_host, queue)")
    for cb in copy_backs:
        lines.append(f"    if {cb} is not None:")
        lines.append(f"        {cb}()")
    for ka in outs + stored_outs:
        v = py_name(ka.name)
        lines.append(f"    cl.enqueue_copy(queue, _{v}_host, _{v}_buf)")
    # no queue.finish(): every copy back to the host above waits (blocking
    # copies on the in-order queue), and a call whose results all stay on the
    # device (pyopencl arrays) returns without waiting for its launches, as
    # pyopencl's own kernels do, so that a host loop of calls never waits
    lines += storage_writes(k, {ka.name for ka in stored_outs})
    lines += component_writes(k, {ka.name for ka in stored_outs} |
                              {ka.name for ka in gk.arguments if ka.kind == "array" and ka.written})
    def returned(o):
        # a logical comes back as a bool, whatever its kind's storage
        value = f"_{py_name(o.name)}_host[0]"
        value = f"bool({value})" if is_logical(o.dtype) else value
        if o.name in optional:          # an absent optional's new value is None
            return f"(None if {py_name(optional[o.name])} == 0 else {value})"
        return value
    rets = [returned(o) for o in outs]
    if result is not None and result.shape:
        rets.insert(0, py_name(result.name))
    if len(rets) == 1:
        lines.append(f"    return {rets[0]}")
    elif rets:
        lines.append("    return (" + ", ".join(rets) + ")")
    return "\n".join(lines) + "\n"


def cl_args_of(arguments) -> list:
    """The Python text of each argument's OpenCL value (None: not passed)."""
    out = []
    for ka in arguments:
        v = py_name(ka.name)
        out.append(f"_{v}_buf" if ka.kind in ("array", "scalar_ref") else
                   v if ka.kind == "value" else None)
    return out


def generate_python_glue(kernels: list[GeneratedKernel], cl_source: str, cl_filename: str,
                         source_name: str) -> str:
    """Text of the glue module for *kernels*, whose program text is *cl_source*
    (written to *cl_filename* beside the module)."""
    sha = hashlib.sha256(cl_source.encode()).hexdigest()
    names = ", ".join(gk.kernel.name for gk in kernels)
    head = (f'"""OpenCL versions of the Fortran subroutines in {py_docstring(source_name)}: '
            f'{names}.\n\n'
            f"Generated by f2loopy {__version__}; do not edit (change the Fortran or its "
            "!$loopy script and\ntranslate again).  Each function takes the arguments of its "
            "Fortran subroutine, in order:\nnumpy arrays (Fortran order, exactly the declared "
            "dtype and shape) or pyopencl arrays, and\nPython numbers.  Arrays the subroutine "
            "writes are updated in place; scalars it writes are\nreturned.  Pass queue= to "
            "choose the OpenCL queue; otherwise one is created on the device of\nthis MPI rank "
            "(node-local rank modulo the devices; F2LOOPY_DEVICE or PYOPENCL_CTX\nchoose "
            'another).\n"""\n')
    consts = f"\nCL_FILE = {py_literal(cl_filename)}\nCL_SHA256 = {py_literal(sha)}\n"
    consts += python_module_objects([gk.kernel for gk in kernels])
    funcs = "\n\n".join(_kernel_function(gk, source_name) for gk in kernels)
    exports = "__all__ = [" + ", ".join(repr(py_name(gk.kernel.name)) for gk in kernels) + \
        ", 'KernelArgumentError', 'KernelStopError']\n"
    profiled = "\n\nif _PROFILE:          # F2LOOPY_PROFILE=1: a table per function at exit\n" + \
        "".join(f"    {py_name(gk.kernel.name)} = _profiled({gk.kernel.name!r}, "
                f"{py_name(gk.kernel.name)})\n" for gk in kernels)
    return head + runtime_source() + consts + "\n" + exports + "\n\n" + funcs + profiled
