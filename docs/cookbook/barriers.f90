! Cookbook: several loop nests, each reading what the one before wrote on
! other work-items (y = A x, then z = A^T y).  One launch cannot wait for
! all work-groups, so a global barrier between the nests splits the kernel
! into launches run in order; each nest gets a grid of its own.
subroutine atax(m, n, a, x, y, z)
  integer, intent(in) :: m, n
  real, intent(in) :: a(m, n), x(n)
  real, intent(inout) :: y(m), z(n)
  integer :: i, j
  do i = 1, m
    y(i) = 0
    do j = 1, n
      y(i) = y(i) + a(i, j) * x(j)
    end do
  end do
  do j = 1, n
    z(j) = 0
    do i = 1, m
      z(j) = z(j) + a(i, j) * y(i)
    end do
  end do
end subroutine atax

!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! k = add_global_barriers_between_nests(k)
! # the loops of the second nest were renamed apart: i_1, j_1 (f2loopy show lists them)
! k = split_iname(k, "i", 64, outer_tag="g.0", inner_tag="l.0")
! k = split_iname(k, "j_1", 64, outer_tag="g.0", inner_tag="l.0")
! RESULT = k
!$loopy end
