! f2loopy-check: --seed 30691 --size n=1 --range u=-2.0:2.0
! f2loopy-expect: error: assignment_to_subst: 'exited' ends loop 'i2' early
! found by scripts/fuzz_differential.py, seed 30691 (on the GPU campaign): kernel-error
!   the script turned the flag of the 'exit' into a rule, and the loop's condition,
!   which read it, named a variable that no longer existed ('exited' undeclared)
subroutine fz30691(n, m, u)
  implicit none
  logical, parameter :: lp = .false.
  integer, intent(in) :: n
  integer, intent(in) :: m
  real*4, intent(inout) :: u(0:n+1)
  integer :: i1, i2
  do i1 = 1, n
    do i2 = 1, min(n, m)
      u = max((-1.0), min(1.0, 125.E-2))
      if (lp) exit
    end do
  end do
end subroutine fz30691

!$loopy begin
! k = parse_fortran(SOURCE, FILENAME)['fz30691']
! k = split_iname(k, "i1", 2)
! k = assignment_to_subst(k, "exited")
! RESULT = [k]
!$loopy end
