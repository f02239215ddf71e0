! The kernel: one smoothing sweep that uses the physics module's constants,
! its module variables and a derived-type argument, and calls clip() from
! another file.  Translate with:  f2loopy translate relax.f90 -I include
subroutine relax(n, t, p)
  use physics, only: jprb, rtt, tparams, offset, sweeps, last_max
  implicit none
  integer, intent(in) :: n
  real(jprb), intent(inout) :: t(n)
  type(tparams), intent(in) :: p
  real(jprb) :: tnew(n)
  real(8) :: clip
  integer :: i
  do i = 2, n - 1
    tnew(i) = p%weights(1) * t(i - 1) + p%weights(2) * t(i) + p%weights(3) * t(i + 1)
  end do
  do i = 2, n - 1
    t(i) = (1 - p%relax) * t(i) + p%relax * clip(tnew(i) + offset(mod(i, 4)), rtt)
  end do
  sweeps = sweeps + 1
  last_max = t(n / 2)
end subroutine relax
