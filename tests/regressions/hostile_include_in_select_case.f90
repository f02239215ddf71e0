! f2loopy-expect: error: hostile_include_in_select_case.f90:9:1: error: include 'x.h': no such file in
! found while fixing the include before a nested do: a line between 'select
! case' and the first 'case' was dropped without a word.
subroutine s(n, a)
  integer n, i
  real a(n)
  do i = 1, n
    select case (n)
include 'x.h'
    case (1)
      a(1) = 0
    end select
  end do
end
