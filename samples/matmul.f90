! C = A * B for column-major matrices, written the textbook way.
subroutine matmul_ref(n, m, p, a, b, c)
  implicit none
  integer, intent(in) :: n, m, p
  real, intent(in) :: a(n, m), b(m, p)
  real, intent(out) :: c(n, p)
  integer :: i, j, k
  real :: acc

  do j = 1, p
    do i = 1, n
      acc = 0.0
      !$loopy begin tagged: dot
      do k = 1, m
        acc = acc + a(i, k) * b(k, j)
      end do
      !$loopy end tagged: dot
      c(i, j) = acc
    end do
  end do
end subroutine matmul_ref
