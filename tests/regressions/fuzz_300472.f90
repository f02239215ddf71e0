! f2loopy-check: --seed 300472 --range a=-9:9 --range u=-2.0:2.0
! found by scripts/fuzz_differential.py, seed 300472: mismatch
!   u(4,3,8) float32  max |error| 24 at u(4,1,6): got 32.0, expected 8.0 (3 of 96 elements differ)  FAIL
subroutine fz300472(n, m, a, u)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: m
  integer, intent(in) :: a(4, 3, n)
  real, intent(inout) :: u(4, 3, n+2)
  integer :: it
  integer :: i1, i2, i3
  it = 0
  do i1 = 1, n
    u(4, :, i1) = it
    do i2 = i1, m, 2
      do i3 = i1, m
        it = (i1 - (size(a, 2) - it))
      end do
    end do
  end do
end subroutine fz300472

!$loopy begin
! k = parse_fortran(SOURCE, FILENAME)['fz300472']
! k = split_iname(k, "i1", 4)
! k = fix_parameters(k, m=2)
! RESULT = [k]
!$loopy end
