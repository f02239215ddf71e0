! y := transpose(A) * (A * x)   (A is m x n)
subroutine atax(m, n, a, x, y, tmp)
  implicit none
  integer, intent(in) :: m, n
  double precision, intent(in) :: a(m, n), x(n)
  double precision, intent(out) :: y(n), tmp(m)
  integer :: i, j
  double precision :: s

  do i = 1, m
    s = 0.0d0
    do j = 1, n
      s = s + a(i, j) * x(j)
    end do
    tmp(i) = s
  end do
  do j = 1, n
    s = 0.0d0
    do i = 1, m
      s = s + a(i, j) * tmp(i)
    end do
    y(j) = s
  end do
end subroutine atax
