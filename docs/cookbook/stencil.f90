! Cookbook: a stencil whose statements share private scalars (the fluxes of
! an upwind advection step).  Each work-item computes its own fluxes: scalars
! written before they are read in every iteration are private to it.
subroutine upwind(nx, ny, c, q, qnew)
  integer, intent(in) :: nx, ny
  real, intent(in) :: c, q(0:nx+1, 0:ny+1)
  real, intent(inout) :: qnew(nx, ny)
  integer :: i, j
  real :: fw, fe, fs, fn
  do j = 1, ny
    do i = 1, nx
      fw = c * q(i-1, j)
      fe = c * q(i, j)
      fs = c * q(i, j-1)
      fn = c * q(i, j)
      qnew(i, j) = q(i, j) + fw - fe + fs - fn
    end do
  end do
end subroutine upwind

!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! k = split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")
! k = split_iname(k, "j", 8, outer_tag="g.1", inner_tag="l.1")
! RESULT = k
!$loopy end
