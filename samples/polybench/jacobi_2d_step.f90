! One Jacobi sweep of the five-point average on an n x n grid, from a into b
! (the time loop stays with the caller, which alternates a and b: one launch per sweep).
subroutine jacobi_2d_step(n, a, b)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n, n)
  double precision, intent(inout) :: b(n, n)
  integer :: i, j

  do j = 2, n - 1
    do i = 2, n - 1
      b(i, j) = 0.2d0 * (a(i, j) + a(i - 1, j) + a(i + 1, j) + a(i, j - 1) + a(i, j + 1))
    end do
  end do
end subroutine jacobi_2d_step
