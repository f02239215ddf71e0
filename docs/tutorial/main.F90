! The tutorial's mini-app: nsteps of diffusion and decay, a diagnostic every
! 50 steps.  Built as plain Fortran, or with -DUSE_OPENCL calling the OpenCL
! versions of diffuse and decay with the fields kept on the device.
program mini
#ifdef USE_OPENCL
  use diffuse_cl_mod
  use decay_cl_mod
#endif
  implicit none
  integer, parameter :: nx = 200, ny = 120, nsteps = 400
  double precision, allocatable :: u(:, :), unew(:, :)
  double precision :: s
  integer :: i, j, step

  allocate(u(0:nx+1, 0:ny+1), unew(0:nx+1, 0:ny+1))
  do j = 0, ny + 1
    do i = 0, nx + 1
      u(i, j) = exp(-0.002d0 * ((i - nx / 3)**2 + (j - ny / 2)**2))
    end do
  end do
  unew = u

#ifdef USE_OPENCL
  call f2l_upload(u)                 ! from here on, u and unew live on the device
  call f2l_upload(unew)
#endif
  do step = 1, nsteps, 2
#ifdef USE_OPENCL
    call diffuse_cl(nx, ny, 0.2d0, u, unew)
    call diffuse_cl(nx, ny, 0.2d0, unew, u)
    call decay_cl(nx, ny, 0.001d0, u)
#else
    call diffuse(nx, ny, 0.2d0, u, unew)
    call diffuse(nx, ny, 0.2d0, unew, u)
    call decay(nx, ny, 0.001d0, u)
#endif
    if (mod(step, 100) == 99) then
#ifdef USE_OPENCL
      call f2l_download(u)           ! the host's diagnostic needs the current field
#endif
      call total(nx, ny, u, s)
      print '(a, i4, a, es23.15)', "step ", step + 1, ": total ", s
    end if
  end do
#ifdef USE_OPENCL
  call f2l_download(u)
  call f2l_release(u)
  call f2l_release(unew)
#endif
  call total(nx, ny, u, s)
  print '(a, es23.15)', "final total ", s
end program mini
