! f2loopy-check: --seed 1 --size n=14 --range k=-9:9 --range x=-2:2
! Double negations of integers and reals: the C printer wrote '--(n / 7)',
! C's decrement operator (found by the differential fuzzer, seed 10394).
subroutine neg(n, x, k, r, q)
  integer n, k, q(3)
  real x, r(3)
  r(1) = -(-x)
  r(2) = -(-(-x))
  r(3) = 2.0 - (-(-x))
  q(1) = -(-(n / 7))
  q(2) = -(-(-k))
  q(3) = k - (-(-(k * n)))
end
