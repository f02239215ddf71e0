! One explicit step of the heat equation on an n x n x n grid, from a into b
! (the time loop stays with the caller: one launch per step).
subroutine heat_3d_step(n, a, b)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n, n, n)
  double precision, intent(inout) :: b(n, n, n)
  integer :: i, j, k

  do k = 2, n - 1
    do j = 2, n - 1
      do i = 2, n - 1
        b(i, j, k) = a(i, j, k) &
          + 0.125d0 * (a(i + 1, j, k) - 2.0d0 * a(i, j, k) + a(i - 1, j, k)) &
          + 0.125d0 * (a(i, j + 1, k) - 2.0d0 * a(i, j, k) + a(i, j - 1, k)) &
          + 0.125d0 * (a(i, j, k + 1) - 2.0d0 * a(i, j, k) + a(i, j, k - 1))
      end do
    end do
  end do
end subroutine heat_3d_step
