! Two matrix products: D := alpha * A * B * C + beta * D, through tmp = alpha * A * B
! (A is ni x nk, B nk x nj, C nj x nl, D ni x nl).
subroutine mm2(ni, nj, nk, nl, alpha, beta, a, b, c, d, tmp)
  implicit none
  integer, intent(in) :: ni, nj, nk, nl
  double precision, intent(in) :: alpha, beta
  double precision, intent(in) :: a(ni, nk), b(nk, nj), c(nj, nl)
  double precision, intent(inout) :: d(ni, nl)
  double precision, intent(out) :: tmp(ni, nj)
  integer :: i, j, k

  do j = 1, nj
    do i = 1, ni
      tmp(i, j) = 0.0d0
      do k = 1, nk
        tmp(i, j) = tmp(i, j) + alpha * a(i, k) * b(k, j)
      end do
    end do
  end do
  do j = 1, nl
    do i = 1, ni
      d(i, j) = beta * d(i, j)
      do k = 1, nj
        d(i, j) = d(i, j) + tmp(i, k) * c(k, j)
      end do
    end do
  end do
end subroutine mm2
