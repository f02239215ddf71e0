"""Every script in benchmarks/ runs (issue 26, item 15): each at a tiny size,
on the default OpenCL device (PoCL in CI), as a fresh process.  What they
time is not checked here (timings belong to the benchmarks, not to tests);
that they run to the end and print their table is."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"

pytestmark = pytest.mark.differential

#: script -> (arguments for a tiny run, a line its output must have, needs gfortran)
TINY = {
    "auto_recipe.py": (["--only", "gesummv", "--tune", "", "--tiny", "--min-time", "0.001",
                        "--rounds", "1", "--no-fortran"], "| gesummv |", False),
    "frontend_speed.py": (["60"], "lines", False),
    "dependence_scale.py": (["2"], "ratio", False),
    "loopy_paper_kernels.py": (["-D", "Nq=2", "--size", "Ne=2", "--levels", "level 1",
                                "-o", "{tmp}/loopy.json"], None, False),
    "paper_cpu.py": (["-D", "Nq=2", "--size", "Ne=2", "--no-record", "--no-untransformed",
                      "--min-time", "0.001",
                      "--rounds", "1"], "level", True),
    "paper_gpu.py": (["-D", "Nq=2", "--size", "Ne=2", "--levels", "level 1", "level 8",
                      "--min-time", "0.001", "--rounds", "1"], "level 8", False),
    "sandbox_limits.py": (["--cpu", "1", "--wall", "2", "--only", "python busy loop"],
                          "worst case:", False),
    "translate_speed.py": (["-n", "1", "--sizes", "--no-compile"], "load average",
                           False),
    "launches_gpu.py": (["--quick", "--repeats", "1"], "| jacobi-2d | double |", False),
    "kcache_gpu.py": (["run", "--translate", "--kernels", "{tmp}/kc", "--ngptot", "40",
                       "--klev", "6", "--niter", "1"], "| cached |", False),
}

#: scripts that need what CI cannot have -> what (they print their usage; their
#: logic has tests of its own where it is more than running a glue)
NEEDS_OUTSIDE = {
    "cloudsc_gpu.py": "the CLOUDSC dwarf's source and data (never in this repository)",
    "cloudsc_ranks.py": "the CLOUDSC dwarf's data and a translated kernel "
                        "(tests/perf/test_cloudsc_ranks.py tests its logic)",
    "mpi_heat_scaling.py": "the CMake build of samples/mpi_heat and several GPUs",
    "cl_resources.py": "nvcc (the CUDA compiler), which reports an NVIDIA GPU's registers",
}


def test_every_benchmark_has_a_tiny_run():
    assert sorted([*TINY, *NEEDS_OUTSIDE]) == sorted(p.name for p in BENCHMARKS.glob("*.py"))


@pytest.mark.parametrize("script", sorted(NEEDS_OUTSIDE))
def test_benchmark_without_its_inputs_prints_its_usage(script, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), "--help"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("usage:"), proc.stderr[-3000:]


@pytest.mark.parametrize("script", sorted(TINY))
def test_benchmark_runs(script, tmp_path):
    args, expect, fortran = TINY[script]
    if script == "loopy_paper_kernels.py" and importlib.util.find_spec("loopy") is None:
        pytest.skip("loopy is not installed")
    if fortran and shutil.which("gfortran") is None:
        pytest.skip("no gfortran")
    pytest.importorskip("pyopencl")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, str(BENCHMARKS / script),
           *[a.replace("{tmp}", str(tmp_path)) for a in args]]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    if expect is not None:
        assert expect in proc.stdout, out[-3000:]
