"""The runtime library (runtime/): its C test and its Fortran test, on PoCL."""

import pytest

from fortran_util import (
    CFLAGS, RUNTIME, build_program, build_runtime, device_env, link_flags, needs_toolchain,
    run)

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def c_test(tmp_path_factory):
    out = tmp_path_factory.mktemp("c_test")
    exe = out / "test_runtime"
    run(["gcc", *CFLAGS, "-I", RUNTIME, RUNTIME / "f2loopy_runtime.c",
         RUNTIME / "tests" / "test_runtime.c", *link_flags(), "-o", exe])
    return exe


@pytest.fixture(scope="module")
def f_test(tmp_path_factory, runtime):
    out = tmp_path_factory.mktemp("f_test")
    return build_program(out, runtime, [RUNTIME / "tests" / "test_runtime_f.f90"],
                         exe="test_runtime_f")


def test_c_runtime(c_test):
    proc = run([c_test], check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 failures" in proc.stdout


@pytest.mark.parametrize("env, message", [
    ({"F2LOOPY_DEVICE": "7"}, "F2LOOPY_DEVICE=7: no OpenCL platform '7' (platforms: [0] "),
    ({"F2LOOPY_DEVICE": "0:no-such-device"}, "has no device 'no-such-device'"),
    ({"F2LOOPY_DEVICE": "", "PYOPENCL_CTX": "9"}, "PYOPENCL_CTX=9: no OpenCL platform '9'"),
    ({"OCL_ICD_VENDORS": "/nonexistent", "F2LOOPY_DEVICE": "", "PYOPENCL_CTX": ""},
     "no OpenCL platform found"),
])
def test_c_runtime_without_device(c_test, env, message):
    proc = run([c_test, "nodevice"], env=device_env(**env), check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert message in proc.stdout


def test_device_chosen_by_name(c_test):
    proc = run([c_test], env=device_env(F2LOOPY_DEVICE="pocl:0"), check=False)
    assert proc.returncode == 0, proc.stdout
    assert "Portable Computing Language" in proc.stdout


def test_fortran_runtime(f_test):
    proc = run([f_test], check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 failures" in proc.stdout


def test_error_without_status_stops_with_message(f_test):
    proc = run([f_test, "stop"], check=False)
    assert proc.returncode == 1
    assert "not reached" not in proc.stdout
    assert ("f2loopy: error: scale: argument 'x' has 3 elements, but its declaration x(n) "
            "needs 10") in proc.stderr
