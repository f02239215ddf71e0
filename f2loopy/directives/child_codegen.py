"""Code generation of a script's kernels in a limited child process.

Scheduling, isl operations and code generation on a kernel cost what its
shape makes them cost, and a script chooses the shape: a domain with many
``mod`` disjunctions can keep isl busy for hours.  So the parent never lowers
a script's kernels itself: :func:`lower_script_kernels` forks a second child
(from the parent, clean: no script code ever ran in it) that generates the
code of every result and checkpoint kernel under what is left of the limits
(CPU and wall-clock time the script's child did not use; the same memory
limit; the seccomp filter), and sends back the generated code as JSON.  The
parent rebuilds :class:`~f2loopy.codegen.GeneratedKernel` objects into a
:class:`~f2loopy.codegen.elsewhere.ChildCode` table, which the pipeline's
transformation stage returns with the kernels; ``translate``, ``show``,
``check`` and ``bench`` take the code from there (or, through
:func:`f2loopy.codegen.generate_code`, from the registry the table fills for
as long as each kernel lives) instead of generating it again.

A kernel that cannot be generated comes back as its error (the same class,
message and location); it is raised where the kernel's code is asked for.
"""

from __future__ import annotations

import json
import os
import re
import signal
from typing import Any

import islpy as isl
import numpy as np

from f2loopy.codegen.elsewhere import ChildCode
from f2loopy.diagnostics import (
    CodegenError, F2LoopyError, RaceError, SandboxViolation, SourceSpan, TransformError)
from f2loopy.directives import seccomp
from f2loopy.directives.lockdown import LimitExceeded, Limits, isolate_descriptors, set_limits
from f2loopy.ir.serialize import SerializationError, decode_expr, encode_expr, loads

FORMAT = "f2loopy-lowering"
#: bytes of generated code (and its description) the child may send back
MAX_CODE = 128 * 1024 * 1024
#: seconds of CPU and wall-clock time lowering gets even when the script used
#: (nearly) all of its own
MIN_BUDGET_S = 1.0

_ERRORS = {c.__name__: c for c in (F2LoopyError, CodegenError, RaceError, TransformError)}
_DTYPE_RE = re.compile(r"(?:bool|u?int(?:8|16|32|64)|float(?:16|32|64)|complex(?:64|128))")
_KINDS = {"value", "scalar_ref", "array", "fixed"}


class LoweringFailed(SandboxViolation):
    """Lowering ran out of time or memory (or the child failed)."""


# {{{ in the child

def _enc_span(s):
    if s is None:
        return None
    return {"filename": str(s.filename), "line": int(s.line), "column": int(s.column),
            "length": int(s.length), "text": str(s.text)}


def encode_generated(gk) -> dict:
    grid = gk.grid
    return {
        "name": gk.name, "c_name": gk.c_name, "device_code": gk.device_code,
        "preamble": gk.preamble,
        "args": [{"name": a.name, "c_name": a.c_name, "kind": a.kind,
                  "dtype": np.dtype(a.dtype).name, "read": bool(a.read),
                  "written": bool(a.written)} for a in gk.arguments],
        "grid": {"inames": [{"iname": h.iname, "kind": h.kind, "axis": int(h.axis),
                             "base": encode_expr(h.base), "size": encode_expr(h.size),
                             "lower": str(h.lower), "upper": str(h.upper)}
                            for h in grid.inames],
                 "local_size": [encode_expr(x) for x in grid.local_size],
                 "num_groups": [encode_expr(g) for g in grid.num_groups]},
        "scratch": [{"name": sb.name, "c_name": sb.c_name, "dtype": np.dtype(sb.dtype).name,
                     "elements": encode_expr(sb.elements)} for sb in gk.scratch],
        "launches": [_encode_step(s) for s in gk.launches],
    }


def _encode_step(step) -> dict:
    """One step of a kernel split at global barriers: a launch (its kernel
    with the IR's serialisation, its code as above) or a host loop."""
    from f2loopy.codegen.phases import HostLoop
    from f2loopy.ir.serialize import encode_kernel
    if isinstance(step, HostLoop):
        return {"loop": {"iname": step.iname, "lower": encode_expr(step.lower),
                         "upper": encode_expr(step.upper), "span": _enc_span(step.span),
                         "body": [_encode_step(s) for s in step.body]}}
    return {"launch": {"kernel": encode_kernel(step.kernel), "code": encode_generated(step)}}


