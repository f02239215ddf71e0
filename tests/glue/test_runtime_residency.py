"""Device residency in the Fortran runtime is safe against an array that is
deallocated and another allocated at the same address (issue 26, item 5):
``f2l_is_resident`` compares the size too, and ``F2LOOPY_CHECK_RESIDENT=1``
compares, at every launch on a device-resident array, the host copy with
the one of the last upload or download (and with the device copy while no
kernel has written it): a host copy changed since then (a new allocation at
the same address, an assignment on the host) is an error naming the
argument, not a kernel computing from stale device data.  Through the
generated Fortran glue, on PoCL."""

import pytest

from fortran_util import (
    assert_all_ok, build_runtime, compile_and_run, device_env, needs_toolchain, translate)

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]

KERNEL = """subroutine twice(n, x, y)
  integer n, i
  real x(n), y(n)
  do i = 1, n
    y(i) = 2*x(i)
  end do
end subroutine
"""

# u uploaded, deallocated; v allocated (same size) where u was, set on the host
REALLOC = """
program main
  use checks
  use f2loopy_runtime
  use twice_cl_mod
  use iso_c_binding
  implicit none
  real, allocatable, target :: u(:), v(:), w(:), y(:)
  type(c_ptr) :: at
  integer :: st, n
  n = 64
  allocate(y(n))
  allocate(u(n))
  u = 1
  call f2l_upload(u)
  at = c_loc(u)
  deallocate(u)
  allocate(v(n))
  if (.not. c_associated(at, c_loc(v))) then
    print '(a)', "SKIP: not allocated at the same address"
    stop
  end if
  v = 5
  call twice_cl(n, v, y, st)
  if (st == F2L_OK) then
    print '(a, f6.1)', "launch: ok y(1) = ", y(1)
  else
    print '(a, i0, a, a)', "launch: status ", st, " ", trim(f2l_error_message())
  end if
  call f2l_release(v)
  ! a smaller array at the address of a resident one is not that array
  allocate(w(2*n))
  w = 1
  call f2l_upload(w)
  at = c_loc(w)
  deallocate(w)
  allocate(u(n / 2))
  if (c_associated(at, c_loc(u))) &
    call check(.not. f2l_is_resident(u), "a smaller array at the same address is not resident")
  call done()
end program
"""

# what the documented pattern does: no false alarm in the checking mode
LEGAL = """
program main
  use checks
  use f2loopy_runtime
  use twice_cl_mod
  implicit none
  real, allocatable :: x(:), y(:)
  integer :: st, n
  n = 32
  allocate(x(n), y(n))
  x = 3
  y = 0
  call f2l_upload(x)
  call f2l_upload(y)
  call twice_cl(n, x, y, st)
  call check(st == F2L_OK, "first launch")
  call f2l_download(y)
  call check(all(y == 6), "result")
  x = 4                      ! changed on the host, then uploaded again
  call f2l_upload(x)
  call twice_cl(n, x, y, st)
  call check(st == F2L_OK, "launch after upload")
  call twice_cl(n, x, y, st)
  call check(st == F2L_OK, "launch again (y written on the device only)")
  call f2l_download(y)
  call check(all(y == 8), "result again")
  x(1:4) = 1                 ! a part changed and uploaded
  call f2l_upload(x, 1, 4)
  call twice_cl(n, x, y, st)
  call check(st == F2L_OK, "launch after a part upload")
  x = 9                      ! changed on the host and not uploaded
  call twice_cl(n, x, y, st)
  call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), "argument 'x'") > 0 &
             .and. index(f2l_error_message(), "host copy") > 0, "stale device copy refused")
  call done()
end program
"""


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


@pytest.mark.parametrize("check_mode", ["1", ""])
def test_reallocation_at_the_same_address(tmp_path, runtime, check_mode):
    sources = translate(tmp_path, "twice", KERNEL)
    proc = compile_and_run(tmp_path, runtime, sources, REALLOC,
                           env=device_env(F2LOOPY_CHECK_RESIDENT=check_mode))
    if "SKIP" in proc.stdout:
        pytest.skip("the allocator did not reuse the address")
    assert "0 failures" in proc.stdout, proc.stdout
    if check_mode:
        assert ("launch: status 5 twice_cl: argument 'x' is device-resident, but its host copy "
                "changed since it was last uploaded or downloaded") in proc.stdout, proc.stdout
    else:
        # without the checking mode the runtime cannot see it: the documented limit
        assert "launch: ok" in proc.stdout


