"""Running both sides of a check: the original subroutines (built by
gfortran, called in a forked child so that a crash is reported) and the
generated kernels (through their Python glue on an OpenCL queue), and
comparing what they wrote.  :mod:`~f2loopy.verify.check` plans and reports;
``f2loopy tune`` times and verifies its variants with the same pieces.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import os
import pickle
import re
import select
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from f2loopy.diagnostics import F2LoopyError
from f2loopy.ir.roles import Allocation
from f2loopy.verify.compare import Mismatch, compare, tolerance_for

#: what a reference run that stopped (stop, error stop, xerbla) produced
STOPPED = object()


class ReferenceStopped(Exception):
    """The original Fortran stopped (``stop``, ``error stop``, xerbla)."""


@dataclass
class OutputCheck:
    """One output (array or scalar) of one kernel."""

    name: str
    dtype: np.dtype
    shape: tuple
    max_error: float
    where: tuple | None
    mismatch: Mismatch | None = None
    note: str = ""
    fma_note: str = ""           # what a rerun without contraction said

    @property
    def passed(self) -> bool:
        return self.mismatch is None and not self.note

    @property
    def type_name(self) -> str:
        """The output's type as the report names it (a message, a text
        compared as such: ``character(len=n)``)."""
        if self.dtype.kind == "U":
            return f"character(len={self.dtype.itemsize // 4})"
        return self.dtype.name

    def error_text(self, where: str) -> str:
        """How far the output is from the original's (*where*: at which element)."""
        if self.dtype.kind == "U":
            return "same text"
        return f"max |error| {self.max_error:.3g}" + (where if self.max_error else "")


#: numbers the working directories of one process's runs
run_counter = itertools.count()


class CheckError(F2LoopyError):
    """The check itself could not be run (as opposed to a mismatch)."""

    #: (file name, line) where gfortran's run-time library stopped the
    #: original, when that is what went wrong
    fortran_place: tuple[str, int] | None = None


#: the queue of :func:`cl_queue` (one per process)
_QUEUE = None


def cl_queue():
    global _QUEUE
    if _QUEUE is not None:
        return _QUEUE
    import pyopencl as cl
    try:
        ctx = cl.create_some_context(interactive=False)
    except Exception as exc:  # noqa: BLE001 - any OpenCL set-up failure
        raise CheckError(f"no OpenCL device to run the generated kernels: {exc}") from None
    _QUEUE = cl.CommandQueue(ctx)
    return _QUEUE


def fortran_storage(value):
    if isinstance(value, np.ndarray) and value.dtype == np.bool_:
        return np.asfortranarray(value.astype(np.int32))
    return value


def run_sequence(library, kernels_by_name, sequence, inputs):
    """Call the original subroutines *sequence* on (a copy of) *inputs*;
    returns name -> final value (logical arrays as bool)."""
    from f2loopy.verify.shared_data import share_storage
    state = {n: fortran_storage(copy.deepcopy(v)) for n, v in inputs.items()}
    kernels = [kernels_by_name[name] for name in sequence]
    for k in kernels:
        share_storage(kernels, state)
        passed = [a for a in (*k.fortran_args, *k.storage_args) if a.name in state]
        # (the drawn lower bounds of allocatable components of derived-type arguments)
        lower = {a.name: state[a.name] for a in k.args
                 if isinstance(a.role, Allocation) and a.role.what == "lbound"
                 and a.name in state}
        out = library.call_named(k.name, {**{a.name: state[a.name] for a in passed}, **lower})
        for a in passed:
            if not isinstance(state[a.name], np.ndarray):
                state[a.name] = out[a.name]
        if k.result_arg is not None:         # a function: its value
            state[k.result_arg.name] = out[k.result_arg.name]
    share_storage(kernels[::-1], state)
    for n, v in inputs.items():
        if isinstance(v, np.ndarray) and v.dtype == np.bool_:
            state[n] = state[n] != 0
    return state


def _default_crash_signals():  # pragma: no cover - runs in the child
    """Let a crash kill the child: handlers that others installed (LLVM inside
    the OpenCL implementation, faulthandler) may otherwise return from a
    signal that was not a real fault."""
    import faulthandler
    faulthandler.disable()
    for sig in (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT):
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass


