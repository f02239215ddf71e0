! Cookbook: a time loop around stencil sweeps.  Every step reads what the
! step before wrote on other work-items, so the time loop runs on the host
! (the glue launches the sweeps once per step) and the fields stay on the
! device for the whole call.
subroutine jacobi(n, steps, a, b)
  integer, intent(in) :: n, steps
  real, intent(inout) :: a(n), b(n)
  integer :: t, i
  do t = 1, steps
    do i = 2, n - 1
      b(i) = (a(i-1) + a(i) + a(i+1)) / 3
    end do
    do i = 2, n - 1
      a(i) = b(i)
    end do
  end do
end subroutine jacobi

!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! k = add_global_barriers_between_nests(k, host_loops=["t"])
! k = split_iname(k, "i", 64, outer_tag="g.0", inner_tag="l.0")
! RESULT = split_iname(k, "i_1", 64, outer_tag="g.0", inner_tag="l.0")
!$loopy end
