"""samples/multifile: a module file (kinds, a constant, a derived type, module
variables) and a helper under include/, a kernel using them; built with the
plain Makefile and with CMake, the OpenCL translation matches gfortran's
build of the original in the same program, and the depfile names the files
of the search path the translation read."""

import shutil
import sys

import pytest

from fortran_util import ROOT, needs_toolchain, run

pytestmark = [needs_toolchain,
              pytest.mark.usefixtures("make")]


def _results(exe):
    out = run([exe]).stdout
    values = {}
    for line in out.splitlines():
        words = line.split()
        if words[:1] in (["fortran"], ["opencl"]) and words[1] == "sum":
            values[words[0] + " sum"] = float(words[2])
        elif words[:1] in (["fortran"], ["opencl"]) and words[1] == "sweeps":
            values[words[0] + " sweeps"] = (int(words[2]), float(words[4]))
        elif words[:2] == ["max", "difference"]:
            values["diff"] = float(words[2])
    return values


def _check(values):
    assert values["fortran sum"] == pytest.approx(values["opencl sum"], rel=1e-13)
    assert values["fortran sweeps"][0] == values["opencl sweeps"][0] == 10
    assert values["fortran sweeps"][1] == pytest.approx(values["opencl sweeps"][1], rel=1e-13)
    assert values["diff"] < 1e-10


def _copy(tmp_path):
    shutil.copytree(ROOT / "samples" / "multifile", tmp_path / "samples" / "multifile",
                    ignore=shutil.ignore_patterns("build*"))
    shutil.copytree(ROOT / "runtime", tmp_path / "runtime")
    return tmp_path / "samples" / "multifile"


def test_plain_make(tmp_path):
    src = _copy(tmp_path)
    f2loopy = f"{sys.executable} -m f2loopy.cli"
    run(["make", f"F2LOOPY={f2loopy}"], cwd=src, timeout=600)
    _check(_results(src / "build" / "multifile_opencl"))
    dep = (src / "build" / "relax.d").read_text()
    assert dep.splitlines()[0].endswith(": relax.f90 \\")
    assert "  include/physics.f90 \\" in dep.splitlines()
    assert "  include/clip.f90" in dep.splitlines()


@pytest.mark.usefixtures("cmake")
def test_cmake(tmp_path):
    src = _copy(tmp_path)
    build = tmp_path / "build"
    f2loopy = ";".join([sys.executable, "-m", "f2loopy.cli"])
    run(["cmake", "-G", "Unix Makefiles", "-S", src, "-B", build,
         f"-DF2LOOPY_EXECUTABLE={f2loopy}"], timeout=300)
    out = run(["make"], cwd=build, timeout=600).stdout
    assert "f2loopy: translating relax.f90" in out
    _check(_results(build / "multifile_opencl"))
    dep = (build / "f2loopy_generated" / "multifile_opencl" / "relax.d").read_text()
    assert str(src / "include" / "physics.f90") in dep
