"""The fuzz campaign split over two machines (issue 26): gfortran's results
recorded where it runs (``--record-references``), replayed on an OpenCL
machine without it (``--reference-dir``); f2loopy.verify.recorded."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from f2loopy.fuzz.fuzz import record_seed, run_seed
from f2loopy.verify.recorded import RecordedReferences, RecordError
from f2loopy.verify.runs import STOPPED

ROOT = Path(__file__).resolve().parents[2]

INPUTS = {"n": np.int32(3), "x": np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
          "flag": "yes", "ok": np.array([True, False])}
OUTPUTS = {"n": np.int32(3), "x": np.full((2, 3), np.nan, dtype=np.float32, order="F"),
           "flag": "yes", "ok": np.array([False, False])}


def _record(tmp_path, **kw):
    rec = RecordedReferences(tmp_path / "r.npz", mode="record", **kw)
    rec.save("source", {("a",): OUTPUTS, ("a", "a"): STOPPED}, lambda s: INPUTS)
    return tmp_path / "r.npz"


def test_round_trip_is_bit_exact(tmp_path):
    path = _record(tmp_path)
    refs = RecordedReferences(path, mode="replay").load(
        "source", [("a",), ("a", "a")], lambda s: dict(INPUTS))
    assert refs[("a", "a")] is STOPPED
    got = refs[("a",)]
    assert set(got) == set(OUTPUTS) and got["flag"] == "yes"
    assert got["n"] == 3 and got["n"].dtype == np.int32 and got["x"].dtype == np.float32
    assert got["x"].tobytes() == OUTPUTS["x"].tobytes()
    assert got["ok"].dtype == np.bool_ and not got["ok"].any()


@pytest.mark.parametrize("change, why", [
    (lambda i: {**i, "n": np.int32(4)}, "were made for other inputs of a"),
    (lambda i: {**i, "n": np.int64(3)}, "were made for other inputs of a"),      # dtype
    (lambda i: {**i, "flag": "no"}, "were made for other inputs of a"),
    (lambda i: {k: v for k, v in i.items() if k != "ok"}, "were made for other inputs of a"),
    (lambda i: {**i, "x": np.nextafter(i["x"], np.float32(9))}, "were made for other inputs"),
])
def test_other_inputs_are_refused(tmp_path, change, why):
    path = _record(tmp_path)
    with pytest.raises(RecordError) as info:
        RecordedReferences(path, mode="replay").load("source", [("a",)],
                                                     lambda s: change(dict(INPUTS)))
    assert why in info.value.message


def test_other_source_missing_sequence_or_file_is_refused(tmp_path):
    path = _record(tmp_path)
    replay = RecordedReferences(path, mode="replay")
    with pytest.raises(RecordError, match="made for another source text"):
        replay.load("other source", [("a",)], lambda s: INPUTS)
    with pytest.raises(RecordError, match="have no results of b then a"):
        replay.load("source", [("b", "a")], lambda s: INPUTS)
    with pytest.raises(RecordError, match="do not exist"):
        RecordedReferences(tmp_path / "none.npz", mode="replay").load("source", [], dict)
    # a key names the text the results belong to, whatever the checked text is
    path = _record(tmp_path, key="the fortran")
    keyed = RecordedReferences(path, mode="replay", key="the fortran")
    assert keyed.load("any text", [("a",)], lambda s: INPUTS)[("a",)]["flag"] == "yes"


def test_hostile_files_are_refused_without_running_anything(tmp_path):
    bad = tmp_path / "bad.npz"
    # an object array (pickle): never loaded
    np.savez(bad, manifest=np.array(json.dumps({"version": 1})),
             s0i0=np.array([object()], dtype=object))
    with pytest.raises(RecordError, match="cannot be read|malformed"):
        RecordedReferences(bad, mode="replay").load("source", [("a",)], lambda s: {})
    from f2loopy.verify.recorded import source_digest
    for names in (["a;rm"], "a", [1]):
        manifest = {"version": 1, "source": source_digest("source"),
                    "sequences": [{"names": names, "stopped": False, "inputs": {},
                                   "outputs": {}}]}
        np.savez(bad, manifest=np.array(json.dumps(manifest)))
        with pytest.raises(RecordError, match="malformed"):
            RecordedReferences(bad, mode="replay").load("source", [("a",)], lambda s: {})
    np.savez(bad, manifest=np.array("not json"))
    with pytest.raises(RecordError, match="malformed"):
        RecordedReferences(bad, mode="replay").load("source", [("a",)], lambda s: {})
    bad.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(RecordError, match="cannot be read"):
        RecordedReferences(bad, mode="replay").load("source", [("a",)], lambda s: {})


def test_modes():
    with pytest.raises(ValueError, match="mode must be one of"):
        RecordedReferences("x.npz", mode="both")


@pytest.mark.parametrize("seed, transforms", [(9000, True), (9002, False)])
def test_record_then_replay_compares_with_the_recording(tmp_path, cl_queue, gfortran, seed,
                                                        transforms):
    path = tmp_path / f"{seed}.npz"
    recorded = record_seed(seed, transforms=transforms,
                           recorded=RecordedReferences(path, mode="record"))
    assert recorded.kind == "recorded", recorded.detail
    replay = RecordedReferences(path, mode="replay")
    outcome = run_seed(seed, transforms=transforms, queue=cl_queue, recorded=replay)
    assert outcome.kind == "pass", outcome.detail
    # the replay compares with what the file says: a changed result is a mismatch
    with np.load(path, allow_pickle=False) as data:
        files = {k: data[k] for k in data.files}
    manifest = json.loads(str(files["manifest"][()]))
    for key, _ in manifest["sequences"][0]["outputs"].values():     # every value changed
        v = files[key]
        files[key] = ~v if v.dtype == np.bool_ else v + v.dtype.type(1) \
            if v.dtype.kind in "iufc" else v
    np.savez(path, **files)
    outcome = run_seed(seed, transforms=transforms, queue=cl_queue, recorded=replay)
    assert outcome.kind == "mismatch", outcome.detail


def test_the_script_records_and_replays(tmp_path, cl_queue, gfortran, python_process):
    del cl_queue, gfortran       # (the script's workers open their own)
    script = str(ROOT / "scripts" / "fuzz_differential.py")
    refs = tmp_path / "refs"
    common = ["--seed", "9003", "--count", "2", "--jobs", "1", "--save", ""]
    rec = subprocess.run([python_process, script, *common, "--record-references", str(refs)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert rec.returncode == 0, rec.stdout + rec.stderr
    assert sorted(p.name for p in (refs / "transforms").iterdir()) == ["9003.npz", "9004.npz"]
    out = tmp_path / "out.jsonl"
    rep = subprocess.run([python_process, script, "--seed", "9003", "--count", "3", "--jobs",
                          "1", "--save", "", "--reference-dir", str(refs), "--results",
                          str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert rep.returncode == 0, rep.stdout + rep.stderr
    kinds = {r["seed"]: r["kind"] for r in map(json.loads, out.read_text().splitlines())}
    assert kinds == {9003: "pass", 9004: "pass", 9005: "no-record"}
