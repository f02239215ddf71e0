"""MIN/MAX of a NaN (issue 27): Fortran leaves the result to the processor and
gfortran is not consistent across optimisation levels, so kernels keep
OpenCL's fmin/fmax; where a NaN that reached MIN/MAX makes the outputs
differ, ``check`` says so instead of a bare MISMATCH."""

import numpy as np
import pymbolic.primitives as p

from f2loopy.frontend import parse_fortran
from f2loopy.verify.check import CheckReport, KernelCheck
from f2loopy.verify.compare import Mismatch
from f2loopy.verify.nan_minmax import REACHED, nan_propagating
from f2loopy.verify.runs import OutputCheck
from util import needs_gfortran

#: the smallest wave speed of a shallow-water flux (Geoflow's HLL style): a
#: negative depth makes the square root NaN, which reaches MIN, and the sign
#: of the result chooses the branch
FLUX = """
subroutine wave_flux(n, h, u, f)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: h(n), u(n)
  real(8), intent(out) :: f(n)
  integer :: i
  real(8) :: lo, s
  do i = 1, n
    s = u(i) - sqrt(h(i) - 2d0)
    lo = max(-1d0, min(u(i), s))
    if (lo >= 0d0) then
      f(i) = u(i) * h(i)
    else
      f(i) = -1d0
    end if
  end do
end subroutine
"""


def test_the_rewrite_returns_nan_for_a_nan_operand():
    (knl,) = parse_fortran(FLUX, "f.f90")
    (rewritten,) = nan_propagating([knl])
    calls = [e for i in rewritten.instructions for e in i.read_expressions()
             if isinstance(e, p.If)]
    assert len(calls) == 1          # max(-1, min(...)): both rewritten, max outermost
    cond, then, other = calls[0].condition, calls[0].then, calls[0].else_
    assert isinstance(cond, p.LogicalOr) and len(cond.children) == 2
    assert all(isinstance(c, p.Comparison) and c.operator == "!=" for c in cond.children)
    assert isinstance(then, p.Sum) and len(then.children) == 2
    assert isinstance(other, p.Call) and other.function.name == "max"
    inner = other.parameters[1]
    assert isinstance(inner, p.If) and inner.else_.function.name == "min"
    # kernels without MIN/MAX are left as they are
    (plain,) = parse_fortran("subroutine s(x)\n real x\n x = x + 1\nend\n", "s.f90")
    assert nan_propagating([plain])[0].instructions == plain.instructions


def _report(nan_minmax: bool) -> str:
    out = OutputCheck("f", np.dtype(np.float64), (3,), 2.0, (2,),
                      Mismatch("f", 2.0, (2,), 1.0, -1.0, 1, 3),
                      fma_note=REACHED if nan_minmax else "")
    kc = KernelCheck("wave_flux", None, ("wave_flux",), [out], nan_minmax=nan_minmax)
    return CheckReport("f.f90", 0, checks=[kc]).format()


def test_the_report_says_a_nan_reached_minmax():
    text = _report(True)
    assert "a NaN reached MIN/MAX on these inputs" in text
    assert text.splitlines()[-1] == (
        "MISMATCH (processor-dependent): 1 of 1 kernel(s) differ from the original Fortran "
        "where a NaN reached MIN/MAX (above): wave_flux")
    assert _report(False).splitlines()[-1] == (
        "MISMATCH: 1 of 1 kernel(s) differ from the original Fortran: wave_flux")


@needs_gfortran
def test_check_tells_a_nan_in_minmax_from_a_translation_error(tmp_path, cl_queue):
    from f2loopy.verify.check import check_source
    from f2loopy.verify.options import CheckOptions
    path = tmp_path / "flux.f90"
    path.write_text(FLUX)
    # depths below 2: every square root is NaN; gfortran -O0 returns the NaN
    # of the variable (second operand), fmin the first operand
    options = CheckOptions(sizes={"n": 5}, ranges={"h": (0.5, 1.5), "u": (0.5, 1.5)})
    report = check_source(FLUX, path, options, queue=cl_queue)
    text = report.format()
    assert not report.passed
    assert REACHED in text
    assert text.splitlines()[-1].startswith("MISMATCH (processor-dependent): 1 of 1 kernel(s)")
    # valid depths: no NaN, the same kernel matches
    options = CheckOptions(sizes={"n": 5}, ranges={"h": (2.5, 4.0), "u": (0.5, 1.5)})
    report = check_source(FLUX, path, options, queue=cl_queue)
    assert report.passed, report.format()
