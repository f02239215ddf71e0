! f2loopy-check: --size nx=37 --size ny=21
! found by a corpus of realistic kernels: the l.auto fetch of a 17x8 tile (with its halo) for a
! 16x8 work-group was refused; l.auto now splits a fetch loop longer than the group
subroutine jac2(nx, ny, u, unew)
  implicit none
  integer, intent(in) :: nx, ny
  real(8), intent(in) :: u(0:nx+1, 0:ny+1)
  real(8), intent(out) :: unew(nx, ny)
  integer :: i, j
  do j = 1, ny
    do i = 1, nx
      unew(i,j) = u(i,j) + u(i+1,j)
    end do
  end do
end subroutine jac2

!$loopy begin
! (knl,) = parse_fortran(SOURCE, FILENAME)
! knl = split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
! knl = split_iname(knl, "j", 8, outer_tag="g.1", inner_tag="l.1")
! knl = add_prefetch(knl, "u", ["i_inner", "j_inner"], default_tag="l.auto")
! RESULT = [knl]
!$loopy end
