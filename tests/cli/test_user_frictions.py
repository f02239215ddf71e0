"""What a new user tripped over (issue 28, frictions 1-9): each is gone, and
stays gone.  The documentation's own examples run in test_docs.py."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_util import f2loopy

ROOT = Path(__file__).resolve().parents[2]
needs_gfortran = pytest.mark.usefixtures("gfortran")

SCALE = """subroutine scale(n, x)
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = 2 * x(i)
  end do
end subroutine
"""
TUNABLE = SCALE + """!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! RESULT = split_iname(k, "i", tunable("tile", [4, 8]), outer_tag="g.0", inner_tag="l.0")
!$loopy end
"""
MAIN = """program p
  use scale_cl_mod
  real x(4)
  x = 1
  call scale_cl(4, x)
  print '(4f5.1)', x
end program
"""


def run(module, *args, cwd=None, env=None):
    if module == "f2loopy.cli":         # the command in this process (cli_util.py)
        return f2loopy(*args, cwd=cwd, env=env)
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=cwd,
                          capture_output=True, text=True,
                          env=None if env is None else {**os.environ, **env})


# {{{ 1. a tuning record is an input of the build (depfile, CMake's DEPFILE, the wrapper)

@pytest.mark.usefixtures("sandbox_process")
def test_depfile_names_the_tuning_record_before_it_exists(tmp_path):
    src = tmp_path / "scale.f90"
    src.write_text(TUNABLE)
    proc = run("f2loopy.cli", "translate", "--depfile", "scale.d", "scale.f90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rules = (tmp_path / "scale.d").read_text()
    # a prerequisite of the outputs, with an empty rule: make does not ask how to make it
    assert "scale.f90.tune.json" in rules.split("\n\n")[0]
    assert "\nscale.f90.tune.json:\n" in rules
    # Make remakes what depends on a missing file at every build: the record is
    # created empty, and a translation without a depfile leaves it alone
    from f2loopy.tuning_record import read_record
    assert read_record(tmp_path / "scale.f90.tune.json") == []
    (tmp_path / "scale.f90.tune.json").unlink()
    assert run("f2loopy.cli", "translate", "scale.f90", cwd=tmp_path).returncode == 0
    assert not (tmp_path / "scale.f90.tune.json").exists()


@pytest.mark.usefixtures("sandbox_process")
def test_depfile_has_a_record_only_where_tunables_are_declared(tmp_path):
    for folder in ("auto", "plain"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "scale.f90").write_text(SCALE)
    proc = run("f2loopy.cli", "translate", "--depfile", "scale.d", "--transform", "auto",
               "scale.f90", cwd=tmp_path / "auto")
    assert proc.returncode == 0, proc.stderr
    # the auto recipe declares tunables: its record is an input too
    assert "scale.f90.tune.json" in (tmp_path / "auto" / "scale.d").read_text()
    proc = run("f2loopy.cli", "translate", "--depfile", "scale.d", "scale.f90",
               cwd=tmp_path / "plain")
    assert "tune.json" not in (tmp_path / "plain" / "scale.d").read_text()
    assert not (tmp_path / "plain" / "scale.f90.tune.json").exists()


@needs_gfortran
@pytest.mark.usefixtures("make")
def test_make_rebuilds_when_the_tuning_record_appears(tmp_path):
    (tmp_path / "scale.f90").write_text(TUNABLE)
    (tmp_path / "Makefile").write_text(
        f"scale.cl &: scale.f90\n\t{sys.executable} -m f2loopy.cli translate --touch-outputs "
        "--depfile scale.d scale.f90\n-include scale.d\n")
    assert subprocess.run(["make", "-s"], cwd=tmp_path).returncode == 0
    assert subprocess.run(["make", "-q"], cwd=tmp_path).returncode == 0    # settled
    record = tmp_path / "scale.f90.tune.json"
    # newer than every file make saw (a slow translation under load wrote the
    # outputs after the record was first stamped), as 'f2loopy tune' writing it is
    later = max(path.stat().st_mtime for path in tmp_path.iterdir()) + 10
    os.utime(record, (later, later))
    assert subprocess.run(["make", "-q"], cwd=tmp_path).returncode == 1   # must translate


@needs_gfortran
def test_wrapper_adds_the_translation_inputs_to_the_compilers_depfile(tmp_path):
    (tmp_path / "scale.f90").write_text(TUNABLE)
    proc = run("f2loopy.wrapper", "gfortran", "-cpp", "-MD", "-c", "scale.f90", "-o", "scale.o",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rules = (tmp_path / "scale.d").read_text()      # beside the object, as gfortran puts it
    assert "scale.o: scale.f90 \\\n  scale.f90.tune.json" in rules
    assert "\nscale.f90.tune.json:\n" in rules

# }}}


# {{{ 2. f2loopyfc with --transform translates files without a !$loopy block

def test_wrapper_chooses_files_with_procedures_when_a_recipe_is_given(tmp_path, monkeypatch):
    from f2loopy.wrapper import defines_procedures, wants_translation
    kernel = tmp_path / "k.f90"
    kernel.write_text(SCALE)
    program = tmp_path / "main.f90"
    program.write_text(MAIN)
    module = tmp_path / "m.f90"
    module.write_text("module m\n  integer, parameter :: dp = 8\nend module\n")
    function = tmp_path / "f.f90"
    function.write_text("pure real(8) function f(x)\n  real(8) x\n  f = x\nend function\n")
    assert defines_procedures(kernel) and defines_procedures(function)
    assert not defines_procedures(program) and not defines_procedures(module)
    monkeypatch.delenv("F2LOOPYFC_OPTIONS", raising=False)
    assert not wants_translation(kernel)
    monkeypatch.setenv("F2LOOPYFC_OPTIONS", "--transform auto")
    assert wants_translation(kernel) and not wants_translation(program)


@needs_gfortran
@pytest.mark.skipif(not os.path.exists("/etc/OpenCL/vendors"), reason="needs OpenCL")
def test_wrapper_builds_a_program_with_transform_auto(tmp_path):
    (tmp_path / "k.f90").write_text(SCALE)
    (tmp_path / "main.f90").write_text(MAIN)
    env = {"F2LOOPYFC_OPTIONS": "--transform auto"}
    for args in (["-c", "k.f90", "-o", "k.o"], ["-c", "main.f90", "-o", "main.o"],
                 ["main.o", "k.o", "-o", "app"]):
        proc = run("f2loopy.wrapper", "gfortran", *args, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
    out = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True)
    assert out.stdout.split() == ["2.0"] * 4
    # friction 4 in the C runtime: a device type, a device's name alone
    for spec in ("cpu", "CPU", "pthread"):
        out = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True,
                             env={**os.environ, "F2LOOPY_DEVICE": spec, "F2LOOPY_VERBOSE": "1"})
        assert out.stdout.split() == ["2.0"] * 4, (spec, out.stderr)
    if not _has_accelerator():
        out = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True,
                             env={**os.environ, "F2LOOPY_DEVICE": "accelerator"})
        assert out.returncode != 0
        assert "F2LOOPY_DEVICE=accelerator: no OpenCL device of type accelerator" in out.stderr


def _has_accelerator():
    cl = pytest.importorskip("pyopencl")
    return any(p.get_devices(device_type=cl.device_type.ACCELERATOR)
               for p in cl.get_platforms()
               if _devices_or_none(p, cl) is not None)


def _devices_or_none(platform, cl):
    try:
        return platform.get_devices()
    except cl.Error:
        return None

# }}}


# {{{ 3. recipe names and options: did you mean, and checked values

def test_misspelt_recipe_gets_a_suggestion(tmp_path):
    (tmp_path / "scale.f90").write_text(SCALE)
    proc = run("f2loopy.cli", "translate", "--transform", "gpu_tilling", "scale.f90",
               cwd=tmp_path)
    assert proc.returncode == 1
    assert "unknown transformation recipe 'gpu_tilling' (did you mean 'gpu_tiling'?" in proc.stderr


@pytest.mark.usefixtures("sandbox_process")
def test_misspelt_recipe_option_is_a_warning(tmp_path):
    (tmp_path / "scale.f90").write_text(SCALE)
    proc = run("f2loopy.cli", "translate", "--transform", "gpu_tiling", "-D", "tiles=8",
               "scale.f90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ("scale.f90: warning: -D tiles is not an option of recipe 'gpu_tiling' (did you "
            "mean 'tile'? options: inames, tile)") in proc.stderr


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("recipe, define, message", [
    ("gpu_tiling", "tile=big", "recipe 'gpu_tiling': option 'tile' is a positive integer "
     "(-D tile=16) or a tuple of positive integers (-D tile=(16,8)), not 'big' (given with -D)"),
    ("cpu_vectorize", "width=wide", "recipe 'cpu_vectorize': option 'width' is a positive "
     "integer (-D width=16), not 'wide' (given with -D)"),
    ("auto", "tile=big", "recipe 'auto': option 'tile' is a positive integer (-D tile=16), "
     "not 'big' (given with -D)"),
    ("auto", "block=0", "recipe 'auto': option 'block' is a positive integer (-D block=16), "
     "not 0 (given with -D)"),
    ("auto", "group=7.5", "recipe 'auto': option 'group' is a positive integer (-D group=16) "
     "or 'none', not 7.5 (given with -D)"),
    ("auto", "prefetch=maybe", "recipe 'auto': option 'prefetch' is true or false "
     "(-D prefetch=false), not 'maybe' (given with -D)"),
    ("scc", "demote=3", "recipe 'scc': option 'demote' is true or false (-D demote=false), "
     "not 3 (given with -D)"),
])
def test_recipe_option_of_the_wrong_type_says_what_it_takes(tmp_path, recipe, define, message):
    """Checked from the recipe's OPTION_TYPES before it runs: the error names the option
    and what it takes, and points into no file of the installed package."""
    (tmp_path / "scale.f90").write_text(SCALE)
    proc = run("f2loopy.cli", "translate", "--transform", recipe, "-D", define,
               "scale.f90", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == "f2loopy: error: " + message, proc.stderr
    assert "transforms/" not in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "scale.cl").exists()


def test_every_recipe_types_every_option():
    from f2loopy.directives.recipe_options import FORMS
    for path in sorted((ROOT / "transforms").glob("[a-z]*.py")):
        tree = ast.parse(path.read_text())
        found = {t.id: ast.literal_eval(node.value) for node in tree.body
                 if isinstance(node, ast.Assign) for t in node.targets
                 if isinstance(t, ast.Name) and t.id in ("OPTIONS", "OPTION_TYPES")}
        assert set(found["OPTION_TYPES"]) == set(found["OPTIONS"]), path.name
        for forms in found["OPTION_TYPES"].values():
            for form in forms if isinstance(forms, tuple) else (forms,):
                assert form in FORMS or form.isidentifier(), (path.name, form)


@pytest.mark.usefixtures("sandbox_process")
def test_recipe_option_types_hold_for_apply_recipe_in_a_script(tmp_path):
    (tmp_path / "scale.f90").write_text(SCALE + """!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! RESULT = apply_recipe("auto", k, tile=-2)
