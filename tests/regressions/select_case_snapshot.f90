! f2loopy-check: --seed 0 --size n=5 --range k=0:3
! A select case whose selector changes in a branch: the snapshot of 'case (1)'
! was only evaluated when 'case (0)' did not match, but the branch guard reads
! it alone: an uninitialised value (found by the differential fuzzer, seed 10515).
subroutine sc(n, k, v)
  implicit none
  integer n, i, it, k
  real v(n)
  it = 0
  do i = 1, n
    select case (it)
    case (0)
      it = k
    case (1)
      v(i) = 1000.0
    case default
      v(i) = -1.0
    end select
  end do
end
