! f2loopy-check: --seed 400301 --range alpha=-2.0:2.0 --range a=-2.0:2.0 --range b=-2.0:2.0 --range u=-2.0:2.0 --range v=-2.0:2.0 --range s=-2.0:2.0
! found by scripts/fuzz_differential.py, seed 400301: mismatch: a 'return' in a loop in one
! branch of an if did not guard the statements of the other branches in later iterations
subroutine fz400301(n, alpha, a, b, u, v, s)
  implicit none
  real, parameter :: c0 = 0.75
  integer, intent(in) :: n
  real, intent(in) :: alpha
  real(kind=4), intent(in) :: a(3, 3, 4)
  real(kind=8), intent(in) :: b(4, 3)
  real, intent(inout) :: u(-1:n)
  real, intent(inout) :: v(3, 4, 4)
  real, intent(inout) :: s
  integer :: it
  integer :: i1, i2
  it = 0
  do i1 = 1, 4
    it = 1000
    if ((((it < it) .or. ((b(1, 3) + it) /= dble(max((-1.0), min(1.0, real(b(1, 2))))))) .and. &
        & (((alpha + a(1, 1, 4)) <= (3.0 - a(1, 2, 2))) .neqv. (it /= it)))) then
      v(1, i1, 2) = v(1, i1, 2)
    else if ((c0 < it)) then
      if (((b(2, 2) - dble(i1)) >= b(1, 1))) then
        do i2 = 1, i1
          return
        end do
      else if ((min(real(i1), real(i1)) > (s - a(1, 2, 1)))) then
        u(-1:-1 + 3 - 1) = 1000.0
      end if
    else if (((it /= (5 ** 2)) .eqv. (it < (3 - it)))) then
    end if
  end do
end subroutine fz400301
