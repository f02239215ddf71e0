! f2loopy-check: --seed 10515 --size n=3 --range a=-9:9 --range b=-9:9 --range c=-9:9 --range u=-2.0:2.0 --range v=-2.0:2.0
! found by scripts/fuzz_differential.py, seed 10515: mismatch
!   u(4,5,4) float64  max |error| 0.602 at u(4,5,4): got -1.8380744566736773, expected -1.23601446534571
!   v(3) float64      max |error| 0  ok
subroutine fz10515(n, a, b, c, u, v)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: a(n, 4, 4)
  integer, intent(in) :: b(n)
  integer, intent(in) :: c(n+2)
  real*8, intent(inout) :: u(4, n+2, 4)
  real(kind=8), intent(inout) :: v(n)
  integer :: it
  integer :: i1, i2
  it = 0
  do i1 = 1, n
    select case (it)
    case (0)
      u(4, i1, 1) = u(4, i1, 1)
      it = a(1, 1, 1)
    case (1)
      do concurrent (i2 = 1:n, ((float(b(i1)) <= real(c(i2))) .or. (b(i1) .ne. (c(2) + 6))))
        v(i2) = 1000.0d0
      end do
    case (2)
    end select
  end do
end subroutine fz10515
