"""Fusion of the level loops of a column routine
(:mod:`f2loopy.transform.level_fusion`, applied by ``scc`` and ``--transform
auto``): which loops merge and how (same range, species loop interchanged, a
run-time top level as a one-iteration loop, a range one level longer
peeled), the exact reasons of the refusals, the shape of the generated code,
and PoCL against gfortran on a column code in CLOUDSC's style (set-up loops,
a species-outer nest with a per-iteration scalar under an IF, a main loop
from a run-time top level, a flux loop over one more level)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.diagnostics import TransformError
from f2loopy.frontend import parse_fortran
from f2loopy.transform.level_fusion import fuse_level_loops, interchange_reason, level_fusion
from f2loopy.transform.parameters import assume
from f2loopy.transform.scc import scc, scc_with_fusion

from util import needs_gfortran

COLUMN = """\
subroutine lf_col(kidia, kfdia, klon, klev, ktop, pt, pq, pclv, pflux, ptend, pout)
  implicit none
  integer, intent(in) :: kidia, kfdia, klon, klev, ktop
  real(8), intent(in) :: pt(klon, klev), pq(klon, klev), pclv(klon, klev, 3)
  real(8), intent(out) :: pflux(klon, klev + 1), ptend(klon, klev), pout(klon, klev)
  real(8) :: ztp1(klon, klev), zqx(klon, klev, 3), zneg(klon, klev, 3), zfl(klon, klev + 1)
  real(8) :: zqadj, zsum
  logical :: cond
  integer :: jl, jk, jm
  do jk = 1, klev
    do jl = kidia, kfdia
      ptend(jl, jk) = 0.0d0
    end do
  end do
  do jm = 1, 3
    do jk = 1, klev
      do jl = kidia, kfdia
        zqx(jl, jk, jm) = pclv(jl, jk, jm) * 0.5d0
        zneg(jl, jk, jm) = 0.0d0
      end do
    end do
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      ztp1(jl, jk) = pt(jl, jk) + pq(jl, jk)
    end do
  end do
  do jm = 1, 3
    do jk = 1, klev
      do jl = kidia, kfdia
        cond = zqx(jl, jk, jm) < 0.2d0
        if (cond) then
          zqadj = zqx(jl, jk, jm) * 2.0d0
          zneg(jl, jk, jm) = zneg(jl, jk, jm) + zqadj
          ptend(jl, jk) = ptend(jl, jk) + zqadj
        end if
        if (cond .and. jm == 2) then
          ptend(jl, jk) = ptend(jl, jk) - 0.5d0 * zqadj
        end if
      end do
    end do
  end do
  do jk = 1, klev + 1
    do jl = kidia, kfdia
      zfl(jl, jk) = 0.0d0
    end do
  end do
  do jk = ktop, klev
    do jl = kidia, kfdia
      zsum = ztp1(jl, jk) + zqx(jl, jk, 1) + zneg(jl, jk, 2)
      if (jk > 1) then
        zsum = zsum + 0.25d0 * zfl(jl, jk - 1)
      end if
      zfl(jl, jk) = zsum * 0.1d0
      ptend(jl, jk) = ptend(jl, jk) + zsum
    end do
  end do
  do jk = 1, klev + 1
    do jl = kidia, kfdia
      pflux(jl, jk) = zfl(jl, jk) * 2.0d0
    end do
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      pout(jl, jk) = ptend(jl, jk) + zneg(jl, jk, 1) + pflux(jl, jk + 1)
    end do
  end do
end subroutine lf_col
"""

#: a species nest that cannot be interchanged (level k of species m reads
#: level klev+1-k of species m-1), and a scalar carried between two level loops
REFUSED = """\
subroutine lf_no(kidia, kfdia, klon, klev, pt, pout)
  implicit none
  integer, intent(in) :: kidia, kfdia, klon, klev
  real(8), intent(in) :: pt(klon, klev)
  real(8), intent(out) :: pout(klon, klev)
  real(8) :: zq(klon, klev, 3), zlast
  integer :: jl, jk, jm
  do jk = 1, klev
    do jl = kidia, kfdia
      zq(jl, jk, 1) = pt(jl, jk)
      zq(jl, jk, 2) = 0.0d0
      zq(jl, jk, 3) = 0.0d0
    end do
  end do
  do jm = 2, 3
    do jk = 1, klev
      do jl = kidia, kfdia
        zq(jl, jk, jm) = zq(jl, klev + 1 - jk, jm - 1) + 1.0d0
      end do
    end do
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      pout(jl, jk) = zq(jl, jk, 3)
    end do
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      pout(jl, jk) = pout(jl, jk) + pout(jl, klev + 1 - jk)
    end do
  end do
