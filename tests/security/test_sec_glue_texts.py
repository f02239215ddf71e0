"""Text from the Fortran itself reaching the glue (issue 14, round 2).

Module data (names, initial values), COMMON blocks and the texts of error
paths (``write(*,*) 'text'``, ``call xerbla('NAME', k)``, ``stop 'text'``)
are copied into the generated Python, Fortran and C glue.  A downloaded file
writes those texts to break out of a Python literal, a Fortran character
literal (``"``, ``&``, ``!``, lines longer than 132 columns) or a C string;
the glue must compile warning-free, import without running anything, and
(with OpenCL) replay the same texts when the kernel stops.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from fortran_util import build_runtime, needs_toolchain, run
from security_util import (
    CANARY, ROOT, SENTINEL, TOUCH, assert_safe, invoke, opencl_available)

HAVE_OPENCL = opencl_available()
LONG = "A" * 150
PY_BREAK = f'x"); __import__("os").system("{TOUCH}"); ("'
PY_BREAK2 = f"x'''); __import__('os').system('{TOUCH}'); ('''"

HOSTILE = f"""\
module zz_data
  implicit none
  real :: scale = 2.5
  integer :: counts(3) = [1, 2, 3]
end module

subroutine hostile(n, x, info)
  use zz_data
  implicit none
  integer n, i, info
  real x(n)
  real w
  common /blk/ w
  if (n > 1000) then
    write(*,*) 'bad n: ""&"" ! ; \\n \\" '' {LONG} {PY_BREAK.replace("'", "''")}', n
    call xerbla('HOSTILE''&!\\', 1)
    stop '{PY_BREAK.replace("'", "''")}&!{LONG}'
  end if
  if (n < 0) error stop '{PY_BREAK2.replace("'", "''")} & ! */ /* ??/'
  do i = 1, n
    x(i) = scale * x(i) + counts(2) + w
  end do
end subroutine
"""

PY_RUN = """
import importlib.util, sys
import numpy as np
spec = importlib.util.spec_from_file_location("g", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
if sys.argv[2] == "run":
    x = np.ones(2000, dtype=np.float32)
    try:
        mod.hostile(2000, x, 0)
    except mod.KernelStopError as exc:
        print("STOPPED:", ascii(str(exc)))
print("imported")
"""


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


@needs_toolchain
def test_error_path_texts_and_module_data_in_the_glue(tmp_path, runtime):
    (tmp_path / "h.f90").write_text(HOSTILE)
    result = invoke(["translate", "h.f90"], tmp_path)
    assert result.exit_code == 0, result.stderr
    py = (tmp_path / "h_cl.py").read_text()
    ast.parse(py)
    assert py.isascii()
    f90 = (tmp_path / "h_cl.f90").read_text()
    assert max(len(line) for line in f90.splitlines()) <= 132
    # the Fortran glue compiles warning-free, against the original's modules
    run(["gfortran", "-ffree-line-length-none", "-c", "h.f90", "-o", "h.o"], cwd=tmp_path)
    run(["gfortran", "-Wall", "-Wno-unused-dummy-argument", "-Werror", "-I",
         runtime, "-I", tmp_path, "-c", "h_cl.f90", "-o", "glue_f.o"], cwd=tmp_path)
    run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", "h_cl.c", "-o", "glue_c.o"],
        cwd=tmp_path)
    env = {"PYTHONPATH": str(ROOT), "F2LOOPY_TEST_CANARY": CANARY, "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", PY_RUN, "h_cl.py",
                           "run" if HAVE_OPENCL else "import"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "imported" in proc.stdout
    if HAVE_OPENCL:
        # the stop is reported with the program's own texts, verbatim
        stopped = proc.stdout.split("STOPPED: ", 1)[1].splitlines()[0]
        message = ast.literal_eval(stopped)
        assert "On entry to HOSTILE'&!\\ parameter number 1 had an illegal value" in message
        assert f"{LONG} {PY_BREAK} 2000" in message
    assert not (tmp_path / SENTINEL).exists()
    assert_safe(tmp_path, result.stdout, result.stderr, proc.stdout)
