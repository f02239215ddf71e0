! f2loopy-check: --seed 5 --size n=4 --range a=-1:1 --range d=-1:1
! found by scripts/fuzz_hostile.py (seed 2, input 389): a sum of a few hundred
! terms hit Python's recursion limit while it was converted (one stack
! level per '+', then its type inferred recursively): a traceback.  Chains
! of + - * / are now converted iteratively into flat sums and products where
! every term has the type of the result so far (kinds keep Fortran's
! left-to-right evaluation); a statement still too deep is a diagnostic.
subroutine longsum(n, a, d, r, q)
  implicit none
  integer n, i
  real a(2), r(n)
  double precision d(2), q(n)
  do i = 1, n
    r(i) = a(1) * 0.0 + d(2) * 1.5d0 + a(2) + i + a(1) * 4.0 + d(2) * 5.5d0 + a(2) + i + a(1) * 8.0 &
      & + d(2) * 9.5d0 + a(2) + i + a(1) * 12.0 + d(2) * 13.5d0 + a(2) + i + a(1) * 16.0 + d(2) * &
      & 17.5d0 + a(2) + i + a(1) * 20.0 + d(2) * 21.5d0 + a(2) + i + a(1) * 24.0 + d(2) * 25.5d0 + &
      & a(2) + i + a(1) * 28.0 + d(2) * 29.5d0 + a(2) + i + a(1) * 32.0 + d(2) * 33.5d0 + a(2) + i &
      & + a(1) * 36.0 + d(2) * 37.5d0 + a(2) + i + a(1) * 40.0 + d(2) * 41.5d0 + a(2) + i + a(1) * &
      & 44.0 + d(2) * 45.5d0 + a(2) + i + a(1) * 48.0 + d(2) * 49.5d0 + a(2) + i + a(1) * 52.0 + &
      & d(2) * 53.5d0 + a(2) + i + a(1) * 56.0 + d(2) * 57.5d0 + a(2) + i + a(1) * 60.0 + d(2) * &
      & 61.5d0 + a(2) + i + a(1) * 64.0 + d(2) * 65.5d0 + a(2) + i + a(1) * 68.0 + d(2) * 69.5d0 + &
      & a(2) + i + a(1) * 72.0 + d(2) * 73.5d0 + a(2) - i - a(1) * 76.0 - d(2) * 77.5d0 - a(2) - i &
      & - a(1) * 80.0 - d(2) * 81.5d0 - a(2) - i - a(1) * 84.0 - d(2) * 85.5d0 - a(2) - i - a(1) * &
      & 88.0 - d(2) * 89.5d0 - a(2) - i - a(1) * 92.0 - d(2) * 93.5d0 - a(2) - i - a(1) * 96.0 - &
      & d(2) * 97.5d0 - a(2) - i - a(1) * 100.0 - d(2) * 101.5d0 - a(2) - i - a(1) * 104.0 - d(2) * &
      & 105.5d0 - a(2) - i - a(1) * 108.0 - d(2) * 109.5d0 - a(2) - i - a(1) * 112.0 - d(2) * &
      & 113.5d0 - a(2) - i - a(1) * 116.0 - d(2) * 117.5d0 - a(2) - i - a(1) * 120.0 - d(2) * &
      & 121.5d0 - a(2) - i - a(1) * 124.0 - d(2) * 125.5d0 - a(2) - i - a(1) * 128.0 - d(2) * &
      & 129.5d0 - a(2) - i - a(1) * 132.0 - d(2) * 133.5d0 - a(2) - i - a(1) * 136.0 - d(2) * &
      & 137.5d0 - a(2) - i - a(1) * 140.0 - d(2) * 141.5d0 - a(2) - i - a(1) * 144.0 - d(2) * &
      & 145.5d0 - a(2) - i - a(1) * 148.0 - d(2) * 149.5d0
    q(i) = a(1) * d(1) * a(2) * 2.0 * i * a(1) * d(1) * a(2) * 2.0 * i * a(1) * d(1) * a(2) * 2.0 * &
      & i * a(1) * d(1) * a(2) * 2.0 * i * a(1) * d(1) * a(2) * 2.0 * i * a(1) * d(1) * a(2) * 2.0 &
      & * i * a(1) * d(1) * a(2) * 2.0 * i * a(1) * d(1) * a(2) * 2.0 * i
  end do
end subroutine