def test_checking_mode_accepts_the_documented_pattern(tmp_path, runtime):
    sources = translate(tmp_path, "twice", KERNEL)
    proc = compile_and_run(tmp_path, runtime, sources, LEGAL,
                           env=device_env(F2LOOPY_CHECK_RESIDENT="1"))
    assert_all_ok(proc, 7)


# a download over host bytes changed since the last transfer: refused in the
# checking mode (a download elsewhere in the array, and one after an upload of
# the change, are not)
OVERWRITE = """
program main
  use checks
  use f2loopy_runtime
  implicit none
  real, allocatable :: y(:), z(:, :)
  integer :: st
  allocate(y(16), z(4, 3))
  y = 1
  z = 2
  call f2l_upload(y)
  call f2l_upload(z)
  y(1:2) = 7                   ! changed on the host, not uploaded
  call f2l_download(y, 5, 4, st)
  call check(st == F2L_OK, "a part that did not change")
  call f2l_download(y, st)
  call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), &
             "would overwrite 64 bytes (from byte 0)") > 0 .and. &
             index(f2l_error_message(), "changed on the host") > 0, "whole download refused")
  call check(all(y(1:2) == 7), "the host copy left as it was")
  call f2l_download(y, 2, 1, st)
  call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), &
             "would overwrite 4 bytes (from byte 4)") > 0, "part download refused")
  call f2l_upload(y, 1, 2)     ! the change uploaded: downloads are fine again
  call f2l_download(y, st)
  call check(st == F2L_OK .and. all(y(1:2) == 7) .and. all(y(3:) == 1), "after the upload")
  z(:, 3) = 5
  call f2l_download_part(z(:, 1:1), st)
  call check(st == F2L_OK, "another column")
  call f2l_download_part(z(:, 3:3), st)
  call check(st == F2L_ERROR_RESIDENT, "the changed column refused")
  call done()
end program
"""

# the mistake it catches: a step routine whose dummies are assumed-shape without
# contiguous; gfortran passes the glue's assumed-rank contiguous dummy a copy, the
# kernel runs on the copy, and the results reach only the host copy
COPY = """
program main
  use checks
  use f2loopy_runtime
  use twice_cl_mod
  implicit none
  real, allocatable :: x(:), y(:)
  integer :: st
  allocate(x(32), y(32))
  x = 3
  y = 0
  call f2l_upload(x)
  call f2l_upload(y)
  call step(x, y)
  call f2l_download(y, st)
  if (st == F2L_OK) then
    ! no copy was made: the kernel ran on the device-resident arrays
    call check(all(y == 6), "no copy: the device result")
  else
    call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), "ran on a copy") > 0, &
               "a copy: the download refused")
    call check(all(y == 6), "a copy: the host copy has the results")
  end if
  call done()
contains
  subroutine step(a, b)
    real, intent(in) :: a(:)
    real, intent(inout) :: b(:)
    call twice_cl(size(a), a, b)
  end subroutine
end program
"""


def test_checking_mode_refuses_a_download_over_host_changes(tmp_path, runtime):
    sources = translate(tmp_path, "twice", KERNEL)
    proc = compile_and_run(tmp_path, runtime, sources, OVERWRITE,
                           env=device_env(F2LOOPY_CHECK_RESIDENT="1"))
    assert_all_ok(proc, 7)
    # without the checking mode the downloads happen (the documented limit)
    proc = compile_and_run(tmp_path, runtime, sources, OVERWRITE, env=device_env(),
                           expect_rc=2)
    assert "FAIL whole download refused" in proc.stdout.splitlines(), proc.stdout


def test_checking_mode_names_a_kernel_run_on_a_copy(tmp_path, runtime):
    sources = translate(tmp_path, "twice", KERNEL)
    proc = compile_and_run(tmp_path, runtime, sources, COPY,
                           env=device_env(F2LOOPY_CHECK_RESIDENT="1"))
    assert_all_ok(proc, 2)
