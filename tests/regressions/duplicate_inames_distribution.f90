! f2loopy-check: --seed 1 --size n=5 --size m=3
! f2loopy-expect: error: its own loop 'i2_1' (a copy of 'i2') would run it apart from instruction 't1'
! found by the differential fuzzer (seed 30259) and by hand: duplicate_inames
! gives the statement writing u its own copy of loop i2; the copy runs after
! the whole original loop, so every u(i1, i2) reads the last t1, not the one of
! its iteration.  The transformation was accepted and the results were wrong; it is refused now.
subroutine tr(n, m, a, u, s)
  integer n, m, i1, i2
  real a(n, m), u(n, m), s, t1
  s = 0
  do i1 = 1, n
    do i2 = 1, 3
      t1 = a(i1, i2) * 2
      u(i1, i2) = t1 + 1
      s = s + a(i1, i2)
    end do
  end do
end
!$loopy begin
! (k,) = parse_fortran(SOURCE, FILENAME)
! k = duplicate_inames(k, "i2", within="writes:u")
! RESULT = [k]
!$loopy end
