#!/usr/bin/env bash
# The tutorial's commands, in order (docs/tutorial.md shows them from here;
# tests/docs/test_docs.py runs this script in a copy of docs/tutorial/).
set -euo pipefail
cd "$(dirname "$0")"

# [reference]
make -s clean && make -s
./mini > fortran.txt
cat fortran.txt
mv mini mini_fortran
# [reference end]

# [show]
f2loopy show --no-ir --no-code physics.f90
# [show end]

# [check]
f2loopy check physics.f90 --kernel diffuse --size nx=40 --size ny=24
f2loopy check physics.f90 --kernel decay --size nx=40 --size ny=24
# [check end]

# [build]
make -s clean
make -s FC="f2loopyfc gfortran" FFLAGS="-O2 -DUSE_OPENCL"
./mini > opencl.txt
cat opencl.txt
# [build end]

# [profile]
F2LOOPY_PROFILE=1 ./mini > /dev/null
# [profile end]

# [bench]
f2loopy bench physics.f90 --kernel diffuse --size nx=256 --size ny=256
# [bench end]
