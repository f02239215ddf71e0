#!/usr/bin/env bash
# Set up f2loopy on a fresh machine: gfortran, OpenCL on the CPU (PoCL), cmake, make and ninja
# from the OS package manager, then the Python package with its test dependencies.
#
# OpenCL must come from Debian's pocl-opencl-icd: PyPI's pocl-binary-distribution 3.0
# cannot build kernels on recent CPUs ("unknown target CPU 'generic'"), so it is
# removed if some other package pulled it in.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=()
command -v gfortran >/dev/null 2>&1 || packages+=(gfortran)
ls /etc/OpenCL/vendors/*pocl*.icd >/dev/null 2>&1 || packages+=(pocl-opencl-icd)
[ -e /usr/lib/x86_64-linux-gnu/libOpenCL.so ] || [ -e /usr/lib/aarch64-linux-gnu/libOpenCL.so ] \
  || packages+=(ocl-icd-opencl-dev)
# the Fortran glue and samples/heat_app are built with cmake + make and a C compiler
command -v cmake >/dev/null 2>&1 || packages+=(cmake)
command -v make >/dev/null 2>&1 || packages+=(make)
command -v ninja >/dev/null 2>&1 || packages+=(ninja-build)   # CI builds heat_app with Ninja too
command -v gcc >/dev/null 2>&1 || packages+=(gcc)
# MPI (Open MPI: mpirun, mpif90) for samples/mpi_heat and its tests; without the
# recommended extras (documentation, a second launcher), which the tests do not need
mpi_packages=()
command -v mpirun >/dev/null 2>&1 || mpi_packages+=(openmpi-bin)
command -v mpif90 >/dev/null 2>&1 || mpi_packages+=(libopenmpi-dev)
if [ ${#packages[@]} -gt 0 ] || [ ${#mpi_packages[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    if [ ${#packages[@]} -gt 0 ]; then
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null
    fi
    if [ ${#mpi_packages[@]} -gt 0 ]; then
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${mpi_packages[@]}" >/dev/null
    fi
  else
    echo "setup: please install ${packages[*]} ${mpi_packages[*]} with your package manager" >&2
    exit 1
  fi
fi

# a system Python marked externally managed (PEP 668) refuses pip outside a
# virtual environment: then f2loopy goes into .venv here (scripts/setup_python.py)
python=python3
if [ "$(python3 scripts/setup_python.py)" = venv ]; then
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv 2>/dev/null || {
      if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
      fi
      rm -rf .venv
      python3 -m venv .venv
    }
  fi
  python=.venv/bin/python
fi
"$python" -m pip install -q -e '.[test]'
# mpi4py (over the Open MPI above) for the Python driver of samples/mpi_heat
"$python" -c 'import mpi4py' 2>/dev/null || "$python" -m pip install -q mpi4py
if "$python" -m pip show pocl-binary-distribution >/dev/null 2>&1; then
  "$python" -m pip uninstall -y -q pocl-binary-distribution
fi
echo "setup: gfortran $(gfortran -dumpversion), $(mpirun --version 2>/dev/null | head -n 1), $("$python" -c 'import pyopencl as cl; print(", ".join(d.name for p in cl.get_platforms() for d in p.get_devices()))')"
if [ "$python" != python3 ]; then
  # the mark that scripts/env.sh looks for: this .venv is the one setup.sh made for f2loopy
  : > .venv/.f2loopy-setup
  echo "setup: this python3 is externally managed (PEP 668), so f2loopy was installed into" >&2
  echo "setup: the virtual environment .venv; '. scripts/env.sh' (or '. .venv/bin/activate')" >&2
  echo "setup: puts it on the PATH of your shell" >&2
fi
