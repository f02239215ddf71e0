! heat.f90 with its transformation in the file (a !$loopy block): the sample the
! compiler wrapper translates (wrapper.mk, FC="f2loopyfc gfortran").
! One explicit Euler step of the 2-D heat equation  du/dt = lap(u), r = dt / h**2.
subroutine heat_step(nx, ny, r, u, unew)
  implicit none
  integer, intent(in) :: nx, ny
  double precision, intent(in) :: r
  double precision, intent(in) :: u(0:nx+1, 0:ny+1)
  double precision, intent(inout) :: unew(0:nx+1, 0:ny+1)
  integer :: i, j

  do j = 1, ny
    do i = 1, nx
      unew(i, j) = u(i, j) + r * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1) - 4 * u(i, j))
    end do
  end do
end subroutine heat_step

!$loopy begin
! knl, = parse_fortran(SOURCE, FILENAME)
! RESULT = apply_recipe("gpu_tiling", knl, tile=8)   # 8 x 8 work-groups
!$loopy end
