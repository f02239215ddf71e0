"""F2LOOPY_PROFILE=1 (issue 28): per kernel at exit, calls, kernel time, bytes
each way, transfer and glue time, and a hint when transfers dominate; in the
Python glue and in the C runtime of the Fortran glue."""

import os
import subprocess
import sys

import pytest

from f2loopy.glue import profile

SCALE = """subroutine scale(n, x)
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = 2 * x(i)
  end do
end subroutine
"""
LOOP = """program p
  use scale_cl_mod
  real x(1000)
  integer step
  x = 1
  call f2l_upload(x)
  do step = 1, 5
    call scale_cl(1000, x)
  end do
  call f2l_download(x)
  call f2l_release(x)
  call scale_cl(1000, x)
  print '(f8.1)', x(1)
end program
"""


def test_table_and_hint():
    table = {"slow_copies": [10, 1.0, 0.1, 0.8, 4_000_000, 2_000_000, 0.0],
             "resident": [5, 0.5, 0.45, 0.0, 0, 0, 0.0],
             # a program built on the first call (0.6 s of set-up) whose copies still
             # take most of the rest: the hint (it once hid behind the set-up)
             "first_build": [11, 0.9, 0.03, 0.2, 1_000_000, 1_000_000, 0.6]}
    lines = profile._profile_table(table, "k_cl.py")
    assert lines[0] == "f2loopy profile (k_cl.py, F2LOOPY_PROFILE=1), per kernel:"
    assert lines[1].split() == ["kernel", "calls", "total", "s", "kernel", "s", "transfer", "s",
                                "glue", "s", "MB", "to", "device", "MB", "from", "device"]
    assert lines[2].split() == ["slow_copies", "10", "1.0000", "0.1000", "0.8000", "0.1000",
                                "4.000", "2.000"]
    assert lines[3].split()[:2] == ["resident", "5"]
    assert lines[5].startswith("f2loopy profile: slow_copies: transfers take 80% of its time "
                               "after the first call's set-up, more than the kernel: keep its "
                               "arrays on the device")
    assert lines[6].startswith("f2loopy profile: first_build: transfers take 67% of its time "
                               "after the first call's set-up")
    assert len(lines) == 7          # no hint where the kernel dominates


def _report(stderr):
    rows = {}
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("f2loopy profile ("))
    for line in lines[start + 2:]:
        if line.startswith("f2loopy profile:"):
            break
        name, *numbers = line.rsplit(None, 7)
        rows[name.strip()] = numbers
    return rows


@pytest.mark.opencl
def test_python_glue_profile(tmp_path):
    pytest.importorskip("pyopencl")
    (tmp_path / "scale.f90").write_text(SCALE)
    proc = subprocess.run([sys.executable, "-m", "f2loopy.cli", "translate", "scale.f90"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "drive.py").write_text(
        "import numpy as np, pyopencl.array as cla, scale_cl\n"
        "x = np.ones(1000, dtype=np.float32)\n"
        "for _ in range(3):\n"
        "    scale_cl.scale(1000, x)\n"
        "q = scale_cl.rank_queue()\n"
        "d = cla.to_device(q, x)\n"
        "scale_cl.scale(1000, d, queue=q)\n"
        "print(d.get()[0])\n")
    run = subprocess.run([sys.executable, "drive.py"], cwd=tmp_path, capture_output=True,
                         text=True, env={**os.environ, "F2LOOPY_PROFILE": "1"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "16.0"
    calls, total, kernel, transfer, glue, up, down = _report(run.stderr)["scale"]
    assert calls == "4"
    assert (up, down) == ("0.012", "0.012")     # 4000 bytes each way, 3 calls from numpy
    assert 0 < float(kernel) <= float(total) and float(transfer) <= float(total)
    quiet = subprocess.run([sys.executable, "drive.py"], cwd=tmp_path, capture_output=True,
                           text=True, env={k: v for k, v in os.environ.items()
                                           if k != "F2LOOPY_PROFILE"})
    assert quiet.returncode == 0 and "profile" not in quiet.stderr


@pytest.mark.gfortran
@pytest.mark.usefixtures("gfortran")
def test_fortran_runtime_profile(tmp_path):
    (tmp_path / "k.f90").write_text(SCALE)
    (tmp_path / "main.f90").write_text(LOOP)
    for args in (["-c", "k.f90", "-o", "k.o"], ["-c", "main.f90", "-o", "main.o"],
                 ["main.o", "k.o", "-o", "app"]):
        proc = subprocess.run([sys.executable, "-m", "f2loopy.wrapper", "gfortran", *args],
                              cwd=tmp_path, capture_output=True, text=True,
                              env={**os.environ, "F2LOOPYFC_OPTIONS": "--transform auto"})
        assert proc.returncode == 0, proc.stderr
    out = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True,
                         env={**os.environ, "F2LOOPY_PROFILE": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["64.0"]
    rows = _report(out.stderr)
    calls, total, kernel, transfer, glue, up, down = rows["scale"]
    assert calls == "6"
    assert (up, down) == ("0.004", "0.004")     # only the last call copies
    assert rows["(f2l_upload, f2l_download)"][0] == "2"
    assert rows["(f2l_upload, f2l_download)"][5:] == ["0.004", "0.004"]
    quiet = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True)
    assert "profile" not in quiet.stderr
