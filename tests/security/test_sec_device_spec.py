"""``F2LOOPY_DEVICE`` and the local rank: one specification for the C runtime
and the Python glue (issue 29, item 12).

A program that mixes Fortran and Python ranks must put each rank on the
same device whatever the environment holds.  Before, the C runtime read an
index with ``strtol`` (``+1``, `` 1`` and ``-1`` were indices there, names
in Python), lowered non-ASCII letters by the locale (Python by Unicode),
cut selections at 255 bytes, and took a local rank of 9 digits or with
leading zeros that Python refused.  Each case below runs through both: the
runtime's own functions (a probe program that includes its source) and the
functions copied into every generated Python glue.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from f2loopy.glue.devices import _choose_device, _local_rank, _pick
from fortran_util import CFLAGS, RUNTIME, device_env, link_flags, needs_toolchain, run

PROBE = Path(__file__).parent / "c" / "device_spec_probe.c"

NAMES = ["Portable Computing Language", "NVIDIA CUDA", "Caf\u00e9 CL", "+1 Vendor",
         " 1 spaced", "-1 minus"]

PICKS = ["0", "1", "5", "6", "00000002", "000000002", "99999999", "123456789012345678901",
         "+1", " 1", "-1", "cuda", "CUDA", "nvidia cuda", "caf\u00e9", "CAF\u00c9", "Caf\u00e9",
         "", "portable computing language!", "\u0661", "0x1", "1e0", "language"]


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    out = tmp_path_factory.mktemp("probe") / "device_spec_probe"
    run(["gcc", *CFLAGS, "-Wno-unused-function", "-I", RUNTIME, PROBE, *link_flags(),
         "-o", out])
    return out


def _c_pick(probe, spec, names):
    proc = subprocess.run([probe, "pick", os.fsencode(spec), *map(os.fsencode, names)],
                          capture_output=True, text=True, check=True)
    value = int(proc.stdout)
    return None if value < 0 else value


@needs_toolchain
@pytest.mark.parametrize("spec", PICKS)
def test_a_selection_picks_the_same_entry_in_c_and_python(probe, spec):
    assert _c_pick(probe, spec, NAMES) == _pick(spec, NAMES)


def test_the_python_rule():
    assert _pick("+1", NAMES) == 3 and _pick(" 1", NAMES) == 4 and _pick("-1", NAMES) == 5
    assert _pick("CAF\u00c9", NAMES) is None          # only ASCII letters ignore case
    assert _pick("caf\u00e9", NAMES) == 2 and _pick("CAF", NAMES) == 2
    assert _pick("000000002", NAMES) is None           # an index of more than 8 digits
    assert _pick("00000002", NAMES) == 2


RANKS = ["0", "7", "00000012", "12345678", "123456789", "000000012", "+1", " 1", "1 ", "-1",
         "\u0663", "x", "0x10"]


def _python_rank(value):
    old = {v: os.environ.pop(v, None) for v in _VARS}
    os.environ["OMPI_COMM_WORLD_LOCAL_RANK"] = value
    try:
        rank, _ = _local_rank()
        return rank
    except RuntimeError:
        return "error"
    finally:
        for v, x in old.items():
            os.environ.pop(v, None)
            if x is not None:
                os.environ[v] = x


_VARS = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
         "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")


@needs_toolchain
@pytest.mark.parametrize("value", RANKS)
def test_a_local_rank_reads_the_same_in_c_and_python(probe, value):
    env = {k: v for k, v in os.environ.items() if k not in _VARS}
    env["OMPI_COMM_WORLD_LOCAL_RANK"] = value
    out = subprocess.run([probe, "rank"], env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    c_rank = "error" if out.startswith("error:") else int(out)
    assert c_rank == _python_rank(value)


def test_a_selection_longer_than_255_bytes_is_an_error_in_python():
    with pytest.raises(RuntimeError, match="longer than 255 bytes"):
        _choose_device([("P", ["d"])], 0, {"F2LOOPY_DEVICE": "p" * 256})
    assert _choose_device([("p" * 255, ["d"])], 0, {"F2LOOPY_DEVICE": "P" * 255})[:2] == (0, 0)


@needs_toolchain
@pytest.mark.opencl
def test_a_selection_longer_than_255_bytes_is_an_error_in_c(tmp_path):
    exe = tmp_path / "test_runtime"
    run(["gcc", *CFLAGS, "-I", RUNTIME, RUNTIME / "f2loopy_runtime.c",
         RUNTIME / "tests" / "test_runtime.c", *link_flags(), "-o", exe])
    # a platform name followed by padding: cut at 255 bytes it would match
    proc = run([exe, "nodevice"], env=device_env(F2LOOPY_DEVICE="pocl" + " " * 300),
               check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "longer than 255 bytes" in proc.stdout
