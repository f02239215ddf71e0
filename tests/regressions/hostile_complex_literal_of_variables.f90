! f2loopy-expect: error: the parts of a complex constant must be integer or real constants
! found by scripts/fuzz_hostile.py (seed 1, input 878): '(i, k)' parses as a
! complex literal; with variables as parts it raised pymbolic's
! UnknownVariableError instead of a diagnostic.
subroutine matmul_ref(n, a, b, c)
  implicit none
  integer n, i, k
  real a(n, n), b(n), c(n), acc
  do i = 1, n
    acc = 0.0
    do k = 1, n
      acc = acc + (i, k) * b(k)
    end do
    c(i) = acc
  end do
end subroutine
