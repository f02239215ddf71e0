! One Jacobi sweep for the 2-D Poisson equation  -lap(u) = f  on a uniform grid
! with spacing h.  u carries a one-cell halo (index 0 and n+1) holding the
! boundary values.  Returns the largest update in resid.
subroutine jacobi_step(nx, ny, h, f, u, unew, resid)
  implicit none
  integer, intent(in) :: nx, ny
  double precision, intent(in) :: h
  double precision, intent(in) :: f(nx, ny)
  double precision, intent(in) :: u(0:nx+1, 0:ny+1)
  double precision, intent(inout) :: unew(0:nx+1, 0:ny+1)
  double precision, intent(out) :: resid
  integer :: i, j
  double precision :: h2, upd

  h2 = h * h
  resid = 0.0d0
  do j = 1, ny
    do i = 1, nx
      !$loopy begin tagged: stencil
      unew(i, j) = 0.25d0 * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1) + h2 * f(i, j))
      !$loopy end tagged: stencil
      upd = abs(unew(i, j) - u(i, j))
      resid = max(resid, upd)
    end do
  end do
end subroutine jacobi_step