end subroutine lf_no
"""


def _column(text, name, facts=None):
    k = parse_fortran(text, f"{name}.f90")[name]
    return assume(k, facts) if facts else k


def test_what_merges_and_how():
    k = _column(COLUMN, "lf_col", "ktop >= 1")
    _, report = scc_with_fusion(k, block=32)
    assert report.merged == (
        ("jm", "jk", "interchanged"), ("jk_2", "jk", "same range"),
        ("jm_1", "jk", "interchanged"), ("jk_4", "jk", "peeled"),
        ("jk_5", "jk", "guarded"), ("jk_6", "jk", "peeled"))
    assert report.refused == (
        ("jk_7", "jk", "loop 'jk_7' (line 65) stays apart from loop 'jk': line 60, between "
                       "the two loops, uses what loop 'jk' computes and loop 'jk_7' uses what "
                       "it computes"),)


def test_a_top_level_that_may_be_below_the_range_merges_with_its_low_levels_peeled():
    # without ktop >= 1 the main loop's levels ktop..0 run first, as a loop of
    # their own (they touch no level the set-up loops write), the others merge
    out, report = scc_with_fusion(_column(COLUMN, "lf_col"), block=32)
    assert report.merged == (
        ("jm", "jk", "interchanged"), ("jk_2", "jk", "same range"),
        ("jm_1", "jk", "interchanged"), ("jk_4", "jk", "peeled"),
        ("jk_5", "jk", "levels below peeled"), ("jk_6", "jk", "peeled"))
    assert [r[0] for r in report.refused] == ["jk_7"]
    code = generate_code(out).device_code
    loops = [line.strip() for line in code.splitlines() if line.strip().startswith("for (")]
    assert loops == [
        "for (int jk_5_peel = ktop; jk_5_peel <= (klev >= 1 ? 0 : klev); ++jk_5_peel)",
        "for (int jk = 1; jk <= klev; ++jk)",
        "for (int jm = 1; jm <= 3; ++jm)",
        "for (int jm_1 = 1; jm_1 <= 3; ++jm_1)",
        "for (int jk_7 = 1; jk_7 <= klev; ++jk_7)"]
    assert code.count("if (jk >= ktop)") == 1


def test_refusals_name_the_dependence():
    k = _column(REFUSED, "lf_no")
    _, report = scc_with_fusion(k, block=32)
    assert report.merged == ()
    assert report.refused == (
        ("jm", "jk", "loop 'jm' (line 18) stays apart from loop 'jk': loop 'jk_1' cannot run "
                     "around loop 'jm': lines 18 and 18 touch the same elements of 'zq' in an "
                     "order the interchange reverses"),
        ("jk_2", "jk", "loop 'jk_2' (line 24) stays apart from loop 'jk': line 18, between "
                       "the two loops, uses what loop 'jk' computes and loop 'jk_2' uses what "
                       "it computes"),
        ("jk_3", "jk_2", "loop 'jk_3' (line 29) stays apart from loop 'jk_2': "
                         "fuse_level_loops: merging loop 'jk_3' (line 29) into loop 'jk_2' "
                         "(line 24) would change results on 'pout': line 24 writes it and "
                         "line 29 reads it in iterations that the merged loop would run in "
                         "the other order"))


def test_interchange_reason_exempts_per_iteration_scalars():
    k = _column(COLUMN, "lf_col")
    # zqadj and cond are written before they are read in each iteration
    assert interchange_reason(k, "jm_1", "jk_3") == ""
    assert "'zq'" in interchange_reason(_column(REFUSED, "lf_no"), "jm", "jk_1")


def test_fuse_level_loops_alone_and_its_errors():
    k = _column(COLUMN, "lf_col", "ktop >= 1")
    out, report = level_fusion(k)
    # before the column mapping the column loops are loops too: the peeled
    # last level of the nests over one more level gets a column loop of its
    # own, and everything merges as under scc
    assert report.merged == (
        ("jm", "jk", "interchanged"), ("jk_2", "jk", "same range"),
        ("jm_1", "jk", "interchanged"), ("jk_4", "jk", "peeled"),
        ("jk_5", "jk", "guarded"), ("jk_6", "jk", "peeled"))
    assert [r[0] for r in report.refused] == ["jk_7"]
    assert fuse_level_loops(k).instructions == out.instructions
    with pytest.raises(TransformError, match="fuse_level_loops: no loop 'jx' in kernel "
                                             "'lf_col'$"):
        fuse_level_loops(k, column="jx")


def test_option_off_and_checked():
    k = _column(COLUMN, "lf_col", "ktop >= 1")
    _, report = scc_with_fusion(k, block=32, fuse=False)
    assert report.merged == () and report.refused == ()
    with pytest.raises(TransformError, match="scc: fuse is True or False, not 1$"):
        scc(k, fuse=1)


def test_generated_code_has_one_level_loop():
    k = _column(COLUMN, "lf_col", "ktop >= 1")
    code = generate_code(scc(k, block=32)).device_code
    loops = [line.strip() for line in code.splitlines() if line.strip().startswith("for (")]
    assert loops == [
        "for (int jk = 1; jk <= klev; ++jk)",
        "for (int jm = 1; jm <= 3; ++jm)",
        "for (int jm_1 = 1; jm_1 <= 3; ++jm_1)",
        "for (int jk_7 = 1; jk_7 <= klev; ++jk_7)"]
    # the main loop's body: one test, and it reads the fused loop's index;
    # its loop of one iteration, and the last level of the loops one level
    # longer, are blocks that fix their index
    assert code.count("if (jk >= ktop)") == 1 and "klon * (jk - 2)]" in code
    lines = [line.strip() for line in code.splitlines()]
    assert lines.count("int const jk_5 = jk;") == 1
    assert lines.count("int const jk_4_peel = klev + 1;") == 1
    assert lines.count("int const jk_6_peel = klev + 1;") == 1


@pytest.mark.usefixtures("sandbox_process")
def test_auto_says_what_it_fused(tmp_path):
    src = tmp_path / "lf_col.f90"
    src.write_text(COLUMN)
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D",
                                    "assume=ktop >= 1", "-o", str(tmp_path / "a"), str(src)])
    assert res.exit_code == 0, res.output
    assert ("; level loops fused: jm into jk (interchanged), jk_2 into jk (same range), "
            "jm_1 into jk (interchanged), jk_4 into jk (peeled), jk_5 into jk (guarded), "
            "jk_6 into jk (peeled);") in res.output
    assert "auto: kernel 'lf_col': loop 'jk_7' (line 65) stays apart from loop 'jk': " \
        in res.output


@needs_gfortran
@pytest.mark.opencl
def test_fused_column_checks_against_gfortran(tmp_path):
    # the main loop from level 3: levels 1-2 run the set-up and the fluxes only
    src = tmp_path / "lf_col.f90"
    src.write_text(COLUMN)
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "-D", "assume=ktop >= 1",
                                    "--size", "klon=13", "--size", "kidia=2", "--size",
                                    "kfdia=12", "--size", "klev=9", "--size", "ktop=3",
                                    str(src)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output and "ok: 78 output(s)" in res.output


EXIT = """\
subroutine lf_exit(kidia, kfdia, klon, klev, pt, pout)
  implicit none
  integer, intent(in) :: kidia, kfdia, klon, klev
  real(8), intent(in) :: pt(klon, klev)
  real(8), intent(out) :: pout(klon, klev)
  integer :: jl, jk
  do jl = kidia, kfdia
    pout(jl, 1) = 0.0d0
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      pout(jl, jk) = pt(jl, jk)
    end do
  end do
  do jl = kidia, kfdia
    do jk = 1, klev
      if (pt(jl, jk) < 0.0d0) exit
      pout(jl, jk) = pout(jl, jk) * 2.0d0
    end do
  end do