!$loopy end
""")
    proc = run("f2loopy.cli", "translate", "scale.f90", cwd=tmp_path)
    assert proc.returncode == 1
    assert ("error: recipe 'auto': option 'tile' is a positive integer (-D tile=16), "
            "not -2") in proc.stderr
    assert "(given with -D)" not in proc.stderr


# }}}


# {{{ 4. the Python glue without OpenCL, and F2LOOPY_DEVICE=gpu|cpu|NAME

DRIVER = """
import numpy as np, scale_cl
x = np.ones(4, dtype=np.float32)
try:
    scale_cl.scale(4, x)
except RuntimeError as exc:
    print("error:", exc)
else:
    print(*x)
"""


@pytest.mark.opencl
def test_python_glue_device_selection(tmp_path):
    pytest.importorskip("pyopencl")
    (tmp_path / "scale.f90").write_text(SCALE)
    assert run("f2loopy.cli", "translate", "scale.f90", cwd=tmp_path).returncode == 0
    (tmp_path / "driver.py").write_text(DRIVER)

    def drive(**env):
        proc = subprocess.run([sys.executable, "driver.py"], cwd=tmp_path, capture_output=True,
                              text=True, env={**os.environ, "F2LOOPY_VERBOSE": "1", **env})
        assert proc.returncode == 0, proc.stderr
        return proc
    assert drive(F2LOOPY_DEVICE="cpu").stdout.split() == ["2.0"] * 4
    proc = drive(F2LOOPY_DEVICE="pthread")          # PoCL's CPU device, by its name alone
    assert proc.stdout.split() == ["2.0"] * 4
    assert "(chosen by F2LOOPY_DEVICE=pthread)" in proc.stderr
    if not _has_accelerator():
        assert drive(F2LOOPY_DEVICE="accelerator").stdout.startswith(
            "error: F2LOOPY_DEVICE=accelerator: no OpenCL device of type accelerator")
    # no OpenCL platform at all: the runtime's message, not pyopencl's traceback
    proc = drive(OCL_ICD_VENDORS=str(tmp_path / "none"), OCL_ICD_FILENAMES="")
    assert proc.stdout.strip() == (
        "error: no OpenCL platform found (install an OpenCL driver, e.g. Debian's "
        "pocl-opencl-icd, and check /etc/OpenCL/vendors)")


def test_help_documents_the_environment():
    proc = run("f2loopy.cli", "--help")
    assert "F2LOOPY_DEVICE" in proc.stdout and "gpu" in proc.stdout
    assert "F2LOOPY_PROFILE" in proc.stdout

# }}}


# {{{ 8. scripts/setup.sh on a system Python marked externally managed (PEP 668)

def _setup_python():
    import importlib.util
    spec = importlib.util.spec_from_file_location("setup_python",
                                                  ROOT / "scripts" / "setup_python.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_setup_uses_a_venv_only_for_an_externally_managed_python(tmp_path):
    needs_venv = _setup_python().needs_venv
    stdlib = tmp_path / "lib"
    stdlib.mkdir()
    assert not needs_venv("/usr", "/usr", str(stdlib))
    (stdlib / "EXTERNALLY-MANAGED").write_text("[externally-managed]\n")
    assert needs_venv("/usr", "/usr", str(stdlib))
    assert not needs_venv(str(tmp_path / ".venv"), "/usr", str(stdlib))   # inside a venv
    script = (ROOT / "scripts" / "setup.sh").read_text()
    # setup.sh asks it, installs with the interpreter it chose, and says so
    assert '"$(python3 scripts/setup_python.py)" = venv' in script
    assert "python3 -m venv .venv" in script and '"$python" -m pip install -q -e' in script
    assert ": > .venv/.f2loopy-setup" in script    # the mark scripts/env.sh activates


@pytest.mark.parametrize("shell", ["bash", "sh"])
@pytest.mark.usefixtures("python_process")
def test_env_script_activates_only_the_venv_setup_made(tmp_path, shell):
    """README's first command sources scripts/env.sh after setup.sh: with the .venv that
    setup.sh made (and marked) the shell's python3 and f2loopy are that venv's; without the
    mark, or outside a venv checkout, nothing changes; sourcing never ends the shell."""
    if shutil.which(shell) is None:
        pytest.skip(f"no {shell}")
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "env.sh", tmp_path / "scripts" / "env.sh")
    probe = "set -eu; . scripts/env.sh; command -v python3; echo still-here"
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}

    def which_python():
        proc = subprocess.run([shell, "-c", probe], cwd=tmp_path, capture_output=True,
                              text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.split()
        assert lines[-1] == "still-here"
        return lines[0]

    outside = which_python()
    assert not outside.startswith(str(tmp_path))
    venv = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / ".venv")],
                          capture_output=True, text=True)
    if venv.returncode != 0:
        pytest.skip("this Python cannot make a venv: " + venv.stderr[-200:])
    assert which_python() == outside                      # a .venv setup.sh did not make
    (tmp_path / ".venv" / ".f2loopy-setup").write_text("")
    assert which_python() == str(tmp_path / ".venv" / "bin" / "python3")


@pytest.mark.usefixtures("python_process")
def test_setup_python_answers_for_this_interpreter():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "setup_python.py")],
                          capture_output=True, text=True)
    assert proc.stdout.strip() in ("venv", "here")
    import sysconfig
    managed = os.path.isfile(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
    assert (proc.stdout.strip() == "venv") == (managed and sys.prefix == sys.base_prefix)

# }}}


# {{{ 9. the samples travel with the wheel: f2loopy samples DIR

def test_samples_command_copies_the_samples(tmp_path):
    proc = run("f2loopy.cli", "samples", tmp_path / "mine")
    assert proc.returncode == 0, proc.stderr
    mine = tmp_path / "mine"
    for name in ("saxpy.f90", "saxpy_demo.py", "heat_app/CMakeLists.txt",
                 "numa_volume/volume.f90"):
        assert (mine / name).is_file(), name
    # the documentation's tutorial and cookbook, for a user without a checkout
    for name in ("Makefile", "main.F90", "physics.f90", "steps.sh"):
        assert (mine / "tutorial" / name).read_text() == (ROOT / "docs" / "tutorial" / name
                                                          ).read_text(), name
    assert sorted(p.name for p in (mine / "cookbook").iterdir()) == sorted(
        p.name for p in (ROOT / "docs" / "cookbook").iterdir())
    assert not list(mine.rglob("*_cl.py")) and not list(mine.rglob("*.cl"))
    assert "next: cd " in proc.stdout
    again = run("f2loopy.cli", "samples", mine)          # never overwritten
    assert again.returncode == 2 and "exists and is not an empty folder" in again.stderr


@pytest.mark.usefixtures("python_process")
def test_the_build_step_puts_the_samples_into_the_package(tmp_path):
    lib = tmp_path / "lib"
    proc = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib",
                           str(lib)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    data = lib / "f2loopy" / "_data" / "samples"
    assert (data / "saxpy.f90").is_file() and (data / "heat_app" / "main.F90").is_file()
    assert not list(data.rglob("*_cl.py"))          # what translating in the checkout left
    env = {"PYTHONPATH": str(lib)}
    proc = run("f2loopy.cli", "samples", tmp_path / "copy", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "copy" / "saxpy.f90").read_text() == (ROOT / "samples" / "saxpy.f90"
                                                             ).read_text()
    # the wheel's copy of the tutorial and cookbook, not the checkout's, is used
    assert (lib / "f2loopy" / "_data" / "docs" / "tutorial" / "main.F90").is_file()
    assert (tmp_path / "copy" / "tutorial" / "physics.f90").read_text() == (
        ROOT / "docs" / "tutorial" / "physics.f90").read_text()
    assert (tmp_path / "copy" / "cookbook" / "stencil.f90").is_file()

# }}}


# {{{ 5. bench times the script's result too, takes --transform and -I; tune takes -I

CHECKPOINTED = SCALE + """!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! checkpoint("plain")
! RESULT = split_iname(k, "i", 4, outer_tag="g.0", inner_tag="l.0")
!$loopy end
"""


def test_openmp_threads_of_the_reference():
    from f2loopy.bench.run import openmp_threads
    assert openmp_threads(SCALE, {"OMP_NUM_THREADS": "8"}) == (
        1, "the file has no !$omp directive")
    omp = SCALE.replace("  do i", "  !$omp parallel do\n  do i")
    assert openmp_threads(omp, {"OMP_NUM_THREADS": "3"}) == (3, "OMP_NUM_THREADS")
    threads, why = openmp_threads(omp, {})
    assert threads == len(os.sched_getaffinity(0)) and "one per CPU" in why


@needs_gfortran
@pytest.mark.opencl
def test_bench_times_the_final_kernel_after_checkpoints(tmp_path):
    pytest.importorskip("pyopencl")
    (tmp_path / "k.f90").write_text(CHECKPOINTED)
    proc = run("f2loopy.cli", "bench", "k.f90", "--size", "n=4096", "--min-time", "0.01",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    labels = [line.split()[0] for line in proc.stdout.splitlines()
              if line.split() and line.split()[-1] == "✓"]
    assert labels == ["plain", "final"]
    assert ("(-O3 -march=native -fopenmp, 1 OpenMP thread: the file has no !$omp directive; "
            "same machine, same run)") in proc.stdout
    (tmp_path / "plain.f90").write_text(SCALE)
    proc = run("f2loopy.cli", "bench", "plain.f90", "--transform", "auto", "--size", "n=4096",
               "--min-time", "0.01", "--no-fortran", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    import json
    assert [r["label"] for r in json.loads(proc.stdout)["rows"]] == ["final"]


TWO_KERNELS = SCALE + SCALE.replace("scale", "shift").replace("2 * x(i)", "x(i) + 1") + \
    """!$loopy begin
