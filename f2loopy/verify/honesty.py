"""Helpers that keep ``f2loopy check`` honest (used by
:mod:`f2loopy.verify.check`):

* sizes the user gives that the declarations cannot take are a usage error
  (:class:`CheckUsageError`, exit status 2), not a mismatch;
* character arguments get strings (:func:`character_inputs`);
* a ``stop`` reached by the original and by the kernel (the Python glue's
  KernelStopError) is an agreement, not a crash (:class:`ReferenceStopped`);
* when results differ, :func:`contraction_effect` reruns the generated code
  without floating-point contraction (``#pragma OPENCL FP_CONTRACT OFF``; the
  reference is built with ``-ffp-contract=off`` too): if the results then
  match, the difference came from fused multiply-adds, not from the
  translation.
"""

from __future__ import annotations

from f2loopy.verify.runs import ReferenceStopped
from f2loopy.ir.kernel import ScalarArg
from f2loopy.ir.roles import character_of


class CheckUsageError(Exception):
    """An option of ``f2loopy check`` has a value it cannot use."""


def check_given_sizes(values: dict, given: dict, kernels) -> None:
    """Refuse user sizes that give an array of *kernels* a negative extent
    (the declaration of a dummy argument cannot take them)."""
    if not given:
        return
    from f2loopy.ir.expressions import substitute
    from f2loopy.ir.folding import NotConstant, evaluate_constant
    from f2loopy.ir.kernel import ArrayArg
    values = dict(values)
    for k in kernels:
        for a in k.args:
            if not isinstance(a, ArrayArg):
                continue
            for extent in a.shape:
                if extent is None:
                    continue
                try:
                    n = int(evaluate_constant(substitute(extent, values)))
                except (NotConstant, TypeError, ValueError, KeyError):
                    continue
                if n < 0:
                    sizes = ", ".join(f"{x}={v}" for x, v in given.items())
                    raise CheckUsageError(
                        f"--size {sizes}: the extent of array '{a.name}' would be {n}; give "
                        "sizes for which every extent of the declarations is zero or more")


#: what ``f2loopy check`` passes for a character argument the subroutine
#: assigns (a message, f2loopy.frontend.messages): 64 characters (the most
#: the reference's shim takes), kept where the subroutine assigns none
MESSAGE_INPUT = "<" + "f2loopy check: no message assigned".center(62, "-") + ">"


def character_inputs(kernels, inputs: dict, choices: dict, round_no: int,
                     exclude=None, fixed=None) -> dict:
    """*inputs* with a string for each character argument: the one *fixed*
    gives it (``--size trans=T``), else round *round_no* takes the
    *round_no*-th combination of *choices*[kernel] (the first argument
    varying fastest), so that successive rounds try them all."""
    out = dict(inputs)
    index = round_no
    for k in kernels:
        for a in k.fortran_args:
            if isinstance(a, ScalarArg) and character_of(a.role) is not None and a.name in out:
                # a dummy of a declared length gets a string of that length
                # (blank-padded, as Fortran compares it: 'N' is 'N '); a
                # shorter actual stops the original under -fcheck=bounds
                char = character_of(a.role)
                length = char.length if char is not None else None
                if a.name in (fixed or {}):
                    value = fixed[a.name]
                elif char is not None and char.messages:
                    # a message the subroutine assigns: a long string that no
                    # message equals (Fortran's assignment pads or cuts the
                    # text to the caller's length, which check compares)
                    out[a.name] = MESSAGE_INPUT if length is None else \
                        MESSAGE_INPUT[:length].ljust(length)
                    continue
                else:
                    options = choices.get(k.name) or ["N"]
                    # (not the values the original's argument check refused)
                    options = [o for o in options
                               if o not in (exclude or {}).get(a.name, ())] or options
                    value = options[index % len(options)]
                    index //= len(options)
                out[a.name] = value.ljust(length) if isinstance(length, int) else value
    return out


#: elements given an assumed-size array whose subscripts cannot be bounded
#: (``f2loopy check`` without --size for it; said in the report)
ASSUMED_SIZE_FALLBACK = 1000


def plan_with_fallback(plan_inputs, originals, *, given, notes, **kw):
    """``plan_inputs(...)``; where it cannot bound an assumed-size array and
    *notes* is a list, give the array ASSUMED_SIZE_FALLBACK elements and
    say so in *notes* (the integer scalars keep their small default
    ranges, so that the subscripts stay far below that)."""
    import re

    from f2loopy.verify.inputs import InputError
    given = dict(given)
    for _ in range(64):
        try:
            return plan_inputs(originals, given=given, **kw)
        except InputError as exc:
            m = re.search(r"assumed-size array '(\w+)' the subroutine uses", str(exc))
            if notes is None or m is None or m.group(1) in given:
                raise
            given[m.group(1)] = ASSUMED_SIZE_FALLBACK
            notes.append(f"assumed-size array '{m.group(1)}' has {ASSUMED_SIZE_FALLBACK} "
                         "elements (its subscripts could not be bounded; give --size "
                         f"{m.group(1)}=N to choose)")
    return plan_inputs(originals, given=given, **kw)


def is_kernel_stop(exc: BaseException) -> bool:
    return type(exc).__name__ == "KernelStopError"


def without_contraction(kernels):
    """*kernels* with floating-point contraction turned off."""
    return [k.copy(options=k.options.copy(fp_contract=False)) for k in kernels]


def contraction_flags(flags) -> tuple:
    return tuple(flags) + ("-ffp-contract=off",)


