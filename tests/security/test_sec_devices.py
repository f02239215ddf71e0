"""Device selection from the environment (issue 14, round 2):
``F2LOOPY_DEVICE``, ``PYOPENCL_CTX`` and the MPI launchers' local-rank
variables are read by the Python glue and by the C runtime.  Hostile values
give a clean error whose text is printable (before: the C runtime copied
the value into its message as it was, escape sequences included; the Python
glue raised ValueError on a 5000-digit index)."""

from __future__ import annotations

import pytest

from f2loopy.glue.devices import _choose_device, _describe
from fortran_util import CFLAGS, RUNTIME, device_env, link_flags, needs_toolchain, run
from security_util import terminal_is_clean

PLATFORMS = [("Portable Computing Language", ["cpu-haswell"]), ("Other", [])]
HOSTILE = ["\x1b]0;owned\x07\x1b[2J", "0:\x1b[31mred\u202e", "9" * 5000, "1" * 30 + ":0",
           "%s%s%s%n", "0:" + "%n" * 50, "-1", "0:-1", "A" * 100000]


@pytest.mark.parametrize("value", HOSTILE, ids=lambda v: ascii(v[:12]))
def test_python_glue_device_choice(value):
    try:
        plat, dev, how = _choose_device(PLATFORMS, None, {"F2LOOPY_DEVICE": value})
    except RuntimeError as exc:
        text = str(exc)
    else:
        text = _describe(PLATFORMS, plat, dev, how, None, None)
    assert terminal_is_clean(text) and len(text) < 1000, ascii(text[:200])


@pytest.fixture(scope="module")
def c_test(tmp_path_factory):
    out = tmp_path_factory.mktemp("c_test")
    exe = out / "test_runtime"
    run(["gcc", *CFLAGS, "-I", RUNTIME, RUNTIME / "f2loopy_runtime.c",
         RUNTIME / "tests" / "test_runtime.c", *link_flags(), "-o", exe])
    return exe


@needs_toolchain
@pytest.mark.opencl
@pytest.mark.parametrize("var", ["F2LOOPY_DEVICE", "PYOPENCL_CTX", "OMPI_COMM_WORLD_LOCAL_RANK"])
@pytest.mark.parametrize("value", ["\x1b]0;owned\x07\x1b[2J", "pocl:\x1b[31mred\u202e",
                                   "%s%s%s%n%n", "A" * 100000], ids=lambda v: ascii(v[:12]))
def test_c_runtime_device_choice(c_test, var, value):
    env = device_env(**{"F2LOOPY_DEVICE": "", "PYOPENCL_CTX": "", var: value})
    proc = run([c_test, "nodevice"], env=env, check=False)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert terminal_is_clean(proc.stdout + proc.stderr), ascii(proc.stdout[-400:])
    assert len(proc.stdout) < 20000
