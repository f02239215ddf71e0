! f2loopy-check: --seed 14
! found by scripts/fuzz_differential.py, seed 14 (once it generated 'where'): rejected
!   the mask (1 - k0) == k0 .and. ... tab(2:4) folds to .false. but is an array expression
subroutine fz14(n, m, u, v, s)
  implicit none
  integer, parameter :: k0 = 1
  integer, intent(in) :: n
  integer, intent(in) :: m
  real, intent(inout) :: u(-1:n, 4, 4)
  integer, intent(inout) :: v(4, 0:n+1, 3)
  real(8), intent(inout) :: s
  real :: t1
  double precision :: t2
  integer :: it
  logical :: lg
  real :: tab(4)
  integer :: i1, i2
  data tab /0.125, 0.125, 0.5, 2.0/
  t1 = 0.0
  t2 = 1.0d0
  it = 0
  lg = .false.
  do i1 = 0, m + 1
    lg = ((dim(1.0e-1, 0.25) /= tab(4)) .or. (lg .and. (v(2, n, 1) .ge. i1)))
  end do
  do 30 i2 = 1, min(n, m)
    t1 = max((-1000.0), min(1000.0, (t1 - atan2(max((-1.0), min(1.0, tab(1))), (1.0 + abs((tab(1) - &
        & dim(real(i2), u(i2 - 1, 2, 2)))))))))
    s = dble(i2)
    if ((abs(v(1, 1, 1)) == k0)) then
      if ((dble(i2) < dble(max((-1.0), min(1.0, tab(1)))))) then
        where ((((1 - k0) == k0) .and. ((sngl(t2) + tab(2:2 + 3 - 1)) <= tab(2:2 + 3 - 1)))) &
            & v(3:1:-1, n, 1) = it
        s = asin(((t2 - 0.1d0) / ((1.0d0 + abs((t2 - 0.1d0))))))
      end if
    else
    end if
  30 continue
end subroutine fz14

