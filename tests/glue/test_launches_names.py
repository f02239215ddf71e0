"""Names of a split kernel's launch sequence in the glue: a host loop's index
is a variable of its own, apart from every argument (red team of the
several-launches glue).  A Fortran argument may be named like the glue's
variable of a host loop ('queue_' beside a loop 'queue' in Python, where
the glue appends '_' to 'queue'; 'hostloop_t' beside a loop 't' in
Fortran, whose 64-bit copies are f2l_NAME): the loop must not overwrite it,
else the sizes and values of the launches inside come from the loop's index."""

from __future__ import annotations

import numpy as np
import pytest

from fortran_util import assert_all_ok, build_runtime, compile_and_run, glue_from_kernels, \
    needs_toolchain
from launch_util import JACOBI, _k
from shared_kernels import INT8_TIME_LOOP
from util import farray, load_kernels, zeros

from f2loopy.transform import add_global_barriers_between_nests, split_iname


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


def _renamed(size: str, loop: str) -> str:
    """JACOBI with the size argument called *size* and the time loop *loop*."""
    return (JACOBI.replace("n - 1", f"{size} - 1").replace("a(n), b(n)", f"a({size}), b({size})")
            .replace("tsteps, n", f"tsteps, {size}").replace("t, i", f"{loop}, i")
            .replace("do t = 1", f"do {loop} = 1"))


def _split(src: str, loop: str):
    k = add_global_barriers_between_nests(_k(src), host_loops=[loop])
    k = split_iname(k, "i", 8, outer_tag="g.0", inner_tag="l.0")
    return split_iname(k, "i_1", 8, outer_tag="g.0", inner_tag="l.0")


def _reference(a, b, steps):
    a, b = a.copy(), b.copy()
    for _ in range(steps):
        b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3
        a[1:-1] = (b[:-2] + b[1:-1] + b[2:]) / 3
    return a, b


@pytest.mark.differential
@pytest.mark.parametrize("size, loop", [("queue_", "queue"), ("range_", "range"),
                                        ("n", "t")])
def test_python_host_loop_keeps_an_argument_of_its_name(tmp_path, cl_queue, size, loop):
    module = load_kernels([_split(_renamed(size, loop), loop)], tmp_path)
    a, b = farray(40, np.float64, seed=3), zeros(40, np.float64)
    ra, rb = _reference(a, b, 3)
    module.jac(3, 40, a, b, queue=cl_queue)
    np.testing.assert_allclose(a, ra, rtol=1e-13)
    np.testing.assert_allclose(b, rb, rtol=1e-13)


MAIN = """
program main
  use checks
  use jac_cl_mod
  implicit none
  integer, parameter :: n = 50
  double precision :: a1(n), b1(n), a2(n), b2(n)
  integer :: i, st
  a1 = [(cos(dble(i)), i = 1, n)]; b1 = 0; a2 = a1; b2 = b1
  call jac(7, n, a1, b1)
  call jac_cl(7, n, a2, b2, st)
  call check(st == F2L_OK, "status")
  call check(maxval(abs(a1 - a2)) <= 1d-12 .and. maxval(abs(b1 - b2)) <= 1d-12, &
             "7 steps on the host loop, sizes from the argument")
  call done()
end program
"""


@needs_toolchain
@pytest.mark.opencl
@pytest.mark.gfortran
@pytest.mark.differential
@pytest.mark.parametrize("size, loop", [("hostloop_t", "t"), ("hostloop_t_32", "t"),
                                        ("n", "t" * 60)])
def test_fortran_host_loop_keeps_an_argument_of_its_name(tmp_path, runtime, size, loop):
    """(a loop of 60 letters: f2l_hostloop_ and it is longer than Fortran's
    63 characters)"""
    src = _renamed(size, loop)
    sources = glue_from_kernels(tmp_path, "jac", src, [_split(src, loop)])
    glue = sources[2].read_text()
    assert f"f2l_{size.lower()} = {size.lower()}" in glue.lower()   # the argument's copy
    proc = compile_and_run(tmp_path, runtime, sources, MAIN)
    assert_all_ok(proc, 2)


