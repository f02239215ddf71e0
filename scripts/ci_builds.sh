#!/usr/bin/env bash
# Build checks CI runs after the test suite (issue 17): f2loopy as a step of
# real builds must settle, and a pip install must be complete.
#
#   1. samples/heat_app with CMake's Unix Makefiles and Ninja generators: the
#      first build translates, the second has nothing to do; after touching
#      heat.f90 (its three translations are then served by the cache, two of them
#      share the gpu_tiling recipe) and after a comment-only edit, one build
#      re-translates and the next has nothing to do again.
#   2. the plain Makefile of samples/heat_app (f2loopy translate --touch-outputs)
#      and the compiler wrapper (FC="f2loopyfc gfortran" make) settle the same way.
#   3. the wheel: built, installed into a fresh virtual environment, and
#      samples/heat_app (copied out of the checkout) built against it with
#      find_package(f2loopy CONFIG); its results match the plain Fortran.
#
# Usage: bash scripts/ci_builds.sh [cmake|make|wheel ...]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=$(mktemp -d "${TMPDIR:-/tmp}/f2loopy-ci-builds.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export F2LOOPY_CACHE_DIR="$WORK/cache"
PY=$(command -v python3)
# the checkout's f2loopy, whatever is installed
F2LOOPY_CMD="$PY;-m;f2loopy.cli"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
ARGS=(40 30 50)
failures=0
passes=0

say() { printf 'ci_builds: %s\n' "$*"; }
fail() { printf 'ci_builds: FAILED: %s\n' "$*" >&2; failures=$((failures + 1)); }

# a copy of the sample and the runtime, so that the checks can edit heat.f90
fresh_copy() {
  local dest=$1
  mkdir -p "$dest/samples"
  cp -r "$ROOT/samples/heat_app" "$dest/samples/heat_app"
  rm -rf "$dest/samples/heat_app/build"*
  cp -r "$ROOT/runtime" "$dest/runtime"
}

# what a build did: every line but make's and ninja's bookkeeping
steps() {
  grep -vE "^(g?make|ninja)(\[[0-9]+\])?: (Entering|Leaving|Nothing to be done|no work to do)|is up to date|^\[ *[0-9]+%\] Built target|^-- " \
    | grep -E . || true
}

same_results() {        # same_results EXE_A EXE_B: the same numbers (to 1e-12)
  "$PY" - "$1" "$2" "${ARGS[@]}" <<'PYEOF' && passes=$((passes + 1)) || fail "$1 and $2 disagree"
import subprocess, sys
def values(exe):
    out = subprocess.run([exe, *sys.argv[3:]], capture_output=True, text=True,
                         check=True).stdout
    return {k: float(v) for k, _, v in (l.partition(" ") for l in out.splitlines())
            if k in ("sum", "center", "max")}
a, b = values(sys.argv[1]), values(sys.argv[2])
assert set(a) == {"sum", "center", "max"} and a.keys() == b.keys(), (a, b)
for k in a:
    assert abs(a[k] - b[k]) <= 1e-12 * max(abs(a[k]), 1e-300), (k, a[k], b[k])
PYEOF
}

# build BUILD_CMD... ; then the next build must do nothing
settles() {
  local label=$1; shift
  local out
  out=$("$@" 2>&1 | steps)
  if [ -n "$out" ]; then
    fail "$label: the build after a build was not a no-op:"
    printf '%s\n' "$out" >&2
    return 0
  fi
  say "$label: settled"
  passes=$((passes + 1))
}

check_cmake() {
  local gen=$1 name=$2
  local base="$WORK/cmake-$name" build build_cmd n
  fresh_copy "$base"
  build="$base/build"
  cmake -G "$gen" -S "$base/samples/heat_app" -B "$build" "-DF2LOOPY_EXECUTABLE=$F2LOOPY_CMD" \
    >/dev/null
  if [ "$gen" = Ninja ]; then build_cmd=(ninja -C "$build"); else build_cmd=(make -C "$build"); fi
  n=$("${build_cmd[@]}" 2>&1 | grep -c 'f2loopy: translating heat.f90' || true)
  [ "$n" = 3 ] || fail "$name: first build translated heat.f90 $n times, not 3"
  settles "$name, second build" "${build_cmd[@]}"
  if [ "$gen" = Ninja ]; then
    local explain
    explain=$(ninja -C "$build" -n -d explain 2>&1 | grep -E 'dirty|expected depfile' || true)
    [ -z "$explain" ] || fail "$name: ninja -d explain: $explain"
  fi
  same_results "$build/heat_fortran" "$build/heat_opencl"
  same_results "$build/heat_fortran" "$build/heat_opencl_tile4"

  sleep 1; touch "$base/samples/heat_app/heat.f90"
  n=$("${build_cmd[@]}" 2>&1 | grep -c 'f2loopy: translating heat.f90' || true)
  [ "$n" = 3 ] || fail "$name: after touching heat.f90, $n translations, not 3"
  settles "$name, after touching heat.f90" "${build_cmd[@]}"

  sleep 1; printf '! a comment at the end\n' >> "$base/samples/heat_app/heat.f90"
  "${build_cmd[@]}" >/dev/null 2>&1
  settles "$name, after a comment-only edit" "${build_cmd[@]}"
}