! s, t = parse_fortran(SOURCE, FILENAME)
! RESULT = [split_iname(s, "i", 4, outer_tag="g.0", inner_tag="l.0"), t]
!$loopy end
"""


@needs_gfortran
@pytest.mark.opencl
def test_bench_times_one_kernel_of_several(tmp_path):
    # the tutorial's physics.f90 holds three kernels; bench said only "one kernel
    # per checkpoint" and had no way to choose one
    pytest.importorskip("pyopencl")
    assert "x(i) + 1" in TWO_KERNELS
    (tmp_path / "k.f90").write_text(TWO_KERNELS)
    proc = run("f2loopy.cli", "bench", "k.f90", "--size", "n=64", "--min-time", "0.01",
               cwd=tmp_path)
    assert proc.returncode == 1
    assert ("f2loopy: error: checkpoint 'final' has 2 kernels (scale, shift); bench times "
            "one kernel per checkpoint: choose one with --kernel NAME") in proc.stderr
    proc = run("f2loopy.cli", "bench", "k.f90", "--kernel", "nope", cwd=tmp_path)
    assert proc.returncode == 1
    assert ("f2loopy: error: --kernel nope: no kernel of that name in k.f90 (its kernels: "
            "scale, shift)") in proc.stderr
    for name in ("shift", "SCALE"):
        proc = run("f2loopy.cli", "bench", "k.f90", "--kernel", name, "--size", "n=4096",
                   "--min-time", "0.01", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        rows = [line.split()[0] for line in proc.stdout.splitlines()
                if line.split() and line.split()[-1] == "✓"]
        assert rows == ["final"], proc.stdout


def test_bench_and_tune_take_include_dirs():
    for command in ("bench", "tune"):
        proc = run("f2loopy.cli", command, "--help")
        assert "-I DIR" in proc.stdout, command
    assert "--transform" in run("f2loopy.cli", "bench", "--help").stdout

# }}}


@pytest.mark.opencl
def test_tune_finds_modules_on_the_include_path(tmp_path):
    pytest.importorskip("pyopencl")
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "consts.f90").write_text(
        "module consts\n  real, parameter :: two = 2.0\nend module\n")
    (tmp_path / "k.f90").write_text(TUNABLE.replace("  integer n, i\n",
                                                    "  use consts\n  integer n, i\n").replace(
        "2 * x(i)", "two * x(i)"))
    proc = run("f2loopy.cli", "tune", "k.f90", "-I", "inc", "--size", "n=64", "--min-time",
               "0.01", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "tile=4" in proc.stdout and "tile=8" in proc.stdout
    without = run("f2loopy.cli", "tune", "k.f90", "--size", "n=64", "--dry-run", cwd=tmp_path)
    assert without.returncode == 1 and "consts" in without.stderr


# {{{ 6. check with the project's compiler and flags; one set of --size/--range for all

@needs_gfortran
def test_check_takes_the_projects_compiler_and_flags(tmp_path):
    pytest.importorskip("pyopencl")
    (tmp_path / "k.f90").write_text(SCALE)
    proc = run("f2loopy.cli", "check", "k.f90", "--fflags", "-fno-such-flag", cwd=tmp_path)
    assert proc.returncode == 1
    assert "gfortran failed to compile the original Fortran" in proc.stderr
    assert "-fno-such-flag" in proc.stderr                  # the flags reached the compiler
    proc = run("f2loopy.cli", "check", "k.f90", "--fc", "gfortran", "--fflags", "-O2",
               "--range", "m=1:3", cwd=tmp_path, env={"F2LOOPY_FC": "/bin/false"})
    assert proc.returncode == 0, proc.stdout + proc.stderr      # --fc wins over F2LOOPY_FC
    assert "note: --range m ignored: no argument called 'm' in scale" in proc.stdout
    proc = run("f2loopy.cli", "check", "k.f90", "--fc", "no-such-compiler", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--fc: the Fortran compiler 'no-such-compiler' was not found" in proc.stderr

# }}}


# {{{ 7. a scalar of two nests split by global barriers: a hint, and the cure works

def _two_nests(second, branches=None):
    """Two nests split by a global barrier; the second sets *second* in *branches*
    (written with t; default: an if / else if without else, which may leave it unset)."""
    branches = (branches or """    if (b(i) > 0) then
      t = b(i - 1)
    else if (b(i) < -1) then
      t = -b(i)
    end if""").replace("t = ", f"{second} = ")
    return f"""subroutine two(n, a, b, c)
  integer n, i
  real a(n), b(n), c(n), t, t2
  do i = 1, n
    t = a(i) * 2
    b(i) = t + 1
  end do
  do i = 2, n
{branches}
    c(i) = {second} * {second}
  end do
