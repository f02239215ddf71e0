"""Issue 29, item 1: code in the current folder never runs.

``f2loopy`` and ``f2loopyfc`` re-execute themselves once with a fixed hash
seed.  A downloaded project that ships ``click.py``, ``numpy.py``,
``shlex.py`` (or a whole ``f2loopy/`` package) beside its Fortran must not
get them imported by that re-execution, by any command, nor by the processes
f2loopy starts afterwards (sandbox children, check's runners, ``-j``
workers).

The commands run as the console scripts do: a script file in a ``bin``
folder of its own (so the first process's ``sys.path[0]`` is that folder,
not the project), without ``PYTHONHASHSEED`` in the environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: every test starts a process of its own (what a new process imports, and from where)
pytestmark = pytest.mark.usefixtures("python_process")

ROOT = Path(__file__).resolve().parents[2]

#: modules a project could plant: imported by the command line (click,
#: shlex, json, ...), the translator (numpy, islpy, pymbolic, fparser), the
#: sandbox and the wrapper
PLANTED = ("click", "numpy", "shlex", "json", "islpy", "pymbolic", "fparser", "tempfile",
           "subprocess", "hashlib", "dataclasses", "typing_extensions", "multiprocessing",
           "pyopencl", "concurrent", "argparse", "textwrap", "ast")
PAYLOAD = "open(__file__ + '.RAN', 'w').close()\n"

KERNEL = """\
subroutine saxpy(n, a, x, y)
  implicit none
  integer, intent(in) :: n
  real, intent(in) :: a
  real, intent(in) :: x(n)
  real, intent(inout) :: y(n)
  integer :: i
  do i = 1, n
    y(i) = a * x(i) + y(i)
  end do
end subroutine saxpy
!$loopy begin
! knl, = parse_fortran(SOURCE, FILENAME)
! RESULT = [split_iname(knl, "i", 4, outer_tag="g.0", inner_tag="l.0")]
!$loopy end
"""


def _project(tmp_path: Path) -> Path:
    proj = tmp_path / "downloaded"
    proj.mkdir()
    (proj / "saxpy.f90").write_text(KERNEL)
    (proj / "other.f90").write_text(KERNEL.replace("saxpy", "saxpz"))
    # no script: translated without the re-execution (f2loopy.cli._runs_no_script)
    (proj / "plain.f90").write_text(KERNEL.split("!$loopy")[0].replace("saxpy", "plain"))
    for name in PLANTED:
        (proj / f"{name}.py").write_text(PAYLOAD)
    pkg = proj / "f2loopy"          # the package itself, shadowed
    pkg.mkdir()
    (pkg / "__init__.py").write_text(PAYLOAD)
    (pkg / "cli.py").write_text(PAYLOAD)
    (pkg / "wrapper.py").write_text(PAYLOAD)
    return proj


def _console_script(tmp_path: Path, module: str, function: str) -> Path:
    """What pip writes for a ``[project.scripts]`` entry."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    script = bindir / function
    script.write_text(f"import sys\nfrom {module} import {function}\n"
                      f"sys.exit({function}())\n")
    return script


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _ran(proj: Path) -> list[str]:
    return sorted(str(p.relative_to(proj)) for p in proj.rglob("*.RAN"))


def _run(cmd, proj, timeout=300):
    return subprocess.run([str(c) for c in cmd], cwd=proj, env=_env(), capture_output=True,
                          text=True, timeout=timeout)


COMMANDS = [
    ["translate", "-j", "2", "saxpy.f90", "other.f90"],
    ["translate", "--depfile", "saxpy.d", "-o", "out", "saxpy.f90"],
    ["translate", "-j", "2", "plain.f90"],
    ["show", "saxpy.f90"],
    ["--version"],
    ["--cmake-dir"],
    ["recipes"],
    ["check", "--help"],
    ["bench", "--help"],
    ["tune", "--help"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: "-".join(a).replace("/", "_"))
def test_f2loopy_imports_nothing_from_the_current_folder(tmp_path, args):
    proj = _project(tmp_path)
    script = _console_script(tmp_path, "f2loopy.cli", "entry")
    proc = _run([sys.executable, script, *args], proj)
    assert _ran(proj) == [], proc.stderr
    assert proc.returncode == 0, proc.stderr


def test_reexecuted_process_has_no_current_folder_on_its_path(tmp_path):
    """The re-executed process (and so every child forked from it) has
    neither '' nor the current folder on ``sys.path``."""
    proj = tmp_path / "p"
    proj.mkdir()
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "probe_mod.py").write_text("import sys\n"
                                      "def main():\n"
                                      "    print('\\n'.join(sys.path))\n")
    probe = tmp_path / "probe.py"
    probe.write_text("from f2loopy.reexec import reexecute\n"
                     "reexecute('probe_mod', 'main')\n"
                     "raise SystemExit('not re-executed')\n")
    env = _env()
    env["PYTHONPATH"] = f"{ROOT}:{lib}"
    proc = subprocess.run([sys.executable, probe], cwd=proj, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    path = proc.stdout.splitlines()
    assert str(lib) in path, proc.stderr
    assert "" not in path and str(proj) not in path and "." not in path


@pytest.mark.gfortran
@pytest.mark.usefixtures("gfortran")
def test_check_runs_nothing_from_the_current_folder(tmp_path):
    """``check`` compiles and runs the original in forked children and runs
    the kernels on OpenCL: none of them imports the planted modules."""
    pytest.importorskip("pyopencl")
    proj = _project(tmp_path)
    script = _console_script(tmp_path, "f2loopy.cli", "entry")
    proc = _run([sys.executable, script, "check", "--size", "n=37", "saxpy.f90"], proj)
    assert _ran(proj) == [], proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_wrapper_help_imports_nothing_from_the_current_folder(tmp_path):
    proj = _project(tmp_path)
    script = _console_script(tmp_path, "f2loopy.wrapper", "main")
    proc = _run([sys.executable, script, "--help"], proj)
    assert _ran(proj) == [], proc.stderr
    assert proc.returncode == 0, proc.stderr


@pytest.mark.gfortran
@pytest.mark.usefixtures("gfortran", "gcc")
def test_wrapper_compile_imports_nothing_from_the_current_folder(tmp_path):
    proj = _project(tmp_path)
    script = _console_script(tmp_path, "f2loopy.wrapper", "main")
    proc = _run([sys.executable, script, "gfortran", "-c", "saxpy.f90"], proj)
    assert _ran(proj) == [], proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert (proj / "saxpy.o").is_file()


def test_spawned_workers_need_a_safe_path():
    """Where ``-j`` workers cannot be forked, they are spawned (``python -c``,
    which puts the current folder first) only when the interpreter runs with
    a safe path; otherwise the files are translated one after the other."""
    from f2loopy import build
    ctx = build._pool_context()
    if sys.platform.startswith("linux"):
        assert ctx is not None and ctx.get_start_method() == "fork"
    safe = bool(getattr(sys.flags, "safe_path", False))
    orig = build._fork_available
    try:
        build._fork_available = lambda: False
        ctx = build._pool_context()
        assert (ctx is not None) == safe
    finally:
        build._fork_available = orig
