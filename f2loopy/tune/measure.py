"""Checking and timing one variant on an OpenCL device (``f2loopy tune``).

:class:`Reference` runs the *untransformed* kernels (what the frontend makes
of the Fortran, no script) on inputs drawn as ``f2loopy check`` draws them
(:func:`f2loopy.verify.inputs.plan_inputs`: sizes that satisfy the kernels'
assumptions, index arrays in range), once; :meth:`Reference.check` runs a
variant's kernels through their generated glue on the same inputs and
compares every output with ``f2loopy check``'s tolerances.
:func:`time_variant` times a variant's kernels by raw launches on device
buffers (no transfers), as ``f2loopy bench`` does: warm-up, then batches of
back-to-back launches for at least *min_time* seconds; the median batch.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path


from f2loopy.diagnostics import F2LoopyError


class VariantFailure(F2LoopyError):
    """A variant that translated but did not run or gave wrong results."""


@dataclass
class CheckOutcome:
    ok: bool
    max_error: float
    message: str = ""


def device_label(queue) -> str:
    dev = queue.device
    return f"{dev.name.strip()} ({dev.platform.name.strip()})"


class Reference:
    """The untransformed kernels' results on drawn inputs (computed lazily, per
    sequence of original subroutines).  *originals*: the frontend's kernels
    of the file (the translation's :class:`~f2loopy.pipeline.stages.Parsed`);
    without them the file is parsed here."""

    def __init__(self, text: str, path, queue, sizes: dict, *, seed: int = 0,
                 tolerances=None, workdir: Path | None = None, include_dirs=(),
                 originals=None):
        self.path = Path(path)
        self.queue = queue
        self.sizes = dict(sizes)
        self.seed = seed
        self.tolerances = tolerances
        if originals is None:       # (the translation's own parse is the one to use)
            from f2loopy.frontend import read_source, translate_source
            from f2loopy.frontend.search_path import SearchPath
            originals = translate_source(read_source(text, str(path)),
                                         search=SearchPath(tuple(include_dirs), ()))
        self.originals = {k.name: k for k in originals}
        self._tmp: tempfile.TemporaryDirectory | None = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="f2loopy-tune-")
            self.workdir = Path(self._tmp.name)
        else:
            self.workdir = Path(workdir)
        self._count = 0
        self._cache: dict = {}        # (sequence, fixed values) -> (plan, inputs, state)

    def close(self):
        if self._tmp is not None:
            self._tmp.cleanup()

    def _dir(self) -> Path:
        self._count += 1
        return self.workdir / f"v{self._count}"

    def _sequence(self, kernel) -> list:
        from f2loopy.verify.check import original_sequence
        seq = original_sequence(kernel.name, self.originals)
        if seq is None:
            raise VariantFailure(f"cannot tell which subroutines kernel '{kernel.name}' "
                                 "computes, so it cannot be checked")
        return seq

    def inputs_for(self, kernel):
        """(plan, inputs, reference final state) for *kernel*'s subroutines."""
        from f2loopy.verify.runs import fixed_parameters, glue_for_kernels, run_generated
        from f2loopy.verify.inputs import plan_inputs
        seq = self._sequence(kernel)
        given = fixed_parameters([kernel])
        key = (tuple(seq), tuple(sorted((k, repr(v)) for k, v in given.items())))
        if key in self._cache:
            return self._cache[key]
        names = {a.name.lower() for n in seq for a in self.originals[n].args}
        for n, v in self.sizes.items():
            if n.lower() in names and not any(f.lower() == n.lower() for f in given):
                given[n] = v
        plan = plan_inputs([self.originals[n] for n in seq], assumptions=[kernel.assumptions],
                           given=given, seed=self.seed)
        inputs = plan.generate(self.seed)
        module, gks = glue_for_kernels([self.originals[n] for n in seq], self._dir(),
                                        self.path.name)
        state = inputs
        for gk in gks:
            state = run_generated(module, gk, state, self.queue)
        self._cache[key] = (plan, inputs, state)
        return self._cache[key]

    def check(self, result) -> CheckOutcome:
        """Run every kernel of *result* (a TranslationResult) on the reference
        inputs and compare its outputs with the untransformed kernels'."""
        from f2loopy.verify.runs import compare_outputs, glue_for_result, run_generated
        module = glue_for_result(result, self._dir())
        worst = 0.0
        for gk in result.generated:
            plan, inputs, want = self.inputs_for(gk.kernel)
            got = run_generated(module, gk, inputs, self.queue)
            written = [ka.name for ka in gk.arguments if ka.written]
            for n in self._sequence(gk.kernel):
                for a in self.originals[n].args:
                    if a.name in self.originals[n].written_variables() and a.name not in written:
                        written.append(a.name)
            for o in compare_outputs(written, got, want, inputs, plan.lower_bounds,
                                      self.tolerances):
                worst = max(worst, o.max_error)
                if not o.passed:
                    where = "" if o.where is None else \
                        f"({', '.join(str(i) for i in o.where)})"
                    return CheckOutcome(False, worst, f"{o.name}{where} differs from the "
                                        f"untransformed kernel by {o.max_error:.3g}")
        return CheckOutcome(True, worst)


def time_variant(result, queue, sizes: dict, *, seed: int = 0, min_time: float = 0.3,
                 warmup: int = 3) -> float:
    """Milliseconds per run of all kernels of *result* (the sum), each timed
    alone by raw launches on inputs drawn like ``f2loopy bench``'s."""
    import pyopencl as cl

    from f2loopy.bench.run import device_args, launch_geometry, make_inputs
    from f2loopy.codegen import join_program
    from f2loopy.bench.launches import launcher, time_calls
    total = 0.0
    for gk in result.generated:
        prg = cl.Program(queue.context, join_program([gk])).build(
            options=list(gk.build_options))
        args = make_inputs(gk.kernel, sizes, seed)
        bufs = device_args(gk, args, queue)     # kept alive while the kernel runs
        values = {**sizes, **{a.name: a.fixed_value for a in gk.kernel.args
                              if a.fixed_value is not None}}
        if not gk.launches and not all(g > 0 for g in launch_geometry(gk, values)[0]):
            continue
        total += time_calls(queue, launcher(gk, prg, bufs, values, queue), min_time, warmup)
        del bufs
    return total