!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! k = add_global_barriers_between_nests(k)
! RESULT = tag_inames(k, "i:g.0, i_1:g.0")
!$loopy end
end subroutine
"""


#: branches that set t on every path of the second nest: t stays private to each launch
COVERING = {
    "if-else": """    if (b(i) > 0) then
      t = b(i - 1)
    else
      t = -b(i)
    end if""",
    "else-if-chain": """    if (b(i) > 1) then
      t = b(i - 1)
    else if (b(i) > 0) then
      t = 2 * b(i)
    else
      t = -b(i)
    end if""",
    "nested": """    if (b(i) > 1) then
      if (b(i - 1) > 0) then
        t = b(i - 1)
      else
        t = 1
      end if
    else
      t = -b(i)
    end if""",
}


@pytest.mark.usefixtures("sandbox_process")
def test_scalar_shared_by_split_nests_gets_a_hint():
    """Without an else, the second nest may read the t of an earlier iteration (or of the
    first nest): it carries a value across launches, and the race says why and what to do."""
    from f2loopy.diagnostics import F2LoopyError
    from f2loopy.pipeline import translate_text
    with pytest.raises(F2LoopyError) as err:
        translate_text(_two_nests("t"), "two.f90")
    assert err.value.message == (
        "write race on 't': instruction 't' (line 5) writes the same element from different "
        "work-groups along 'i' (g.0); 't' is shared by every work-item of every launch because "
        "a global barrier made it carry a value from one launch to the next: some launch reads "
        "'t' where no write of that launch surely comes first (writes under conditions count "
        "where if/else branches together cover every case). If each loop nest sets 't' before "
        "using it, give the nests variables of their own (rename 't' in one of them) or assign "
        "it unconditionally at the start of each nest")
    # the cure: a variable that only the second launch writes stays private
    result = translate_text(_two_nests("t2", COVERING["if-else"]), "two.f90")
    cl = result.outputs[next(p for p in result.outputs if str(p).endswith(".cl"))]
    assert "    float t2;" in cl and "__global float *t2" not in cl


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("case", sorted(COVERING))
def test_scalar_set_on_every_branch_stays_private(case):
    from f2loopy.pipeline import translate_text
    result = translate_text(_two_nests("t", COVERING[case]), "two.f90")
    cl = result.outputs[next(p for p in result.outputs if str(p).endswith(".cl"))]
    assert cl.count("    float t;") == 2 and "__global float *t" not in cl


@pytest.mark.usefixtures("sandbox_process")
def test_a_condition_changed_between_the_branches_is_no_cover():
    """Predicates are evaluated at each statement: when the launch writes a variable of
    the condition, writes under complementary conditions may both be skipped."""
    from f2loopy.diagnostics import F2LoopyError
    from f2loopy.pipeline import translate_text
    flips = """    if (b(i) > 0) t = 1
    b(i) = -b(i)
    if (.not. (b(i) > 0)) t = 2"""
    with pytest.raises(F2LoopyError, match="write race on 't'"):
        translate_text(_two_nests("t", flips), "two.f90")


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("second, case", [("t2", "if-else"), ("t", "else-if-chain"),
                                          ("t", "nested")])
def test_the_cure_computes_what_fortran_does(tmp_path, second, case):
    pytest.importorskip("pyopencl")
    (tmp_path / "two.f90").write_text(_two_nests(second, COVERING[case]))
    proc = run("f2loopy.cli", "check", "two.f90", "--size", "n=64", "--range", "a=-2:1",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok: 2 output(s)" in proc.stdout

# }}}


def test_default_sizes_make_the_loops_run():
    from f2loopy.frontend import parse_fortran
    from f2loopy.verify.inputs import plan_inputs
    src = """subroutine late(n, m, x, y)
  integer n, m, i, j
  real x(n), y(m)
  do i = 40, n
    x(i) = 2 * x(i)
  end do
  do j = m - 2, m
    y(j) = 0
  end do
