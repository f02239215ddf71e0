"""benchmarks/cloudsc_ranks.py (issue 30, item 3): how CLOUDSC's columns are
shared among processes, how each process's device is named, and how the
processes' timings make one row of the table.  The run itself needs the
CLOUDSC dwarf's data and a translated kernel, which are not part of the
repository; it was run by hand on PoCL (NGPTOT 256, 1 and 2 processes on the
CPU device) and on the GPU machine (samples/cloudsc_RESULTS.md)."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("cloudsc_ranks_under_test",
                                                  ROOT / "benchmarks" / "cloudsc_ranks.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


cr = _load()


@pytest.mark.parametrize("ngptot, ranks, want", [
    (65536, 1, [(0, 65536)]),
    (65536, 4, [(0, 16384), (16384, 16384), (32768, 16384), (49152, 16384)]),
    (10, 3, [(0, 4), (4, 3), (7, 3)]),
    (2, 4, [(0, 1), (1, 1), (2, 0), (2, 0)]),
])
def test_shares_cover_the_columns_once(ngptot, ranks, want):
    assert cr._shares(ngptot, ranks) == want


def test_device_spec_puts_the_rank_in():
    assert cr._device_spec("0:{rank}", 3) == "0:3"
    assert cr._device_spec("NVIDIA:{rank}", 0) == "NVIDIA:0"
    assert cr._device_spec("Portable:0", 5) == "Portable:0"


@pytest.mark.parametrize("template", ["0:{rank};rm", "0:1:2", "$(x):{rank}", "0:{rank}\n"])
def test_device_spec_refuses_other_text(template):
    with pytest.raises(SystemExit, match="not PLATFORM"):
        cr._device_spec(template, 1)


def _result(rank, times, t0, t1, err=1e-14):
    return {"rank": rank, "first": 4 * rank, "count": 4, "device": f"dev{rank}",
            "median_ms": sorted(times)[len(times) // 2], "times_ms": times,
            "t_start": t0, "t_end": t1,
            "fields": {"PLUDE": [0.0, 0.0], "PFSQRF": [err, 1e-19]}}


def test_aggregate_takes_the_slowest_process_per_call():
    # process 0 is slow on call 0, process 1 on calls 1 and 2: per call the
    # slowest times are 5, 6, 7; their median is 6 (each process's own median
    # is 2 and 3)
    res = cr.aggregate([_result(0, [5.0, 1.0, 2.0], 10.0, 10.02),
                        _result(1, [3.0, 6.0, 7.0], 10.001, 10.03)], niter=3, tolerance=1e-9)
    assert res["slowest_median_ms"] == 6.0
    assert res["rank_medians_ms"] == [2.0, 6.0]
    assert res["span_ms_per_iter"] == pytest.approx(10.0)
    assert res["ok"] and res["worst_field"] == ("PFSQRF", 1e-14)
    assert res["shares"] == [(0, 4), (4, 4)]


def test_aggregate_reports_a_mismatch_of_any_process():
    res = cr.aggregate([_result(0, [1.0], 0.0, 1.0), _result(1, [1.0], 0.0, 1.0, err=1e-3)],
                       niter=1, tolerance=1e-9)
    assert not res["ok"] and res["worst_field"] == ("PFSQRF", 1e-3)


def test_table_from_json_with_cuda_lines(tmp_path, capsys):
    rows = [cr.aggregate([_result(0, [40.0], 0.0, 0.04)], niter=1, tolerance=1e-9),
            cr.aggregate([_result(0, [25.0], 0.0, 0.025), _result(1, [20.0], 0.0, 0.025)],
                         niter=1, tolerance=1e-9)]
    saved = tmp_path / "ranks.json"
    saved.write_text(json.dumps({"ngptot": 4000, "niter": 1, "ranks": rows}))
    cuda = tmp_path / "cuda.txt"
    cuda.write_text('build v1 rc 0\nRESULT {"kernel": "k_caching", "median_ms": 10.0, '
                    '"fields": {"PLUDE": [0.0, 0.0]}}\n')
    argv = sys.argv
    sys.argv = ["cloudsc_ranks.py", "--from-json", str(saved), "--cuda-results", str(cuda),
                "--data", "-", "--kernel", "-"]
    try:
        cr.main()
    finally:
        sys.argv = argv
    out = capsys.readouterr().out
    # 4000 columns in 40 ms: 1e5 columns/s; in 25 ms on 2 processes: 80% of 2e5
    assert "| 1 | 40.000 | 1.000e+05 | 100.0% | 1.000e+05 | 21/21 match in every process |" in out
    assert "| 2 | 25.000 | 1.600e+05 | 80.0% | 1.600e+05 | 21/21 match in every process |" in out
    assert "| dwarf CUDA k_caching, 1 GPU | 10.000 | 4.000e+05 | 4.00x one f2loopy process" in out


def _piped(rank, waited, piped, device=None):
    res = _result(rank, [waited], 0.0, 1.0)
    res.update(pipelined_ms=piped, host_ms=0.5, prepare_s=1.0, first_call_s=2.0)
    return res


def test_aggregate_takes_the_slowest_pipelined_process():
    res = cr.aggregate([_piped(0, 30.0, 20.0), _piped(1, 31.0, 22.0)], niter=1, tolerance=1e-9)
    assert res["pipelined_ms"] == 22.0 and res["rank_pipelined_ms"] == [20.0, 22.0]
    assert res["rank_host_ms"] == [0.5, 0.5] and res["rank_first_call_s"] == [2.0, 2.0]
    # a process without pipelined calls: no pipelined time for the row
    assert cr.aggregate([_result(0, [1.0], 0.0, 1.0)], niter=1,
                        tolerance=1e-9)["pipelined_ms"] is None


def test_weak_table_against_device_0_and_the_slowest_device(capsys):
    baselines = []
    for d, t in enumerate([20.0, 21.0, 25.0, 20.5]):
        b = cr.aggregate([_piped(0, t + 1, t)], niter=1, tolerance=1e-9)
        b["baseline_device"] = d
        baselines.append(b)
    rows = [cr.aggregate([_piped(r, 26.0, 25.0 if r == 2 else 21.0) for r in range(p)],
                         niter=1, tolerance=1e-9) for p in (1, 2, 4)]
    cr.weak_table(rows, baselines, 1000, 1e-9)
    out = capsys.readouterr().out
    # 4 processes take 25 ms: 80% of device 0 alone (20 ms), but as fast as
    # their slowest device alone (device 2: 25 ms)
    assert "| 4 | 4000 | 26.000 | 25.000 | 1.600e+05 | 80.0% | 100.0% |" in out
    assert "| 2 | 2000 | 26.000 | 21.000 | 9.524e+04 | 95.2% | 100.0% |" in out
    assert "| 2 | 26.000 | 25.000 | 0.500 |" in out
