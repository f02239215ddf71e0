"""samples/mpi_heat: the heat equation split over MPI ranks, built with CMake as
Fortran + MPI and with its kernel translated by f2loopy (fields device-resident,
halo columns exchanged through partial transfers), run under mpirun on PoCL.

The results are compared bit for bit: 1 rank and 2 ranks of both builds write
the same field (the translation is made without fused multiply-adds, and the
decomposition does not change the arithmetic of any grid point)."""

import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from fortran_util import ROOT, device_env, needs_toolchain, run

pytestmark = [
    needs_toolchain, pytest.mark.usefixtures("mpi", "cmake", "make"),
    pytest.mark.skipif(shutil.which("mpif90") is None, reason="needs mpif90 (scripts/setup.sh "
                       "installs Open MPI: libopenmpi-dev openmpi-bin)"),
]

# 31 columns: 2 ranks get blocks of 16 and 15
ARGS = ["40", "31", "50"]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    base = tmp_path_factory.mktemp("mpi_heat")
    shutil.copytree(ROOT / "samples" / "mpi_heat", base / "samples" / "mpi_heat")
    shutil.copytree(ROOT / "runtime", base / "runtime")
    out = base / "build"
    f2loopy = ";".join([sys.executable, "-m", "f2loopy.cli"])
    run(["cmake", "-G", "Unix Makefiles", "-S", base / "samples" / "mpi_heat", "-B", out,
         f"-DF2LOOPY_EXECUTABLE={f2loopy}"], timeout=300)
    proc = run(["make"], cwd=out, timeout=600)
    assert "f2loopy: translating heat_block.f90" in proc.stdout
    return out


def mpirun(build, exe, ranks, tmp_path, args=ARGS, **env):
    """Run *exe* on *ranks* ranks; (stdout, the field rank 0 wrote)."""
    field = tmp_path / f"{exe}_{ranks}_{args[2]}.bin"
    env = device_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
                     OMPI_MCA_rmaps_base_oversubscribe=1, **env)
    for var in ("F2LOOPY_DEVICE", "PYOPENCL_CTX"):
        env.pop(var, None)
    proc = run(["mpirun", "-np", str(ranks), build / exe, *args, field], env=env, timeout=300)
    data = field.read_bytes()
    assert len(data) == 8 * 42 * 31, len(data)
    return proc.stdout, data


def summary(stdout):
    return [line for line in stdout.splitlines()
            if line.split(" ")[0] in ("sum", "center", "max")]


def test_ranks_and_builds_agree_bit_for_bit(build, tmp_path):
    fortran1, f1 = mpirun(build, "mpi_heat_fortran", 1, tmp_path)
    _, f2 = mpirun(build, "mpi_heat_fortran", 2, tmp_path)
    _, o1 = mpirun(build, "mpi_heat_opencl", 1, tmp_path)
    opencl2, o2 = mpirun(build, "mpi_heat_opencl", 2, tmp_path)
    assert "grid 40 x 31, steps 50, ranks 2" in opencl2
    assert f1 == f2, "the Fortran + MPI original: 2 ranks differ from 1"
    assert o1 == o2, "the OpenCL build: 2 ranks differ from 1"
    assert o1 == f1, "the OpenCL build differs from the Fortran original"
    assert summary(opencl2) == summary(fortran1) and len(summary(fortran1)) == 3
    # the steps changed the field (the comparisons above are not of initial values)
    _, initial = mpirun(build, "mpi_heat_opencl", 2, tmp_path, args=[*ARGS[:2], "0"])
    assert initial != o2


def test_two_ranks_on_two_devices(build, tmp_path):
    out, field = mpirun(build, "mpi_heat_opencl", 2, tmp_path, POCL_DEVICES="basic pthread")
    # (mpirun may forward the two ranks' lines without a newline between them)
    ranks = sorted(re.findall(r"rank (\d+) \(local rank (\d+)\): device (\d+) of 2: "
                              r"(basic|pthread)-", out))
    assert ranks == [("0", "0", "0", "basic"), ("1", "1", "1", "pthread")], out
    _, reference = mpirun(build, "mpi_heat_fortran", 1, tmp_path)
    assert field == reference


def have_mpi4py():
    """mpi4py imports and finds its MPI library (a wheel without one fails at import)."""
    proc = subprocess.run([sys.executable, "-c", "from mpi4py import MPI"], capture_output=True,
                          check=False, timeout=60)
    return proc.returncode == 0


def test_mpi4py_driver(build, tmp_path):
    """heat_mpi4py.py: the same time loop from Python, pyopencl arrays on each rank's
    device, halo columns through sections of them.  1 and 2 ranks agree bit for bit;
    with the Fortran build within 1e-15 relative: the initial field's exp() is
    numpy's there and the C library's in Fortran (they differ by an ulp at a few
    points), the steps are the same arithmetic."""
    if not have_mpi4py():
        pytest.skip("needs mpi4py (scripts/setup.sh installs it)")
    from f2loopy.pipeline import translate_text, write_outputs
    sample = ROOT / "samples" / "mpi_heat"
    for name in ("heat_block.f90", "heat_mpi4py.py"):
        shutil.copy(sample / name, tmp_path / name)
    source = (tmp_path / "heat_block.f90").read_text()
    write_outputs(translate_text(source, tmp_path / "heat_block.f90").outputs)
    env = device_env(OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
                     OMPI_MCA_rmaps_base_oversubscribe=1, POCL_DEVICES="basic pthread")
    fields = {}
    for ranks in (1, 2):
        out = tmp_path / f"py{ranks}.bin"
        proc = run(["mpirun", "-np", str(ranks), sys.executable, tmp_path / "heat_mpi4py.py",
                    *ARGS, out], env=env, timeout=300)
        # mpirun forwards the ranks' lines as they come, at times without the
        # newline between them: find the reports anywhere in the output
        devices = sorted(re.findall(r"rank (\d+): device (basic|pthread)-", proc.stdout))
        assert len(devices) == ranks, proc.stdout
        fields[ranks] = out.read_bytes()
    assert devices == [("0", "basic"), ("1", "pthread")], devices
    assert fields[1] == fields[2]
    _, reference = mpirun(build, "mpi_heat_fortran", 1, tmp_path)
    np.testing.assert_allclose(np.frombuffer(fields[2]), np.frombuffer(reference), rtol=1e-15,
                               atol=0)
