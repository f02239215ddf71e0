"""``auto_test_vs_ref``: a transformed kernel against a reference kernel, on
random inputs, as loopy's function of that name.

Both kernels run through the same in-memory host glue as a kernel call
(:func:`f2loopy.glue.call.call_kernel`); the inputs come from the planner of
``f2loopy check`` (:func:`f2loopy.verify.inputs.plan_inputs`: sizes that fit
the assumptions of both kernels, subscripts and index arrays in bounds), and
every argument either kernel writes is compared with the tolerances of
``f2loopy check`` (:mod:`f2loopy.verify.compare`).

What differs from loopy: there is no timing (``f2loopy bench`` times kernels),
and the reference runs on the same OpenCL context as the test kernel.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from f2loopy.diagnostics import F2LoopyError, UnsupportedArgumentError
from f2loopy.ir.kernel import Kernel, ScalarArg, TranslationUnit
from f2loopy.verify.compare import Mismatch, Tolerance, compare
from f2loopy.verify.inputs import plan_inputs


class AutomaticTestFailure(F2LoopyError):
    """The test kernel's results differ from the reference's (loopy's name)."""


@dataclass
class AutoTestResult:
    """What :func:`auto_test_vs_ref` compared.

    :attr inputs: the scalar values chosen (``n=7, m=4``).
    :attr max_errors: name -> largest absolute error of each compared output.
    :attr mismatches: :class:`~f2loopy.verify.compare.Mismatch` of each output
        that differs (empty when the test passed).
    """

    inputs: str
    max_errors: dict = field(default_factory=dict)
    mismatches: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.mismatches


def _entry(what: Kernel | TranslationUnit, entrypoint: str | None, role: str) -> Kernel:
    if isinstance(what, Kernel):
        if entrypoint is not None and entrypoint.lower() != what.name.lower():
            raise F2LoopyError(f"auto_test_vs_ref: the {role} kernel is '{what.name}', "
                               f"not '{entrypoint}'")
        return what
    if not isinstance(what, TranslationUnit):
        raise F2LoopyError(f"auto_test_vs_ref: the {role} must be a kernel or a translation "
                           f"unit, got {type(what).__name__}")
    if entrypoint is not None:
        return what[entrypoint]
    if len(what.kernels) != 1:
        raise F2LoopyError(f"auto_test_vs_ref: the {role} translation unit holds several "
                           f"kernels ({', '.join(what.keys())}); name one with "
                           f"{role}_entrypoint=")
    return what.kernels[0]


def _fixed(kernels) -> dict:
    out: dict = {}
    for k in kernels:
        for a in k.args:
            if isinstance(a, ScalarArg) and a.fixed_value is not None:
                if a.name in out and out[a.name] != a.fixed_value:
                    raise F2LoopyError(f"auto_test_vs_ref: the kernels fix '{a.name}' to "
                                       f"different values ({out[a.name]}, {a.fixed_value})")
                out[a.name] = a.fixed_value
    return out


_REFUSED = {
    # loopy keyword -> (value that changes nothing, why other values are refused)
    "op_count": ((), "there is no timing here ('f2loopy bench' times kernels)"),
    "op_label": ((), "there is no timing here ('f2loopy bench' times kernels)"),
    "dump_binary": (False, "the OpenCL binary is not kept"),
    "fills_entire_output": (None, "every element the reference writes is compared"),
    "do_check": (True, "checking is what this function does ('f2loopy bench' times kernels)"),
    "check_result": (None, "results are compared with f2loopy check's tolerances "
                           "(give rtol= or atol=)"),
    "max_test_kernel_count": (1, "one test kernel is run"),
    "blacklist_ref_vendors": ((), "the reference runs on the given context"),
}


def auto_test_vs_ref(ref_prog: Kernel | TranslationUnit, ctx: Any = None,
                     test_prog: Kernel | TranslationUnit | None = None, *,
                     parameters: dict | None = None, ref_entrypoint: str | None = None,
                     test_entrypoint: str | None = None, seed: int = 0,
                     rtol: float | None = None, atol: float | None = None,
                     quiet: bool = False, print_code: bool = False,
                     print_ref_code: bool = False, warmup_rounds: int = 2,
                     **loopy_options: Any) -> AutoTestResult:
    """Run *ref_prog* and *test_prog* (default: *ref_prog* itself) on the same
    random inputs on OpenCL context *ctx* and compare every output.

    :arg parameters: values of scalar arguments (sizes among them); the
        others are chosen to fit both kernels' assumptions.
    :arg ref_entrypoint, test_entrypoint: the kernel to run of a translation
        unit holding several.
    :arg rtol, atol: tolerances (default: f2loopy check's per dtype).
    :arg print_code, print_ref_code: print the generated OpenCL.
    :arg warmup_rounds: accepted for loopy's scripts; nothing is timed.
    :raises AutomaticTestFailure: an output differs (all mismatches listed).
    :raises UnsupportedArgumentError: a loopy option this function does not
        implement was given a value other than its default.
    """
    import pyopencl as cl
    for name, value in loopy_options.items():
        if name not in _REFUSED:
            raise TypeError(f"auto_test_vs_ref() got an unexpected keyword argument '{name}'")
        default, why = _REFUSED[name]
        if value != default and not (default == () and not value):
            raise UnsupportedArgumentError("auto_test_vs_ref", name, value, why)
    del warmup_rounds
    ref = _entry(ref_prog, ref_entrypoint, "ref")
    test = _entry(test_prog if test_prog is not None else ref_prog,
                  test_entrypoint if test_prog is not None else ref_entrypoint, "test")
    if ctx is None:
        ctx = cl.create_some_context(interactive=False)
    queue = ctx if isinstance(ctx, cl.CommandQueue) else cl.CommandQueue(ctx)
    given = {**_fixed([ref, test]), **(parameters or {})}
    plan = plan_inputs([ref], assumptions=[ref.assumptions, test.assumptions], given=given,
                       seed=seed)
    inputs = plan.generate(seed)
    for k in (ref, test):
        missing = [a.name for a in k.fortran_args if a.name not in inputs]
        if missing:
            raise F2LoopyError(f"auto_test_vs_ref: kernel '{k.name}' takes argument "
                               f"'{missing[0]}', which the reference '{ref.name}' does not")
    from f2loopy.codegen import generate_code
    from f2loopy.glue.call import run_kernel
    if print_ref_code:
        print(generate_code(ref).source)
    if print_code:
        print(generate_code(test).source)

    def run(k):
        state = {a.name: copy.deepcopy(inputs[a.name]) for a in k.fortran_args}
        return run_kernel(k, queue, **state)

    want, got = run(ref), run(test)
    result = AutoTestResult(plan.describe())
    for name in [n for n in want if n in got] + [n for n in got if n not in want]:
        w = want.get(name, inputs[name])
        g = got.get(name, inputs[name])
        w, g = np.asarray(w), np.asarray(g)
        tol = Tolerance.for_dtype(w.dtype, rtol=rtol, atol=atol)
        lbs = ref.variable(name).lower_bounds if ref.has_variable(name) else None
        mismatch = compare(name, g, w, tol, lbs)
        if w.shape == g.shape and w.size and w.dtype.kind in "fc":
            result.max_errors[name] = float(np.max(np.abs(g.astype(w.dtype) - w)))
        if mismatch is not None:
            result.mismatches.append(mismatch)
    if result.mismatches:
        raise AutomaticTestFailure(
            f"auto_test_vs_ref: '{test.name}' differs from '{ref.name}' (inputs "
            f"{result.inputs or 'as given'}): " + "; ".join(str(m) for m in result.mismatches))
    if not quiet:
        errs = ", ".join(f"{n} {e:.3g}" for n, e in result.max_errors.items())
        print(f"auto_test_vs_ref: '{test.name}' matches '{ref.name}'"
              + (f" (max |error|: {errs})" if errs else ""))
    return result


__all__ = ["AutoTestResult", "AutomaticTestFailure", "Mismatch", "auto_test_vs_ref"]
