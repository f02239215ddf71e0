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

! The same step on the columns j1 .. j2 of the block only (1 <= j1, j2 <= ny;
! nothing where j1 > j2): main.F90 and heat_mpi4py.py compute the two edge
! columns first, so that their halo exchange overlaps the interior columns.
! Every point gets the arithmetic of heat_step, so the results do not change.
subroutine heat_cols(nx, ny, j1, j2, r, u, unew)
  implicit none
  integer, intent(in) :: nx, ny, j1, j2
  double precision, intent(in) :: r
  double precision, intent(in) :: u(0:nx+1, 0:ny+1)
  double precision, intent(inout) :: unew(0:nx+1, 0:ny+1)
  integer :: i, j

  do j = j1, j2
    do i = 1, nx
      unew(i, j) = u(i, j) + r * (u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1) - 4 * u(i, j))
    end do
  end do
end subroutine heat_cols

! The translation: one work-item per grid point, 16 x 4 work-groups, and no
! fused multiply-adds, so that the results are those of the Fortran bit for bit.
!$loopy begin
! step, cols = parse_fortran(SOURCE, FILENAME)
! step = assume(step, "nx >= 1 and ny >= 1")
! cols = assume(cols, "nx >= 1 and ny >= 1 and j1 >= 1 and j2 <= ny")
! RESULT = []
! for knl in (step, cols):
!     knl = set_options(knl, fp_contract=False)
!     knl = split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
!     knl = split_iname(knl, "j", 4, outer_tag="g.1", inner_tag="l.1")
!     RESULT.append(knl)
!$loopy end