end subroutine lf_exit
"""


def test_a_loop_left_by_exit_stays_apart():
    _, report = scc_with_fusion(_column(EXIT, "lf_exit"), block=32)
    assert report.merged == ()
    assert report.refused == (
        ("jk_1", "jk", "loop 'jk_1' (lines 17-18) stays apart from loop 'jk': loop 'jk_1' is "
                       "left by 'exit', so its iterations cannot join another loop's"),)


#: set-up loops over 1..klev, a main loop from a run-time top level that may
#: lie at or below 0 (its levels there touch only pw, dimensioned from -3)
#: or above klev (no iteration), a per-column value carried down the levels,
#: a loop inside the main loop (its peeled copy gets a loop of its own)
TOP = """\
subroutine lf_top(kidia, kfdia, klon, klev, ktop, pt, pq, pw, pout)
  implicit none
  integer, intent(in) :: kidia, kfdia, klon, klev, ktop
  real(8), intent(in) :: pt(klon, klev), pq(klon, klev)
  real(8), intent(inout) :: pw(klon, -3:klev)
  real(8), intent(out) :: pout(klon, klev)
  real(8) :: za(klon, klev), zb(klon, klev), zacc(klon), zsum
  integer :: jl, jk, jm
  do jk = 1, klev
    do jl = kidia, kfdia
      za(jl, jk) = pt(jl, jk) * 2.0d0
      pout(jl, jk) = 0.0d0
    end do
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      zb(jl, jk) = za(jl, jk) + pq(jl, jk)
    end do
  end do
  do jl = kidia, kfdia
    zacc(jl) = 1.0d0
  end do
  do jk = ktop, klev
    do jl = kidia, kfdia
      zsum = zacc(jl) + pw(jl, jk)
      if (jk >= 1) then
        zsum = zsum + zb(jl, jk)
        pout(jl, jk) = pout(jl, jk) + zsum
      end if
      do jm = 1, 2
        zsum = zsum + 0.125d0 * jm
      end do
      pw(jl, jk) = zsum * 0.5d0
      zacc(jl) = zacc(jl) + zsum * 0.25d0
    end do
  end do
