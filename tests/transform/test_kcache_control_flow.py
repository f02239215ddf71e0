"""K-caching under control flow (red team of issue 25): a ``cycle`` and an
``exit`` between the uses of a cached level temporary (the copy of the
current level into the previous one must run in every iteration that
reaches it, whatever the flags), and a species axis indexed by variables
(``zq(jl, jk - 1, js)``, ``js`` computed in the loop).  Cached (the shape
says so) and equal to gfortran on PoCL."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from f2loopy.cli import main

from util import needs_gfortran

SOURCE = """\
subroutine kc_flow(klon, klev, kidia, kfdia, ksp, pt, pout, pexit)
  implicit none
  integer, parameter :: nclv = 3
  integer, intent(in) :: klon, klev, kidia, kfdia, ksp
  double precision, intent(in) :: pt(klon, klev)
  double precision, intent(out) :: pout(klon, klev), pexit(klon, klev)
  double precision :: za(klon, klev), zb(klon, klev), zq(klon, klev, nclv)
  integer :: jk, jl, jm, js
  do jk = 1, klev
    do jl = kidia, kfdia
      pout(jl, jk) = 0.0d0
      pexit(jl, jk) = 0.0d0
    end do
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      do jm = 1, nclv
        zq(jl, jk, jm) = pt(jl, jk) * jm
      end do
      js = mod(jk, nclv) + 1
      zq(jl, jk, js) = zq(jl, jk, ksp) + 1.0d0
      za(jl, jk) = pt(jl, jk) * 2.0d0
      if (jk > 1) pout(jl, jk) = za(jl, jk - 1) + zq(jl, jk - 1, js) + zq(jl, jk - 1, ksp)
      if (pt(jl, jk) > 0.5d0) cycle
      za(jl, jk) = za(jl, jk) + 1.0d0
    end do
  end do
  do jl = kidia, kfdia
    do jk = 1, klev
      zb(jl, jk) = pt(jl, jk) * 3.0d0
      if (jk > 1) pexit(jl, jk) = zb(jl, jk - 1) + zb(jl, jk)
      if (pt(jl, jk) > 0.9d0) exit
      zb(jl, jk) = zb(jl, jk) - 1.0d0
    end do
  end do
end subroutine kc_flow
"""


@needs_gfortran
@pytest.mark.opencl
def test_cached_under_cycle_and_exit_against_gfortran(tmp_path):
    src = tmp_path / "kc_flow.f90"
    src.write_text(SOURCE)
    res = CliRunner().invoke(main, ["translate", "--transform", "scc", "-o",
                                    str(tmp_path / "out"), str(src)])
    assert res.exit_code == 0, res.output
    code = (tmp_path / "out" / "kc_flow.cl").read_text()
    for name in ("za", "zb"):
        assert f"double {name}_km1;" in code and f"{name}_km1 = {name}_k;" in code
    assert "double zq_km1[3];" in code
    res = CliRunner().invoke(main, ["check", "--transform", "scc", "--size", "klon=13",
                                    "--size", "kidia=2", "--size", "kfdia=12", "--size",
                                    "klev=9", "--size", "ksp=2", str(src)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output and "ok: 2 output(s)" in res.output
