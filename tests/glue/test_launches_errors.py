"""Error paths ('stop', 'call xerbla') in the launches of a split kernel
(red team of several launches per subroutine): the error buffer is shared
by every launch, the first error reached is the one reported, the launches
after it do nothing the Fortran would not have done (the 'returned' flag
every later launch checks), and the Python glue raises without copying
anything back, as for one launch."""

from __future__ import annotations

import numpy as np
import pytest

from util import needs_gfortran, translate_and_load

# three launches under --transform auto: the doubling, the reversal with a
# 'stop 3' site, the copy back with a 'call xerbla' site
ERRK = """subroutine errk(n, a, b)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: a(n), b(n)
  integer :: i
  do i = 1, n
    a(i) = a(i) * 2.0d0
  end do
  do i = 1, n
    if (a(n + 1 - i) < 0.0d0) stop 3
    b(i) = a(n + 1 - i)
  end do
  do i = 1, n
    if (b(n + 1 - i) > 100.0d0) call xerbla('ERRK', i)
    a(i) = b(n + 1 - i) + 1.0d0
  end do
end subroutine errk
"""


@pytest.fixture(scope="module")
def errk(tmp_path_factory):
    module, result = translate_and_load(ERRK, tmp_path_factory.mktemp("errk"),
                                        transform="auto", filename="errk.f90")
    (gk,) = result.generated
    assert [g.c_name for g in gk.launches] == ["errk_phase1", "errk_phase2", "errk_phase3"]
    return module


@pytest.mark.differential
def test_stop_in_a_later_launch_raises_and_copies_nothing(errk, cl_queue):
    a, b = np.ones(10), np.zeros(10)
    a[3] = -1.0
    with pytest.raises(errk.KernelStopError) as e:
        errk.errk(10, a, b, queue=cl_queue)
    assert e.value.where.endswith(".f90:10") and e.value.code == 3
    assert str(e.value).endswith(": STOP 3")
    a0 = np.ones(10)
    a0[3] = -1.0
    np.testing.assert_array_equal(a, a0)          # nothing copied back
    np.testing.assert_array_equal(b, np.zeros(10))


@pytest.mark.differential
def test_the_launches_after_a_stop_do_what_the_fortran_did(errk, cl_queue):
    """Device-resident arrays show the state at the stop: the first launch
    ran, the second until the stop (b(1:6)), the third not at all."""
    import pyopencl.array as cla
    a = np.ones(10)
    a[3] = -1.0
    da, db = cla.to_device(cl_queue, a), cla.zeros(cl_queue, 10, np.float64)
    with pytest.raises(errk.KernelStopError):
        errk.errk(10, da, db, queue=cl_queue)
    np.testing.assert_array_equal(da.get(), 2 * a)
    np.testing.assert_array_equal(db.get(), [2.0] * 6 + [0.0] * 4)


@pytest.mark.differential
def test_xerbla_in_the_last_launch(errk, cl_queue):
    a, b = np.full(10, 60.0), np.zeros(10)
    with pytest.raises(errk.KernelStopError) as e:
        errk.errk(10, a, b, queue=cl_queue)
    assert e.value.where.endswith(".f90:14")
    assert str(e.value).endswith("On entry to ERRK parameter number 1 had an illegal value")
    np.testing.assert_array_equal(a, np.full(10, 60.0))
    a, b = np.full(10, 0.5), np.zeros(10)           # no error: every launch ran
    errk.errk(10, a, b, queue=cl_queue)
    np.testing.assert_array_equal(a, np.full(10, 2.0))
    np.testing.assert_array_equal(b, np.ones(10))


@needs_gfortran
@pytest.mark.differential
def test_check_runs_the_split_error_kernel(tmp_path):
    from click.testing import CliRunner

    from f2loopy.cli import main
    path = tmp_path / "errk.f90"
    path.write_text(ERRK)
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "--size", "n=40",
                                    str(path)])
    assert res.exit_code == 0, res.output


MAIN = """
program main
  use checks
  use errk_cl_mod
  implicit none
  integer, parameter :: n = 10
  double precision :: a(n), b(n)
  integer :: st
  a = 1; a(4) = -1; b = 0
  call errk_cl(n, a, b, st)
  call check(st == F2L_ERROR_STOP, "stop 3 in the second launch: the status")
  call check(index(f2l_error_message(), ".f90:10: STOP 3") > 0, "and its message")
  a = 60; b = 0
  call errk_cl(n, a, b, st)
  call check(st == F2L_ERROR_STOP, "xerbla in the third launch")
  call check(index(f2l_error_message(), "On entry to ERRK parameter number 1") > 0, &
             "and its message")
  a = 0.5d0; b = 0
  call errk_cl(n, a, b, st)
  call check(st == F2L_OK .and. all(a == 2) .and. all(b == 1), "no error: every launch")
  call done()
end program

subroutine xerbla(srname, info)
  character(len=*), intent(in) :: srname
  integer, intent(in) :: info
  print *, 'xerbla ', srname, info
  stop 1
end subroutine
"""


@pytest.mark.opencl
@pytest.mark.gfortran
@pytest.mark.differential
def test_fortran_glue_reports_the_error_of_a_later_launch(tmp_path, gfortran, gcc, opencl_headers, opencl_device):
    from fortran_util import (
        assert_all_ok, build_runtime, compile_and_run)
    from f2loopy.pipeline import translate_text, write_outputs
    runtime = build_runtime(tmp_path)
    path = tmp_path / "errk.f90"
    path.write_text(ERRK)
    write_outputs(translate_text(ERRK, path, transform="auto").outputs)
    sources = [path, tmp_path / "errk_cl.c", tmp_path / "errk_cl.f90"]
    proc = compile_and_run(tmp_path, runtime, sources, MAIN)
    assert_all_ok(proc, 5)
