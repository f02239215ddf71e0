! Heat equation on the unit square: explicit Euler steps of a 5-point stencil.
!
! Built twice by CMakeLists.txt from this same file: heat_fortran calls the
! Fortran subroutine heat_step; heat_opencl (USE_OPENCL defined) calls
! heat_step_cl, its OpenCL translation, with u and unew kept on the device for
! the whole time loop (f2l_upload ... f2l_download), so no step pays a transfer.
!
! Usage: heat_fortran|heat_opencl [nx ny steps]; prints the final field's
! checksum and a few values with all their digits.
program heat_app
#ifdef USE_OPENCL
  use heat_step_cl_mod
#endif
  implicit none
  integer :: nx = 96, ny = 64, steps = 200
  double precision, allocatable :: u(:, :), unew(:, :)
  double precision :: r, x, y
  integer :: i, j, step
  character(len=32) :: arg

  if (command_argument_count() >= 3) then
    call get_command_argument(1, arg); read(arg, *) nx
    call get_command_argument(2, arg); read(arg, *) ny
    call get_command_argument(3, arg); read(arg, *) steps
  end if
  allocate(u(0:nx+1, 0:ny+1), unew(0:nx+1, 0:ny+1))
  r = 0.2d0     ! dt / h**2, stable below 0.25

  ! a hot spot and a warm edge; the boundary stays fixed
  do j = 0, ny + 1
    do i = 0, nx + 1
      x = dble(i) / (nx + 1)
      y = dble(j) / (ny + 1)
      u(i, j) = exp(-40 * ((x - 0.3d0)**2 + (y - 0.6d0)**2))
      if (i == 0) u(i, j) = 1
    end do
  end do
  unew = u

#ifdef USE_OPENCL
  print '(a)', "device: " // f2l_device_name()
  call f2l_upload(u)
  call f2l_upload(unew)
  do step = 1, steps, 2
    call heat_step_cl(nx, ny, r, u, unew)
    call heat_step_cl(nx, ny, r, unew, u)
  end do
  call f2l_download(u)
  call f2l_release(u)
  call f2l_release(unew)
#else
  do step = 1, steps, 2
    call heat_step(nx, ny, r, u, unew)
    call heat_step(nx, ny, r, unew, u)
  end do
#endif

  print '(a, i0, a, i0, a, i0)', "grid ", nx, " x ", ny, ", steps ", 2 * ((steps + 1) / 2)
  print '(a, es25.17)', "sum ", sum(u)
  print '(a, es25.17)', "center ", u(nx / 2, ny / 2)
  print '(a, es25.17)', "max ", maxval(u(1:nx, 1:ny))
end program heat_app
