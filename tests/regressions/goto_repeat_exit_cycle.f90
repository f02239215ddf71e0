! f2loopy-check: --seed 3 --size n=7
! the siblings of fuzz_30797.f90: an 'exit', a 'cycle' and a named 'cycle' among
! the statements a backward 'goto' repeats belong to the 'do' loops around them
subroutine goto_exit_cycle(n, u, cnt, last)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: u(n)
  integer, intent(out) :: cnt, last
  integer :: i, j, k
  cnt = 0
  last = 0
  outer: do j = 1, 2
    do i = 1, n
      k = 0
10    k = k + 1
      u(i) = u(i) + k
      if (k == 2 .and. mod(i, 4) == 0) exit
      if (k == 2 .and. mod(i, 4) == 1) cycle
      if (k == 1 .and. i == 6 .and. j == 1) cycle outer
      if (k < 3) goto 10
      cnt = cnt + 1
      last = i*10 + k
    end do
  end do outer
end subroutine goto_exit_cycle
