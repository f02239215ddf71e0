! The two products of BiCG: s := transpose(A) * r and q := A * p   (A is n x m)
subroutine bicg(n, m, a, r, p, s, q)
  implicit none
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m), r(n), p(m)
  double precision, intent(out) :: s(m), q(n)
  integer :: i, j

  do j = 1, m
    s(j) = 0.0d0
    do i = 1, n
      s(j) = s(j) + r(i) * a(i, j)
    end do
  end do
  do i = 1, n
    q(i) = 0.0d0
    do j = 1, m
      q(i) = q(i) + a(i, j) * p(j)
    end do
  end do
end subroutine bicg
