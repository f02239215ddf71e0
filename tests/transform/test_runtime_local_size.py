"""Run-time work-group sizes (issue 16): ``tag_inames(k, "i:l.0")`` on a loop
whose length is an argument.  The launch computes the local size from the
arguments (at least 1); the Python glue and the Fortran runtime refuse, with
a clear message, a size beyond the device's limit."""

import pytest

from f2loopy.codegen import generate_code
from f2loopy.frontend import parse_fortran
from f2loopy.transform import split_iname, tag_inames
from util import farray, load_kernels, needs_gfortran, run_transformed, zeros

SCALE = """
subroutine twice(n, m, x, y)
  implicit none
  integer n, m, i, j
  real x(n, m), y(n, m)
  do j = 1, m
    do i = 1, n
      y(i, j) = 2 * x(i, j) + j
    end do
  end do
end subroutine
"""


def _local(knl):
    return tag_inames(knl, "i:l.0, j:g.0")


def test_grid_and_code():
    knl = _local(parse_fortran(SCALE, "t.f90")[0])
    gk = generate_code(knl)
    assert not gk.grid.fixed_local_size
    assert str(gk.grid.local_size[0]) == "max(n, 1)"
    assert "reqd_work_group_size" not in gk.device_code
    # the lanes beyond n (n = 0: one lane) run nothing
    assert "if (n >= i)" in gk.device_code or "if (i <= n)" in gk.device_code


@needs_gfortran
@pytest.mark.parametrize("n, m", [(7, 3), (1, 2), (0, 2), (64, 1)])
def test_against_gfortran(n, m, tmp_path, cl_queue):
    run_transformed(SCALE, "twice", _local, [n, m, farray((n, m), seed=n), zeros((n, m))],
                    tmp_path, cl_queue)


def test_too_large_for_the_device(tmp_path, cl_queue):
    knl = _local(parse_fortran(SCALE, "test.f90")[0])
    module = load_kernels(knl, tmp_path)
    n = cl_queue.device.max_work_group_size + 1
    with pytest.raises(module.KernelArgumentError) as info:
        module.twice(n, 1, zeros((n, 1)), zeros((n, 1)), queue=cl_queue)
    limit = cl_queue.device.max_work_group_size
    assert str(info.value).startswith(
        f"twice: the work-group size {n} x 1 x 1 that the arguments give exceeds the limit of "
        f"the device ")
    assert f"({limit} work-items, at most " in str(info.value)


@needs_gfortran
def test_split_with_runtime_inner_length_stays_fixed(tmp_path, cl_queue):
    # the usual way: a constant inner length keeps the size fixed
    def transform(knl):
        return split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
    knl = transform(parse_fortran(SCALE, "test.f90")[0])
    assert generate_code(knl).grid.fixed_local_size
    run_transformed(SCALE, "twice", transform, [20, 2, farray((20, 2), seed=1),
                                                zeros((20, 2))], tmp_path, cl_queue)


LOCAL_MAIN = """
program main
  use checks
  use twice_cl_mod
  implicit none
  real, allocatable :: x(:, :), y(:, :)
  integer :: st, n
  character(len=16) :: arg
  call get_command_argument(1, arg)
  read(arg, *) n
  allocate(x(n, 2), y(n, 2))
  x = 1
  y = 0
  call twice_cl(n, 2, x, y, status=st)
  if (n <= 64) then
    call check(st == F2L_OK .and. all(y(:, 2) == 4), "small")
  else
    call check(st == F2L_ERROR_ARGUMENT, "too large")
    call check(index(f2l_error_message(), "the work-group size") > 0 .and. &
               index(f2l_error_message(), "that the arguments give kernel 'twice' exceeds " &
                     // "the limit of") > 0, "message")
  end if
  call done()
end program
"""


@pytest.mark.opencl
@pytest.mark.gfortran
def test_fortran_glue_runtime_local_size(tmp_path, cl_queue, gfortran, gcc, opencl_headers):
    from fortran_util import (
        assert_all_ok, build_runtime, compile_and_run, glue_from_kernels)
    runtime = build_runtime(tmp_path)
    knl = _local(parse_fortran(SCALE, "twice.f90")[0])
    sources = glue_from_kernels(tmp_path, "twice", SCALE, [knl])
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, LOCAL_MAIN, args=["13"]), 1)
    big = str(cl_queue.device.max_work_group_size + 1)
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, LOCAL_MAIN, args=[big]), 2)


@pytest.mark.usefixtures("sandbox_process")
def test_in_file_script_through_the_lowering_child(tmp_path):
    """A script's kernels are lowered in a limited child and sent back: a
    run-time local size travels as an expression, not an int."""
    from f2loopy.pipeline import translate_text
    text = SCALE + "!$loopy begin\n! k = parse_fortran(SOURCE, FILENAME)\n" \
        "! RESULT = tag_inames(k, 'i:l.0, j:g.0')\n!$loopy end\n"
    result = translate_text(text, tmp_path / "t.f90")
    (gk,) = result.generated
    assert not gk.grid.fixed_local_size
    assert str(gk.grid.local_size[0]) == "max(n, 1)"
