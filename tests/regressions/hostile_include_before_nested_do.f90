! f2loopy-expect: error: hostile_include_before_nested_do.f90:11:1: error: include 'x.h': no such file in
! found by scripts/fuzz_hostile.py (seed 7, input 14921): fparser attaches a
! line before a nested construct to that construct, ahead of its 'do': the
! loop was lowered from the include line (IndexError, a traceback).
subroutine s(n, u)
  implicit none
  integer, intent(in) :: n
  integer, intent(inout) :: u(3, 4)
  integer :: i1, i2
  do i1 = 1, n, 3
include 'x.h'
    do i2 = 1, n, 2
      u(3, 1) = u(3, 1) + i2
    end do
  end do
end subroutine
