! f2loopy-check: --seed 57 --size n=9 --size m=8 --range alpha=-2.0:2.0 --range b=-2.0:2.0 --range c=-2.0:2.0 --range u=-2.0:2.0
! found by scripts/fuzz_differential.py, seed 57: mismatch
!   u(4,4,3) float32  max |error| 5.02 at u(4,2,1): got 4.620534, expected 9.636332 (1 of 48 elements di
subroutine fz57(n, m, alpha, b, c, u, mask)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: m
  real, intent(in) :: alpha
  real, intent(in) :: b(3, m)
  real, intent(in) :: c(n)
  real, intent(inout) :: u(4, 4, 3)
  logical, intent(in) :: mask(m)
  integer :: it
  integer :: i1, i2
  it = 0
  do i1 = 0, n + 1
    if (mask(1)) then
      u(2, 1, 1) = b(1, 1)
      if (((i1 - it) == it)) then
        it = it
        do concurrent (i2 = 1:4, ((dble(c(n)) - 3.0d-1) >= dble(alpha)))
          u(i2, 2, 1) = 0.25
        end do
      else if (mask(1)) then
      end if
    end if
  end do
end subroutine fz57
