! The Fortran glue's side of benchmarks/launches_gpu.py: PolyBench's jacobi-2d and
! fdtd-2d translated with --transform auto (their time loops run on the host, one
! launch per sweep), called through jacobi_2d_cl / fdtd_2d_cl with the arrays
! device-resident (f2l_upload), so that a call is its launches and nothing else.
!
!   launches_fortran jacobi N TSTEPS REPEATS
!   launches_fortran fdtd NX NY TMAX REPEATS
!
! prints one line "seconds S" per repeat: the call and f2l_sync (wait for the
! last launch), after one call not timed (program build, first launches); then
! "check V", a sum of the results, so that the work cannot be left out.
program launches_fortran
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use f2loopy_runtime
  use jacobi_2d_cl_mod
  use fdtd_2d_cl_mod
  implicit none
  character(len=32) :: what, arg
  integer :: n, nx, ny, steps, repeats, r, i, j
  real(real64), allocatable :: a(:, :), b(:, :), ex(:, :), ey(:, :), hz(:, :), fict(:)
  integer(int64) :: t0, t1, rate

  call get_command_argument(1, what)
  if (trim(what) == "jacobi") then
    call get_command_argument(2, arg); read(arg, *) n
    call get_command_argument(3, arg); read(arg, *) steps
    call get_command_argument(4, arg); read(arg, *) repeats
    allocate(a(n, n), b(n, n))
    do j = 1, n
      do i = 1, n
        a(i, j) = (dble(i - 1) * (j + 1) + 2) / n
        b(i, j) = (dble(i - 1) * (j + 2) + 3) / n
      end do
    end do
    call f2l_upload(a)
    call f2l_upload(b)
    call jacobi_2d_cl(steps, n, a, b)
    call f2l_sync()
    do r = 1, repeats
      call system_clock(t0, rate)
      call jacobi_2d_cl(steps, n, a, b)
      call f2l_sync()
      call system_clock(t1)
      print '(a, es16.8)', "seconds ", dble(t1 - t0) / dble(rate)
    end do
    call f2l_download(a)
    print '(a, es25.17)', "check ", sum(a)
  else if (trim(what) == "fdtd") then
    call get_command_argument(2, arg); read(arg, *) nx
    call get_command_argument(3, arg); read(arg, *) ny
    call get_command_argument(4, arg); read(arg, *) steps
    call get_command_argument(5, arg); read(arg, *) repeats
    allocate(ex(nx, ny), ey(nx, ny), hz(nx, ny), fict(steps))
    do i = 1, steps
      fict(i) = i - 1
    end do
    do j = 1, ny
      do i = 1, nx
        ex(i, j) = (dble(i - 1) * j) / nx
        ey(i, j) = (dble(i - 1) * (j + 1)) / ny
        hz(i, j) = (dble(i - 1) * (j + 2)) / nx
      end do
    end do
    call f2l_upload(fict)
    call f2l_upload(ex)
    call f2l_upload(ey)
    call f2l_upload(hz)
    call fdtd_2d_cl(steps, nx, ny, fict, ex, ey, hz)
    call f2l_sync()
    do r = 1, repeats
      call system_clock(t0, rate)
      call fdtd_2d_cl(steps, nx, ny, fict, ex, ey, hz)
      call f2l_sync()
      call system_clock(t1)
      print '(a, es16.8)', "seconds ", dble(t1 - t0) / dble(rate)
    end do
    call f2l_download(hz)
    print '(a, es25.17)', "check ", sum(hz)
  else
    print '(a)', "usage: launches_fortran jacobi N TSTEPS REPEATS | fdtd NX NY TMAX REPEATS"
    stop 2
  end if
end program launches_fortran
