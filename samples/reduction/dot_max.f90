! A dot product and a maximum norm, accumulated the way Fortran programmers
! write them, and a script that turns both accumulations into one parallel
! reduction: each of the 256 work-items of a work-group sums a strided part
! of the vectors, then the work-group combines the partial results in local
! memory (a tree of halving steps with barriers).
!
!   f2loopy translate samples/reduction/dot_max.f90
!   f2loopy check samples/reduction/dot_max.f90 --size n=100000
subroutine dot_max(n, x, y, dot, amax)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n), y(n)
  double precision, intent(out) :: dot, amax
  integer :: i

  dot = 0.0d0
  amax = 0.0d0
  do i = 1, n
    !$loopy begin tagged: accumulate
    dot = dot + x(i) * y(i)
    amax = max(amax, abs(x(i)))
    !$loopy end tagged: accumulate
  end do
end subroutine dot_max

!$loopy begin
! (knl,) = parse_fortran(SOURCE, FILENAME)
! knl = accumulation_to_reduction(knl, "tag:accumulate", inames="i")
! knl = split_iname(knl, "i", 256, inner_tag="l.0")
! RESULT = [knl]
!$loopy end
