#!/usr/bin/env python3
"""Registers, stack frame and spills of a generated OpenCL kernel on an NVIDIA
GPU, read on a machine without one: the OpenCL C is compiled as CUDA (through
a few macros: ``__kernel``, ``__global``, ``get_group_id``/``get_local_id``,
``reqd_work_group_size`` as ``__launch_bounds__``) by ``nvcc``, whose ptxas
report agrees with the NVIDIA OpenCL build log (``-cl-nv-verbose``) within a
few bytes on CLOUDSC (samples/cloudsc_RESULTS.md).  Also counts the
local-memory instructions of the PTX (private arrays and values the compiler
could not keep in registers).

usage: cl_resources.py FILE.cl [--arch sm_90] [--maxrreg N] [-D NAME=VALUE ...]
  --maxrreg N: also build without launch bounds at N registers per thread
  -D: macros the program is built with (a kernel compiled per value of an
      argument: -D F2L_SPEC_CLOUDSC_KLEV=137)
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SHIM = """#define __kernel extern "C" __global__
#define __global
#define __private
#define get_group_id(i) ((i) == 0 ? blockIdx.x : (i) == 1 ? blockIdx.y : blockIdx.z)
#define get_local_id(i) ((i) == 0 ? threadIdx.x : (i) == 1 ? threadIdx.y : threadIdx.z)
"""

_REQD = re.compile(r"__attribute__ \(\(reqd_work_group_size\((\d+), (\d+), (\d+)\)\)\)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=-?[0-9]+")


def as_cuda(source: str, *, launch_bounds: bool = True) -> str:
    """The OpenCL C *source* as CUDA C++ (see the module docstring)."""
    text = source.replace("#pragma OPENCL EXTENSION cl_khr_fp64 : enable", "")
    text = text.replace("#pragma OPENCL FP_CONTRACT OFF", "")
    text = _REQD.sub(lambda m: (f"__launch_bounds__({int(m[1]) * int(m[2]) * int(m[3])})"
                                if launch_bounds else ""), text)
    text = re.sub(r"^inline ", "__device__ inline ", text, flags=re.M)
    return SHIM + text


def report(cu: Path, arch: str, extra: list[str]) -> str:
    out = subprocess.run(["nvcc", f"-arch={arch}", "-O3", "--ptxas-options=-v", "-c",
                          str(cu), "-o", str(cu.with_suffix(".o")), *extra],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    # the entry functions' lines (not those of the math library's helpers)
    entries = set(re.findall(r"Compiling entry function '([^']+)'", out.stderr))
    lines, current = [], None
    for line in out.stderr.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?([^' ]+)'?",
                      line)
        if m:
            current = m.group(1)
            continue
        if current in entries and ("stack frame" in line or "registers" in line):
            lines.append(f"{current}: " + line.split(":", 1)[-1].strip()
                         if "registers" in line else line.strip())
    ptx = subprocess.run(["nvcc", f"-arch={arch}", "-O3", "-ptx", str(cu), "-o", "-", *extra],
                         capture_output=True, text=True).stdout
    return "; ".join(lines) + (f"; PTX ld.local {ptx.count('ld.local')}, "
                                    f"st.local {ptx.count('st.local')}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--maxrreg", type=int)
    ap.add_argument("-D", dest="defines", action="append", default=[])
    a = ap.parse_args()
    if shutil.which("nvcc") is None:
        raise SystemExit("nvcc is needed")
    if not re.fullmatch(r"sm_[0-9]{2,3}a?", a.arch):
        raise SystemExit(f"--arch is sm_NN, not {a.arch!r}")
    bad = [d for d in a.defines if not _NAME.fullmatch(d)]
    if bad:
        raise SystemExit(f"-D takes NAME=INTEGER, not {bad[0]!r}")
    source = Path(a.file).read_text()
    flags = [f"-D{d}" for d in a.defines]
    with tempfile.TemporaryDirectory() as tmp:
        cu = Path(tmp) / "kernel.cu"
        cu.write_text(as_cuda(source))
        print(f"as generated: {report(cu, a.arch, flags)}")
        if a.maxrreg:
            cu.write_text(as_cuda(source, launch_bounds=False))
            print(f"at most {a.maxrreg} registers: "
                  f"{report(cu, a.arch, flags + [f'-maxrregcount={a.maxrreg}'])}")


if __name__ == "__main__":
    sys.exit(main())
