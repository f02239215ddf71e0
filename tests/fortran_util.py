"""Building Fortran programs against the generated Fortran glue and the runtime.

The runtime (C library and Fortran module) is compiled once per test session
into a shared directory; each test program is compiled with gfortran together
with the original Fortran (so it can compare both), the glue and its C file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime"

FFLAGS = ["-Wall", "-Wno-unused-dummy-argument", "-O1", "-g"]
# the runtime and the generated glue must be standard Fortran 2018
STRICT = ["-std=f2018"]
CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-O1", "-g"]


def _have_opencl_headers() -> bool:
    return any(Path(d, "CL", "cl.h").exists() for d in ("/usr/include", "/usr/local/include"))


needs_toolchain = pytest.mark.skipif(
    shutil.which("gfortran") is None or shutil.which("gcc") is None
    or not _have_opencl_headers(),
    reason="needs gfortran, gcc and the OpenCL headers (scripts/setup.sh installs them)")


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
