! f2loopy-check: --size n=20
! found by a corpus of realistic kernels: the fetch loop (l.0, like i_inner) was guarded by i_inner's
! range, so in the last, partial work-group the lanes that fetch the halo element skipped it
subroutine diff1(n, u, d)
  implicit none
  integer, intent(in) :: n
  real, intent(in) :: u(n+1)
  real, intent(out) :: d(n)
  integer :: i
  do i = 1, n
    d(i) = u(i+1) - u(i)
  end do
end subroutine diff1

!$loopy begin
! (knl,) = parse_fortran(SOURCE, FILENAME)
! knl = split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
! knl = add_prefetch(knl, "u", ["i_inner"], default_tag=None)
! knl = split_iname(knl, "u_dim_0", 16, inner_tag="l.0")
! RESULT = [knl]
!$loopy end
