"""The paper end to end (issue 7): samples/numa_volume/volume.f90 follows the
Loo.py paper's section 3 call by call; every optimisation level 1-8 (marked
by checkpoint(...)) computes what gfortran computes running refFluxR then
refFluxS, for Nq = 4, 8, 12, 16.

Tolerance: max |got - want| <= 1e-4 * max |want| (float32; the transformed
levels reassociate sums).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.pipeline import translate_file
from shared_kernels import paper_level_8
from util import fortran_reference, load_kernels, needs_gfortran

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "numa_volume" / "volume.f90"
LEVELS = [f"level {k}" for k in range(1, 9)]


@pytest.fixture(scope="module")
def reference():
    return fortran_reference(SAMPLE.read_text(), "volume.f90")


def _inputs(nq, ne, seed=0):
    rng = np.random.default_rng(seed)

    def arr(*shape):
        return np.asfortranarray(rng.uniform(0.5, 1.5, shape).astype(np.float32))
    return arr(nq, nq, nq, 11, ne), arr(nq, nq), arr(nq, nq, nq, 8, ne), \
        np.asfortranarray(rng.uniform(-1, 1, (nq, nq, nq, 8, ne)).astype(np.float32))


@needs_gfortran
@pytest.mark.parametrize("nq", [4, 8, 12, 16])
def test_every_level_matches_gfortran(nq, reference, tmp_path, cl_queue):
    ne = 2
    result = translate_file(SAMPLE, defines={"Nq": nq})
    assert [label for label, _ in result.checkpoints] == LEVELS
    geo, d, q, rhsq0 = _inputs(nq, ne)
    want = rhsq0.copy(order="F")
    args = [ne, nq, geo, d, q, want, np.float32(1), np.float32(1.4), np.float32(1)]
    reference.call("refFluxR", args)
    reference.call("refFluxS", args)
    for label, (kernel,) in result.checkpoints:
        module = load_kernels(kernel, tmp_path, stem=f"nq{nq}_{label.replace(' ', '')}")
        got = rhsq0.copy(order="F")
        getattr(module, kernel.name)(ne, nq, geo, d, q, got, 1, 1.4, 1, queue=cl_queue)
        err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        assert err <= 1e-4, f"{label}, Nq={nq}: relative error {err:.3g}"


@pytest.mark.usefixtures("sandbox_process")
def test_static_counts_match_hand_count():
    from f2loopy.bench.statistics import compulsory_bytes, kernel_statistics
    from f2loopy.ir.printing import expr_to_str
    result = paper_level_8()             # translate_file(SAMPLE, defines={"Nq": 8})
    level1 = dict(result.checkpoints)["level 1"][0]
    st = kernel_statistics(level1, {"Ne": 6910})
    points = 8 ** 4 * 6910
    # 41 flops per point and subroutine: P 4, udotGrad 6, JiD 1, fluxes 14, updates 16
    assert st.flops == 82 * points            # 2.321 GFLOP
    assert st.bytes == 232 * points           # 6.566 GB: 29 float accesses per subroutine
    assert expr_to_str(st.formulas["flops"]) == "335872*Ne"
    # compulsory: q (32 B), 7 geo factors (28 B), rhsq read and written (64 B) per node,
    # plus D once
    assert compulsory_bytes(level1, {"Ne": 3}) == 124 * 8 ** 3 * 3 + 4 * 64


@pytest.mark.usefixtures("opencl_device")
def test_bench_command_prints_the_table(tmp_path):
    res = CliRunner().invoke(main, ["bench", "-D", "Nq=4", "--size", "Ne=2", "--min-time",
                                    "0.01", "--json", str(SAMPLE)])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output[res.output.index("{"):])
    assert [r["label"] for r in report["rows"]] == LEVELS
    assert all(r["ok"] for r in report["rows"])
    assert report["rows"][0]["speedup"] == 1.0
    assert report["rows"][0]["flop"] == 82 * 4 ** 4 * 2


@pytest.mark.usefixtures("sandbox_process")
def test_translation_needs_nq(tmp_path):
    res = CliRunner().invoke(main, ["translate", "-o", str(tmp_path), str(SAMPLE)])
    assert res.exit_code == 1
    assert "name 'Nq' is not defined" in res.output
    assert list(tmp_path.iterdir()) == []