@pytest.mark.unit
def test_names_one_in_opencl_are_refused():
    """A loop 'max' and an argument 'max_' were one C variable: the loop's
    'for (int max_ = 1; max_ <= max_; ++max_)' shadowed the argument and
    wrote past the array (PoCL crashed the process)."""
    from f2loopy.codegen import generate_code
    from f2loopy.diagnostics import CodegenError
    k = _k("""subroutine cn(max_, a)
  implicit none
  integer, intent(in) :: max_
  double precision, intent(inout) :: a(max_)
  integer :: max
  do max = 1, max_
    a(max) = a(max) + max_
  end do
end subroutine cn
""")
    with pytest.raises(CodegenError) as e:
        generate_code(k)
    assert e.value.message == ("'max_' and 'max' would both be 'max_' in the OpenCL code "
                               "(f2loopy appends '_' to names that OpenCL or f2loopy reserve): "
                               "rename one")
    assert e.value.span.line == 1
    # the same in a split kernel: the host loop's index is an argument of its launches
    with pytest.raises(CodegenError) as e:
        generate_code(_split(_renamed("max_", "max"), "max"))
    assert "'max_' and 'max' would both be 'max_'" in e.value.message


SHRINKING = """subroutine tri(tsteps, range, a, b)
  implicit none
  integer, intent(in) :: tsteps, range
  double precision, intent(inout) :: a(range), b(range)
  integer :: queue, i
  do queue = 1, tsteps
    do i = 2, range - queue
      b(i) = (a(i - 1) + a(i) + a(i + 1)) / 3.0d0
    end do
    do i = 2, range - queue
      a(i) = (b(i - 1) + b(i) + b(i + 1)) / 3.0d0
    end do
  end do
end subroutine tri
!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! k = add_global_barriers_between_nests(k, host_loops=["queue"])
! k = split_iname(k, "i", 8, outer_tag="g.0", inner_tag="l.0")
! k = split_iname(k, "i_1", 8, outer_tag="g.0", inner_tag="l.0")
! RESULT = [k]
!$loopy end
"""


@pytest.mark.differential
@pytest.mark.gfortran
def test_bench_runs_launches_whose_sizes_use_glue_names(tmp_path, cl_queue):
    """bench's own launcher evaluates the grid sizes, which depend on the
    host loop 'queue' and the argument 'range' (names py_name changes: the
    loop's index was read from a variable the loop did not set)."""
    from f2loopy.bench.run import run_bench
    from f2loopy.pipeline import translate_file
    from f2loopy.tune.measure import time_variant
    path = tmp_path / "tri.f90"
    path.write_text(SHRINKING)
    report = run_bench(path, sizes={"range": 40, "tsteps": 5}, min_time=0.005, warmup=1,
                       queue=cl_queue)
    assert [r.ok for r in report.rows] == [True], [r.message for r in report.rows]
    assert time_variant(translate_file(path), cl_queue, {"range": 40, "tsteps": 5},
                        min_time=0.005, warmup=1) > 0


@pytest.mark.differential
@pytest.mark.gfortran
def test_python_glue_of_a_shrinking_host_loop_named_queue(tmp_path, cl_queue):
    """The grid of the launches inside depends on the host loop 'queue'."""
    from util import run_both
    run_both(SHRINKING, "tri", [5, 40, farray(40, np.float64, seed=3), zeros(40, np.float64)],
             tmp_path, cl_queue, filename="tri.f90")


@needs_toolchain
@pytest.mark.differential
def test_host_loop_of_an_integer8_variable(tmp_path):
    """The host loop's index reaches its launches as a 32-bit value; the
    kernel still computes with the integer(8) variable in 64 bits."""
    from click.testing import CliRunner

    from f2loopy.cli import main
    path = tmp_path / "t8.f90"
    path.write_text(INT8_TIME_LOOP)
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "--size", "n=20",
                                    "--size", "ts=200", str(path)])
    assert res.exit_code == 0, res.output
    from f2loopy.pipeline import translate_text
    r = translate_text(path.read_text(), path, transform="auto")
    assert "host loop t" in r.script_output
    assert "(long)t * (long)t * (long)t * 1000" in r.generated[0].launches[0].body[0].device_code
