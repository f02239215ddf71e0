"""The paper's section 3 script (samples/paper/ref_flux.f90), as far as the
transformations exist: it runs with ``f2loopy translate -D Nq=8``, records
its checkpoint, and the fused, parallel kernel computes what gfortran does
running refFluxR and then refFluxS."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.frontend import parse_fortran
from f2loopy.pipeline import translate_file, write_outputs
from f2loopy.verify.compare import Tolerance, compare
from util import farray, needs_gfortran

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "paper" / "ref_flux.f90"


def test_cli_translates_the_paper_sample(tmp_path):
    res = CliRunner().invoke(main, ["translate", "-D", "Nq=8", "-o", str(tmp_path),
                                    str(SAMPLE)])
    assert res.exit_code == 0, res.output
    assert "__kernel" in (tmp_path / "ref_flux.cl").read_text()


def test_paper_sample_needs_nq(tmp_path):
    res = CliRunner().invoke(main, ["translate", "-o", str(tmp_path), str(SAMPLE)])
    assert res.exit_code == 1
    assert "error: name 'Nq' is not defined (a value from the command line? give it with " \
           "-D Nq=VALUE)" in res.output
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def translated(tmp_path_factory):
    out = tmp_path_factory.mktemp("paper")
    src = out / "ref_flux.f90"
    src.write_text(SAMPLE.read_text())
    result = translate_file(src, defines={"Nq": 8})
    write_outputs(result.outputs)
    return out, result


def test_checkpoint_level_1(translated):
    _, r = translated
    ((label, kernels),) = r.checkpoints
    (knl,) = kernels
    assert label == "level 1"
    # nothing changed after level 1: the very kernel that was generated
    assert knl is r.kernels[0]
    assert {n: str(t) for n, t in knl.iname_tags.items()} == {"e": "g.0", "i": "l.0",
                                                              "j": "l.1"}
    assert ("k",) in knl.loop_priority
    assert "reqd_work_group_size(8, 8, 1)" in r.generated[0].device_code


@needs_gfortran
def test_fused_kernel_matches_gfortran(translated, cl_queue):
    from f2loopy.verify.fortran import FortranLibrary
    out, result = translated
    spec = importlib.util.spec_from_file_location("ref_flux_cl_paper", out / "ref_flux_cl.py")
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)

    nq, ne = 8, 3
    geo = farray((nq, nq, nq, 11, ne), seed=1, low=0.5, high=1.5)
    d = farray((nq, nq), seed=2)
    q = farray((nq, nq, nq, 8, ne), seed=3, low=0.5, high=2.0)
    rhsq = farray((nq, nq, nq, 8, ne), seed=4)
    consts = [np.float32(1), np.float32(1.4), np.float32(1)]

    source = SAMPLE.read_text()
    ref = FortranLibrary(source, list(parse_fortran(source, "ref_flux.f90")),
                         filename="ref_flux.f90")
    want = rhsq.copy(order="F")
    ref.call("refFluxR", [ne, nq, geo, d, q, want, *consts])
    ref.call("refFluxS", [ne, nq, geo, d, q, want, *consts])

    got = rhsq.copy(order="F")
    getattr(glue, result.kernels[0].name)(ne, nq, geo, d, q, got, *consts, queue=cl_queue)
    mismatch = compare("rhsq", got, want, Tolerance.for_dtype(np.float32, ulps=16))
    assert mismatch is None, str(mismatch)