def _encode_error(exc: F2LoopyError) -> dict:
    cls = type(exc).__name__ if type(exc).__name__ in _ERRORS else "CodegenError"
    return {"class": cls, "message": exc.message, "span": _enc_span(exc.span),
            "notes": [[str(m), _enc_span(s)] for m, s in exc.notes]}


def lower_all(kernels, flows: str = "inline") -> list:
    """The code of each of *kernels* (or its error), as answer data.  With
    *flows* ``"skip"``, the value-flow check of the race analysis is left to
    :func:`check_all_flows` (in another process) for every kernel of one
    launch, whose error item then says whether it was raised after the place
    of that check (``"after_flows"``)."""
    from f2loopy.codegen import forget_code, generate_code
    from f2loopy.codegen.barriers import flow_check, flow_check_passed
    from f2loopy.codegen.phases import has_global_barriers
    out = []
    for k in kernels:
        mode = "skip" if flows == "skip" and not has_global_barriers(k) else "inline"
        with flow_check(mode):
            try:
                out.append({"code": encode_generated(generate_code(k))})
            except F2LoopyError as exc:
                item: dict[str, Any] = {"error": _encode_error(exc)}
                if mode == "skip":
                    item["after_flows"] = flow_check_passed()
                out.append(item)
            finally:
                if mode == "skip":
                    forget_code(k)      # (not checked whole: never answered again)
    return out


def check_all_flows(kernels) -> list:
    """What :func:`lower_all` with ``flows="skip"`` left out: the value-flow
    check of each of *kernels* (and the code generation before it), as
    answer data: None where it passed or where :func:`lower_all` checks
    the kernel itself (several launches), else the error."""
    from f2loopy.codegen import generate_code
    from f2loopy.codegen.barriers import FlowsChecked, flow_check
    from f2loopy.codegen.phases import has_global_barriers
    out: list = []
    for k in kernels:
        if has_global_barriers(k):
            out.append(None)
            continue
        with flow_check("only"):
            try:
                generate_code(k)
            except FlowsChecked:
                out.append(None)
            except F2LoopyError as exc:
                out.append(_encode_error(exc))
            else:
                out.append(None)
    return out


def _child(work, limits: Limits, fd: int) -> None:
    """The life of a code-generation child: ``work()`` gives the answer's
    items (``{"kernels": ...}`` or ``{"flows": ...}``)."""
    status = 0
    try:
        fd = isolate_descriptors(fd)
        set_limits(limits)
        seccomp.install()

        def on_limit(signum, frame):
            raise LimitExceeded("time")

        signal.signal(signal.SIGXCPU, on_limit)
        signal.signal(signal.SIGALRM, on_limit)
        signal.setitimer(signal.ITIMER_REAL, max(0.05, limits.wall_s))
        try:
            payload = {"format": FORMAT, **work()}
        except LimitExceeded:
            payload = {"format": FORMAT, "limit": "time"}
        except MemoryError:
            payload = {"format": FORMAT, "limit": "memory"}
        except Exception as exc:  # noqa: BLE001 - an f2loopy bug, reported as data
            payload = {"format": FORMAT, "internal": f"{type(exc).__name__}: {exc}"[:2000]}
        signal.setitimer(signal.ITIMER_REAL, 0)
        data = json.dumps(payload, separators=(",", ":"), allow_nan=False).encode("utf-8")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:  # noqa: BLE001
        status = 3
    os._exit(status)

# }}}


# {{{ in the parent

def _str(v, what):
    if not isinstance(v, str):
        raise SerializationError(f"lowering: bad {what}")
    return v


def _dtype(v):
    if not isinstance(v, str) or not _DTYPE_RE.fullmatch(v):
        raise SerializationError("lowering: bad dtype")
    return np.dtype(v)


def _text(v, what, limit):
    """A string of the answer, capped (a diagnostic prints it through
    :func:`f2loopy.escape.terminal`, which shows control characters as escapes)."""
    return _str(v, what)[:limit]


def _span(d):
    if d is None:
        return None
    return SourceSpan(_text(d["filename"], "span", 4096), int(d["line"]), int(d["column"]),
                      int(d["length"]), _text(d["text"], "span", 100_000))


