! The physics of the tutorial's mini-app: a tracer diffusing on a 2-D grid
! with fixed boundary values, decaying a little every step, and a diagnostic.
subroutine diffuse(nx, ny, k, u, unew)
  integer, intent(in) :: nx, ny
  double precision, intent(in) :: k, u(0:nx+1, 0:ny+1)
  double precision, intent(inout) :: unew(0:nx+1, 0:ny+1)
  integer :: i, j
  double precision :: lap
  do j = 1, ny
    do i = 1, nx
      lap = u(i-1, j) + u(i+1, j) + u(i, j-1) + u(i, j+1) - 4 * u(i, j)
      unew(i, j) = u(i, j) + k * lap
    end do
  end do
end subroutine diffuse

subroutine decay(nx, ny, rate, u)
  integer, intent(in) :: nx, ny
  double precision, intent(in) :: rate
  double precision, intent(inout) :: u(0:nx+1, 0:ny+1)
  integer :: i, j
  do j = 1, ny
    do i = 1, nx
      u(i, j) = u(i, j) * (1 - rate)
    end do
  end do
end subroutine decay

subroutine total(nx, ny, u, s)
  integer, intent(in) :: nx, ny
  double precision, intent(in) :: u(0:nx+1, 0:ny+1)
  double precision, intent(out) :: s
  integer :: i, j
  s = 0
  do j = 1, ny
    do i = 1, nx
      s = s + u(i, j)
    end do
  end do
end subroutine total

!$loopy begin
! diffuse, decay, total = parse_fortran(SOURCE, FILENAME)
! # work-groups of 32 x 4 work-items; i (Fortran's first, fastest subscript) on axis 0
! diffuse = split_iname(diffuse, "i", 32, outer_tag="g.0", inner_tag="l.0")
! diffuse = split_iname(diffuse, "j", 4, outer_tag="g.1", inner_tag="l.1")
! decay = apply_recipe("gpu_tiling", decay, inames="j,i", tile=(4, 32))
! # total stays as it is: the driver calls the Fortran one on the host
! RESULT = [diffuse, decay, total]
!$loopy end
