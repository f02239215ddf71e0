! One explicit step of the 1-D shallow water equations with Rusanov fluxes,
! written the modern way: a module with kind and physical parameters, a pure
! function and a helper subroutine called from the kernel (f2loopy inlines
! both), array syntax on whole arrays and sections, and reductions.
module shallow_water
  implicit none
  integer, parameter :: wp = kind(1.0d0)
  real(wp), parameter :: grav = 9.81_wp, half = 0.5_wp

contains

  pure function wave_speed(h, hu) result(c)
    real(wp), intent(in) :: h, hu
    real(wp) :: c
    c = abs(hu / h) + sqrt(grav * h)
  end function wave_speed

  subroutine physical_flux(h, hu, f)
    real(wp), intent(in) :: h, hu
    real(wp), intent(out) :: f(2)
    f(1) = hu
    f(2) = hu**2 / h + half * grav * h**2
  end subroutine physical_flux

  ! q(:, 0) and q(:, n+1) are ghost cells
  subroutine rusanov_step(n, dt, dx, q, qnew, cfl)
    integer, intent(in) :: n
    real(wp), intent(in) :: dt, dx, q(2, 0:n+1)
    real(wp), intent(out) :: qnew(2, n), cfl
    real(wp) :: fl(2), fr(2), flux(2), smax
    integer :: i
    qnew = q(:, 1:n)
    cfl = 0.0_wp
    do i = 0, n
      call physical_flux(q(1, i), q(2, i), fl)
      call physical_flux(q(1, i + 1), q(2, i + 1), fr)
      smax = max(wave_speed(q(1, i), q(2, i)), wave_speed(q(1, i + 1), q(2, i + 1)))
      flux = half * (fl + fr) - half * smax * (q(:, i + 1) - q(:, i))
      if (i >= 1) qnew(:, i) = qnew(:, i) - dt / dx * flux
      if (i < n) qnew(:, i + 1) = qnew(:, i + 1) + dt / dx * flux
      cfl = max(cfl, smax * dt / dx)
    end do
  end subroutine rusanov_step

  subroutine diagnostics(n, q, mass, momentum, hmax)
    integer, intent(in) :: n
    real(wp), intent(in) :: q(2, 0:n+1)
    real(wp), intent(out) :: mass, momentum, hmax
    mass = sum(q(1, 1:n))
    momentum = sum(q(2, 1:n))
    hmax = maxval(q(1, 1:n))
  end subroutine diagnostics

end module shallow_water
