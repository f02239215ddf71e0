! One explicit Euler step of the 2-D heat equation  du/dt = lap(u)  on this
! rank's block of the grid: nx x ny interior points with a one-cell halo.  The
! halo holds the fixed boundary values or, where the block borders another
! rank's, copies of that rank's edge columns (main.F90 exchanges them).
! r = dt / h**2.
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

! The translation: one work-item per grid point, 16 x 4 work-groups, and no
! fused multiply-adds, so that the results are those of the Fortran bit for bit.
!$loopy begin
! (knl,) = parse_fortran(SOURCE, FILENAME)
! knl = assume(knl, "nx >= 1 and ny >= 1")
! knl = set_options(knl, fp_contract=False)
! knl = split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
! knl = split_iname(knl, "j", 4, outer_tag="g.1", inner_tag="l.1")
! RESULT = [knl]
!$loopy end
