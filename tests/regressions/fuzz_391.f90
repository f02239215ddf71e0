! f2loopy-check: --seed 391 --size n=1 --range a=-9:9 --range u=-9:9 --range v=-9:9 --range cnt=-9:9
! found by scripts/fuzz_differential.py, seed 391: mismatch
!   v(7,7) int32  max |error| 8 at v(2,7): got 0, expected -8 (1 of 49 elements differ)
!   The unrolled copy i1_inner = 1 of the split loop ran its nested loop over
!   i2 even where i1 = 2 > n: only instructions had a guard, loops none.
subroutine fz391(n, m, a, u, v, cnt)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: m
  integer, intent(in) :: a(3, 4)
  integer, intent(inout) :: u(4, 4)
  integer, intent(inout) :: v(0:m+1, m+2)
  integer, intent(inout) :: cnt
  double precision :: t2
  integer :: it
  integer :: i1, i2
  t2 = 1.0d0
  it = 0
  do i1 = 1, n
    do i2 = i1, m, 3
      v(i1, m+2) = it
      t2 = cnt
    end do
    u(1, 1) = a(1, 4)
  end do
end subroutine fz391

!$loopy begin
! (k,) = parse_fortran(SOURCE, FILENAME)
! k = split_iname(k, "i1", 2, inner_tag="unr")
! RESULT = [k]
!$loopy end
