! f2loopy-check: --seed 401742 --size n=3 --range alpha=-2.0:2.0 --range a=-2.0:2.0 --range b=-2.0:2.0 --range c=-2.0:2.0 --range v=-2.0:2.0 --range s=-2.0:2.0
! f2loopy-expect: error: iname 'i1_inner' is tagged ilp.unr: its iterations run innermost, inside 'i2'
! found by scripts/fuzz_differential.py, seed 401742: mismatch: the ilp iname was moved inside
! the loop over i2, reordering the updates of s (a dependence over both loops)
subroutine fz401742(n, m, alpha, a, b, c, v, s)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: m
  real*8, intent(in) :: alpha
  real*4, intent(in) :: a(-1:m)
  real, intent(in) :: b(n, -1:m, n)
  real*8, intent(in) :: c(m, n)
  real, intent(inout) :: v(n)
  real(kind=8), intent(inout) :: s
  integer :: it
  integer :: i1, i2, i3
  it = 0
  do i1 = 1, m
    do i2 = 1, n
      s = (max((a(i1) + s), alpha) - (-(min(dble(i2), c(i1, i2)))))
      if (((it > it) .or. (a(m) .lt. b(1, i1, i2)))) cycle
      select case ((min(it, m) + it))
      case (-1)
        do concurrent (i3 = 2:n)
          v(i3) = 1.0
        end do
      case (1)
      case (5)
      case default
      end select
    end do
  end do
end subroutine fz401742

!$loopy begin
! k = parse_fortran(SOURCE, FILENAME)['fz401742']
! k = split_iname(k, "i1", 2, inner_tag="ilp")
! RESULT = [k]
!$loopy end
