! tsteps Jacobi sweeps of the five-point average on an n x n grid (boundary fixed),
! each sweep from a into b and back.
subroutine jacobi_2d(tsteps, n, a, b)
  implicit none
  integer, intent(in) :: tsteps, n
  double precision, intent(inout) :: a(n, n), b(n, n)
  integer :: t, i, j

  do t = 1, tsteps
    do j = 2, n - 1
      do i = 2, n - 1
        b(i, j) = 0.2d0 * (a(i, j) + a(i - 1, j) + a(i + 1, j) + a(i, j - 1) + a(i, j + 1))
      end do
    end do
    do j = 2, n - 1
      do i = 2, n - 1
        a(i, j) = 0.2d0 * (b(i, j) + b(i - 1, j) + b(i + 1, j) + b(i, j - 1) + b(i, j + 1))
      end do
    end do
  end do
end subroutine jacobi_2d
