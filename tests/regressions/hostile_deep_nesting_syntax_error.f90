! f2loopy-expect: error: hostile_deep_nesting_syntax_error.f90:47:3: error: syntax error
! found by scripts/fuzz_hostile.py (seed 1, inputs 557 and 1100): one bad statement
! inside nested ifs made fparser backtrack exponentially in the depth (14
! levels: 3 minutes); the parser now has a budget and the statement is
! then found line by line.
subroutine deep(n, a, b)
  integer n
  real a(n), b(n)
  if (a(1) > 39.0) then
  if (a(3) > 38.0) then
  if (a(2) > 37.0) then
  if (a(1) > 36.0) then
  if (a(3) > 35.0) then
  if (a(2) > 34.0) then
  if (a(1) > 33.0) then
  if (a(3) > 32.0) then
  if (a(2) > 31.0) then
  if (a(1) > 30.0) then
  if (a(3) > 29.0) then
  if (a(2) > 28.0) then
  if (a(1) > 27.0) then
  if (a(3) > 26.0) then
  if (a(2) > 25.0) then
  if (a(1) > 24.0) then
  if (a(3) > 23.0) then
  if (a(2) > 22.0) then
  if (a(1) > 21.0) then
  if (a(3) > 20.0) then
  if (a(2) > 19.0) then
  if (a(1) > 18.0) then
  if (a(3) > 17.0) then
  if (a(2) > 16.0) then
  if (a(1) > 15.0) then
  if (a(3) > 14.0) then
  if (a(2) > 13.0) then
  if (a(1) > 12.0) then
  if (a(3) > 11.0) then
  if (a(2) > 10.0) then
  if (a(1) > 9.0) then
  if (a(3) > 8.0) then
  if (a(2) > 7.0) then
  if (a(1) > 6.0) then
  if (a(3) > 5.0) then
  if (a(2) > 4.0) then
  if (a(1) > 3.0) then
  if (a(3) > 2.0) then
  if (a(2) > 1.0) //
  if (a(1) > 0.0) then
  b(1) = a(1)
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
  end if
end subroutine