def decode_generated(d, kernel):
    from f2loopy.codegen import GeneratedKernel, KernelArgument, ScratchBuffer
    from f2loopy.codegen.grid import Grid, HardwareIname
    by_name = {a.name: a for a in kernel.args}
    args = []
    for a in d["args"]:
        if a["kind"] not in _KINDS or a["name"] not in by_name:
            raise SerializationError("lowering: bad argument")
        args.append(KernelArgument(_str(a["name"], "name"), _str(a["c_name"], "name"),
                                   a["kind"], _dtype(a["dtype"]), bool(a["read"]),
                                   bool(a["written"]), by_name[a["name"]]))
    g = d["grid"]
    inames = tuple(HardwareIname(_str(h["iname"], "iname"), _str(h["kind"], "kind"),
                                 int(h["axis"]), decode_expr(h["base"]), decode_expr(h["size"]),
                                 isl.PwAff(_str(h["lower"], "bound")),
                                 isl.PwAff(_str(h["upper"], "bound")))
                   for h in g["inames"])
    grid = Grid(inames, tuple(decode_expr(x) for x in g["local_size"]),
                tuple(decode_expr(x) for x in g["num_groups"]))
    scratch = tuple(ScratchBuffer(_str(s["name"], "name"), _str(s["c_name"], "name"),
                                  _dtype(s["dtype"]), decode_expr(s["elements"]))
                    for s in d["scratch"])
    launches = tuple(_decode_step(s, kernel, 0) for s in d.get("launches", ()))
    return GeneratedKernel(_str(d["name"], "name"), _str(d["c_name"], "name"),
                           _str(d["device_code"], "code"), _str(d["preamble"], "code"),
                           tuple(args), grid, kernel, scratch, launches)


def _decode_step(d, kernel, depth: int):
    """A step of :func:`_encode_step`, checked: a launch's kernel through the
    IR's validating decoder, host loop indices that are loops of *kernel*."""
    from f2loopy.codegen.phases import HostLoop
    from f2loopy.ir.serialize import decode_kernel
    if depth > 64 or not isinstance(d, dict) or len(d) != 1:
        raise SerializationError("lowering: bad launch")
    if "loop" in d:
        loop = d["loop"]
        if not isinstance(loop, dict) or not isinstance(loop.get("body"), list):
            raise SerializationError("lowering: bad host loop")
        iname = _str(loop["iname"], "iname")
        from f2loopy.codegen.phases import is_global_barrier
        if not any(is_global_barrier(i) and iname in i.within_inames
                   for i in kernel.instructions):
            raise SerializationError("lowering: bad host loop")
        return HostLoop(iname, decode_expr(loop["lower"]), decode_expr(loop["upper"]),
                        tuple(_decode_step(s, kernel, depth + 1) for s in loop["body"]),
                        _span(loop.get("span")))
    launch = d["launch"]
    if not isinstance(launch, dict) or not isinstance(launch.get("code"), dict):
        raise SerializationError("lowering: bad launch")
    sub = decode_kernel(launch["kernel"])
    if launch["code"].get("launches"):
        raise SerializationError("lowering: bad launch")
    from f2loopy.codegen.names import c_name
    gk = decode_generated(launch["code"], sub)
    # the glue names the launch's kernel: exactly the name its (checked) kernel gives
    if gk.name != sub.name or gk.c_name != c_name(sub.name) or \
            not sub.name.startswith(kernel.name + "_phase"):
        raise SerializationError("lowering: bad launch")
    return gk


def _decode_error(d) -> F2LoopyError:
    cls = _ERRORS.get(d.get("class"), CodegenError)
    notes = tuple((_text(m, "note", 2000), _span(s)) for m, s in d.get("notes", []))
    return cls(_text(d["message"], "message", 2000), _span(d.get("span")), notes)


def lower_script_kernels(kernels, limits: Limits, begin_span=None) -> ChildCode:
    """Generate the code of *kernels* (distinct objects) in two limited
    children running side by side (:func:`lower_all` without the value-flow
    check, :func:`check_all_flows`); return it (or each kernel's error) as a table by kernel identity, which
    :func:`f2loopy.codegen.generate_code` also answers from.

    :arg limits: what is left of the script's limits.
    :raises LoweringFailed: a child ran out of time or memory, located at
        *begin_span* (the script's ``!$loopy begin``).
    """
    from f2loopy.directives.sandbox import run_in_children
    code = ChildCode()
    if not kernels:
        return code
    if not side_by_side():
        (answer,) = run_in_children(
            [lambda fd: _child(lambda: {"kernels": lower_all(kernels)}, limits, fd)],
            limits, grace_s=0.25, max_answer=MAX_CODE)
        return code_from_answer(kernels, _answer_data(answer, limits, begin_span).get("kernels"),
                                begin_span)
    # two children side by side: the code (without the value-flow check of
    # the race analysis) and that check, most of the analysis' time
    answers = run_in_children(
        [lambda fd: _child(lambda: {"kernels": lower_all(kernels, flows="skip")}, limits, fd),
         lambda fd: _child(lambda: {"flows": check_all_flows(kernels)}, limits, fd)],
        limits, grace_s=0.25, max_answer=MAX_CODE)
    lowered, checked = (_answer_data(a, limits, begin_span) for a in answers)
    items, flows = lowered.get("kernels"), checked.get("flows")
    if not isinstance(items, list) or not isinstance(flows, list) or \
            len(flows) != len(items) or \
            not all(f is None or isinstance(f, dict) for f in flows):
        raise LoweringFailed("code generation sent an invalid answer", begin_span)
    return code_from_answer(kernels, merge_flow_checks(items, flows), begin_span)


