! Norms of a vector: sum of absolute values, Euclidean norm and maximum norm,
! plus the index of the largest entry (scalar outputs, returned by the glue).
subroutine vector_norms(n, x, asum, nrm2, amax, imax)
  implicit none
  integer, intent(in) :: n
  real*8, intent(in) :: x(n)
  real*8, intent(out) :: asum, nrm2, amax
  integer, intent(out) :: imax
  integer :: i
  real*8 :: ssq, ax

  asum = 0.0d0
  ssq = 0.0d0
  amax = -1.0d0
  imax = 0
  do i = 1, n
    ax = abs(x(i))
    asum = asum + ax
    ssq = ssq + x(i)**2
    if (ax > amax) then
      amax = ax
      imax = i
    end if
  end do
  nrm2 = sqrt(ssq)
end subroutine vector_norms
