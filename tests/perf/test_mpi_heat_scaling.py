"""benchmarks/mpi_heat_scaling.py (issue 30): what it reads from the samples'
output and how it names each baseline's device.  The runs themselves need the
sample's CMake build under mpirun and several GPUs (samples/mpi_heat/RESULTS.md);
tests/builds/test_mpi_heat.py runs the sample on PoCL."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("mpi_heat_scaling_under_test",
                                                  ROOT / "benchmarks" / "mpi_heat_scaling.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


hs = _load()


def test_per_step_reads_the_mean_and_the_median():
    out = ("rank 0 (local rank 0): device 0 of 1: x\ngrid 8 x 8, steps 10, ranks 1\n"
           "sum   1.0E+00\nseconds per step  1.25000E-03\n"
           "median seconds per step  1.20000E-03\n")
    assert hs.per_step(out) == (1.25e-3, 1.2e-3)


def test_per_step_needs_both_lines():
    with pytest.raises(RuntimeError, match="median seconds per step"):
        hs.per_step("seconds per step  1.25000E-03\n")


def test_device_spec_puts_the_number_in():
    assert hs.device_spec("0:{rank}", 3) == "0:3"
    assert hs.device_spec("NVIDIA:{rank}", 0) == "NVIDIA:0"


@pytest.mark.parametrize("template", ["0:{rank};rm", "0:{rank}\n", "$(x):{rank}", "0:{{rank}}"])
def test_device_spec_refuses_other_text(template):
    with pytest.raises(SystemExit, match="not PLATFORM"):
        hs.device_spec(template, 1)
