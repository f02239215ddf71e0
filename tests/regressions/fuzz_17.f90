! f2loopy-check: --seed 17
! found by scripts/fuzz_differential.py, seed 17: internal error
!   NonAffineError: unknown name 'n' in the race check: the statement after the
!   g.0 loop runs in every group, and the number of groups (from n) was built
!   in a space without n.
subroutine fz17(n, u)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: u(4, 3)
  double precision :: t2
  integer :: i1
  t2 = 1.0d0
  do i1 = 0, n + 1
  end do
  u(2, 2) = t2
end subroutine fz17

!$loopy begin
! (k,) = parse_fortran(SOURCE, FILENAME)
! k = tag_inames(k, "i1:g.0")
! RESULT = [k]
!$loopy end
