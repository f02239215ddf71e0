"""Dead-store removal (:mod:`f2loopy.transform.dead_code`): which
temporaries are dead and why the others are not (IR facts), the statements
and loops that go, the scc option, and PoCL against gfortran on a column
code with a search whose result is never read (CLOUDSC's style)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.diagnostics import TransformError
from f2loopy.frontend import parse_fortran
from f2loopy.transform.dead_code import dead_temporaries, remove_dead_stores
from f2loopy.transform.scc import scc

from util import needs_gfortran

CASES = """\
subroutine dc_cases(klon, klev, kidia, kfdia, pt, pap, pout)
  implicit none
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pt(klon, klev), pap(klon, klev)
  double precision, intent(out) :: pout(klon, klev)
  double precision :: ztp1(klon, klev), ztrp(klon), zsig, zchain(klon), zlink(klon)
  double precision :: zexp(klon), zlive(klon)
  integer :: jk, jl, itop
  do jk = 1, klev
    do jl = kidia, kfdia
      ztp1(jl, jk) = pt(jl, jk) * 2.0d0
    end do
  end do
  do jl = kidia, kfdia
    ztrp(jl) = 0.1d0
    zlive(jl) = 0.0d0
  end do
  ! a search whose result is never read
  do jk = 1, klev - 1
    do jl = kidia, kfdia
      zsig = pap(jl, jk) * 0.5d0
      if (zsig > 0.1d0 .and. ztp1(jl, jk) > ztp1(jl, jk + 1)) ztrp(jl) = zsig
    end do
  end do
  itop = klev / 2
  do jk = itop, klev
    do jl = kidia, kfdia
      pout(jl, jk) = 0.0d0
    end do
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      zlink(jl) = ztp1(jl, jk) + 1.0d0
      zchain(jl) = zlink(jl) * 3.0d0
      zexp(jl) = exp(ztp1(jl, jk))
      zlive(jl) = zlive(jl) + ztp1(jl, jk)
      pout(jl, jk) = zlive(jl)
    end do
  end do
end subroutine dc_cases
"""


@pytest.fixture(scope="module")
def kernel():
    return parse_fortran(CASES, "dc_cases.f90")["dc_cases"]


def test_which_temporaries_are_dead(kernel):
    # zsig is read only by the store to ztrp, zlink only by the store to
    # zchain; ztp1 and zlive reach pout; zexp's value calls a function;
    # itop is read by no statement but bounds a loop
    assert dead_temporaries(kernel) == ("zchain", "zlink", "zsig", "ztrp")


def test_dead_statements_and_loops_go(kernel):
    out = remove_dead_stores(kernel)
    assert set(kernel.temporaries) - set(out.temporaries) == {"zchain", "zlink", "zsig", "ztrp"}
    gone = {i.id for i in kernel.instructions} - {i.id for i in out.instructions}
    assert len(gone) == 5
    assert not {"zchain", "zlink", "zsig", "ztrp"} & set().union(
        *(i.dependency_names() for i in out.instructions))
    # the search's loop is gone: no statement runs in it
    assert "jk_1" not in set().union(*(i.within_inames for i in out.instructions))
    # nobody depends on a removed statement; order through them is kept
    ids = {i.id for i in out.instructions}
    for insn in out.instructions:
        assert insn.depends_on <= ids
    assert remove_dead_stores(out) is out
    src = generate_code(out).source
    assert "jk_1" not in src and "ztrp" not in src and "zexp[" in src


def test_options_and_messages(kernel):
    only = remove_dead_stores(kernel, names=["zchain"])
    assert "zlink" in only.temporaries and "zchain" not in only.temporaries
    for names, message in [
            (["zlive"], "remove_dead_stores: 'zlive' is not a dead temporary of kernel "
                        "'dc_cases' (something reads it, or a statement writing it has an "
                        "effect besides its value)"),
            (["zsig"], "remove_dead_stores: 'zsig' is read by the store to 'ztrp': "
                       "remove both"),
            ("ztrp", "remove_dead_stores: names is a list of temporary names, not 'ztrp'")]:
        with pytest.raises(TransformError) as exc:
            remove_dead_stores(kernel, names=names)
        assert exc.value.message == message
    # scc removes them unless told not to
    assert "ztrp" not in scc(kernel, block=32).temporaries
    assert "ztrp" in scc(kernel, block=32, dead=False).temporaries
    with pytest.raises(TransformError) as exc:
        scc(kernel, dead="yes")
    assert exc.value.message == "scc: dead is True or False, not 'yes'"


@needs_gfortran
@pytest.mark.opencl
def test_dead_stores_removed_check_against_gfortran(tmp_path):
    src = tmp_path / "dc_cases.f90"
    src.write_text(CASES)
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "--size", "klon=13",
                                    "--size", "kidia=2", "--size", "kfdia=12", "--size",
                                    "klev=9", str(src)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output
    assert re.search(r"^ok: \d+ output\(s\) of 1 kernel\(s\) match the original Fortran",
                     res.output, re.M), res.output
