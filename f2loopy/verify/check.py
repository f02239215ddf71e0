"""``f2loopy check``: run the original Fortran and the generated OpenCL on the
same inputs and compare everything the subroutines write.

::

    file --translate--> kernels (final and each checkpoint)
      \\--gfortran--> shared library of the original subroutines
    originals --plan_inputs--> random inputs (sizes that fit, indices in bounds)
    for each kernel: original subroutines (a fused kernel 'a_b': a then b) on a copy
                     generated OpenCL (through its Python glue) on a copy
                     compare every written array and scalar (per-dtype tolerances)

The reference runs in a forked child, so that a subroutine that crashes on
the inputs (an out-of-bounds subscript the input analysis could not
foresee) is reported instead of taking the command down.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import os
import pickle
import select
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from f2loopy.diagnostics import F2LoopyError
from f2loopy.verify.compare import Tolerance, compare
from f2loopy.verify.inputs import InputError, plan_inputs

_counter = itertools.count()

_DTYPE_ALIASES = {
    "real": "float32", "single": "float32", "float32": "float32", "real4": "float32",
    "double": "float64", "float64": "float64", "real8": "float64",
    "complex": "complex64", "complex64": "complex64",
    "complex128": "complex128", "double_complex": "complex128",
}
_FLOAT_DTYPES = ("float32", "float64", "complex64", "complex128")


class CheckError(F2LoopyError):
    """The check itself could not be run (as opposed to a mismatch)."""


# {{{ options

def parse_assignments(items, what: str, convert) -> dict:
    """``["n=100", ...]`` -> ``{"n": 100}`` (ValueError on bad syntax)."""
    out = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"{what}: expected NAME=VALUE, got {item!r}")
        name, value = (x.strip() for x in item.split("=", 1))
        if not name.isidentifier():
            raise ValueError(f"{what}: {name!r} is not a valid name")
        try:
            out[name] = convert(value)
        except ValueError:
            raise ValueError(f"{what}: bad value {value!r} for {name}") from None
    return out


def parse_number(text: str):
    text = text.strip()
    low = text.lower()
    if low in (".true.", "true"):
        return True
    if low in (".false.", "false"):
        return False
    try:
        return int(text)
    except ValueError:
        return float(low.replace("d", "e"))


def parse_range(text: str):
    """``LO:HI`` -> ``(lo, hi)``."""
    if ":" not in text:
        raise ValueError(text)
    lo, hi = text.split(":", 1)
    lo, hi = parse_number(lo), parse_number(hi)
    if lo > hi:
        raise ValueError(text)
    return lo, hi


def parse_tolerances(rtol=(), atol=(), ulps=()) -> dict:
    """Per-dtype tolerance overrides: ``--rtol 1e-4`` (every floating dtype)
    or ``--rtol float32=1e-4``.  Returns dtype name -> {rtol, atol, ulps}."""
    out: dict = {d: {} for d in _FLOAT_DTYPES}
    for key, items, conv in (("rtol", rtol, float), ("atol", atol, float), ("ulps", ulps, int)):
        for item in items:
            if "=" in item:
                dt, value = (x.strip() for x in item.split("=", 1))
                name = _DTYPE_ALIASES.get(dt.lower())
                if name is None:
                    raise ValueError(f"--{key}: unknown type {dt!r} (use one of "
                                     f"{', '.join(sorted(_DTYPE_ALIASES))})")
                targets = [name]
            else:
                value, targets = item, list(_FLOAT_DTYPES)
            try:
                v = conv(value)
            except ValueError:
                raise ValueError(f"--{key}: bad value {value!r}") from None
            if v < 0:
                raise ValueError(f"--{key}: must not be negative")
            for t in targets:
                out[t][key] = v
    return out


def tolerance_for(dtype, tolerances: dict | None) -> Tolerance:
    opts = (tolerances or {}).get(np.dtype(dtype).name, {})
    return Tolerance.for_dtype(dtype, rtol=opts.get("rtol"), atol=opts.get("atol"),
                               ulps=opts.get("ulps"))

# }}}


# {{{ results

@dataclass
class OutputCheck:
    """One output (array or scalar) of one kernel."""

    name: str
    dtype: np.dtype
    shape: tuple
    max_error: float
    where: tuple | None
    mismatch: object = None      # compare.Mismatch or None
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.mismatch is None and not self.note


@dataclass
class KernelCheck:
    """One generated kernel (the final one or a checkpoint) against the
    original subroutines it stands for."""

    kernel: str
    label: str | None                 # checkpoint label, None for the final kernel
    originals: tuple = ()             # names of the subroutines, in call order
    outputs: list = field(default_factory=list)
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and all(o.passed for o in self.outputs)

    @property
    def title(self) -> str:
        what = self.kernel if self.label is None else f"{self.kernel} [checkpoint {self.label!r}]"
        if self.originals and tuple(self.originals) != (self.kernel,):
            what += " = " + " then ".join(self.originals)
        return what


@dataclass
class CheckReport:
    path: str
    seed: int
    inputs: str = ""
    checks: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    def failures(self) -> list:
        return [c for c in self.checks if not c.passed]

    def format(self) -> str:
        lines = [f"check {self.path} (seed {self.seed}" +
                 (f"; {self.inputs}" if self.inputs else "") + ")"]
        for c in self.checks:
            lines.append(c.title)
            if c.error is not None:
                lines.extend("  " + ln for ln in c.error.splitlines())
                lines.append("  FAIL")
                continue
            width = max([len(_decl(o)) for o in c.outputs] + [1])
            for o in c.outputs:
                lines.append("  " + _output_line(o, width))
            if not c.outputs:
                lines.append("  (writes no argument)")
        n_out = sum(len(c.outputs) for c in self.checks)
        bad = self.failures()
        if not self.checks:
            lines.append("nothing checked")
        elif bad:
            lines.append(f"MISMATCH: {len(bad)} of {len(self.checks)} kernel(s) differ from the "
                         "original Fortran: " + ", ".join(c.title.split(" = ")[0] for c in bad))
        else:
            lines.append(f"ok: {n_out} output(s) of {len(self.checks)} kernel(s) match the "
                         "original Fortran")
        return "\n".join(lines)


def _decl(o: OutputCheck) -> str:
    shape = "" if not o.shape else "(" + ",".join(str(s) for s in o.shape) + ")"
    return f"{o.name}{shape} {o.dtype.name}"


def _fmt(x, dtype) -> str:
    """*x* with as many digits as its dtype needs to be told apart."""
    try:
        return str(np.dtype(dtype).type(x))
    except (TypeError, ValueError, OverflowError):
        return str(x)


def _output_line(o: OutputCheck, width: int) -> str:
    where = ""
    if o.where:
        where = f" at {o.name}(" + ",".join(str(i) for i in o.where) + ")"
    if o.note:
        return f"{_decl(o).ljust(width)}  {o.note}  FAIL"
    err = f"max |error| {o.max_error:.3g}" + (where if o.max_error else "")
    if o.mismatch is None:
        return f"{_decl(o).ljust(width)}  {err}  ok"
    m = o.mismatch
    loc = ""
    if m.where:
        loc = f" at {o.name}(" + ",".join(str(i) for i in m.where) + ")"
    return (f"{_decl(o).ljust(width)}  max |error| {o.max_error:.3g}{loc}: got {_fmt(m.got, o.dtype)}, "
            f"expected {_fmt(m.want, o.dtype)} ({m.count} of {m.total} elements differ)  FAIL")

# }}}


# {{{ which subroutines a kernel stands for

def original_sequence(name: str, originals: dict):
    """The original subroutines (names) that kernel *name* stands for:
    ``[name]`` itself, or for a fused kernel ``a_b`` (``fuse_kernels`` joins
    the names with ``_``) ``[a, b]``.  None if it cannot be told."""
    low = {k.lower(): k for k in originals}
    if name.lower() in low:
        return [low[name.lower()]]
    target = name.lower()
    best = None

    def search(pos, acc):
        nonlocal best
        if best is not None:
            return
        if pos == len(target):
            best = list(acc)
            return
        for cand in sorted(low, key=len, reverse=True):
            if target.startswith(cand, pos):
                end = pos + len(cand)
                if end == len(target):
                    search(end, acc + [low[cand]])
                elif target[end] == "_" and end + 1 < len(target):
                    search(end + 1, acc + [low[cand]])
    search(0, [])
    return best

# }}}


# {{{ running

def _cl_queue():
    global _QUEUE
    try:
        return _QUEUE
    except NameError:
        pass
    import pyopencl as cl
    try:
        ctx = cl.create_some_context(interactive=False)
    except Exception as exc:  # noqa: BLE001 - any OpenCL set-up failure
        raise CheckError(f"no OpenCL device to run the generated kernels: {exc}") from None
    _QUEUE = cl.CommandQueue(ctx)
    return _QUEUE


def _fortran_storage(value):
    if isinstance(value, np.ndarray) and value.dtype == np.bool_:
        return np.asfortranarray(value.astype(np.int32))
    return value


def _run_sequence(library, kernels_by_name, sequence, inputs):
    """Call the original subroutines *sequence* on (a copy of) *inputs*;
    returns name -> final value (logical arrays as bool)."""
    state = {n: _fortran_storage(copy.deepcopy(v)) for n, v in inputs.items()}
    for name in sequence:
        k = kernels_by_name[name]
        args = [state[a.name] for a in k.fortran_args]
        out = library.call(name, args)
        for a, v in zip(k.fortran_args, out):
            if not isinstance(state[a.name], np.ndarray):
                state[a.name] = v
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
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            _default_crash_signals()
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
    if timed_out:
        raise CheckError(f"the original Fortran ran longer than {timeout:g} s on these inputs")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            signame = signal.Signals(sig).name
        except ValueError:
            signame = str(sig)
        raise CheckError(f"the original Fortran crashed ({signame}) on the generated inputs; "
                         "give sizes with --size and value ranges with --range")
    if not chunks:
        raise CheckError("the original Fortran stopped without a result (a STOP statement?)")
    kind, value = pickle.loads(b"".join(chunks))
    if kind != "ok":
        raise CheckError(f"running the original Fortran failed: {value}")
    return value


def _load_glue(directory: Path, cl_name: str, cl_text: str, glue_text: str):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / cl_name).write_text(cl_text)
    stem = Path(cl_name).stem
    glue_path = directory / f"{stem}_cl.py"
    glue_path.write_text(glue_text)
    spec = importlib.util.spec_from_file_location(f"f2l_check_{next(_counter)}_{stem}_cl",
                                                  glue_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _glue_for_kernels(kernels, directory: Path, filename: str):
    """Generate code for IR *kernels*; return (glue module, generated kernels)."""
    from f2loopy.codegen import file_header, generate_code, join_program
    from f2loopy.glue.python import generate_python_glue
    gks = [generate_code(k) for k in kernels]
    program = file_header(filename) + "\n\n" + join_program(gks)
    cl_name = f"ckpt{next(_counter)}.cl"
    glue = generate_python_glue(gks, program, cl_name, filename)
    return _load_glue(directory, cl_name, program, glue), gks


def _glue_for_result(result, directory: Path):
    cl = [(p, t) for p, t in result.outputs.items() if str(p).endswith(".cl")]
    py = [(p, t) for p, t in result.outputs.items() if str(p).endswith("_cl.py")]
    if len(cl) != 1 or len(py) != 1:
        raise CheckError("the translation produced no OpenCL program and Python glue")
    (cl_path, cl_text), (_, py_text) = cl[0], py[0]
    return _load_glue(directory, Path(cl_path).name, cl_text, py_text)


def _run_generated(module, gk, inputs, queue):
    """Call the glue of *gk* on a copy of *inputs*; returns name -> final value."""
    from f2loopy.codegen.names import py_name
    state = {n: copy.deepcopy(v) for n, v in inputs.items()}
    fn = getattr(module, py_name(gk.kernel.name))
    args = [state[a.name] for a in gk.kernel.fortran_args]
    returned = fn(*args, queue=queue)
    outs = [ka for ka in gk.arguments if ka.kind == "scalar_ref"]
    if len(outs) == 1:
        returned = (returned,)
    for ka, v in zip(outs, returned or ()):
        state[ka.name] = v
    return state


def _max_error(got, want):
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


def _compare_outputs(names, got_state, want_state, inputs, lower_bounds, tolerances):
    out = []
    for name in names:
        want = want_state[name]
        got = got_state.get(name, inputs[name])
        w = np.asarray(want)
        if w.dtype == np.bool_ or (isinstance(inputs[name], (bool, np.bool_))):
            w = w.astype(bool)
            got = np.asarray(got).astype(bool)
        dt = np.dtype(np.asarray(inputs[name]).dtype)
        tol = tolerance_for(dt, tolerances)
        lbs = lower_bounds.get(name)
        mism = compare(name, got, w, tol, lower_bounds=lbs)
        err, idx = _max_error(got, w)
        where = None
        if idx:
            where = tuple(int(i) + int(lb) for i, lb in zip(idx, lbs or [1] * len(idx)))
        out.append(OutputCheck(name, dt, tuple(w.shape), err, where, mism))
    return out

# }}}


def check_source(text: str, path, *, defines=None, transform=None, sizes=None, ranges=None,
                 kernel: str | None = None, seed: int = 0, tolerances=None,
                 checkpoints: bool = True, queue=None, isolate: bool = True,
                 result=None, fortran_flags=("-O0",), timeout: float = 120.0) -> CheckReport:
    """Check the translation of Fortran *text* (from file *path*) against
    gfortran; see the module docstring.  *result* is a
    :class:`~f2loopy.pipeline.TranslationResult` of *text* if already made.

    Raises :class:`~f2loopy.diagnostics.F2LoopyError` when the file cannot be
    translated or checked at all; mismatches are in the report.
    """
    from f2loopy.frontend import read_source, translate_source
    from f2loopy.frontend.source import is_fixed_form_name
    from f2loopy.pipeline import translate_text
    from f2loopy.verify.fortran import FortranLibrary
    path = Path(path)
    if result is None:
        # what 'f2loopy translate' makes of the file: with its tuned choices
        from f2loopy.tune.record import find_entry
        entry, _ = find_entry(path, text, defines, transform)
        result = translate_text(text, path, defines=defines, transform=transform,
                                tunables=entry.values if entry is not None else None)
    originals = {k.name: k for k in translate_source(read_source(text, str(path)))}

    units = [(None, list(result.kernels), result.generated)]
    if checkpoints:
        units += [(label, list(ks), None) for label, ks in result.checkpoints]

    selected = []
    for label, ks, gks in units:
        for idx, k in enumerate(ks):
            seq = original_sequence(k.name, originals)
            if kernel is not None:
                wanted = kernel.lower()
                if k.name.lower() != wanted and not any(s.lower() == wanted
                                                         for s in (seq or ())):
                    continue
            selected.append((label, ks, gks, idx, k, seq))
    if kernel is not None and not selected:
        raise CheckError(f"no kernel or subroutine named '{kernel}' in {path}")

    report = CheckReport(str(path), seed)
    runnable = [s for s in selected if s[5] is not None]
    for label, _, _, _, k, seq in selected:
        if seq is None:
            report.checks.append(KernelCheck(
                k.name, label, (), error=(
                    f"cannot tell which subroutines kernel '{k.name}' computes (its name is "
                    "neither a subroutine of the file nor fused subroutine names joined by '_')")))
    if not runnable:
        return report

    # inputs: one set per group of related subroutines (those a kernel runs in
    # sequence, transitively), fitting the assumptions of the group's kernels;
    # unrelated subroutines may declare arguments of the same name differently
    groups = _input_groups([seq for *_, seq in runnable])
    _check_names_given(groups, originals, sizes, "--size")
    _check_names_given(groups, originals, ranges, "--range")
    plans = {}
    for group in groups:
        members = [r for r in runnable if r[5][0] in group]
        given = _fixed_parameters([r[4] for r in members])
        names = {a.name.lower() for n in group for a in originals[n].args}
        for n, v in (sizes or {}).items():
            if n.lower() not in names:
                continue
            match = [f for f in given if f.lower() == n.lower()]
            if match and given[match[0]] != v:
                raise CheckError(f"--size {n}={v}: the kernel was translated for {n}="
                                 f"{given[match[0]]} (fix_parameters)")
            if not match:
                given[n] = v
        plan = plan_inputs([originals[n] for n in group],
                           assumptions=[r[4].assumptions for r in members], given=given,
                           ranges={n: r for n, r in (ranges or {}).items()
                                   if n.lower() in names},
                           seed=seed)
        plans[group] = (plan, plan.generate(seed))
    described = [(group, plan.describe()) for group, (plan, _) in plans.items()]
    if len(described) == 1:
        report.inputs = described[0][1]
    else:
        report.inputs = "; ".join(f"{'+'.join(g)}: {d}" for g, d in described if d)

    def group_of(seq):
        return next(g for g in plans if seq[0] in g)

    with tempfile.TemporaryDirectory(prefix="f2loopy-check-") as tmp:
        tmp = Path(tmp)
        suffix = ".f" if is_fixed_form_name(path.name) else ".f90"
        if path.suffix in (".F90", ".F", ".f95", ".f03", ".f08", ".for", ".f77"):
            suffix = path.suffix
        lib = FortranLibrary(text, list(originals.values()), filename=f"original{suffix}",
                             flags=tuple(fortran_flags), workdir=str(tmp))
        sequences = []
        for *_, seq in runnable:
            if tuple(seq) not in sequences:
                sequences.append(tuple(seq))

        def reference():
            return {s: _run_sequence(lib, originals, s, plans[group_of(s)][1])
                    for s in sequences}

        refs = run_isolated(reference, timeout) if isolate else reference()

        if queue is None:
            queue = _cl_queue()
        modules = {}
        for label, ks, gks, idx, k, seq in runnable:
            kc = KernelCheck(k.name, label, tuple(seq))
            report.checks.append(kc)
            try:
                key = (label, id(ks))
                if key not in modules:
                    if gks is not None:
                        modules[key] = (_glue_for_result(result, tmp / "final"), gks)
                    else:
                        modules[key] = _glue_for_kernels(ks, tmp / f"c{len(modules)}",
                                                         path.name)
                module, gk_list = modules[key]
                plan, inputs = plans[group_of(seq)]
                got = _run_generated(module, gk_list[idx], inputs, queue)
            except F2LoopyError as exc:
                kc.error = exc.format()
                continue
            except Exception as exc:  # noqa: BLE001 - the generated code failed to run
                kc.error = _describe_failure(exc)
                continue
            want = refs[tuple(seq)]
            written = []
            for n in seq:
                for a in originals[n].args:
                    if a.name in originals[n].written_variables() and a.name not in written:
                        written.append(a.name)
            for ka in gk_list[idx].arguments:
                if ka.written and ka.name not in written:
                    written.append(ka.name)
            order = list(plan.args)
            written.sort(key=lambda x: order.index(x) if x in order else len(order))
            kc.outputs = _compare_outputs(written, got, want, inputs, plan.lower_bounds,
                                          tolerances)
    return report


def _input_groups(sequences) -> list:
    """The subroutine names of *sequences* grouped so that the names of one
    sequence are in one group (tuples, in order of first appearance)."""
    groups: list = []
    for seq in sequences:
        joined = list(seq)
        for g in [g for g in groups if set(g) & set(seq)]:
            groups.remove(g)
            joined = list(g) + [n for n in joined if n not in g]
        groups.append(tuple(dict.fromkeys(joined)))
    return groups


def _check_names_given(groups, originals, values, option) -> None:
    """Every name of ``--size``/``--range`` is an argument of some checked
    subroutine."""
    names = {a.name.lower() for g in groups for n in g for a in originals[n].args}
    for n in values or {}:
        if n.lower() not in names:
            raise InputError(f"{option} {n}: no argument called '{n}'")


def _fixed_parameters(kernels) -> dict:
    """name -> value of the parameters *kernels* fixed (``fix_parameters``)."""
    from f2loopy.ir.kernel import ScalarArg
    fixed = {}
    for k in kernels:
        for a in k.args:
            if isinstance(a, ScalarArg) and a.fixed_value is not None:
                if a.name in fixed and fixed[a.name] != a.fixed_value:
                    raise CheckError(f"the kernels fix parameter '{a.name}' to different "
                                     f"values ({fixed[a.name]} and {a.fixed_value})")
                fixed[a.name] = a.fixed_value
    return fixed


def _describe_failure(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = text.splitlines()
    if len(lines) > 20:
        lines = lines[:20] + ["..."]
    return f"running the generated kernel failed: {type(exc).__name__}: " + "\n".join(lines)


def check_file(path, **options) -> CheckReport:
    """:func:`check_source` on the file *path*."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        text = path.read_text(encoding="latin-1")
    except OSError as exc:
        raise CheckError(f"cannot read {path}: {exc.strerror or exc}") from None
    return check_source(text, path, **options)


__all__ = ["CheckError", "CheckReport", "InputError", "KernelCheck", "OutputCheck",
           "check_file", "check_source", "original_sequence", "parse_assignments",
           "parse_number", "parse_range", "parse_tolerances", "run_isolated"]