end subroutine
"""
    (k,) = parse_fortran(src, "late.f90")
    for seed in range(5):
        plan = plan_inputs([k], seed=seed)
        assert plan.values["n"] >= 40 and plan.values["m"] >= 3, plan.values


@needs_gfortran
@pytest.mark.opencl
def test_not_covered_names_the_inputs_that_decide(tmp_path):
    pytest.importorskip("pyopencl")
    (tmp_path / "two.f90").write_text(_two_nests("t2", COVERING["if-else"]))
    # (a range of the user's own: the signed rounds leave it, so b > 0 always)
    proc = run("f2loopy.cli", "check", "two.f90", "--size", "n=64", "--range", "a=0.5:1.5",
               cwd=tmp_path)
    assert proc.returncode == 1
    assert ("  two.f90:12: t2 = -b(i)\n"
            "    (it runs depending on a, b, n: give them other values with --size/--range)\n"
            "NOT COVERED: 1 statement(s)") in proc.stdout


@pytest.mark.usefixtures("sandbox_process")
def test_no_record_where_the_recipe_declares_no_tunable(tmp_path):
    (tmp_path / "scale.f90").write_text(SCALE)
    proc = run("f2loopy.cli", "translate", "--depfile", "scale.d", "--transform", "gpu_tiling",
               "-D", "tile=8", "scale.f90", cwd=tmp_path, env={"F2LOOPY_NO_CACHE": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "tune.json" not in (tmp_path / "scale.d").read_text()
    assert not (tmp_path / "scale.f90.tune.json").exists()
    # without tile=, the recipe's tunable: the record (translated from the cache too)
    for _ in range(2):
        (tmp_path / "scale.f90.tune.json").unlink(missing_ok=True)
        proc = run("f2loopy.cli", "translate", "--depfile", "scale.d", "--transform",
                   "gpu_tiling", "scale.f90", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "scale.f90.tune.json" in (tmp_path / "scale.d").read_text()
        assert (tmp_path / "scale.f90.tune.json").exists()
