"""samples/heat_app: built with CMake + make as plain Fortran and with the kernel
translated to OpenCL (runtime/F2Loopy.cmake), run on PoCL: same results; the
build regenerates the kernel exactly when its inputs change."""

import os
import shutil
import sys
import time

import pytest

from fortran_util import ROOT, needs_toolchain, run

pytestmark = [
    needs_toolchain, pytest.mark.usefixtures("cmake", "make"), pytest.mark.slow]

ARGS = ["40", "30", "50"]


def results(exe):
    proc = run([exe, *ARGS])
    values = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key in ("sum", "center", "max"):
            values[key] = float(value)
    assert set(values) == {"sum", "center", "max"}, proc.stdout
    return values


def make(build):
    proc = run(["make"], cwd=build, timeout=300)
    return proc.stdout


def rebuilt(output: str) -> list[str]:
    """The steps make ran (translations, compilations, links)."""
    return [line for line in output.splitlines()
            if "translating" in line or "Building" in line or "Linking" in line]


def touch(path):
    """Give *path* a new modification time (after everything built so far)."""
    time.sleep(0.05)
    os.utime(path)


@pytest.fixture(scope="module")
def heat_build(tmp_path_factory):
    base = tmp_path_factory.mktemp("heat")
    # a copy, so that the test can touch and edit the sources
    shutil.copytree(ROOT / "samples" / "heat_app", base / "samples" / "heat_app",
                    ignore=shutil.ignore_patterns("build*"))
    shutil.copytree(ROOT / "runtime", base / "runtime")
    build = base / "build"
    f2loopy = ";".join([sys.executable, "-m", "f2loopy.cli"])
    run(["cmake", "-G", "Unix Makefiles", "-S", base / "samples" / "heat_app", "-B", build,
         f"-DF2LOOPY_EXECUTABLE={f2loopy}"], timeout=300)
    out = make(build)
    assert "f2loopy: translating heat.f90" in out
    return base, build


def test_opencl_build_matches_fortran(heat_build):
    _, build = heat_build
    plain = results(build / "heat_fortran")
    for variant in ("heat_opencl", "heat_opencl_tile4", "heat_opencl_serial"):
        opencl = results(build / variant)
        for key in plain:
            assert opencl[key] == pytest.approx(plain[key], rel=1e-12), (variant, key)
    assert "device: " in run([build / "heat_opencl", *ARGS]).stdout
    # the two translations of heat.f90 differ: tiled over the grid, or one work-item
    tiled = (build / "f2loopy_generated" / "heat_opencl" / "heat.cl").read_text()
    serial = (build / "f2loopy_generated" / "heat_opencl_serial" / "heat.cl").read_text()
    assert "get_local_id" in tiled and "get_local_id" not in serial


def test_rebuilds_exactly_when_needed(heat_build):
    base, build = heat_build
    source = base / "samples" / "heat_app" / "heat.f90"
    exe = build / "heat_opencl"

    # nothing changed: nothing runs
    stamp = exe.stat().st_mtime
    assert rebuilt(make(build)) == []
    assert exe.stat().st_mtime == stamp

    # touching the Fortran translates it again (and rebuilds what uses it)
    touch(source)
    steps = rebuilt(make(build))
    assert any("f2loopy: translating heat.f90" in s for s in steps), steps
    assert any("Linking Fortran executable heat_opencl" in s for s in steps), steps
    assert sum("f2loopy: translating heat.f90" in s for s in steps) == 3, steps
    assert rebuilt(make(build)) == []

    # an edit changes the kernel; both builds still agree
    cl = build / "f2loopy_generated" / "heat_opencl" / "heat.cl"
    before = cl.read_text()
    text = source.read_text()
    assert "- 4 * u(i, j)" in text
    source.write_text(text.replace("- 4 * u(i, j)", "- 4.0d0 * u(i, j)"))
    touch(source)
    steps = rebuilt(make(build))
    assert any("f2loopy: translating heat.f90" in s for s in steps), steps
    assert cl.read_text() != before
    plain = results(build / "heat_fortran")
    opencl = results(exe)
    for key in plain:
        assert opencl[key] == pytest.approx(plain[key], rel=1e-12), key
    assert rebuilt(make(build)) == []


@pytest.mark.skipif(shutil.which("ninja") is None, reason="needs ninja")
def test_ninja_build_settles(tmp_path):
    """Ninja: the depfile's first target is the custom command's first output,
    so a second build has nothing to do; touching the Fortran re-translates
    (the three targets' translations are then served by f2loopy's cache, and a
    hit must not touch the recipe two of them share), and the build after that
    settles again."""
    shutil.copytree(ROOT / "samples" / "heat_app", tmp_path / "samples" / "heat_app",
                    ignore=shutil.ignore_patterns("build*"))
    shutil.copytree(ROOT / "runtime", tmp_path / "runtime")
    build = tmp_path / "build"
    f2loopy = ";".join([sys.executable, "-m", "f2loopy.cli"])
    run(["cmake", "-G", "Ninja", "-S", tmp_path / "samples" / "heat_app", "-B", build,
         f"-DF2LOOPY_EXECUTABLE={f2loopy}"], timeout=300)

    def explain():
        proc = run(["ninja", "-n", "-d", "explain"], cwd=build, timeout=300)
        return [line for line in (proc.stdout + proc.stderr).splitlines()
                if "dirty" in line or "expected depfile" in line]

    out = run(["ninja"], cwd=build, timeout=600).stdout
    assert out.count("f2loopy: translating heat.f90") == 3, out
    assert explain() == []
    touch(tmp_path / "samples" / "heat_app" / "heat.f90")
    out = run(["ninja"], cwd=build, timeout=600).stdout
    assert out.count("f2loopy: translating heat.f90") == 3, out
    assert explain() == []
    assert "no work to do" in run(["ninja"], cwd=build, timeout=300).stdout
