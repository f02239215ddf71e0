! C := alpha * A * B + beta * C   (A is ni x nk, B is nk x nj, C is ni x nj)
subroutine gemm(ni, nj, nk, alpha, beta, a, b, c)
  implicit none
  integer, intent(in) :: ni, nj, nk
  double precision, intent(in) :: alpha, beta
  double precision, intent(in) :: a(ni, nk), b(nk, nj)
  double precision, intent(inout) :: c(ni, nj)
  integer :: i, j, k

  do j = 1, nj
    do i = 1, ni
      c(i, j) = beta * c(i, j)
      do k = 1, nk
        c(i, j) = c(i, j) + alpha * a(i, k) * b(k, j)
      end do
    end do
  end do
end subroutine gemm
