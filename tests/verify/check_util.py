"""What the tests of ``f2loopy check`` share: the command run on inline
Fortran, in this process or in a child of its own."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from f2loopy.cli import main

#: ``check`` builds the original with gfortran and runs the kernels on OpenCL
needs_check = pytest.mark.usefixtures("gfortran", "opencl_device")


#: a kernel whose second loop runs only for n > 1000: NOT COVERED at the default sizes
BIG = """subroutine big(n, x, y)
  implicit none
  integer n, i
  real x(n), y(n)
  do i = 1, n
    y(i) = x(i)
  end do
  if (n > 1000) then
    do i = 1, n
      y(i) = y(i) + 1
    end do
  end if
end subroutine
"""


def check_text(tmp_path, text, *args, name="k.f90"):
    """``f2loopy check ARGS tmp_path/NAME`` (holding *text*) in this process:
    the path and click's result."""
    path = tmp_path / name
    path.write_text(text)
    res = CliRunner().invoke(main, ["check", *args, str(path)])
    return str(path), res


def check_process(tmp_path, text, *args, name="k.f90"):
    """The same check in its own process: a crash shows as a signal."""
    path = tmp_path / name
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "f2loopy.cli", "check", *args, str(path)],
                          capture_output=True, text=True, cwd=tmp_path)
