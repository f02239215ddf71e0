! f2loopy-check: --seed 400754 --size n=3 --range alpha=-2.0:2.0 --range a=-2.0:2.0 --range u=-2.0:2.0 --range v=-2.0:2.0 --rtol float64=2e-5
! f2loopy-expect: error: iname 'i1_outer' is tagged g.0 but the value of 'it' written by 'it_1'
! found by scripts/fuzz_differential.py, seed 400754: mismatch: the value a parallel loop
! leaves in a private variable was read after it; the race check missed it because statements
! run by one lane in different loop nests shared one lane iname (no sequential reference order)
module fz400754_mod
  implicit none
contains
  pure double precision function f1(x)
    implicit none
    double precision, intent(in) :: x
    if ((real(x) .ne. real(x))) then
      f1 = x
    else
      f1 = max((-1000.0d0), min(1000.0d0, (x * (x + (0.3d0 - x)))))
    end if
  end function f1
end module fz400754_mod

subroutine fz400754(n, m, alpha, a, u, v)
  use fz400754_mod
  implicit none
  integer, intent(in) :: n
  integer, intent(in) :: m
  real(kind=8), intent(in) :: alpha
  real(8), intent(in) :: a(3, n+2)
  real, intent(inout) :: u(n+2, m+2)
  real(4), intent(inout) :: v(4, n+2, 0:m+1)
  double precision :: t2
  integer :: it
  integer :: i1, i2, i3
  t2 = 1.0d0
  it = 0
  do i1 = 1, m
    t2 = alpha
    it = i1
    u(2, i1) = u(2, i1)
  end do
  v(4, 2, 0) = it
  do i2 = 0, m + 1
    do i3 = 1, m
      v(4, 2, 2) = f1(a(1, 2))
    end do
  end do
end subroutine fz400754

!$loopy begin
! k = parse_fortran(SOURCE, FILENAME)['fz400754']
! k = split_iname(k, "i1", 2, outer_tag="g.0", inner_tag="l.0")
! RESULT = [k]
!$loopy end
