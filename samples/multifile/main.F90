! Driver: the original relax() and its OpenCL translation relax_cl() on the
! same data; prints both results.  Built by CMakeLists.txt and by Makefile.
program main
  use physics
#ifdef USE_OPENCL
  use relax_cl_mod
#endif
  implicit none
  integer, parameter :: n = 64
  real(jprb) :: t(n), u(n)
  type(tparams) :: p
  integer :: i, step
  do i = 1, n
    t(i) = 250.0_jprb + mod(7 * i, 40)
  end do
  u = t
  p%relax = 0.75_jprb
  do step = 1, 10
    call relax(n, t, p)
  end do
  print '(a, es23.15)', "fortran sum ", sum(t)
  print '(a, i0, a, es23.15)', "fortran sweeps ", sweeps, " last_max ", last_max
#ifdef USE_OPENCL
  sweeps = 0
  do step = 1, 10
    call relax_cl(n, u, p)
  end do
  print '(a, es23.15)', "opencl sum ", sum(u)
  print '(a, i0, a, es23.15)', "opencl sweeps ", sweeps, " last_max ", last_max
  print '(a, es10.3)', "max difference ", maxval(abs(t - u))
#endif
end program main
