! The covariance matrix of m variables observed n times (data is n x m): the columns
! are centred on their means, then cov(i, j) = sum over observations of
! data(:, i) * data(:, j) / (n - 1), computed for j >= i and mirrored.
subroutine covariance(m, n, data, mean, cov)
  implicit none
  integer, intent(in) :: m, n
  double precision, intent(inout) :: data(n, m)
  double precision, intent(out) :: mean(m), cov(m, m)
  integer :: i, j, k
  double precision :: s

  do j = 1, m
    s = 0.0d0
    do k = 1, n
      s = s + data(k, j)
    end do
    mean(j) = s / n
  end do
  do j = 1, m
    do k = 1, n
      data(k, j) = data(k, j) - mean(j)
    end do
  end do
  do i = 1, m
    do j = i, m
      s = 0.0d0
      do k = 1, n
        s = s + data(k, i) * data(k, j)
      end do
      cov(i, j) = s / (n - 1)
      cov(j, i) = cov(i, j)
    end do
  end do
end subroutine covariance
