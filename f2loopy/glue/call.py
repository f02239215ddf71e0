"""Calling a kernel from Python directly, as loopy's kernels are called.

``tu(queue, a=a_dev, n=3)`` (or ``kernel(queue, ...)``) generates the code of
the kernel, loads the same host glue that ``f2loopy translate`` writes (built
in memory, nothing is written to disk), runs it and returns
``(event, outputs)``:

* arguments are given by keyword (loopy's habit; positional arguments after
  the queue are taken in the Fortran order);
* an integer argument left out that is an extent of an array passed
  (``n`` of ``a(n)``) takes that extent;
* an array the kernel writes and never reads (or declared ``intent(out)``)
  may be omitted: it is allocated (a pyopencl array when any array passed is
  one, a Fortran-ordered numpy array otherwise) with the declared shape;
* *outputs* is the tuple of the arguments the kernel writes, in argument
  order (arrays as passed or allocated, scalars with their new values).

The glue's checks apply unchanged: exact dtypes and shapes, Fortran order,
never a silent copy.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import numpy as np

from f2loopy.ir.folding import tdiv
from f2loopy.codegen import GeneratedKernel, generate_code, join_program
from f2loopy.codegen.names import py_name
from f2loopy.glue.pyexpr import py_int_expr
from f2loopy.glue.python import generate_python_glue
from f2loopy.ir.kernel import Kernel, TranslationUnit

_lock = threading.Lock()
#: OpenCL program text -> (glue namespace, generated kernels); a few recent ones
_GLUE: dict = {}


class KernelCallError(TypeError):
    """The arguments of a kernel call do not fit the kernel."""


def _glue_namespace(gks: list[GeneratedKernel]) -> dict:
    program = join_program(gks)
    key = hashlib.sha256(program.encode()).hexdigest()
    with _lock:
        hit = _GLUE.get(key)
        if hit is not None:
            return hit
    text = generate_python_glue(gks, program, "<in memory>", "<in memory>")
    ns: dict[str, Any] = {"__name__": f"f2loopy_call_{key[:12]}", "__file__": "<in memory>"}
    exec(compile(text, f"<f2loopy glue {key[:12]}>", "exec"), ns)  # noqa: S102 - generated here
    ns["_f2l_program"] = program
    with _lock:
        if len(_GLUE) >= 16:
            del _GLUE[next(iter(_GLUE))]
        _GLUE[key] = ns
    return ns


def _build(ns: dict, queue, options: tuple) -> None:
    """Put the program into the glue's cache (it would read it from a file)."""
    import pyopencl as cl
    key = (queue.context.int_ptr, options)
    with ns["_lock"]:
        if key not in ns["_programs"]:
            ns["_programs"][key] = cl.Program(queue.context, ns["_f2l_program"]).build(
                options=list(options))


def _pick_kernel(what) -> Kernel:
    if isinstance(what, Kernel):
        return what
    if isinstance(what, TranslationUnit):
        if len(what.kernels) != 1:
            raise KernelCallError(
                f"the translation unit holds {len(what.kernels)} kernels "
                f"({', '.join(what.keys())}); call one of them: tu[name](queue, ...) or "
                "tu.with_entrypoints(name)(queue, ...)")
        return what.kernels[0]
    raise KernelCallError(f"cannot call a {type(what).__name__}")


def call_kernel(what: Kernel | TranslationUnit, queue: Any, *args: Any,
                **kwargs: Any) -> tuple[Any, tuple]:
    """Run *what* (a kernel, or a translation unit of one kernel) on *queue*;
    return ``(event, outputs)`` as described in the module docstring."""
    import pyopencl as cl
    outputs = run_kernel(what, queue, *args, **kwargs)
    return cl.enqueue_marker(queue), tuple(outputs.values())


