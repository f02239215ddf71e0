! Tests of the Fortran module f2loopy_runtime on a real OpenCL device.
!
!   test_runtime_f          every check; prints FAIL lines, exits with status 1 on failure
!   test_runtime_f stop     an error without status= must stop the program with its message
program test_runtime_f
  use, intrinsic :: iso_c_binding
  use f2loopy_runtime
  implicit none
  integer :: failures = 0
  character(len=32) :: mode
  character(kind=c_char, len=:), allocatable, target :: source
  ! c_loc(source) is computed once: gfortran 12 passes c_loc of a character variable
  ! written directly as an actual argument with a spurious hidden length
  type(c_ptr) :: source_ptr

  source = "__kernel void scale(int n, double a, __global double *x) {" // new_line("a") // &
    "  for (int i = 0; i < n; i++) x[i] *= a;" // new_line("a") // "}" // new_line("a") // &
    "__kernel void count(int n, __global const int *flags, __global int *c) {" // &
    new_line("a") // "  int s = 0; for (int i = 0; i < n; i++) s += flags[i] != 0; c[0] = s;" // &
    new_line("a") // "}" // c_null_char
  source_ptr = c_loc(source)

  mode = ""
  if (command_argument_count() > 0) call get_command_argument(1, mode)
  if (mode == "stop") then
    call stop_without_status()
  else
    call f2l_init()
    print '(a)', "device: " // f2l_device_name()
    call test_transfer()
    call test_resident()
    call test_generic_types()
    call test_partial()
    call test_errors()
    call test_helpers()
    print '(i0, a)', failures, " failures"
    if (failures /= 0) stop 1
  end if

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      print '(a)', "FAIL: " // what // " (last error: " // f2l_error_message() // ")"
    end if
  end subroutine

  ! scale x(1:n) by a with the 'scale' kernel, through f2l_call as the glue does
  subroutine scale(n, a, x, status)
    integer(c_int32_t), intent(in), target :: n
    real(c_double), intent(in), target :: a
    real(c_double), dimension(..), intent(inout), contiguous, target :: x
    integer, intent(out), optional :: status
    type(c_ptr), save :: kernel = c_null_ptr
    type(f2l_call) :: c
    call c%begin("scale", kernel, source_ptr, "", "scale")
    call c%value(0, c_loc(n), 4_c_size_t)
    call c%value(1, c_loc(a), 8_c_size_t)
    call c%array(2, "x", "x(n)", c_loc(x), rank(x), size(x, kind=c_int64_t), &
                 int(n, c_int64_t), 8_c_int64_t, .true.)
    call c%run([1_c_int64_t, 1_c_int64_t, 1_c_int64_t], [1_c_int64_t, 1_c_int64_t, 1_c_int64_t])
    call c%finish(status)
  end subroutine

  subroutine test_transfer()
    real(c_double) :: x(5), y(2, 3)
    integer :: st
    x = [1, 2, 3, 4, 5]
    call scale(5, 2.0d0, x, st)
    call check(st == F2L_OK .and. all(x == [2, 4, 6, 8, 10]), "transfer: scale x")
    y = 1
    call scale(4, 3.0d0, y, st)       ! a rank-2 actual: sequence association
    call check(st == F2L_OK .and. all(y(:, 1:2) == 3) .and. all(y(:, 3) == 1), &
               "transfer: the first n elements of a rank-2 array")
    call scale(3, 3.0d0, y(1, :), st) ! a strided section: copied in and out
    call check(st == F2L_OK .and. all(y(1, :) == [9, 9, 3]) .and. y(2, 3) == 1, &
               "transfer: a strided section")
    call f2l_shutdown()   ! the kernel scale() keeps is stale now: looked up again
    call scale(5, 0.5d0, x, st)
    call check(st == F2L_OK .and. all(x == [1, 2, 3, 4, 5]), "transfer: after f2l_shutdown")
  end subroutine

  subroutine test_resident()
    real(c_double), allocatable :: u(:)
    integer :: st, step
    allocate(u(0:9))
    u = 1
    call f2l_upload(u, st)
    call check(st == F2L_OK .and. f2l_is_resident(u) .and. f2l_resident_arrays() == 1, &
               "resident: upload")
    do step = 1, 4
      call scale(10, 2.0d0, u, st)
    end do
    call check(st == F2L_OK .and. all(u == 1), "resident: the host copy is untouched")
    call f2l_sync(st)
    call check(st == F2L_OK, "resident: sync")
    call f2l_download(u, st)
    call check(st == F2L_OK .and. all(u == 16), "resident: download")
    call scale(5, 1.0d0, u(1:), st)
    call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), &
               "scale: argument 'x' overlaps a device-resident array") == 1, &
               "resident: part of a resident array is refused")
    call f2l_release(u, st)
    call check(st == F2L_OK .and. .not. f2l_is_resident(u) .and. f2l_resident_arrays() == 0, &
               "resident: release")
    call f2l_release(u, st)
    call check(st == F2L_ERROR_RESIDENT, "resident: a second release is an error")
    call f2l_download(u, st)
    call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), &
               "f2l_download: the array") == 1, "resident: download of a non-resident array")
  end subroutine

  subroutine test_generic_types()
    integer(c_int8_t) :: i1(3)
    integer(c_int16_t) :: i2(3)
    integer(c_int32_t) :: i4(2, 2)
    integer(c_int64_t) :: i8(4)
    real(c_float) :: r4(2, 2, 2)
    complex(c_float_complex) :: c4(3)
    complex(c_double_complex) :: c8(2)
    logical :: l(5)
    integer :: st, total
    i1 = 1; i2 = 2; i4 = 4; i8 = 8; r4 = 0.5; c4 = (1, 2); c8 = (3, 4)
    l = [.true., .false., .true., .true., .false.]
    call f2l_upload(i1); call f2l_upload(i2); call f2l_upload(i4); call f2l_upload(i8)
    call f2l_upload(r4); call f2l_upload(c4); call f2l_upload(c8); call f2l_upload(l)
    call check(f2l_resident_arrays() == 8, "generic: eight uploads")
    i1 = 0; i2 = 0; i4 = 0; i8 = 0; r4 = 0; c4 = 0; c8 = 0; l = .false.
    call f2l_download(i1); call f2l_download(i2); call f2l_download(i4); call f2l_download(i8)
    call f2l_download(r4); call f2l_download(c4); call f2l_download(c8); call f2l_download(l)
    call check(all(i1 == 1) .and. all(i2 == 2) .and. all(i4 == 4) .and. all(i8 == 8) .and. &
               all(r4 == 0.5) .and. all(c4 == (1, 2)) .and. all(c8 == (3, 4)), &
               "generic: round trips")
    call check(all(l .eqv. [.true., .false., .true., .true., .false.]), "generic: logicals")
    call count_true(5, l, total, st)
    call check(st == F2L_OK .and. total == 3, "generic: a kernel reads resident logicals")
    call f2l_release(i1); call f2l_release(i2); call f2l_release(i4); call f2l_release(i8)
    call f2l_release(r4); call f2l_release(c4); call f2l_release(c8); call f2l_release(l)
    call check(f2l_resident_arrays() == 0, "generic: released")
  end subroutine

  subroutine count_true(n, flags, total, status)
    integer(c_int32_t), intent(in), target :: n
    logical, dimension(..), intent(in), contiguous, target :: flags
    integer(c_int32_t), intent(inout), target :: total
    integer, intent(out), optional :: status
    type(c_ptr), save :: kernel = c_null_ptr
    type(f2l_call) :: c
    call c%begin("count_true", kernel, source_ptr, "", "count")
    call c%value(0, c_loc(n), 4_c_size_t)
    call c%array(1, "flags", "flags(n)", c_loc(flags), rank(flags), &
                 size(flags, kind=c_int64_t), int(n, c_int64_t), 4_c_int64_t, .false.)
    call c%scalar(2, c_loc(total), 4_c_size_t)
    call c%run([1_c_int64_t, 1_c_int64_t, 1_c_int64_t], [1_c_int64_t, 1_c_int64_t, 1_c_int64_t])
    call c%finish(status)
  end subroutine

  ! halo-style transfers: columns of a device-resident 2-D array
  subroutine test_partial()
    real(c_double), allocatable :: u(:, :)
    real(c_float) :: w(4, 3)
    integer :: st, rank, dev, ndev
    allocate(u(0:4, 0:3))
    u = 1
    call f2l_upload(u)
    u(:, 3) = 5                         ! the new halo column, uploaded alone
    u(:, 0) = 7                         ! changed on the host only
    call f2l_upload_part(u(:, 3:3), st)
    call check(st == F2L_OK, "partial: upload a column")
    call scale(size(u), 2.0d0, u, st)   ! on the device, in place
    call f2l_download_part(u(:, 2:3), st)
    call check(st == F2L_OK .and. all(u(:, 2) == 2) .and. all(u(:, 3) == 10) .and. &
               all(u(:, 0) == 7) .and. all(u(:, 1) == 1), "partial: download two columns")
    call f2l_download_part(u(2:3, 1), st)
    call check(st == F2L_OK .and. all(u(2:3, 1) == 2) .and. u(1, 1) == 1, &
               "partial: download part of a column")
    call f2l_download_part(u(1, :), st)
    call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), &
               "f2l_download_part: the section is not contiguous in memory") == 1, &
               "partial: a row is not contiguous")
    ! element ranges: u(3:4, 1) is elements 9 and 10 of the 5 x 4 array u(0:4, 0:3)
    u(3:4, 1) = [-1, -2]
    call f2l_upload(u, 9, 2, st)
    call check(st == F2L_OK, "range: upload")
    u(3:4, 1) = 0
    call f2l_download(u, 9, 2, st)
    call check(st == F2L_OK .and. all(u(3:4, 1) == [-1, -2]), "range: download")
    call f2l_download(u, 18, 4, st)
    call check(st == F2L_ERROR_ARGUMENT .and. f2l_error_message() == "f2l_download: elements " &
               // "18 to 21 (first 18, count 4) are not elements of the array (1 to 20)", &
               "range: past the end")
    call f2l_upload(u, 1, 0, st)
    call check(st == F2L_OK, "range: nothing")
    call f2l_download(u)
    call check(all(u(:, 0) == 2), "partial: the host-only change was not uploaded")
    call f2l_release(u)
    call f2l_download(u, 1, 2, st)
    call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), "f2l_download: the " &
               // "section (16 bytes at ") == 1, "range: not resident")
    w = 0
    call f2l_upload_part(w(:, 2:3), st)
    call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), &
               "f2l_upload_part: the section (32 bytes at ") == 1 .and. &
               index(f2l_error_message(), ") is not part of a device-resident array") > 0, &
               "partial: not resident")
    call f2l_device_choice(rank, dev, ndev, st)
    call check(st == F2L_OK .and. ndev >= 1 .and. dev >= 0 .and. dev < ndev, &
               "partial: device choice")
    call f2l_init(local_rank=dev + ndev, status=st)
    call check(st == F2L_OK, "init: the rank of the device in use")
  end subroutine

  subroutine test_errors()
    real(c_double), target :: x(4), y(8)
    real(c_double) :: z(2, 8)
    integer :: st
    character(kind=c_char, len=:), allocatable, target :: bad
    type(c_ptr) :: kernel, bad_ptr
    type(f2l_call) :: c
    x = 1
    call scale(5, 2.0d0, x, st)
    call check(st == F2L_ERROR_ARGUMENT .and. f2l_error_message() == &
               "scale: argument 'x' has 4 elements, but its declaration x(n) needs 5", &
               "errors: an array that is too small")
    call check(all(x == 1), "errors: nothing ran")
    call scale(1, 2.0d0, x(2), st)
    call check(st == F2L_ERROR_ARGUMENT .and. index(f2l_error_message(), &
               "must be an array, not a scalar") > 0, "errors: an array element")
    call scale(2, 2.0d0, x, st)
    call check(st == F2L_OK .and. f2l_error_message() == "", "errors: success clears the message")
    bad = "__kernel void scale(int n) { this is not C }" // c_null_char
    kernel = c_null_ptr
    bad_ptr = c_loc(bad)
    call c%begin("broken", kernel, bad_ptr, "", "scale")
    call c%run([1_c_int64_t, 1_c_int64_t, 1_c_int64_t], [1_c_int64_t, 1_c_int64_t, 1_c_int64_t])
    call c%finish(st)
    call check(st == F2L_ERROR_BUILD .and. index(f2l_error_message(), &
               "broken: building the OpenCL program") == 1 .and. &
               index(f2l_error_message(), "CL_BUILD_PROGRAM_FAILURE") > 0, "errors: build failure")
    call check(.not. c_associated(kernel), "errors: no kernel after a failed build")
    call f2l_upload(z(1, :), st)
    call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), "not contiguous") > 0, &
               "errors: a strided section cannot be uploaded")
    y = 0
    call f2l_upload(y)
    call f2l_upload(y(3:4), st)
    call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), "overlaps") > 0, &
               "errors: overlapping uploads")
    call f2l_release(y)
  end subroutine

  subroutine test_helpers()
    call check(f2l_to_string(42_c_int32_t) == "42", "to_string int")
    call check(f2l_to_string(-7_c_int64_t) == "-7", "to_string int64")
    call check(f2l_to_string(.true.) == ".true.", "to_string logical")
    call check(f2l_to_string(0.5_c_double) == "0.5", "to_string double")
    call check(f2l_to_string(1.5_c_float) == "1.5", "to_string float")
    call check(f2l_to_string(2.0_c_float) == "2.0", "to_string float, integral")
    call check(f2l_to_string(1.0e20_c_float) == "0.100000002E+21", "to_string, exponent")
    call check(f2l_to_string((1.5_c_float, -2.0_c_float)) == "(1.5, -2.0)", "to_string complex")
    call check(f2l_floordiv(-7_c_int64_t, 2_c_int64_t) == -4 .and. &
               f2l_floordiv(7_c_int64_t, 2_c_int64_t) == 3 .and. &
               f2l_floordiv(-8_c_int64_t, 2_c_int64_t) == -4 .and. &
               f2l_floordiv(7_c_int64_t, -2_c_int64_t) == -4, "floordiv")
  end subroutine

  subroutine stop_without_status()
    real(c_double) :: x(3)
    x = 1
    call scale(10, 2.0d0, x)
    print '(a)', "not reached"
  end subroutine

end program test_runtime_f
