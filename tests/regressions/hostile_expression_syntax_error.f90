! f2loopy-expect: error: hostile_expression_syntax_error.f90:8:3: error: syntax error
! found by scripts/fuzz_hostile.py (seed 0, input 331): a bad token deep inside
! an expression; after the parser's budget ran out, finding the statement
! line by line hung in the same backtracking (no budget per statement).
subroutine s(n, v, i3, t1)
  real v(3,4,3), t1
  integer i3
  t1 = max((-1000.0), min(1000.0, max(t1, (t1 - log10((abs((v(1data 1, 1) + i3)) + 1.0))))))
end
