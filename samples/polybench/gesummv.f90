! y := alpha * A * x + beta * B * x   (A and B are n x n)
subroutine gesummv(n, alpha, beta, a, b, x, y)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: alpha, beta, a(n, n), b(n, n), x(n)
  double precision, intent(out) :: y(n)
  integer :: i, j
  double precision :: sa, sb

  do i = 1, n
    sa = 0.0d0
    sb = 0.0d0
    do j = 1, n
      sa = sa + a(i, j) * x(j)
      sb = sb + b(i, j) * x(j)
    end do
    y(i) = alpha * sa + beta * sb
  end do
end subroutine gesummv
