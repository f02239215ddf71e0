! f2loopy-check: --seed 1 --size n=2 --range u=-9:9
! found by scripts/fuzz_differential.py (seed 30279, shrunk by hand): with
! u passed as '__global int *__restrict__ u', PoCL 3.1 (LLVM 15, default
! work-group method) left u(3, 1) = 2: the accumulation's store landed after
! the i3 loop's store of 1.  Host clang 15 compiles the same C correctly; so
! does PoCL without restrict, with -cl-opt-disable or POCL_WORK_GROUP_METHOD=cbs.
! Written arrays are no longer declared __restrict__.
subroutine rs(n, u)
  implicit none
  integer n, i1, i2, i3
  integer u(3, 4)
  do i1 = 1, n - 1
    do i2 = 1, n - 1
      u(3, 1) = u(3, 1) + 2
    end do
    do i3 = 1, 4
      u(3, i3) = i3
    end do
  end do
end subroutine
