! f2loopy-expect: error: integer literal 99999999999999999999 does not fit in 64 bits
! found by scripts/fuzz_hostile.py (seed 1, input 22): an integer literal
! beyond 64 bits raised OverflowError from numpy instead of a diagnostic.
subroutine s(n, a)
  integer n, i
  real a(n)
  do i = 1, 99999999999999999999
    a(i) = 0
  end do
end subroutine
