"""The command behaves like a compiler (issue 17): bad option values are usage
errors (exit 2), every input error exits 1, checks come before long runs, and
messages name what the user knows (the output, the source)."""

import importlib.util
import subprocess
from pathlib import Path

import pytest
from cli_util import f2loopy     # the command in this process

ROOT = Path(__file__).resolve().parents[2]
SAXPY = (ROOT / "samples" / "saxpy.f90").read_text()




@pytest.fixture
def saxpy(tmp_path):
    p = tmp_path / "saxpy.f90"
    p.write_text(SAXPY)
    return p


@pytest.mark.parametrize("args, message", [
    (["--size", "n=abc"], "Invalid value for '--size': 'abc' is not an integer (for n)"),
    (["--size", "n"], "Invalid value for '--size': expected NAME=VALUE, got 'n'"),
    (["--bandwidth", "fast"], "Invalid value for --bandwidth: expected GB/s or 'measure', "
                              "got 'fast'"),
    (["--bandwidth", "-3"], "expected GB/s or 'measure'"),
    (["--json", "--csv"], "--json and --csv cannot be used together"),
])
def test_bad_bench_options_are_usage_errors(saxpy, args, message):
    proc = f2loopy("bench", *args, str(saxpy))
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "internal error" not in proc.stderr
    assert "bench:" not in proc.stderr                  # nothing was run


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is not None,
                    reason="matplotlib is installed")
def test_plot_without_matplotlib_stops_before_running(saxpy):
    proc = f2loopy("bench", "--plot", "p.png", str(saxpy))
    assert proc.returncode == 1
    assert proc.stderr == ("f2loopy: error: --plot needs matplotlib (pip install matplotlib); "
                           "nothing was run\n")


@pytest.mark.parametrize("command", ["translate", "show", "check", "bench"])
def test_every_input_error_exits_1(tmp_path, command):
    for bad, why in ((tmp_path, "Is a directory"), (tmp_path / "nope.f90",
                                                    "No such file or directory")):
        proc = f2loopy(command, str(bad))
        assert proc.returncode == 1, (command, bad, proc.stderr)
        assert f"cannot read {bad}: {why}" in proc.stderr and "Traceback" not in proc.stderr


def test_a_write_error_names_the_output(saxpy):
    (saxpy.parent / "saxpy_cl.py").mkdir()
    proc = f2loopy("translate", str(saxpy))
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"f2loopy: error: cannot write {saxpy.parent / 'saxpy_cl.py'}" \
        ": Is a directory"
    assert sorted(p.name for p in saxpy.parent.iterdir()) == ["saxpy.f90", "saxpy_cl.py"]


def test_a_second_glob_notes_the_generated_glue_once(tmp_path):
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.f90").write_text(SAXPY.replace("saxpy", f"saxpy_{name}"))
    assert f2loopy("translate", *sorted(str(p) for p in tmp_path.glob("*.f90"))).returncode == 0
    files = sorted(str(p) for p in tmp_path.glob("*.f90"))
    assert len(files) == 6                              # a_cl.f90 ... among them
    proc = f2loopy("translate", *files)
    assert proc.returncode == 0
    assert proc.stderr == (f"f2loopy: note: skipping 3 files f2loopy generated "
                           f"({tmp_path / 'a_cl.f90'}, ...)\n")


@pytest.mark.usefixtures("cmake", "gfortran")
def test_cmake_names_two_sources_that_would_share_outputs(tmp_path):
    (tmp_path / "sub").mkdir()
    for p in (tmp_path / "heat.f90", tmp_path / "sub" / "heat.f90"):
        p.write_text(SAXPY)
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(dup LANGUAGES C Fortran)\n"
        f'include("{ROOT / "runtime" / "F2Loopy.cmake"}")\n'
        "add_library(k STATIC heat.f90)\n"
        "f2loopy_add_kernels(k SOURCES heat.f90 sub/heat.f90)\n")
    proc = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    text = " ".join(proc.stderr.split())
    assert (f"f2loopy_add_kernels(k): sub/heat.f90 and {tmp_path / 'heat.f90'} would both be "
            "translated to heat.cl, heat_cl.f90, heat_cl.c and heat_cl.py in") in text
