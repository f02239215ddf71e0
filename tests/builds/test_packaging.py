"""What an installation ships (issue 17): runtime/ and transforms/ inside the
wheel as f2loopy/_data/, `f2loopy --cmake-dir`, `f2loopy recipes`.  CI also
builds the wheel, installs it into a fresh virtual environment and builds
samples/heat_app against it (scripts/ci_builds.sh)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import f2loopy.resources as resources
from f2loopy.cli_tools import describe_recipe
from cli_util import f2loopy     # the command in this process

ROOT = Path(__file__).resolve().parents[2]


def installed_f2loopy(*args, cwd, env):
    """The command of the package built into *env*'s PYTHONPATH (a child)."""
    return subprocess.run([sys.executable, "-m", "f2loopy.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def test_cmake_dir_holds_the_package_configuration():
    proc = f2loopy("--cmake-dir")
    assert proc.returncode == 0, proc.stderr
    d = Path(proc.stdout.strip())
    assert (d / "f2loopyConfig.cmake").is_file() and (d / "F2Loopy.cmake").is_file()
    assert d == resources.cmake_dir() == ROOT / "runtime"


def test_recipes_lists_names_summaries_and_options():
    proc = f2loopy("recipes")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("auto           auto: parallelise a kernel that has no script")
    assert lines[1].strip() == ("options: tile=None, tile1=None, prefetch=None, axis1=None, "
                                "style=None, group=None, launches=None, columns='scc', "
                                "block=128, assume=None, fix=None, specialize=True, "
                                "kcache=True, version='blocks', reduction_groups=None, fuse=True")
    assert lines[2].startswith("cpu_vectorize  CPU vectorizing:")
    assert "gpu_tiling     GPU tiling: spread loops over the OpenCL grid" in lines[4]
    assert lines[5].strip() == "options: inames=None, tile=None"
    full = f2loopy("recipes", "gpu_tiling")
    assert full.returncode == 0 and "``tile``" in full.stdout and "options: inames=None" \
        in full.stdout
    missing = f2loopy("recipes", "gpu_tilling\x1b[31m")
    assert missing.returncode == 1 and "\x1b" not in missing.stderr
    assert ("no recipe named 'gpu_tilling\\x1b[31m' (recipes: auto, cpu_vectorize, "
            "gpu_tiling, scc)") in missing.stderr


def test_recipes_are_described_without_running_them(tmp_path):
    sentinel = tmp_path / "ran"
    text = (f'"""Sets things up.\n\nMore."""\nopen({str(sentinel)!r}, "w")\n'
            'OPTIONS = dict(a=1)\n')
    info = describe_recipe("r", tmp_path / "r.py", text)
    assert info.summary == "Sets things up." and info.options is None
    assert not sentinel.exists()
    assert describe_recipe("r", "r.py", 'OPTIONS = {"a": (1, 2)}\n').options == {"a": (1, 2)}
    assert describe_recipe("r", "r.py", "def (:\n").summary == "(cannot be parsed)"


def test_the_package_copy_wins_over_a_folder_beside_the_package(tmp_path, monkeypatch):
    assert resources.data_dir("transforms") == ROOT / "transforms"       # a checkout
    (tmp_path / "transforms").mkdir()
    monkeypatch.setattr(resources, "DATA_DIR", tmp_path)
    assert resources.transforms_dir() == tmp_path / "transforms"
    assert resources.runtime_dir() == ROOT / "runtime"


@pytest.mark.usefixtures("python_process")
def test_the_build_step_copies_runtime_and_recipes_into_the_package(tmp_path):
    """setup.py's build_py (as a wheel build runs it), then the built package
    finds its own copies and its recipes."""
    lib = tmp_path / "lib"
    proc = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib",
                           str(lib)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    data = lib / "f2loopy" / "_data"
    for name in ("F2Loopy.cmake", "f2loopyConfig.cmake", "f2loopy_runtime.c",
                 "f2loopy_runtime.f90", "f2loopy_runtime.h"):
        assert (data / "runtime" / name).is_file(), name
    assert not (data / "runtime" / "tests").exists()
    assert sorted(p.name for p in (data / "transforms").glob("*.py")) == [
        "auto.py", "cpu_vectorize.py", "gpu_tiling.py", "scc.py"]
    env = dict(os.environ, PYTHONPATH=str(lib))
    out = subprocess.run([sys.executable, "-c",
                          "import f2loopy.resources as r, f2loopy.directives.recipes as d;"
                          "print(r.cmake_dir()); print(d.RECIPE_DIR)"],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.stdout.split() == [str(data / "runtime"), str(data / "transforms")], out.stderr
    proc = installed_f2loopy("recipes", cwd=tmp_path, env=env)
    assert proc.returncode == 0 and "gpu_tiling" in proc.stdout, proc.stderr