def run_isolated(func, timeout: float = 120.0):
    """``func()`` in a forked child; returns its result, or raises
    :class:`CheckError` if the child crashed, raised or ran too long."""
    import tempfile
    errors = tempfile.TemporaryFile()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            _default_crash_signals()
            # what the original prints (xerbla, a write before a stop) is not
            # the check's output; what the Fortran run-time library reports
            # on stderr (a subscript out of bounds) is read back
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(errors.fileno(), 2)
            try:
                data = pickle.dumps(("ok", func()))
            except BaseException as exc:  # noqa: BLE001
                data = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
            view = memoryview(data)
            while view:
                n = os.write(w, view)
                view = view[n:]
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([r], [], [], left)
            if not ready:
                continue
            chunk = os.read(r, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    errors.seek(0)
    stderr = errors.read(1 << 16).decode("latin-1")
    errors.close()
    if timed_out:
        raise CheckError(f"the original Fortran ran longer than {timeout:g} s on these inputs")
    runtime_error = _fortran_runtime_error(stderr)
    if runtime_error is not None:
        raise runtime_error
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            signame = signal.Signals(sig).name
        except ValueError:
            signame = str(sig)
        raise CheckError(f"the original Fortran crashed ({signame}) on the generated inputs; "
                         "give sizes with --size and value ranges with --range")
    if not chunks:
        raise ReferenceStopped("the original Fortran stopped (a stop, error stop or xerbla)")
    kind, value = pickle.loads(b"".join(chunks))
    if kind != "ok":
        raise CheckError(f"running the original Fortran failed: {value}")
    return value


_BOUNDS_ERROR = re.compile(
    r"Fortran runtime error: ((?:Index|Array bound mismatch|Dimension|Array reference) "
    r"[ -~]{1,300}?)\s*$", re.MULTILINE)
_RUNTIME_ERROR = re.compile(r"Fortran runtime error: ([ -~]{1,300}?)\s*$", re.MULTILINE)


def _fortran_runtime_error(stderr: str) -> CheckError | None:
    """The error for what gfortran's run-time library reported (a subscript
    out of bounds under ``-fcheck=bounds``), or None."""
    from f2loopy.verify.fortran import STUB_MARK
    m = re.search(re.escape(STUB_MARK) + r"([A-Za-z0-9_]{1,200})$", stderr, re.MULTILINE)
    if m is not None:
        return CheckError(f"the original Fortran called '{m.group(1)}', which no file "
                          "compiled with it defines (give the directory of its source with -I)")
    error = _runtime_error_text(stderr)
    if error is not None:
        at = re.search(r"^At line (\d{1,9}) of file ([^\n]{1,4096}?)\s*$", stderr, re.MULTILINE)
        if at is not None:
            error.fortran_place = (os.path.basename(at.group(2)), int(at.group(1)))
    return error


def _runtime_error_text(stderr: str) -> CheckError | None:
    m = _BOUNDS_ERROR.search(stderr)
    if m is not None:
        return CheckError(
            f"the original Fortran goes out of bounds on the generated inputs ({m.group(1)}): "
            "the check could not size every subscript (one computed in a way it cannot "
            "bound); give sizes with --size and value ranges with --range that keep it in "
            "bounds (the generated kernel did not run on these inputs)")
    m = _RUNTIME_ERROR.search(stderr)
    if m is not None:
        return CheckError(f"the original Fortran failed on the generated inputs "
                          f"({m.group(1)}); give sizes with --size and value ranges with "
                          "--range")
    return None


def load_glue(directory: Path, cl_name: str, cl_text: str, glue_text: str):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / cl_name).write_text(cl_text)
    stem = Path(cl_name).stem
    glue_path = directory / f"{stem}_cl.py"
    glue_path.write_text(glue_text)
    spec = importlib.util.spec_from_file_location(f"f2l_check_{next(run_counter)}_{stem}_cl",
                                                  glue_path)
    if spec is None or spec.loader is None:
        raise CheckError(f"cannot load the generated glue {glue_path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def glue_for_kernels(kernels, directory: Path, filename: str):
    """Generate code for IR *kernels*; return (glue module, generated kernels)."""
    from f2loopy.codegen import file_header, generate_code, join_program
    from f2loopy.glue.python import generate_python_glue
    gks = [generate_code(k) for k in kernels]
    program = file_header(filename) + "\n\n" + join_program(gks)
    cl_name = f"ckpt{next(run_counter)}.cl"
    glue = generate_python_glue(gks, program, cl_name, filename)
    return load_glue(directory, cl_name, program, glue), gks


def glue_for_result(result, directory: Path):
    cl = [(p, t) for p, t in result.outputs.items() if str(p).endswith(".cl")]
    py = [(p, t) for p, t in result.outputs.items() if str(p).endswith("_cl.py")]
    if len(cl) != 1 or len(py) != 1:
        raise CheckError("the translation produced no OpenCL program and Python glue")
    (cl_path, cl_text), (_, py_text) = cl[0], py[0]
    return load_glue(directory, Path(cl_path).name, cl_text, py_text)


def run_generated(module, gk, inputs, queue):
    """Call the glue of *gk* on a copy of *inputs*; returns name -> final value."""
    from f2loopy.codegen.names import py_name
    from f2loopy.verify.shared_data import glue_call, hidden_outputs
    state = {n: copy.deepcopy(v) for n, v in inputs.items()}
    k = gk.kernel
    fn = getattr(module, py_name(k.name))
    # module variables are set on the glue's objects, derived-type
    # arguments passed as objects
    args, collect = glue_call(module, k, state)
    returned = fn(*args, queue=queue)
    hidden = hidden_outputs(k)
    outs = [ka for ka in gk.arguments if ka.kind == "scalar_ref" and ka.name not in hidden]
    result = k.result_arg
    names = [ka.name for ka in outs]
    if result is not None:     # the function's value first (as the glue returns them)
        names = [result.name] + [n for n in names if n != result.name]
    if len(names) == 1:
        returned = (returned,)
    for name, v in zip(names, () if returned is None else returned, strict=True):
        state[name] = v
    collect()
    return state


def max_error(got, want):
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape or g.size == 0:
        return 0.0, None
    if w.dtype.kind in "biu" or g.dtype.kind in "biu":
        d = (g.astype(np.int64) - w.astype(np.int64)) if w.dtype.kind != "b" else \
            (g != w).astype(np.int64)
        d = np.abs(d).astype(float)
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            d = np.abs(g.astype(w.dtype) - w)
        both_nan = np.isnan(g) & np.isnan(w)
        d = np.where(both_nan | (g == w), 0.0, np.nan_to_num(d, nan=np.inf))
    flat = int(np.argmax(d))
    return float(d.flat[flat]), (np.unravel_index(flat, w.shape) if w.shape else ())


def _compare_text(name: str, got, want: str) -> OutputCheck:
    """A message (a character argument the kernel assigns): the glue's text
    as Fortran's assignment leaves it in the caller's string of *want*'s
    length (blank-padded or cut) must equal the original's."""
    n = len(want)
    text = got[:n].ljust(n) if isinstance(got, str) else None
    dt = np.dtype(f"U{max(1, n)}")
    if text == want:
        return OutputCheck(name, dt, (), 0.0, None)
    return OutputCheck(name, dt, (), float("inf"), None,
                       note=f"the text differs: got {got!r}, expected {want.rstrip()!r}")


def compare_outputs(names, got_state, want_state, inputs, lower_bounds, tolerances):
    out = []
    for name in names:
        want = want_state[name]
        got = got_state.get(name, inputs[name])
        if isinstance(want, str):
            out.append(_compare_text(name, got, want))
            continue
        w = np.asarray(want)
        if w.dtype == np.bool_ or (isinstance(inputs[name], (bool, np.bool_))):
            w = w.astype(bool)
            got = np.asarray(got).astype(bool)
        dt = np.dtype(np.asarray(inputs[name]).dtype)
        tol = tolerance_for(dt, tolerances)
        lbs = lower_bounds.get(name)
        mism = compare(name, got, w, tol, lower_bounds=lbs)
        err, idx = max_error(got, w)
        where = None
        if idx:
            where = tuple(int(i) + int(lb) for i, lb in zip(idx, lbs or [1] * len(idx), strict=True))
        out.append(OutputCheck(name, dt, tuple(w.shape), err, where, mism))
    return out


def references(lib, originals, sequences, inputs_of, isolate, timeout) -> dict:
    """Run each sequence of original subroutines (in a child each, when
    isolated, so that one that stops does not take the others along)."""
    refs = {}
    for s in sequences:
        def one(s=s):
            try:
                return run_sequence(lib, originals, s, inputs_of(s))
            finally:
                lib.dump_coverage()
        try:
            refs[s] = run_isolated(one, timeout) if isolate else one()
        except ReferenceStopped:
            refs[s] = STOPPED
    return refs


def fixed_parameters(kernels) -> dict:
    """name -> value of the parameters *kernels* fixed (``fix_parameters``)."""
    from f2loopy.ir.kernel import ScalarArg
    fixed: dict = {}
    for k in kernels:
        for a in k.args:
            if isinstance(a, ScalarArg) and a.fixed_value is not None:
                if a.name in fixed and fixed[a.name] != a.fixed_value:
                    raise CheckError(f"the kernels fix parameter '{a.name}' to different "
                                     f"values ({fixed[a.name]} and {a.fixed_value})")
                fixed[a.name] = a.fixed_value
    return fixed
