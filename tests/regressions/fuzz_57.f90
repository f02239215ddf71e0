! f2loopy-check: --seed 3 --size n=5
! found by scripts/fuzz_differential.py, seed 57 (shrunk by hand): mismatch
!   u(4) float32  max |error| 0.832 at u(3): got 0.25, expected 1.082162
!   The 'else if (mask(1))' snapshot replaced the enclosing 'if (mask(1))'
!   in the predicates of the then branch: it ran only when cond_1 was set.
subroutine t(n, b, u, mask)
  integer n, i, j, it
  real u(4), b
  logical mask(2)
  it = 0
  do i = 0, n
    if (mask(1)) then
      u(2) = b
      if ((i - it) == it) then
        it = it
        do j = 1, 4
          u(j) = 0.25
        end do
      else if (mask(1)) then
      end if
    end if
  end do
end
