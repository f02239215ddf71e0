"""Constructs of real project code (IFS/CLOUDSC style): associate blocks,
statement functions interleaved with declarations (an included file of
functions), interface blocks of external procedures, and modules whose other
declarations f2loopy cannot translate."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran

CST = """\
module yomcst
  implicit none
  integer, parameter :: jprb = 8
  type tomcst
    real(jprb) :: rtt = 273.16_jprb
    real(jprb) :: rlvtt
  end type tomcst
end module yomcst
"""

KERNEL = """\
subroutine satur(klon, pt, pq, ydcst)
  use yomcst, only: jprb, tomcst
  implicit none
  integer, intent(in) :: klon
  real(kind=jprb), intent(in) :: pt(klon)
  real(kind=jprb), intent(inout) :: pq(klon)
  type(tomcst), intent(in) :: ydcst
  interface
    subroutine abor1(cdtext)
      character(len=*) :: cdtext
    end subroutine abor1
  end interface
  real(kind=jprb) :: foedelta
  real(kind=jprb) :: ptare
  foedelta(ptare) = max(0.0_jprb, sign(1.0_jprb, ptare - ydcst%rtt))
  real(kind=jprb) :: foeldcp
  foeldcp(ptare) = foedelta(ptare) * ydcst%rlvtt + (1.0_jprb - foedelta(ptare)) * 2.0_jprb
  integer :: jl
  associate(rtt => ydcst%rtt, half => 0.5_jprb * ydcst%rlvtt)
    do jl = 1, klon
      pq(jl) = pq(jl) + foeldcp(pt(jl)) * (pt(jl) - rtt) + half
    end do
  end associate
end subroutine satur
"""


def test_statement_functions_between_declarations():
    knl = parse_fortran(CST + KERNEL, "k.f90")["satur"]
    assert [a.name for a in knl.fortran_args] == ["klon", "pt", "pq", "ydcst_rtt",
                                                   "ydcst_rlvtt"]
    assert len(knl.instructions) == 2        # the associate value, then the loop body


def test_declaration_after_executable_statement():
    src = "subroutine s(x)\n  real x\n  x = 1\n  print *, x\n  real y\nend\n"
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "t.f90")
    assert e.value.format().splitlines()[0] == (
        "t.f90:4:3: error: a declaration follows this executable statement (declarations "
        "come first)")


def test_generic_interface_is_refused():
    src = "subroutine s(x)\n  real x\n  interface f\n    real function g(a)\n      real a\n" \
          "    end function\n  end interface\n  x = 1\nend\n"
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "t.f90")
    assert e.value.format().splitlines()[0] == (
        "t.f90:3:3: error: generic interfaces and operators are not supported (only generic "
        "names declared in a module are)")


def test_associate_alias_writes_through():
    src = """\
subroutine s(n, a, b)
  integer n, i
  real(8) a(n), b
  associate (acc => b)
    do i = 1, n
      acc = acc + a(i)
    end do
  end associate
end subroutine
"""
    knl = parse_fortran(src, "t.f90")["s"]
    assert knl.arg_dict["b"].intent is None
    assert "b" in knl.written_variables()


def test_module_errors_are_raised_where_used():
    mod = """\
module m
  implicit none
  integer, parameter :: wp = 8
  type bad
    real, pointer :: p
  end type
end module m
"""
    ok = mod + "subroutine s(x)\n  use m, only: wp\n  real(wp) x\n  x = 1\nend\n"
    assert parse_fortran(ok, "t.f90")["s"].arg_dict["x"].dtype == np.float64
    # (and a component that cannot be supported, where a kernel uses it)
    unused = mod + "subroutine s(x, y)\n  use m, only: bad\n  type(bad) x\n  real y\n" \
        "  y = 1\nend\n"
    assert [a.name for a in parse_fortran(unused, "t.f90")["s"].args] == ["y"]
    bad = mod + "subroutine s(x)\n  use m, only: bad\n  type(bad) x\n  x%p = 1\nend\n"
    with pytest.raises(FortranError) as e:
        parse_fortran(bad, "t.f90")
    assert e.value.format().splitlines()[0] == (
        "t.f90:5:22: error: pointer scalar component 'p' is not supported (only pointer arrays "
        "are: use a plain component)")
    # a module the used module uses is never dropped, even where nothing of it
    # is used (issue 26, item 2: the kernel would read what it does not have)
    missing = mod.replace("module m\n", "module m\n  use io_helpers, only: load\n", 1) \
        + ok[len(mod):]
    with pytest.raises(FortranError) as e:
        parse_fortran(missing, "t.f90")
    assert e.value.format().startswith("t.f90:2:7: error: module 'io_helpers' is not defined")


def test_python_glue_against_numpy(tmp_path, cl_queue):
    """The Python glue takes the derived-type argument as an object."""
    from util import translate_and_load
    from types import SimpleNamespace as NS
    src = CST + KERNEL
    glue, _ = translate_and_load(src, tmp_path, filename="k.f90")
    n = 9
    pt = np.linspace(250.0, 300.0, n)
    pq = np.linspace(0.0, 1.0, n)
    got = pq.copy()
    glue.satur(n, pt, got, NS(rtt=273.16, rlvtt=3.0), queue=cl_queue)
    want = pq.copy()
    delta = (pt - 273.16 >= 0).astype(float)
    want += (delta * 3.0 + (1 - delta) * 2.0) * (pt - 273.16) + 1.5
    np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("expr, value", [
    ("radix(0d0)", 2), ("digits(0d0)", 53), ("digits(0.0)", 24), ("digits(0)", 31),
    ("minexponent(0d0)", -1021), ("maxexponent(0d0)", 1024), ("minexponent(1.0)", -125),
    ("maxexponent(1.0)", 128)])
def test_model_inquiry_intrinsics(expr, value):
    """The IEEE model numbers (as gfortran gives them), used by LAPACK's
    la_constants to compute its scaling constants."""
    src = f"subroutine s(k)\n  integer k\n  integer, parameter :: v = {expr}\n  k = v\nend\n"
    knl = parse_fortran(src, "t.f90")["s"]
    assert str(knl.instructions[0].expression) == str(value)
