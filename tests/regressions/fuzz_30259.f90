! f2loopy-check: --seed 30259 --size n=3 --range a=-2.0:2.0 --range u=-9:9 --range v=-2.0:2.0 --range s=-2.0:2.0 --range cnt=-9:9 --rtol float64=2e-5
! found by scripts/fuzz_differential.py, seed 30259: mismatch
! f2loopy-expect: error: its own loop 'i1_1' (a copy of 'i1') would run it apart from instruction 'selector'
!   u(4,5) int32  max |error| 0  ok
!   s float64     max |error| 2.83: got -1.8298637306438228, expected 1.0 (1 of 1 elements differ)  FAIL
subroutine fz30259(n, a, u, v, s, cnt)
  implicit none
  integer, parameter :: k0 = 3
  integer, intent(in) :: n
  real, intent(in) :: a(4, 4)
  integer, intent(inout) :: u(4, n+2)
  real, intent(inout) :: v(3, n, 4)
  real(kind=8), intent(inout) :: s
  integer, intent(inout) :: cnt
  real :: t1
  integer :: i1, i5
  t1 = 0.0
  do i1 = 1, n
    select case ((-(u(2, n))))
    case (-3, -1, 0)
      s = min(max((-1.0), min(1.0, asin((a(1, 2) / ((1.0 + abs(a(1, 2)))))))), (sngl((s - 5)) / &
          & ((1.0 + abs((v(3, 1, 4) / ((1.0 + abs(t1)))))))))
    case default
      u(2, n) = cnt
    end select
    do i5 = n + 1, 0, -2
      u = k0
    end do
  end do
end subroutine fz30259

!$loopy begin
! k = parse_fortran(SOURCE, FILENAME)['fz30259']
! k = duplicate_inames(k, "i1", within="writes:u")
! RESULT = [k]
!$loopy end
