"""Whether a NaN reached MIN/MAX where the kernel and the original differ.

Fortran leaves MIN/MAX of a NaN to the processor, and processors disagree:
gfortran 12 returns ``min(NaN, 2d0) = 2`` and ``min(2d0, NaN) = NaN`` at -O0,
but at -O2 the result depends on how the loop was compiled (the same
``min(x, y)`` gave 2 for one element and NaN for another of the same run),
and OpenCL's ``fmin``/``fmax`` return the other operand.  A NaN that reaches
MIN/MAX (``sqrt`` of a negative depth, then the smallest eigenvalue) can
send the two programs down different branches, so their outputs differ by
more than NaN-for-a-number.

:func:`explain_nan_minmax_reach` tells such a difference from a translation
error: it runs the generated kernels again with every MIN/MAX made to return
NaN when an operand is NaN (:func:`nan_propagating`); if that changes any
output, a NaN reached MIN/MAX on these inputs, and the report says so.
"""

from __future__ import annotations

import dataclasses

import pymbolic.primitives as p

from f2loopy.ir.expressions import Rewriter
from f2loopy.ir.frozen import FrozenMap

#: the IR names of MIN/MAX
_MINMAX = ("min", "max")


class _NanPropagating(Rewriter):
    """``min(a, b, ...)`` -> ``a + b + ...`` where an operand is NaN (a NaN),
    else the MIN itself."""

    def map_call(self, expr, *args, **kwargs):
        new = super().map_call(expr, *args, **kwargs)
        if not isinstance(new, p.Call) or not isinstance(new.function, p.Variable) or \
                new.function.name not in _MINMAX or len(new.parameters) < 2:
            return new
        ops = new.parameters
        any_nan = p.LogicalOr(tuple(p.Comparison(a, "!=", a) for a in ops))
        return p.If(any_nan, p.Sum(tuple(ops)), new)


def nan_propagating(kernels) -> list:
    """*kernels* with every MIN/MAX returning NaN when an operand is NaN (in
    instructions and substitution rules)."""
    from f2loopy.transform.util import map_expressions
    rewrite = _NanPropagating()
    out = []
    for k in kernels:
        insns = tuple(map_expressions(i, rewrite) for i in k.instructions)
        rules = {name: dataclasses.replace(rule, expression=rewrite(rule.expression))
                 for name, rule in k.substitutions.items()}
        out.append(k.copy(instructions=insns, substitutions=FrozenMap(rules)))
    return out


#: what a failing output says when a NaN reached MIN/MAX
REACHED = ("a NaN reached MIN/MAX on these inputs (with MIN/MAX returning NaN for a NaN "
           "operand the kernel's results change): Fortran leaves MIN/MAX of a NaN to the "
           "processor (gfortran's result depends on the operand order and the optimisation "
           "level, OpenCL's fmin/fmax return the other operand), so this difference is "
           "processor-dependent and proves nothing either way; give value ranges that keep "
           "the computation valid (--range), e.g. no square root of a negative number")


def explain_nan_minmax_reach(kc, ks, idx, written, inputs, got, plan, originals, tmp, path,
                             tolerances, queue) -> None:
    """*kc* (a KernelCheck whose outputs still differ) of the generated
    *ks* (the one at *idx* checked, *got* its results on *inputs*): if the
    *originals* take MIN/MAX and a NaN reached it, annotate the differing
    outputs and mark *kc* (``kc.nan_minmax``)."""
    from f2loopy.verify.honesty import uses_minmax
    from f2loopy.verify.runs import compare_outputs, glue_for_kernels, run_counter, run_generated
    if not any(o.mismatch is not None for o in kc.outputs) or not uses_minmax(originals):
        return
    try:
        module, gk_list = glue_for_kernels(nan_propagating(ks),
                                           tmp / f"nanminmax{next(run_counter)}", path.name)
        again = run_generated(module, gk_list[idx], inputs, queue)
        changed = compare_outputs(written, again, got, inputs, plan.lower_bounds, tolerances)
    except Exception:  # noqa: BLE001 - the rerun is advice; the mismatch stands
        return
    if all(o.mismatch is None for o in changed):
        return
    kc.nan_minmax = True
    for o in kc.outputs:
        if o.mismatch is not None:
            o.fma_note = REACHED