def explain_mismatches(outputs, rerun_outputs) -> bool:
    """Annotate *outputs* (OutputCheck s of one kernel) with what the rerun
    without contraction says; returns True if it cleared every mismatch."""
    bad = [o for o in outputs if o.mismatch is not None]
    if not bad:
        return True
    again = {o.name: o for o in rerun_outputs}
    cleared = all(again.get(o.name) is not None and again[o.name].mismatch is None
                  for o in bad)
    for o in bad:
        if cleared:
            o.fma_note = ("differs only by fused multiply-add contraction: without it "
                          "(FP_CONTRACT OFF, gfortran -ffp-contract=off) the results match, "
                          "so the translation is right and the computation is sensitive to "
                          "rounding")
            o.mismatch = None
        else:
            o.fma_note = ("still differs without fused multiply-add contraction: a "
                          "translation error")
    return cleared


def stop_message(exc) -> str:
    text = str(exc)
    return text.split(": ", 1)[1] if ": " in text else text


def rerun_without_contraction(kc, ks, idx, seq, written, inputs, plan, text, originals,
                               suffix, fortran_flags, tmp, path, tolerances, queue, isolate,
                               timeout, want):
    """Results differ: run both sides again without floating-point
    contraction and say whether that explains the difference."""
    from f2loopy.verify.runs import (
        compare_outputs, run_counter, glue_for_kernels, references, run_generated)
    from f2loopy.verify.fortran import FortranLibrary
    try:
        module, gk_list = glue_for_kernels(without_contraction(ks),
                                            tmp / f"nofma{next(run_counter)}", path.name)
        got = run_generated(module, gk_list[idx], inputs, queue)
        ref = want
        if "-O0" not in fortran_flags:
            wd = tmp / f"reffma{next(run_counter)}"
            wd.mkdir()
            lib = FortranLibrary(text, list(originals.values()),
                                 filename=f"original{suffix}",
                                 flags=contraction_flags(fortran_flags), workdir=str(wd))
            ref = references(lib, originals, [tuple(seq)], lambda s: inputs, isolate,
                              timeout)[tuple(seq)]
        again = compare_outputs(written, got, ref, inputs, plan.lower_bounds, tolerances)
    except Exception:  # noqa: BLE001 - the rerun is advice; the mismatch stands
        return
    explain_mismatches(kc.outputs, again)


#: the IR names of the Fortran intrinsics whose result with a NaN argument
#: the standard leaves to the processor
_NAN_MINMAX = frozenset({"max", "min", "fmax", "fmin"})


def uses_minmax(kernels) -> bool:
    """Whether *kernels* take MAX or MIN of floating-point values anywhere."""
    from f2loopy.ir.expressions import called_functions
    return any({f.lower() for f in called_functions(e)} & _NAN_MINMAX
               for k in kernels for insn in k.instructions for e in insn.read_expressions())


def explain_nan_minmax(outputs, got, want, kernels, tolerances) -> None:
    """Mismatches of *outputs* where the only elements that differ are NaN
    in the original and a number in the kernel, in subroutines that take
    MAX/MIN: Fortran leaves MAX/MIN with a NaN argument to the processor
    (gfortran may return the NaN, OpenCL's fmax/fmin return the other
    argument), so they are no translation error; say so instead."""
    import numpy as np

    from f2loopy.verify.compare import compare, tolerance_for
    bad = [o for o in outputs if o.mismatch is not None]
    if not bad or not uses_minmax(kernels):
        return
    for o in bad:
        g, w = np.asarray(got.get(o.name)), np.asarray(want.get(o.name))
        if g.shape != w.shape or w.dtype.kind not in "fc" or g.dtype.kind not in "fc":
            continue
        nan_only = np.isnan(w) & ~np.isnan(g)
        if not nan_only.any():
            continue
        rest = np.where(nan_only, w, g)
        if compare(o.name, rest, w, tolerance_for(o.dtype, tolerances)) is not None:
            continue
        o.mismatch = None
        o.fma_note = (f"differs only where the original gives NaN ({int(nan_only.sum())} "
                      "element(s)) and the subroutine takes MAX/MIN: a NaN-only difference in "
                      "MAX/MIN, which Fortran leaves to the processor (gfortran may return the "
                      "NaN, OpenCL's fmax/fmin the other argument); not a translation error, "
                      "and nothing is proven about those elements")


def undefined_reads(kernels) -> list:
    """``(name, span)`` of each local variable of *kernels* that a statement
    or loop bound reads and nothing assigns (no statement, no ``data``, no
    storage shared with another variable): its value is undefined in the
    original Fortran and in the kernel alike.  An identifier that a ``-D``
    macro should have replaced is one (implicitly typed, never assigned)."""
    from f2loopy.ir.expressions import variables_read
    from f2loopy.ir.isl_tools import param_names
    out: list = []
    for k in kernels:
        written = k.written_variables()
        read: set = set()
        for insn in k.instructions:
            read |= set(variables_read(*insn.read_expressions()))
            if insn.predicates:
                read |= set(variables_read(*insn.predicates))
        for dom in k.domains:
            read |= set(param_names(dom))
        for t in k.temporaries.values():
            if t.name in read and t.name not in written and t.initializer is None and \
                    t.base_storage is None and all(t.name != n for n, _ in out):
                out.append((t.name, t.span or k.span))
    return out


def undefined_message(name: str, span) -> str:
    where = f"{span.filename}:{span.line}:{span.column}: " if span is not None else ""
    return (f"{where}error: '{name}' is read but nothing assigns it: its value is undefined "
            "in the original Fortran and in the kernel alike (a macro that needs -D? a "
            "variable that needs a value?), so these results prove nothing either way")


__all__ = ["undefined_message", "undefined_reads", "CheckUsageError", "ReferenceStopped", "character_inputs", "check_given_sizes",
           "contraction_flags", "explain_mismatches", "explain_nan_minmax", "is_kernel_stop", "rerun_without_contraction",
           "without_contraction"]
