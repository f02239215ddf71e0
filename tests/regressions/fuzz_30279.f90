! f2loopy-check: --seed 30279 --range kk=-9:9 --range b=-2.0:2.0 --range u=-9:9 --range v=-2.0:2.0
! found by scripts/fuzz_differential.py, seed 30279: mismatch
!   u(3,4) int32    max |error| 12 at u(3,1): got 13, expected 1 (1 of 12 elements differ)  FAIL
!   v(7,4) float32  max |error| 0  ok
      subroutine fz30279(n, kk, b, u, v, ix)
        implicit none
        integer, intent(in) :: n
        integer, intent(in) :: kk
        real, intent(in) :: b(n)
        integer, intent(inout) :: u(3, 4)
        real, intent(inout) :: v(n+2, 4)
        integer, intent(in) :: ix(n)
        integer :: i1, i2, i3, i4
        do i1 = 1, n, 3
          do i2 = 1, n, 2
            u(3, 1) = (u(3, 1) + ((kk - dim(i2, kk)) / 2))
          end do
          do concurrent (i3 = 1:4)
            u(3, i3) = i3
          end do
          do i4 = 2, n - 1, 3
            v(n, 1) = b(ix(i4))
          end do
        end do
      end subroutine fz30279
