! f2loopy-check: --seed 4 --size m=3
! found by scripts/fuzz_differential.py, seed 500140 (reduced by hand): mismatch
!   the guard of 'else if (.not. flag)' read the snapshot of its own condition
!   where it meant 'not (snapshot of flag)' (the two terms are equal
!   expressions), and that snapshot is evaluated only when 'flag' was false
subroutine fz500140(m, v, w, flag)
  implicit none
  integer, intent(in) :: m
  double precision, intent(inout) :: v, w
  logical, intent(inout) :: flag
  integer :: i
  do i = 1, m
    if (flag) then
      flag = .false.
    else if (.not. flag) then
      v = v - 0.5d0
      if (w > 0) cycle
    end if
    w = w + 1
  end do
end subroutine fz500140
