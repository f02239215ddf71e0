! Cookbook: reductions.  Accumulations tagged in the Fortran become one
! parallel reduction (a tree in local memory over the work-items of a group).
subroutine norms(n, x, s2, smax)
  integer, intent(in) :: n
  real, intent(in) :: x(n)
  real, intent(out) :: s2, smax
  integer :: i
  s2 = 0
  smax = 0
  do i = 1, n
    !$loopy begin tagged: accumulate
    s2 = s2 + x(i) * x(i)
    smax = max(smax, abs(x(i)))
    !$loopy end tagged: accumulate
  end do
end subroutine norms

!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! k = accumulation_to_reduction(k, "tag:accumulate", inames="i")
! RESULT = split_iname(k, "i", 128, inner_tag="l.0")
!$loopy end
