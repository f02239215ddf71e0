"""An honest ``f2loopy check`` (issue 16): it names the statements that never
ran on the inputs it drew (and tries more inputs first), tells a difference
caused by fused multiply-add contraction from a translation error, treats a
stop reached on both sides as agreement, draws strings for character flags,
and refuses sizes the declarations cannot take as a usage error."""

import numpy as np
from check_util import check_text as _check
from check_util import BIG, needs_check

from f2loopy.verify.check import OutputCheck
from f2loopy.verify.compare import Mismatch
from f2loopy.verify.coverage import ROUNDS, SIGNED_ROUNDS, ZERO_ROUNDS
from f2loopy.verify.honesty import explain_mismatches

pytestmark = needs_check



def test_statements_that_never_ran_fail_the_check(tmp_path):
    where, res = _check(tmp_path, BIG)
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert lines[-5:] == [
        "statements that never ran on these inputs (nothing is proven about them):",
        f"  {where}:9: do i = 1, n",
        f"  {where}:10: y(i) = y(i) + 1",
        "    (it runs depending on n: give it another value with --size/--range)",
        "NOT COVERED: 2 statement(s) never ran; give sizes or value ranges that reach them "
        "(--size, --range)"]
    # (tried harder first: the default rounds, then those of signed data)
    assert sum(ln.startswith("inputs (seed ") for ln in lines) == \
        ROUNDS + SIGNED_ROUNDS + ZERO_ROUNDS
    _, res = _check(tmp_path, BIG, "--size", "n=1001")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == \
        "ok: 1 output(s) of 1 kernel(s) match the original Fortran"


def test_special_values_reach_branches(tmp_path):
    # beta == 0 is only reached when the check tries the value 0
    src = """subroutine scal(n, beta, y)
  integer n, i
  double precision beta, y(n)
  if (beta .eq. 0.0d0) then
    do i = 1, n
      y(i) = 0.0d0
    end do
  else
    do i = 1, n
      y(i) = beta * y(i)
    end do
  end if
end subroutine
"""
    _, res = _check(tmp_path, src)
    assert res.exit_code == 0, res.output
    assert "inputs (seed 1; n=" in res.output


def test_invalid_size_is_a_usage_error(tmp_path):
    src = "subroutine s(n, x)\n  integer n\n  real x(n)\n  x(1) = 1\nend subroutine\n"
    _, res = _check(tmp_path, src, "--size", "n=-5")
    assert res.exit_code == 2
    assert res.output.splitlines()[-1] == (
        "Error: --size n=-5: the extent of array 'x' would be -5; give sizes for which every "
        "extent of the declarations is zero or more")


def test_contraction_effect_is_told_from_a_translation_error(tmp_path):
    src = """subroutine resid(n, a, b, y)
  implicit none
  integer n, i
  double precision a(n), b(n), y(n), t
  do i = 1, n
    t = a(i) * b(i)
    y(i) = a(i) * b(i) - t
  end do
end subroutine
"""
    _, res = _check(tmp_path, src)
    assert res.exit_code == 0, res.output
    assert "    differs only by fused multiply-add contraction: without it (FP_CONTRACT " \
        "OFF, gfortran -ffp-contract=off) the results match, so the translation is right " \
        "and the computation is sensitive to rounding" in res.output.splitlines()


def test_explain_mismatches_keeps_a_real_difference():
    bad = Mismatch("y", 1.0, (1,), 2.0, 1.0, 1, 4)
    outs = [OutputCheck("y", np.dtype(np.float64), (4,), 1.0, (1,), bad)]
    again = [OutputCheck("y", np.dtype(np.float64), (4,), 1.0, (1,), bad)]
    assert not explain_mismatches(outs, again)
    assert outs[0].mismatch is bad and not outs[0].passed
    assert outs[0].fma_note == ("still differs without fused multiply-add contraction: a "
                                "translation error")


def test_character_flags_and_stops(tmp_path):
    src = """      subroutine flip(uplo, n, x)
      character uplo
      integer n
      double precision x(n)
      integer i
      if (n .gt. 50) stop 'too long'
      if (uplo .eq. 'U') then
         do i = 1, n
            x(i) = -x(i)
         end do
      else if (uplo .eq. 'L') then
         do i = 1, n
            x(i) = 2*x(i)
         end do
      end if
      end
"""
    _, res = _check(tmp_path, src, name="flip.f")
    assert res.exit_code == 0, res.output
    _, res = _check(tmp_path, src, "--size", "n=60", name="flip.f")
    assert "  both stop on these inputs (" in res.output
    assert "STOP too long)" in res.output


def test_blas_style_runtime_increments(tmp_path):
    src = """      subroutine dcopyr(n, dx, incx, dy, incy)
      integer n, incx, incy
      double precision dx(*), dy(*)
      integer i, ix, iy
      if (n .le. 0) return
      ix = 1
      iy = 1
      if (incx .lt. 0) ix = (-n+1)*incx + 1
      if (incy .lt. 0) iy = (-n+1)*incy + 1
      do i = 1, n
         dy(iy) = dx(ix)
         ix = ix + incx
         iy = iy + incy
      end do
      end
"""
    _, res = _check(tmp_path, src, "--size", "dx=60", "--size", "dy=60",
                    "--range", "incx=-3:3", "--range", "incy=-3:3", name="dcopyr.f")
    assert res.exit_code == 0, res.output