end subroutine lf_top
"""


def test_top_level_below_the_range_peeled():
    out, report = scc_with_fusion(_column(TOP, "lf_top"), block=32)
    assert report.merged == (("jk_1", "jk", "same range"),
                             ("jk_2", "jk", "levels below peeled"))
    assert report.refused == ()
    code = generate_code(out).device_code
    # the levels below 1 first (before the set-up's), then one level loop
    assert code.index("for (int jk_2_peel = ktop; jk_2_peel <= (klev >= 0 ? 0 : klev); "
                      "++jk_2_peel)") < code.index("for (int jk = 1; jk <= klev; ++jk)")
    assert code.count("if (jk >= ktop)") == 1
    loops = [line.strip() for line in code.splitlines() if line.strip().startswith("for (")]
    assert loops == [
        "for (int jk_2_peel = ktop; jk_2_peel <= (klev >= 0 ? 0 : klev); ++jk_2_peel)",
        "for (int jm_1 = 1; jm_1 <= 2; ++jm_1)",
        "for (int jk = 1; jk <= klev; ++jk)",
        "for (int jm = 1; jm <= 2; ++jm)"]
    # with the fact, nothing is peeled
    _, report = scc_with_fusion(_column(TOP, "lf_top", "ktop >= 1"), block=32)
    assert report.merged[-1] == ("jk_2", "jk", "guarded")


def test_top_level_below_the_range_refused_where_the_low_levels_need_the_set_up():
    # level 0 reads level 1 of zb, which the set-up loop writes first
    up = TOP.replace("zsum = zacc(jl) + pw(jl, jk)\n",
                     "zsum = zacc(jl) + pw(jl, jk) + zb(jl, min(jk + 1, klev))\n")
    _, report = scc_with_fusion(_column(up, "lf_top"), block=32)
    assert report.merged == (("jk_1", "jk", "same range"),)
    assert report.refused == ((
        "jk_2", "jk",
        "loop 'jk_2' (lines 25-34) stays apart from loop 'jk': its range may start before "
        "the range of 'jk', and its levels below that range cannot run before it: "
        "fuse_level_loops: merging loop 'jk_2_peel' (lines 25-34) into loop 'jk' (lines "
        "11-17) would change results on 'zb': line 17 writes it and line 25 reads it in "
        "iterations that the merged loop would run in the other order"),)
    # a statement between the loops that uses the set-up's values (so it
    # stays after the merged loop) and writes a level the low levels read
    mid = TOP.replace("    zacc(jl) = 1.0d0\n",
                      "    zacc(jl) = 1.0d0\n    pw(jl, 0) = za(jl, 1)\n")
    _, report = scc_with_fusion(_column(mid, "lf_top"), block=32)
    assert report.refused == ((
        "jk_2", "jk",
        "loop 'jk_2' (lines 26-35) stays apart from loop 'jk': its range may start before "
        "the range of 'jk', and line 22, between the two loops, uses what loop 'jk' "
        "computes and touches what its levels below that range touch (line 26)"),)


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("ktop", [-3, 0, 1, 4, 9, 10])
def test_top_level_below_the_range_checks_against_gfortran(tmp_path, ktop):
    src = tmp_path / "lf_top.f90"
    src.write_text(TOP)
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "--size", "klon=13",
                                    "--size", "kidia=2", "--size", "kfdia=12", "--size",
                                    "klev=9", "--size", f"ktop={ktop}", str(src)])
    assert "FAIL" not in res.output
    if ktop > 9:
        # the main loop runs no level: every output still matches
        assert "NOT COVERED" in res.output and "ktop=10): ok" in res.output
    else:
        assert res.exit_code == 0, res.output
        assert "ok: " in res.output