def run_kernel(what: Kernel | TranslationUnit, queue: Any, *args: Any,
               **kwargs: Any) -> dict[str, Any]:
    """Like :func:`call_kernel`; returns name -> value of the arguments the
    kernel writes, in argument order."""
    import pyopencl.array as cla
    kernel = _pick_kernel(what)
    gk = generate_code(kernel)
    fortran_args = kernel.fortran_args
    if len(args) > len(fortran_args):
        raise KernelCallError(f"{kernel.name}: takes {len(fortran_args)} arguments, "
                              f"got {len(args)} positional ones")
    # (fewer positional arguments than the kernel takes: the rest come by keyword)
    values = dict(zip((a.name for a in fortran_args), args, strict=False))
    for name, value in kwargs.items():
        if name in values:
            raise KernelCallError(f"{kernel.name}: argument '{name}' given twice")
        values[name] = value
    known = {a.name for a in fortran_args}
    unknown = sorted(set(values) - known)
    if unknown:
        raise KernelCallError(f"{kernel.name}: no argument named '{unknown[0]}' (the "
                              f"arguments are: {', '.join(a.name for a in fortran_args)})")
    by_name = {ka.name: ka for ka in gk.arguments}
    on_device = any(isinstance(v, cla.Array) for v in values.values())
    missing = [a for a in fortran_args if a.name not in values]
    _infer_sizes(kernel, values, missing)
    missing = [a for a in fortran_args if a.name not in values]
    # scalars first: the shapes of allocated outputs are computed from them
    for a in missing:
        ka = by_name.get(a.name)
        if a.is_scalar:
            if ka is not None and ka.kind == "fixed":
                values[a.name] = a.fixed_value
            elif ka is not None and ka.kind == "scalar_ref" and not ka.read:
                values[a.name] = a.dtype.type(0)
            else:
                raise KernelCallError(f"{kernel.name}: argument '{a.name}' is missing")
    for a in missing:
        if a.is_scalar:
            continue
        ka = by_name.get(a.name)
        reads = ka is None or (ka.read and a.intent != "out")
        if reads:
            raise KernelCallError(f"{kernel.name}: argument '{a.name}' is missing (the "
                                  "kernel reads it; only arrays it only writes are allocated)")
        values[a.name] = _allocate(kernel, a, values, queue, on_device)
    ns = _glue_namespace([gk])
    options = tuple(gk.build_options)
    if gk.specialized:
        # compiled per value of these arguments: the program the glue will ask
        # for (its options as the glue prints them: -DMACRO=value added)
        from f2loopy.codegen import specialization_options
        try:
            options += specialization_options(gk.specialized, values)
        except (TypeError, ValueError):
            raise KernelCallError(f"{kernel.name}: the arguments "
                                  f"{', '.join(n for n, _ in gk.specialized)} must be "
                                  "integers (the program is compiled per value)") from None
    _build(ns, queue, options)
    fn = ns[py_name(kernel.name)]
    returned = fn(*(values[a.name] for a in fortran_args), queue=queue)
    refs = [ka.name for ka in gk.arguments if ka.kind == "scalar_ref"]
    if len(refs) == 1:
        returned = (returned,)
    values.update(zip(refs, returned or (), strict=True))
    return {ka.name: values[ka.name] for ka in gk.arguments
            if ka.written and ka.name in known}


def _infer_sizes(kernel: Kernel, values: dict, missing: list) -> None:
    """Integer arguments left out that are the extent of an axis of an array
    passed (``a(n)``, ``b(m, n)``) take that extent, as loopy infers them;
    the glue still checks every shape against the values."""
    import pymbolic.primitives as p
    wanted = {a.name for a in missing if a.is_scalar and np.dtype(a.dtype).kind in "iu"}
    for arg in kernel.fortran_args:
        value = values.get(arg.name)
        if arg.is_scalar or value is None or not hasattr(value, "shape"):
            continue
        layout = arg.fortran_layout
        shape = layout.shape if layout is not None else arg.shape
        if len(value.shape) != len(shape):
            continue
        for extent, have in zip(shape, value.shape, strict=True):
            if isinstance(extent, p.Variable) and extent.name in wanted:
                values[extent.name] = int(have)
                wanted.discard(extent.name)


def _allocate(kernel: Kernel, arg, values: dict, queue, on_device: bool):
    layout = arg.fortran_layout
    shape_exprs = layout.shape if layout is not None else arg.shape
    if any(s is None for s in shape_exprs):
        raise KernelCallError(f"{kernel.name}: argument '{arg.name}' is missing (an "
                              "assumed-size array cannot be allocated)")
    env: dict[str, object] = {py_name(k): v for k, v in values.items() if np.isscalar(v)}
    env["_tdiv"] = tdiv
    env["_tmod"] = lambda a, b: a - tdiv(a, b) * b
    try:
        shape = tuple(int(eval(py_int_expr(s), {"__builtins__": {"min": min, "max": max}},
                               env))  # noqa: S307 - printed from the kernel's own IR
                      for s in shape_exprs)
    except (NameError, ValueError) as exc:
        raise KernelCallError(f"{kernel.name}: cannot allocate argument '{arg.name}': "
                              f"its shape needs {exc}") from None
    if on_device:
        import pyopencl.array as cla
        return cla.zeros(queue, shape, arg.dtype, order="F")
    return np.zeros(shape, arg.dtype, order="F")
