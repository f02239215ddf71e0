! f2loopy-check: --seed 30951 --size n=1 --range kk=-9:9 --range a=-2.0:2.0 --range u=-9:9 --range val=-2.0:2.0 --range s=-2.0:2.0
! f2loopy-expect: error: assignment_to_subst: 'i3_ubound' is a loop bound (a domain parameter); it cannot become a substitution rule
! found by scripts/fuzz_differential.py, seed 30951: kernel-error
!   assignment_to_subst accepted the data-dependent loop bound i3_ubound and
!   removed its assignment; the loop still used it: 'use of undeclared
!   identifier i3_ubound' when the OpenCL program was built.
subroutine fz30951(n, m, kk, a, u, ptr, val, s)
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: m
  integer, intent(in) :: kk
  real, intent(in) :: a(m, 4, 3)
  integer, intent(inout) :: u(0:m+1)
  integer, intent(in) :: ptr(n+1)
  real, intent(in) :: val(m)
  real(kind=4), intent(inout) :: s
  integer :: i1, i2, i3
  do 20 i1 = 1, n
    do i2 = m, 1, -2
      do i3 = ptr(i1), ptr(i1 + 1) - 1
        s = (val(i2) * (real(i2) * cosh(a(m, 4, 2))))
      end do
      u(i2 + 1) = kk
    end do
  20 continue
end subroutine fz30951

!$loopy begin
! k = parse_fortran(SOURCE, FILENAME)['fz30951']
! k = assignment_to_subst(k, "i3_ubound")
! RESULT = [k]
!$loopy end
