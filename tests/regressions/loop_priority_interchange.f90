! f2loopy-check: --seed 9033 --size n=9 --range a=-2.0:2.0 --range u=-2.0:2.0
! found by the differential fuzzer (seed 9033): set_loop_priority(k, "i2,i1")
! interchanged two loops although u(i2) reads u(i1), written by other
! iterations: a priority that reverses a dependence must not be followed.
subroutine fz9033(n, a, u)
  implicit none
  integer, intent(in) :: n
  real, intent(in) :: a(n)
  real*8, intent(inout) :: u(n)
  integer :: i1, i2
  do i1 = 1, n
    do i2 = 1, n
      u(i2) = min(u(i2), (max((-1.0), min(1.0, a(1))) - (u(i2) - u(i1))))
    end do
  end do
end subroutine fz9033

!$loopy begin
! k = parse_fortran(SOURCE, FILENAME)['fz9033']
! k = set_loop_priority(k, "i2,i1")
! RESULT = [k]
!$loopy end
