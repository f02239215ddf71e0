"""The differential fuzzer (issue 9, part 2): random programs from
f2loopy.fuzz.progen, translated with random transformations, run on OpenCL
and compared with gfortran.  CI runs a fixed-seed batch;
scripts/fuzz_differential.py runs any number with any seed."""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest

from f2loopy.frontend import parse_fortran
from f2loopy.fuzz.fuzz import (
    args_to_options, options_to_args, read_regression, regression_text, run_seed)
from f2loopy.fuzz.progen import generate_program, loops_of
from f2loopy.fuzz.program import SIZE_BOX, Do
from f2loopy.fuzz.shrink import shrink, shrink_candidates
from util import needs_gfortran

# a fuzzing campaign: minutes
pytestmark = pytest.mark.slow

#: the CI batch: fixed seeds (a few seconds each at most)
CI_SEEDS = range(9000, 9040)


@pytest.mark.parametrize("seed", range(20))
def test_generated_programs_translate(seed):
    program = generate_program(seed)
    source = program.render()
    assert source == generate_program(seed).render()      # deterministic in the seed
    kernel = parse_fortran(source, program.filename)[f"fz{seed}"]
    assert kernel.name.lower() == f"fz{seed}"
    width = 72 if program.fixed_form else 132
    assert all(len(line) <= width for line in source.splitlines()
               if not line.startswith("!"))


@pytest.mark.parametrize("seed", range(30))
def test_affine_subscripts_stay_in_bounds_for_every_size(seed):
    """The generator's promise, checked independently on the IR: every affine
    subscript of an argument array is inside its declared bounds for all sizes
    in SIZE_BOX (loops with data-dependent bounds excepted)."""
    from f2loopy.ir.domains import combined_domain
    from f2loopy.ir.expressions import accesses
    from f2loopy.ir.isl_tools import NonAffineError, align_params, pwaff_from_expr
    from f2loopy.ir.kernel import ArrayArg
    program = generate_program(seed)
    k = parse_fortran(program.render(), program.filename)[program.name]
    sizes = [a.name for a in k.args if a.name.lower() in ("n", "m")]
    box = isl.Set(f"[{', '.join(sizes)}] -> {{ : " + " and ".join(
        f"{SIZE_BOX[0]} <= {s} <= {SIZE_BOX[1]}" for s in sizes) + " }") if sizes else None
    for insn in k.instructions:
        order = [i for i in k.all_inames() if i in insn.within_inames]
        dom = combined_domain(k, order, with_assumptions=False)
        if any(p in k.temporaries for p in dom.get_var_names(isl.dim_type.param)):
            continue
        exprs = [insn.assignee, *insn.read_expressions()] if hasattr(insn, "assignee") \
            else insn.read_expressions()
        for e in exprs:
            for name, idx in accesses(e):
                var = k.arg_dict.get(name)
                if idx is None or not isinstance(var, ArrayArg):
                    continue
                for ix, lb, ext in zip(idx, var.lower_bounds, var.shape, strict=True):
                    d = dom if box is None else align_params(dom, box)[0].intersect_params(
                        align_params(box, dom)[0])
                    try:
                        sp = d.get_space()
                        i, lo = pwaff_from_expr(ix, sp), pwaff_from_expr(lb, sp)
                        hi = lo + pwaff_from_expr(ext, sp) - 1
                    except NonAffineError:
                        continue
                    assert (d & (i.lt_set(lo) | i.gt_set(hi))).is_empty(), (name, idx)


def test_options_round_trip():
    opts = {"seed": 3, "sizes": {"n": 2}, "ranges": {"a": (-2.0, 2.0), "k": (-9, 9)}}
    assert args_to_options(options_to_args(opts)) == opts


def test_shrinking_keeps_what_the_predicate_asks_for():
    program = generate_program(5)
    loops = [d for d, _, _ in loops_of(program)]
    assert loops
    var = loops[0].var
    small = shrink(program, lambda p: any(d.var == var for d, _, _ in loops_of(p)))
    assert any(d.var == var for d, _, _ in loops_of(small))
    assert len(small.render()) < len(program.render())
    assert sum(1 for _ in loops_of(small)) == 1
    assert all(isinstance(s, Do) for s in small.body)
    assert list(shrink_candidates(small))     # still has candidates, none kept


@needs_gfortran
@pytest.mark.parametrize("seed", CI_SEEDS)
def test_differential_batch(seed, cl_queue):
    outcome = run_seed(seed, queue=cl_queue)
    assert outcome.kind in ("pass", "rejected", "input"), \
        regression_text(outcome) + "\n" + outcome.detail
    # the generator stays inside the supported subset and its inputs can be planned
    assert outcome.kind == "pass", outcome.detail


@needs_gfortran
def test_regression_file_round_trip(tmp_path, cl_queue):
    outcome = run_seed(9000, queue=cl_queue)
    path = tmp_path / "r.f90"
    path.write_text(regression_text(outcome))
    text, options, expect = read_regression(path)
    assert expect is None and options["seed"] == 9000
    assert text.splitlines()[0].startswith("! f2loopy-check: --seed 9000")
    from f2loopy.verify.check import CheckOptions, check_source
    assert check_source(text, path, CheckOptions(sizes=options["sizes"], ranges=options["ranges"],
                                            seed=options["seed"]), queue=cl_queue).passed
    assert np.all([ln.startswith("!") for ln in text.splitlines()[:2]])