check_wheel() {
  local venv="$WORK/venv" dist="$WORK/dist" base="$WORK/wheel-app" build
  say "building the wheel"
  # from a copy of the checkout's files (not its ignored build/ folders, whose stale
  # modules setuptools would package)
  mkdir -p "$WORK/src"
  (cd "$ROOT" && git ls-files -co --exclude-standard -z | tar --null -cf - -T -) \
    | tar -xf - -C "$WORK/src"
  "$PY" -m pip wheel -q --no-deps -w "$dist" "$WORK/src" >/dev/null
  # a fresh environment that sees the OS's and the system Python's packages
  # (numpy, islpy, pyopencl...) but installs f2loopy from the wheel only
  "$PY" -m venv --system-site-packages "$venv"
  # (--ignore-installed: the system Python may hold an editable f2loopy)
  "$venv/bin/python" -m pip install -q --no-index --no-deps --ignore-installed \
    "$dist"/f2loopy-*.whl >/dev/null
  local where
  where=$(cd "$WORK" && env -u PYTHONPATH "$venv/bin/python" -c \
    'import f2loopy.resources as r; print(r.cmake_dir()); print(r.transforms_dir())')
  case "$where" in
    "$venv"/*) ;;
    *) fail "the wheel's f2loopy finds its data outside the environment: $where" ;;
  esac
  local listed
  listed=$(cd "$WORK" && env -u PYTHONPATH "$venv/bin/f2loopy" recipes)
  grep -q '^gpu_tiling ' <<<"$listed" || fail "f2loopy recipes from the wheel lists no gpu_tiling"
  # the sample alone, outside the checkout: find_package(f2loopy CONFIG) finds the
  # environment through its bin/ on the PATH, and the Makefiles generator through
  # -Df2loopy_DIR=$(f2loopy --cmake-dir) with the environment off the PATH
  mkdir -p "$base"
  cp -r "$ROOT/samples/heat_app" "$base/heat_app"
  build="$base/build-ninja"
  (cd "$base" && env -u PYTHONPATH PATH="$venv/bin:$PATH" cmake -G Ninja -S heat_app \
    -B "$build" >/dev/null && env -u PYTHONPATH PATH="$venv/bin:$PATH" ninja -C "$build" \
    >/dev/null) || fail "heat_app with Ninja against the wheel did not build"
  grep -q "F2LOOPY_EXECUTABLE:FILEPATH=$venv/bin/f2loopy" "$build/CMakeCache.txt" \
    || fail "the wheel's CMake configuration did not pick the environment's f2loopy"
  same_results "$build/heat_fortran" "$build/heat_opencl"
  settles "wheel, Ninja, second build" env -u PYTHONPATH ninja -C "$build"
  build="$base/build-make"
  local dir
  dir=$(cd "$WORK" && env -u PYTHONPATH "$venv/bin/f2loopy" --cmake-dir)
  (cd "$base" && env -u PYTHONPATH cmake -G "Unix Makefiles" -S heat_app -B "$build" \
    "-Df2loopy_DIR=$dir" >/dev/null && env -u PYTHONPATH make -C "$build" >/dev/null) \
    || fail "heat_app with Makefiles against the wheel did not build"
  same_results "$build/heat_fortran" "$build/heat_opencl_serial"
  settles "wheel, Makefiles, second build" env -u PYTHONPATH make -C "$build"
}

check_make() {
  local base="$WORK/make" out
  fresh_copy "$base"
  local app="$base/samples/heat_app"
  # the Makefile with an f2loopy rule (--touch-outputs, a grouped target, the depfile)
  local mk=(make -C "$base/plain" -f "$app/Makefile" "F2LOOPY=$PY -m f2loopy.cli")
  mkdir -p "$base/plain"
  "${mk[@]}" >/dev/null 2>&1 || fail "make -f Makefile did not build"
  same_results "$base/plain/heat_fortran" "$base/plain/heat_opencl"
  settles "Makefile, second build" "${mk[@]}"
  sleep 1; printf '! a comment at the end\n' >> "$app/heat.f90"
  out=$("${mk[@]}" 2>&1 | steps)
  grep -q translate <<<"$out" || fail "Makefile: a comment-only edit did not translate: $out"
  settles "Makefile, after a comment-only edit" "${mk[@]}"
  # an ordinary Makefile with the compiler wrapper
  local wr=(make -C "$base/wrapper" -f "$app/wrapper.mk" "FC=$PY -m f2loopy.wrapper gfortran"
            "FFLAGS=-O2 -DUSE_OPENCL")
  mkdir -p "$base/wrapper"
  "${wr[@]}" >/dev/null 2>&1 || fail "make -f wrapper.mk with f2loopyfc did not build"
  same_results "$base/plain/heat_fortran" "$base/wrapper/heat_app"
  out=$("$base/wrapper/heat_app" "${ARGS[@]}")
  grep -q '^device: ' <<<"$out" || fail "wrapper.mk with f2loopyfc did not build the OpenCL version"
  settles "wrapper.mk with f2loopyfc, second build" "${wr[@]}"
  sleep 1; touch "$app/heat_tiled.f90"
  "${wr[@]}" >/dev/null 2>&1 || fail "make -f wrapper.mk after touching heat_tiled.f90"
  settles "wrapper.mk with f2loopyfc, after touching heat_tiled.f90" "${wr[@]}"
}

what=("$@")
[ ${#what[@]} -gt 0 ] || what=(cmake make wheel)
for w in "${what[@]}"; do
  case "$w" in
    cmake)
      check_cmake "Unix Makefiles" makefiles
      if command -v ninja >/dev/null 2>&1; then check_cmake Ninja ninja
      else fail "ninja is not installed (scripts/setup.sh installs ninja-build)"; fi ;;
    make) check_make ;;
    wheel) check_wheel ;;
    *) echo "usage: $0 [cmake|make|wheel ...]" >&2; exit 2 ;;
  esac
done
# the closing line CI reads (checks of a build settling and of results agreeing)
echo "ci_builds: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