def merge_flow_checks(items: list, flows: list) -> list:
    """:func:`lower_all`'s items (made with ``flows="skip"``) with the
    errors of :func:`check_all_flows` (one per item, None where it passed):
    what :func:`lower_all` alone gives.  The check's error replaces an item
    where the order of one run has the check first: the kernel's code was
    made, or its error was raised after the place of the check."""
    merged = []
    for item, flow in zip(items, flows, strict=True):
        if flow is not None and isinstance(item, dict) and (
                "code" in item or item.get("after_flows") is True):
            item = {"error": flow}
        merged.append(item)
    return merged


def side_by_side() -> bool:
    """Whether the value-flow check gets a child of its own, beside the one
    that makes the code: where this process may run on two CPUs or more and
    the load average says one is free (otherwise the second child only adds
    its fork and its own run of the code generation up to the check: about
    3% more CPU time for the paper's file, and on a busy machine no shorter
    wait).  Both ways give the same code and the same first error."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return cpus >= 2 and load < cpus


def _answer_data(answer, limits: Limits, begin_span) -> dict:
    """A code-generation child's answer, checked (a limit it hit raised)."""
    total = "the transformation script and the code generation of the kernels it returned"
    if answer.problem is not None or answer.text is None:
        raise LoweringFailed(f"{total} ran longer than the sandbox allows (the limits of "
                             "F2LOOPY_SCRIPT_CPU_LIMIT and F2LOOPY_SCRIPT_WALL_LIMIT cover "
                             "both) and were stopped", begin_span)
    try:
        data = loads(answer.text)
    except SerializationError:
        raise LoweringFailed("code generation sent an invalid answer", begin_span) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise LoweringFailed("code generation sent an invalid answer", begin_span)
    if data.get("limit") == "time":
        raise LoweringFailed(f"{total} used more than the sandbox's time limits and were "
                             "stopped", begin_span)
    if data.get("limit") == "memory":
        raise LoweringFailed(f"code generation of the kernels the transformation script "
                             f"returned ran out of memory (the sandbox allows "
                             f"{limits.memory_mb} MiB)", begin_span)
    if "internal" in data:
        raise RuntimeError(f"code generation failed: {str(data['internal'])[:2000]}")
    return data


def code_from_answer(kernels, items, begin_span=None) -> ChildCode:
    """The :class:`~f2loopy.codegen.elsewhere.ChildCode` of *kernels* from a
    child's answer data *items* (:func:`lower_all`'s, one per kernel, in
    order), every item checked.

    :raises LoweringFailed: the items are not that (located at *begin_span*).
    """
    code = ChildCode()
    if not isinstance(items, list) or len(items) != len(kernels):
        raise LoweringFailed("code generation sent an invalid answer", begin_span)
    for k, item in zip(kernels, items, strict=True):
        try:
            if "code" in item:
                code.add(k, decode_generated(item["code"], k))
            else:
                code.add(k, _decode_error(item["error"]))
        except (SerializationError, KeyError, TypeError, ValueError, isl.Error):
            raise LoweringFailed("code generation sent an invalid answer", begin_span) from None
    return code


def remaining(limits: Limits, cpu_used: float, wall_used: float) -> Limits:
    """What is left of *limits* after a child used *cpu_used* and *wall_used* seconds."""
    return Limits(cpu_s=max(MIN_BUDGET_S, limits.cpu_s - cpu_used),
                  wall_s=max(MIN_BUDGET_S, limits.wall_s - wall_used),
                  memory_mb=limits.memory_mb)

# }}}
