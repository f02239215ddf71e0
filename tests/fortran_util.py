"""Building Fortran programs against the generated Fortran glue and the runtime.

The runtime (C library and Fortran module) is compiled once per test session
into a shared directory; each test program is compiled with gfortran together
with the original Fortran (so it can compare both), the glue and its C file.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime"

FFLAGS = ["-Wall", "-Wno-unused-dummy-argument", "-O1", "-g"]
# the runtime and the generated glue must be standard Fortran 2018
STRICT = ["-std=f2018"]
CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-O1", "-g"]


# a program built against the glue and the runtime, run on the OpenCL device
# (the fixtures of tests/conftest.py: each skips when its tool is missing)
needs_toolchain = pytest.mark.usefixtures("gfortran", "gcc", "opencl_headers", "opencl_device")


def run(cmd, cwd=None, env=None, check=True, timeout=120):
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


def build_runtime(base: Path) -> Path:
    """Compile the runtime into *base*/runtime (once): returns the directory
    holding f2loopy_runtime.o, f2loopy_runtime_f.o and the .mod file."""
    out = Path(base) / "runtime"
    done = out / "done"
    if done.exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    run(["gcc", *CFLAGS, "-I", RUNTIME, "-c", RUNTIME / "f2loopy_runtime.c", "-o",
         out / "f2loopy_runtime.o"])
    run(["gfortran", *FFLAGS, *STRICT, "-J", out, "-c", RUNTIME / "f2loopy_runtime.f90", "-o",
         out / "f2loopy_runtime_f.o"])
    done.write_text("ok\n")
    return out


def link_flags():
    return ["-lOpenCL", "-lpthread"]


def build_program(workdir: Path, runtime: Path, sources, exe="prog") -> Path:
    """Compile Fortran and C *sources* (in order: modules first) in *workdir*
    and link them with the runtime."""
    objects = []
    for src in sources:
        src = Path(src)
        obj = workdir / (src.name + ".o")
        if src.suffix == ".c":
            run(["gcc", *CFLAGS, "-c", src, "-o", obj], cwd=workdir)
        else:
            strict = STRICT if src.name.endswith("_cl.f90") else []
            run(["gfortran", *FFLAGS, *strict, "-I", runtime, "-J", workdir, "-c", src, "-o",
                 obj], cwd=workdir)
        objects.append(obj)
    exe_path = workdir / exe
    run(["gfortran", *objects, runtime / "f2loopy_runtime_f.o", runtime / "f2loopy_runtime.o",
         *link_flags(), "-o", exe_path], cwd=workdir)
    return exe_path


def device_env(**extra):
    env = dict(os.environ)
    env.update({k: str(v) for k, v in extra.items()})
    return env


# {{{ translating, building and running glue test programs

def translate(tmp: Path, stem: str, source: str) -> list[Path]:
    """Translate *source* as tmp/STEM.f90 with the pipeline; return the
    sources to compile (original, glue C, glue Fortran)."""
    from f2loopy.pipeline import translate_text, write_outputs
    path = tmp / f"{stem}.f90"
    path.write_text(source)
    write_outputs(translate_text(source, path).outputs)
    return [path, tmp / f"{stem}_cl.c", tmp / f"{stem}_cl.f90"]


def glue_from_kernels(tmp: Path, stem: str, source: str, kernels, program=None) -> list[Path]:
    """Fortran glue for (transformed) IR *kernels*, bypassing the pipeline."""
    from f2loopy.codegen import file_header, generate_code, join_program
    from f2loopy.glue.fortran import generate_fortran_glue
    path = tmp / f"{stem}.f90"
    path.write_text(source)
    generated = [generate_code(k) for k in kernels]
    if program is None:
        program = file_header(path.name) + "\n\n" + join_program(generated)
    f90, c = generate_fortran_glue(generated, program, stem, path.name)
    (tmp / f"{stem}_cl.f90").write_text(f90)
    (tmp / f"{stem}_cl.c").write_text(c)
    return [path, tmp / f"{stem}_cl.c", tmp / f"{stem}_cl.f90"]


def compile_and_run(tmp, runtime, sources, main: str, args=(), env=None, expect_rc=0):
    (tmp / "main.f90").write_text(CHECKS + main)
    exe = build_program(tmp, runtime, [*sources, tmp / "main.f90"])
    proc = run([exe, *args], env=env, check=False)
    assert proc.returncode == expect_rc, proc.stdout + proc.stderr
    return proc


# helpers every test program has: check() counts failures, close() compares reals
CHECKS = """
module checks
  implicit none
  integer :: failures = 0
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      print '(a)', "ok   " // what
    else
      failures = failures + 1
      print '(a)', "FAIL " // what
    end if
  end subroutine
  subroutine done()
    print '(i0, a)', failures, " failures"
    if (failures /= 0) stop 2
  end subroutine
end module checks
"""


def assert_all_ok(proc, count):
    lines = proc.stdout.splitlines()
    assert "0 failures" in lines, proc.stdout + proc.stderr
    assert sum(line.startswith("ok ") for line in lines) == count, proc.stdout

# }}}
