! C = A * B, written the textbook way, and the script that turns it into the
! classic tiled OpenCL matrix multiply: 16x16 work-groups, each tile of A and B
! staged in local memory once and read 16 times from there.
!
!   f2loopy bench samples/matmul_tiled/matmul.f90 --size n=1024 --size m=1024 --size p=1024
!
! times every checkpoint below against the first (the untransformed kernel,
! one work-item) and checks them against the original built with gfortran.
subroutine matmul_tiled(n, m, p, a, b, c)
  implicit none
  integer, intent(in) :: n, m, p
  real, intent(in) :: a(n, m), b(m, p)
  real, intent(out) :: c(n, p)
  integer :: i, j, k
  real :: acc

  do j = 1, p
    do i = 1, n
      acc = 0.0
      !$loopy begin tagged: dot
      do k = 1, m
        acc = acc + a(i, k) * b(k, j)
      end do
      !$loopy end tagged: dot
      c(i, j) = acc
    end do
  end do
end subroutine matmul_tiled

!$loopy begin
! (knl,) = parse_fortran(SOURCE, FILENAME)
! tile = 16
! checkpoint("untransformed")
!
! # one work-item per element of C, in tile x tile work-groups
! knl = assume(knl, "n >= 1 and m >= 1 and p >= 1")
! knl = split_iname(knl, "i", tile, outer_tag="g.0", inner_tag="l.0")
! knl = split_iname(knl, "j", tile, outer_tag="g.1", inner_tag="l.1")
! checkpoint("parallel")
!
! # the dot product in tile-sized steps; each step's tiles of A and B
! # are fetched into local memory by the whole work-group (l.auto: the
! # fetch loops take the work-group's axes).  The last step, which may
! # be a partial tile, is peeled off (slabs) so only it tests the bounds.
! knl = split_iname(knl, "k", tile, slabs=(0, 1))
! knl = add_prefetch(knl, "a", ["i_inner", "k_inner"], default_tag="l.auto")
! knl = add_prefetch(knl, "b", ["k_inner", "j_inner"], default_tag="l.auto")
! checkpoint("local prefetch")
! RESULT = [knl]
!$loopy end
