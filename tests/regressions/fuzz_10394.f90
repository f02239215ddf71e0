! f2loopy-check: --seed 10394 --range a=-9:9 --range u=-9:9
! found by scripts/fuzz_differential.py, seed 10394: kernel-error
!   running the generated kernel failed: RuntimeError: clBuildProgram failed: BUILD_PROGRAM_FAILURE - cl
!   error: /root/.cache/pocl/kcache/tempfile_qdULu3.cl:17:31: expression is not assignable
!   FAIL
subroutine fz10394(n, a, u)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: a(n+2)
  integer, intent(inout) :: u(-1:n)
  integer :: i1
  do i1 = 1, n
    select case ((a(n) - n))
    case (-2)
      u(0:0 + n - 1 - 1) = (-((-((n / 7)))))
    case (2)
    case default
    end select
  end do
end subroutine fz10394
