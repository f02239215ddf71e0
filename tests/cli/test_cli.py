"""The command line: outputs, exit codes, usage errors."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_util import f2loopy   # in this process; the tests of the process start a child

SAMPLES = Path(__file__).resolve().parents[2] / "samples"




def test_translate_writes_kernel_and_glue(tmp_path):
    src = tmp_path / "saxpy.f90"
    src.write_text((SAMPLES / "saxpy.f90").read_text())
    proc = f2loopy("translate", str(src))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saxpy.cl", "saxpy.f90",
                                                          "saxpy_cl.c", "saxpy_cl.f90",
                                                          "saxpy_cl.py"]
    assert "__kernel void" in (tmp_path / "saxpy.cl").read_text()


def test_outputs_get_the_mode_of_new_files(tmp_path):
    src = tmp_path / "saxpy.f90"
    src.write_text((SAMPLES / "saxpy.f90").read_text())
    umask = os.umask(0o027)
    try:
        proc = f2loopy("translate", str(src))
    finally:
        os.umask(umask)
    assert proc.returncode == 0, proc.stderr
    for name in ["saxpy.cl", "saxpy_cl.py", "saxpy_cl.c", "saxpy_cl.f90"]:
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o640, name


def test_output_dir(tmp_path):
    out = tmp_path / "gen"
    proc = f2loopy("translate", "-o", str(out), str(SAMPLES / "matmul.f90"))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["matmul.cl", "matmul_cl.c",
                                                     "matmul_cl.f90", "matmul_cl.py"]


def test_unchanged_output_is_not_rewritten(tmp_path):
    src = tmp_path / "saxpy.f90"
    src.write_text((SAMPLES / "saxpy.f90").read_text())
    assert f2loopy("translate", str(src)).returncode == 0
    cl = tmp_path / "saxpy.cl"
    old = time.time() - 100
    os.utime(cl, (old, old))
    assert f2loopy("translate", str(src)).returncode == 0
    assert abs(cl.stat().st_mtime - old) < 1e-3


def test_errors_in_one_file_do_not_stop_the_others(tmp_path):
    good = tmp_path / "good.f90"
    good.write_text((SAMPLES / "saxpy.f90").read_text())
    bad = tmp_path / "bad.f90"
    bad.write_text("subroutine b(x)\n  real x\n  print '(z8.3)', x\nend\n")
    worse = tmp_path / "worse.f90"
    worse.write_text("subroutine w(x)\n  real x\n  rewind(10)\nend\n")
    proc = f2loopy("translate", str(bad), str(good), str(worse))
    assert proc.returncode == 1
    assert "bad.f90:3:3: error: edit descriptor 'z8.3' in 'print '(z8.3)', x' cannot be translated" in proc.stderr
    assert "worse.f90:3:3: error: 'rewind' is not supported" in proc.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["bad.f90", "good.cl", "good.f90", "good_cl.c", "good_cl.f90",
                     "good_cl.py", "worse.f90"]


def test_show_prints_ir_and_code(tmp_path):
    proc = f2loopy("show", str(SAMPLES / "euler_flux.f90"))
    assert proc.returncode == 0, proc.stderr
    assert "KERNEL: euler_volume" in proc.stdout
    assert "tags=local_prep" in proc.stdout
    assert "__kernel void" in proc.stdout
    proc = f2loopy("show", "--kernel", "nosuch", str(SAMPLES / "euler_flux.f90"))
    assert proc.returncode == 1
    assert "no subroutine named 'nosuch'" in proc.stderr


def test_usage_errors_exit_2(tmp_path):
    assert f2loopy("translate").returncode == 2
    assert f2loopy("frobnicate").returncode == 2
    # -D NAME alone means NAME=1, as for a compiler; a name must be a name
    proc = f2loopy("translate", "-D", "1x=3", str(SAMPLES / "saxpy.f90"))
    assert proc.returncode == 2
    assert "Invalid value for -D" in proc.stderr


def test_missing_file_is_an_error(tmp_path):
    proc = f2loopy("translate", str(tmp_path / "nope.f90"))
    assert proc.returncode == 1
    assert "cannot read" in proc.stderr and "Traceback" not in proc.stderr


def test_help_everywhere():
    for args in (["--help"], ["translate", "--help"], ["show", "--help"]):
        proc = f2loopy(*args)
        assert proc.returncode == 0
        assert "Usage:" in proc.stdout


@pytest.mark.usefixtures("python_process")
def test_outputs_do_not_depend_on_the_hash_seed(tmp_path):
    """The paper's script iterates over a set of names; the console script
    fixes the hash seed, so two runs write the same bytes."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env["F2LOOPY_NO_CACHE"] = "1"
    outs = []
    for k in range(2):
        out = tmp_path / f"out{k}"
        proc = subprocess.run([sys.executable, "-c", "from f2loopy.cli import entry; entry()",
                               "translate", "-D", "Nq=4", "-o", str(out),
                               str(SAMPLES / "numa_volume" / "volume.f90")],
                              capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        outs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert outs[0] == outs[1]


#: a module of kinds and one of kernels that uses it (BabelStream's layout)
_TYPES = """module stream_types
  implicit none
  integer, parameter :: rk = kind(1.0d0)
end module
"""
_STREAMS = """module streams
  use stream_types
  implicit none
contains
  subroutine copy(n, a, c)
    integer, intent(in) :: n
    real(rk), intent(in) :: a(n)
    real(rk), intent(out) :: c(n)
    c = a
  end subroutine
  subroutine scale(n, q, b, c)
    integer, intent(in) :: n
    real(rk), intent(in) :: q, c(n)
    real(rk), intent(out) :: b(n)
    b = q*c
  end subroutine
end module
"""


def test_kernel_choice_with_a_file_of_modules_beside(tmp_path):
    """``--kernel`` with the file of kinds named beside the kernels' file:
    the modules' file is read where used and skipped, not an error."""
    (tmp_path / "types.f90").write_text(_TYPES)
    (tmp_path / "streams.f90").write_text(_STREAMS)
    proc = f2loopy("translate", "--kernel", "copy", "streams.f90", "types.f90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "only copy translated (--kernel)" in proc.stderr
    assert "skipping types.f90: it has no subroutine or function to translate" in proc.stderr
    code = (tmp_path / "streams.cl").read_text()
    assert "c[c_i1 - 1] = a[c_i1 - 1];" in code and "scale" not in code
    assert not (tmp_path / "types.cl").exists()
    # a name that only files of modules were given for is an error
    (tmp_path / "streams.cl").unlink()
    proc = f2loopy("translate", "--kernel", "copy", "types.f90", cwd=tmp_path)
    assert proc.returncode == 1 and "nothing to translate" in proc.stderr
    (tmp_path / "more_types.f90").write_text(_TYPES.replace("stream_types", "more_types"))
    proc = f2loopy("translate", "--kernel", "copy", "types.f90", "more_types.f90",
                   cwd=tmp_path)
    assert proc.returncode == 1
    assert ("f2loopy: error: --kernel copy: none of the files given has a subroutine or "
            "function of that name") in proc.stderr
    assert not list(tmp_path.glob("*.cl"))


@pytest.mark.parametrize("command", ["check", "show", "bench"])
def test_commands_of_one_kernel_refuse_two(tmp_path, command):
    """``--kernel`` twice for a command that takes one kernel: an error, not
    the last one silently."""
    (tmp_path / "types.f90").write_text(_TYPES)
    (tmp_path / "streams.f90").write_text(_STREAMS)
    proc = f2loopy(command, "--kernel", "copy", "--kernel", "scale", "-I", ".", "streams.f90",
                   cwd=tmp_path)
    assert proc.returncode == 2
    assert ("given 2 times (copy, scale); this command takes one kernel: run it once per "
            "kernel") in proc.stderr
