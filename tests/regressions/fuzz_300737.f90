! f2loopy-check: --seed 300737 --size n=1 --range b=-2.0:2.0 --range s=-2.0:2.0
! found by scripts/fuzz_differential.py, seed 300737: the generated kernel never finished
!   the loop over i2 (bounds ptr(i1)..ptr(i1+1)-1, stored in temporaries under the 'if')
!   ran with uninitialised bounds when the condition was false
subroutine fz300737(n, m, b, ptr, s)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: m
  real(8), intent(in) :: b(m, m)
  integer, intent(in) :: ptr(n+1)
  real*8, intent(inout) :: s
  double precision :: t2
  integer :: it
  logical :: lg
  integer :: i1, i2, i3, i4
  t2 = 1.0d0
  it = 0
  lg = .false.
  do i1 = 1, n
    it = max((-1000), min(1000, (it + sign(it, (sign(m, 0) + (it - m))))))
    if ((t2 .lt. (0.1d0 - t2))) then
      do i2 = ptr(i1), ptr(i1 + 1) - 1
        do i3 = i2, m
          if (lg) cycle
        end do
      end do
      t2 = abs((b(1, 1) ** 2))
    else if ((lg .or. (b(1, 1) == (b(1, 1) + t2)))) then
      do i4 = 1, n
        s = (b(1, 1) - 2.5d0)
      end do
    end if
  end do
end subroutine fz300737

!$loopy begin
! k = parse_fortran(SOURCE, FILENAME)['fz300737']
! k = rename_iname(k, "i3", "i3_r")
! RESULT = [k]
!$loopy end
