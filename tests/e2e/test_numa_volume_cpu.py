"""The paper's kernel with its CPU script (samples/numa_volume/volume_cpu.f90,
issue 19): it translates with its tuning record, passes ``f2loopy check``
against gfortran, and the main alternatives of its tunable choices compute
what the untransformed kernel computes (small sizes: fast on PoCL)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.pipeline import translate_file, translate_text
from util import needs_gfortran

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "numa_volume" / "volume_cpu.f90"


@pytest.mark.usefixtures("sandbox_process")
def test_record_is_used_and_code_is_float8():
    r = translate_file(SAMPLE, defines={"Nq": 8})
    assert any("using the tuned choices simd='float8'" in n for n in r.notes), r.notes
    src = r.generated[0].source
    # q, geo, D and rhsq are float8 arrays (Fortran's bytes); every pow is a vector pow
    assert "__global float8 const *__restrict__ q," in src
    assert "__global float8 *rhsq" in src
    assert src.count("pow(") == src.count("pow((float8)(") > 0


@pytest.mark.usefixtures("sandbox_process")
def test_private_fluxes_need_no_barrier_and_one_pow():
    values = {"simd": "float8", "j_axis": "loop", "k_axis": "loop", "pow_once": True}
    r = translate_text(SAMPLE.read_text(), SAMPLE, defines={"Nq": 8}, tunables=values,
                       checkpoints=False)
    src = r.generated[0].source
    # one vector pow per row of eight nodes, the fluxes in private memory: no barrier
    assert src.count("pow((float8)(") == 1
    assert "barrier(" not in src and "__local" not in src
    assert "reqd_work_group_size(1, 1, 1)" in src


@pytest.mark.usefixtures("sandbox_process")
def test_untuned_choices_without_record():
    r = translate_file(SAMPLE, defines={"Nq": 8}, tuning=False)
    assert set(r.tunables) == {"simd", "j_axis", "k_axis", "unroll_n", "fast_math", "pow_once"}
    assert not r.notes


@needs_gfortran
@pytest.mark.parametrize("nq", [4, 8])
def test_check_passes(nq):
    res = CliRunner().invoke(main, ["check", "-D", f"Nq={nq}", "--size", "Ne=3", str(SAMPLE)])
    assert res.exit_code == 0, res.output
    assert "refFluxR_refFluxS = refFluxR then refFluxS" in res.output
    assert "ok: 1 output(s) of 1 kernel(s) match the original Fortran" in res.output


@pytest.mark.parametrize("values", [
    {"simd": "float8", "j_axis": "local", "k_axis": "local", "pow_once": False},
    {"simd": "float8", "j_axis": "loop", "k_axis": "local", "unroll_n": False,
     "fast_math": True},
    {"simd": "work_items", "j_axis": "local", "k_axis": "loop"},
    {"simd": "work_items", "j_axis": "loop", "k_axis": "local", "pow_once": False},
])
def test_variants_match_untransformed(values, cl_queue):
    from f2loopy.tune.measure import Reference
    text = SAMPLE.read_text()
    res = translate_text(text, SAMPLE, defines={"Nq": 8}, tunables=values, checkpoints=False)
    ref = Reference(text, SAMPLE, cl_queue, {"Ne": 3})
    try:
        outcome = ref.check(res)
    finally:
        ref.close()
    assert outcome.ok, outcome.message


@needs_gfortran
def test_benchmark_runs_every_variant_and_checks_it(tmp_path, capsys):
    import importlib.util
    import json
    path = SAMPLE.parents[2] / "benchmarks" / "paper_cpu.py"
    spec = importlib.util.spec_from_file_location("paper_cpu", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "cpu.json"
    rc = bench.main(["-D", "Nq=4", "--size", "Ne=3", "--rounds", "2", "--min-time", "0.01",
                     "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    res = json.loads(out.read_text())
    assert list(res["medians"]) == ["gfortran", "gfortran+OpenMP", "untransformed",
                                    "paper level 1", "paper level 8", "CPU script"]
    # every variant computed what the serial gfortran build computes
    assert all(err <= 1e-4 for err in res["errors"].values()), res["errors"]
    assert res["errors"]["gfortran"] == 0.0
    assert len(res["times"]["gfortran"]) == 2 and len(res["times"]["untransformed"]) == 1
    assert "CPU script vs gfortran: " in text and "x limit" in text
    assert res["gflop"] == 82 * 3 * 4 ** 4 / 1e9
