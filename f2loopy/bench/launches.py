"""Running a generated kernel by raw launches for timing: one launch, or the
launches of a kernel split at global barriers (:mod:`f2loopy.codegen.phases`)
with its host loops run here, on the same buffers, as the glue runs them."""

from __future__ import annotations

import statistics as pystats
import time
from collections.abc import Callable

import numpy as np
import pymbolic.primitives as p
from pymbolic.mapper import IdentityMapper

from f2loopy.codegen.phases import HostLoop
from f2loopy.ir.folding import tdiv


class _Prefixed(IdentityMapper):
    """Every variable X as ``a_X``; the functions called keep their names."""

    def map_variable(self, expr, *args):
        return p.Variable("a_" + expr.name)

    def map_call(self, expr, *args):
        return p.Call(expr.function, tuple(self.rec(x) for x in expr.parameters))


def _size_text(expr) -> str:
    """Python text of the integer expression *expr* whose variable X is
    ``a_X``: py_name would print a loop 'queue' and an argument 'queue_'
    alike, and an argument 'range' as 'range_' (see :func:`_env`)."""
    from f2loopy.glue.pyexpr import py_int_expr
    return py_int_expr(_Prefixed()(expr))


def _env(values: dict) -> dict:
    """The variables of :func:`_size_text` for the scalars *values*."""
    return {"a_" + k: v for k, v in values.items()}


#: the globals sizes are evaluated with: nothing of Python's builtins
_SIZE_GLOBALS = {"__builtins__": {}, "_tdiv": tdiv, "min": min, "max": max}


def launch_geometry(gk, values: dict) -> tuple[tuple, tuple]:
    """``(global size, local size)`` of launching *gk* with the scalar
    arguments *values* (the grid's sizes are expressions in them)."""
    def value(expr) -> int:
        return int(eval(_size_text(expr), dict(_SIZE_GLOBALS), _env(values)))  # noqa: S307
    groups = tuple(value(g) for g in gk.grid.num_groups)
    lsize = tuple(value(x) for x in gk.grid.local_size)
    return tuple(g * s for g, s in zip(groups, lsize, strict=True)), lsize


def launcher(gk, prg, bufs: list, values: dict, queue) -> Callable:
    """A function of the queue that enqueues every launch of *gk* (built in
    *prg*) on *bufs* (:func:`f2loopy.bench.run.device_args`: the arguments'
    buffers and values, then the global temporaries); *values* are the
    scalar arguments' values, for the grid sizes and host loop bounds."""
    import pyopencl as cl

    if not gk.launches:
        knl = cl.Kernel(prg, gk.c_name)
        knl.set_args(*bufs)
        gsize, lsize = launch_geometry(gk, values)

        def one(q) -> None:
            if all(g > 0 for g in gsize):
                cl.enqueue_nd_range_kernel(q, knl, gsize, lsize)
        return one
    by_name = {}
    passed = [ka for ka in gk.arguments if ka.kind != "fixed"]
    for ka, buf in zip(passed, bufs, strict=False):     # the scratch buffers follow
        by_name[ka.name] = buf
    for sb, buf in zip(gk.scratch, bufs[len(passed):], strict=True):
        by_name[sb.name] = buf
    if gk.kernel.error_sites:
        from f2loopy.ir.control import ERROR_VALUES
        by_name[" error"] = cl.Buffer(queue.context, cl.mem_flags.READ_WRITE
                                      | cl.mem_flags.COPY_HOST_PTR,
                                      hostbuf=np.zeros(ERROR_VALUES + 1, dtype=np.int32))
    kernels: dict = {}
    code: dict = {}

    def value(expr, env) -> int:
        compiled = code.get(id(expr))
        if compiled is None:
            compiled = code[id(expr)] = (compile(_size_text(expr), "<size>", "eval"), expr)
        return int(eval(compiled[0], dict(_SIZE_GLOBALS), env))  # noqa: S307 - our own

    def steps(items, q, env) -> None:
        for s in items:
            if isinstance(s, HostLoop):
                for t in range(value(s.lower, env), value(s.upper, env) + 1):
                    steps(s.body, q, {**env, "a_" + s.iname: t})
                continue
            knl = kernels.get(s.c_name)
            passed = [ka for ka in s.arguments if ka.kind != "fixed"]
            if knl is None:
                knl = kernels[s.c_name] = cl.Kernel(prg, s.c_name)
                args = [by_name.get(ka.name, np.int32(0)) for ka in passed]
                args += [by_name[sb.name] for sb in s.scratch]
                if s.kernel.error_sites:
                    args.append(by_name[" error"])
                knl.set_args(*args)
            # the indices of the host loops around: the only arguments that change
            # (pyopencl's raw setter: Kernel.set_arg of a scalar costs tens of
            # microseconds, which the time of every launch would include)
            set_scalar = getattr(knl, "_set_arg_buf", None) or knl.set_arg
            for k, ka in enumerate(passed):
                if ka.name not in by_name:
                    set_scalar(k, np.int32(env["a_" + ka.name]))
            groups = [value(g, env) for g in s.grid.num_groups]
            local = [value(x, env) for x in s.grid.local_size]
            if all(g > 0 for g in groups):
                cl.enqueue_nd_range_kernel(q, knl, tuple(g * x for g, x in zip(groups, local, strict=True)),
                                           tuple(local))

    def run(q) -> None:
        steps(gk.launches, q, _env(values))
    return run


def time_calls(queue, run: Callable, min_time: float, warmup: int) -> float:
    """Milliseconds per call of *run* (which enqueues on *queue*): the median
    of batches of about 10 ms after *warmup* calls, for at least *min_time* s."""
    for _ in range(warmup):
        run(queue)
    queue.finish()
    t0 = time.perf_counter()
    run(queue)
    queue.finish()
    one = max(time.perf_counter() - t0, 1e-6)
    batch = max(1, int(0.01 / one))
    per_call: list[float] = []
    total = 0.0
    while total < min_time or len(per_call) < 3:
        t0 = time.perf_counter()
        for _ in range(batch):
            run(queue)
        queue.finish()
        dt = time.perf_counter() - t0
        total += dt
        per_call.append(dt / batch)
    return pystats.median(per_call) * 1e3
