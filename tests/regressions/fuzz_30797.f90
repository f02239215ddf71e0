! f2loopy-check: --seed 30797 --range u=-2.0:2.0
! found by scripts/fuzz_differential.py, seed 30797 (on the GPU campaign): mismatch
!   an 'exit' among the statements a backward 'goto 510' repeats left only the
!   repetition, not the 'do' loop: u(m,1,2) went down n times instead of once
subroutine fz30797(n, m, u)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: m
  real(8), intent(inout) :: u(m, 4, m+2)
  integer :: ng
  integer :: i1, i2
  ng = 0
  do i1 = 1, n
    510 continue
    u(m, 1, 2) = (u(m, 1, 2) - .5d0)
    exit
    select case (ng)
    case (-1, 2)
      do 30 i2 = 1, min(n, m)
        goto 510
      30 continue
    end select
  end do
end subroutine fz30797
