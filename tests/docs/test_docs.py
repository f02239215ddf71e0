"""The documentation (docs/, issue 28): it builds without a warning, its
doctests pass, and the commands and files its examples show run: the console
blocks of the guide pages, the tutorial's steps (docs/tutorial/steps.sh) and
every cookbook file under `f2loopy check`.  The manual page is the one the CLI
generates."""

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
needs_gfortran = pytest.mark.usefixtures("gfortran")


def _sphinx(builder, out):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    return subprocess.run([sys.executable, "-m", "sphinx", "-q", "-W", "--keep-going", "-b",
                           builder, str(DOCS), str(out)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow          # a Sphinx build: some 20 s
def test_html_builds_without_warnings(tmp_path):
    proc = _sphinx("html", tmp_path / "html")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not proc.stderr.strip(), proc.stderr
    commands = "".join(p.read_text() for p in (tmp_path / "html" / "commands").glob("*.html"))
    commands += (tmp_path / "html" / "commands.html").read_text()
    assert len(list((tmp_path / "html" / "commands").glob("*.html"))) == 8   # a page each
    for option in ("--depfile", "--fflags", "--transform", "F2LOOPY_PROFILE"):
        assert option in commands, option          # generated from the CLI itself
    assert "add_global_barriers_between_nests" in (tmp_path / "html" / "api.html").read_text()


@pytest.mark.opencl
@pytest.mark.slow
def test_doctests_pass(tmp_path):
    pytest.importorskip("pyopencl")
    proc = _sphinx("doctest", tmp_path / "doctest")
    report = (tmp_path / "doctest" / "output.txt").read_text() if \
        (tmp_path / "doctest" / "output.txt").exists() else ""
    assert proc.returncode == 0, proc.stdout + proc.stderr + report
    found = re.search(r"(\d+) tests\s+0 failures in tests", report)
    assert found and int(found.group(1)) >= 5, report


def _commands_bin(tmp_path) -> Path:
    """A folder with ``f2loopy`` and ``f2loopyfc`` running this checkout's code."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, module in (("f2loopy", "f2loopy.cli"), ("f2loopyfc", "f2loopy.wrapper")):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\nexec {sys.executable} -m {module} \"$@\"\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def _env(tmp_path):
    return {**os.environ, "PYTHONPATH": str(ROOT),
            "PATH": f"{_commands_bin(tmp_path)}{os.pathsep}{os.environ.get('PATH', '')}"}


def console_commands(page: Path) -> list[str]:
    """The ``$ `` lines of the page's console blocks, in order."""
    out, inside = [], False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```console"
            continue
        if inside and line.startswith("$ "):
            out.append(line[2:])
    return out


@pytest.mark.opencl
def test_getting_started_commands_run(tmp_path):
    pytest.importorskip("pyopencl")
    commands = console_commands(DOCS / "getting-started.md")
    assert commands[0] == "f2loopy samples examples"
    proc = subprocess.run(["bash", "-c", " && ".join(["set -e"] + commands)], cwd=tmp_path,
                          capture_output=True, text=True, env=_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "saxpy on OpenCL, n = 1000000: max |error| vs numpy" in proc.stdout


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.usefixtures("make")
def test_tutorial_steps_run_and_match_the_fortran(tmp_path):
    pytest.importorskip("pyopencl")
    # as a pip user: the page's commands get the files, then steps.sh runs in their folder
    commands = console_commands(DOCS / "tutorial.md")
    assert commands == ["f2loopy samples examples", "cd examples/tutorial"]
    work = tmp_path / "examples" / "tutorial"
    proc = subprocess.run(["bash", "-c", " && ".join(["set -e"] + commands + ["bash steps.sh"])],
                          cwd=tmp_path, capture_output=True, text=True, env=_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fortran = (work / "fortran.txt").read_text().split()
    opencl = (work / "opencl.txt").read_text().split()
    assert len(fortran) == len(opencl) == 19          # 4 diagnostics, the final total
    for a, b in zip(fortran, opencl, strict=True):
        if a == b:
            continue
        assert float(b) == pytest.approx(float(a), rel=1e-12)
    assert proc.stdout.count("ok: 1 output(s) of 1 kernel(s) match the original Fortran") == 2
    assert "last level vs gfortran" in proc.stdout          # bench --kernel diffuse
    # the profile the tutorial shows: the kernels, and the residency's transfers apart
    assert "f2loopy profile (F2LOOPY_PROFILE=1), per kernel:" in proc.stderr
    rows = {line.split()[0]: line.split()[1] for line in proc.stderr.splitlines()
            if line.startswith(("diffuse ", "decay "))}
    assert rows == {"diffuse": "400", "decay": "200"}


COOKBOOK = sorted(p.name for p in (DOCS / "cookbook").glob("*.f90"))


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("name", COOKBOOK)
def test_cookbook_recipe_checks(name, tmp_path):
    pytest.importorskip("pyopencl")
    proc = subprocess.run([sys.executable, "-m", "f2loopy.cli", "check", str(
        DOCS / "cookbook" / name)], capture_output=True, text=True, env=_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "match the original Fortran" in proc.stdout


def test_cookbook_page_shows_every_file_and_its_commands_exist():
    page = (DOCS / "cookbook.md").read_text()
    assert COOKBOOK == ["barriers.f90", "column.f90", "reduction.f90", "stencil.f90",
                        "timeloop.f90"]
    for name in COOKBOOK:
        assert f"```{{literalinclude}} cookbook/{name}" in page, name
    first, *checks = console_commands(DOCS / "cookbook.md")
    assert first == "f2loopy samples examples" and checks    # it copies docs/cookbook/
    for command in checks:
        assert command.startswith("f2loopy check examples/cookbook/")
        assert (DOCS / "cookbook" / command.split()[-1].split("/", 2)[2]).is_file()


def test_manual_page_is_generated_from_the_cli():
    from f2loopy.manpage import render
    assert (ROOT / "man" / "f2loopy.1").read_text() == render(), \
        "regenerate it: python3 -m f2loopy.manpage > man/f2loopy.1"
    page = render()
    for command in ("translate", "show", "check", "bench", "tune", "recipes", "samples"):
        assert f".SS f2loopy {command}" in page
    assert "F2LOOPY_DEVICE=gpu|cpu|accelerator" in page


def _readme_section(title):
    text = (ROOT / "README.md").read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def _fenced(text, language):
    return [m.group(1) for m in re.finditer(rf"```{language}\n(.*?)```", text, re.S)]


def test_readme_keeps_the_set_up_commands_and_links_to_the_docs():
    setup = _readme_section("Set-up on a fresh machine")
    assert _fenced(setup, "sh")[:2] == [
        "bash scripts/setup.sh && . scripts/env.sh && f2loopy translate samples/saxpy.f90 && "
        "python3 samples/saxpy_demo.py\n", ". scripts/env.sh && python3 -m pytest -q tests\n"]
    links = re.findall(r"\]\((docs/[^)]+)\)", _readme_section("Documentation"))
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).is_file(), link


@needs_gfortran
@pytest.mark.opencl
def test_readme_quick_start_runs(tmp_path):
    pytest.importorskip("pyopencl")
    shutil.copytree(ROOT / "samples", tmp_path / "samples",
                    ignore=shutil.ignore_patterns("*_cl.py", "*.cl", "*_cl.f90", "*_cl.c"))
    quick = _readme_section("Quick start")
    (commands,) = _fenced(quick, "sh")
    for line in commands.splitlines():
        command = line.split("  #")[0].strip()
        proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True,
                              text=True, env=_env(tmp_path))
        assert proc.returncode == 0, (command, proc.stdout, proc.stderr)
    (python,) = _fenced(quick, "python")
    namespace: dict = {}
    sys.path.insert(0, str(tmp_path / "samples"))
    try:
        exec(compile(python, "README.md", "exec"), namespace)
    finally:
        sys.path.remove(str(tmp_path / "samples"))
        sys.modules.pop("saxpy_cl", None)
    assert namespace["y"].tolist() == [2.0 * i + 1 for i in range(10)]
