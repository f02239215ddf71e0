"""K-caching (:mod:`f2loopy.transform.kcache`): which private level
temporaries of a single-column kernel are kept as their current and previous
level and why the others are not (IR facts, exact reasons), the shape of the
generated code, the options, and PoCL against gfortran on column code with
level recurrences (reads of level JK-1, a flux carried downwards, species
arrays) beside arrays that must not be cached."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.diagnostics import TransformError
from f2loopy.frontend import parse_fortran
from f2loopy.transform.kcache import LevelCache, cache_levels, level_caches
from f2loopy.transform.scc import scc

from util import needs_gfortran

#: every temporary read is written first (the differential test runs it)
CASES = """\
subroutine kc_cases(klon, klev, kidia, kfdia, nstep, pt, pq, ptend, pflux, pout)
  implicit none
  integer, parameter :: nclv = 3
  integer, intent(in) :: klon, klev, kidia, kfdia, nstep
  double precision, intent(in) :: pt(klon, klev), pq(klon, klev, nclv)
  double precision, intent(inout) :: ptend(klon, klev, nclv)
  double precision, intent(out) :: pflux(klon, klev), pout(klon, klev)
  double precision :: ztp1(klon, klev), zqx(klon, klev, nclv), zflx(klon, klev)
  double precision :: zloc(klon, klev), zpre(klon, klev), zup(klon, klev), zw(klon, klev)
  double precision :: zfix(klon, klev), zstep(klon, klev), zbig(klon, klev, 40)
  double precision :: zacc(klon, klev), zspc(klon, nclv), zsum
  integer :: jk, jl, jm, jt

  do jk = 1, klev
    do jl = kidia, kfdia
      zpre(jl, jk) = 2.0d0 * pt(jl, jk)
      zup(jl, jk) = pt(jl, jk)
    end do
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      ztp1(jl, jk) = pt(jl, jk) + zpre(jl, jk)
      zloc(jl, jk) = 0.5d0 * ztp1(jl, jk)
      zsum = 0.0d0
      do jm = 1, nclv
        zqx(jl, jk, jm) = pq(jl, jk, jm) * zloc(jl, jk)
        if (jk > 1) zqx(jl, jk, jm) = zqx(jl, jk, jm) + 0.5d0 * zqx(jl, jk - 1, jm)
        zspc(jl, jm) = zqx(jl, jk, jm)
        zsum = zsum + zspc(jl, jm)
        ptend(jl, jk, jm) = ptend(jl, jk, jm) + zqx(jl, jk, jm)
      end do
      if (jk > 1) then
        zflx(jl, jk) = zflx(jl, jk - 1) + zsum * (ztp1(jl, jk) - ztp1(jl, jk - 1))
      else
        zflx(jl, jk) = zsum
      end if
      pflux(jl, jk) = zflx(jl, jk)
      pout(jl, jk) = 0.0d0
      if (jk < klev) pout(jl, jk) = zup(jl, jk + 1)
      if (jk > 1) zw(jl, jk - 1) = zsum
      if (jk == klev) pout(jl, jk) = zw(jl, 1)
      zfix(jl, jk) = zsum
      pout(jl, jk) = pout(jl, jk) + zfix(jl, 1)
      do jm = 1, 40
        zbig(jl, jk, jm) = zsum * jm
      end do
      pflux(jl, jk) = pflux(jl, jk) + zbig(jl, jk, 7)
    end do
  end do
  do jk = 1, klev, 2
    do jl = kidia, kfdia
      zstep(jl, jk) = pt(jl, jk) * 3.0d0
      pout(jl, jk) = pout(jl, jk) + zstep(jl, jk)
    end do
  end do
  do jt = 1, nstep
    do jk = 1, klev
      do jl = kidia, kfdia
        if (jt == 1) zacc(jl, jk) = 0.0d0
        zacc(jl, jk) = zacc(jl, jk) + pt(jl, jk)
        pout(jl, jk) = pout(jl, jk) + zacc(jl, jk)
      end do
    end do
  end do
end subroutine kc_cases
"""

#: loops whose previous iteration is not level JK-1 (never run)
ORDERS = """\
subroutine kc_orders(klon, klev, kidia, kfdia, pt, pout)
  implicit none
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pt(klon, klev)
  double precision, intent(out) :: pout(klon, klev)
  double precision :: zodd(klon, klev), zup(klon, klev)
  integer :: jk, jl
  do jk = 2, klev, 2
    do jl = kidia, kfdia
      zodd(jl, jk) = pt(jl, jk)
      pout(jl, jk) = zodd(jl, jk - 1)
    end do
  end do
  do jk = klev - 1, 1, -1
    do jl = kidia, kfdia
      zup(jl, jk) = pt(jl, jk)
      pout(jl, jk) = pout(jl, jk) + zup(jl, jk + 1)
    end do
  end do
end subroutine kc_orders
"""


#: one level loop in the shape of a fused cloud scheme: set-up at each level,
#: the microphysics under ``jk >= ncldtop`` (a flux written at level jk + 1,
#: values kept where a condition skips them), the fluxes at level jk, the
#: last flux level after the loop; two arrays filled with zeros before it
FUSED = """\
subroutine kc_fused(klon, klev, kidia, kfdia, ncldtop, pt, pq, pflux, pplsl, ptend)
  implicit none
  integer, parameter :: nclv = 3
  integer, intent(in) :: klon, klev, kidia, kfdia, ncldtop
  double precision, intent(in) :: pt(klon, klev), pq(klon, klev, nclv)
  double precision, intent(out) :: pflux(klon, klev), pplsl(klon, klev + 1), ptend(klon, klev)
  double precision :: ztp1(klon, klev), zqx(klon, klev, nclv), zqxn2d(klon, klev, nclv)
  double precision :: zpfplsx(klon, klev + 1, nclv)
  integer :: jk, jl, jm

  zpfplsx(:, :, :) = 0.0d0
  zqxn2d(:, :, :) = 0.0d0
  do jk = 1, klev
    do jl = kidia, kfdia
      ztp1(jl, jk) = pt(jl, jk) * 1.5d0
      ptend(jl, jk) = 0.0d0
      do jm = 1, nclv
        zqx(jl, jk, jm) = pq(jl, jk, jm) + 0.1d0 * jm
      end do
    end do
    if (jk >= ncldtop) then
      do jl = kidia, kfdia
        do jm = 1, nclv
          if (pq(jl, jk, jm) > 0.3d0) &
            zqxn2d(jl, jk, jm) = zqx(jl, jk, jm) + 0.5d0 * zpfplsx(jl, jk, jm)
          if (pq(jl, jk, jm) < 0.7d0) &
            zpfplsx(jl, jk + 1, jm) = 0.25d0 * zqxn2d(jl, jk, jm) + pq(jl, jk, jm)
        end do
        if (jk > ncldtop .and. jk > 1) ptend(jl, jk) = ztp1(jl, jk) - ztp1(jl, jk - 1)
      end do
    end if
    do jl = kidia, kfdia
      pplsl(jl, jk) = zpfplsx(jl, jk, 1) + zpfplsx(jl, jk, 2)
      pflux(jl, jk) = zqxn2d(jl, jk, 1) - zqx(jl, jk, 1) + zqxn2d(jl, jk, 3)
    end do
  end do
  do jl = kidia, kfdia
    pplsl(jl, klev + 1) = zpfplsx(jl, klev + 1, 1) + zpfplsx(jl, klev + 1, 2)
  end do
  do jk = klev + 1, klev + 1
    do jl = kidia, kfdia
      pplsl(jl, jk) = pplsl(jl, jk) + zpfplsx(jl, jk, 3)
    end do
  end do
end subroutine kc_fused
"""

#: what the fused shape must not cache (never run)
FUSED_NO = """\
subroutine kc_fused_no(klon, klev, kidia, kfdia, pt, pout)
  implicit none
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pt(klon, klev)
  double precision, intent(out) :: pout(klon, klev + 1)
  double precision :: zcond(klon, klev), zpart(klon, klev)
  double precision :: zlast(klon, klev), zearly(klon, klev), zboth(klon, klev + 1)
  double precision :: zfar(klon, klev + 1), zout(klon, klev), zlate(klon, klev)
  integer :: jk, jl

  if (kidia > 1) zcond(:, :) = 0.0d0
  zpart(:, 2:klev) = 0.0d0
  zearly(:, :) = 0.0d0
  do jl = kidia, kfdia
    pout(jl, klev + 1) = zearly(jl, 1)
    zout(jl, 1) = pt(jl, 1)
  end do
  do jk = 1, klev
    do jl = kidia, kfdia
      zcond(jl, jk) = pt(jl, jk)
      zpart(jl, jk) = pt(jl, jk)
      zlast(jl, jk) = pt(jl, jk)
      zearly(jl, jk) = pt(jl, jk)
      zboth(jl, jk) = pt(jl, jk)
      zboth(jl, jk + 1) = pt(jl, jk)
      zfar(jl, jk + 1) = pt(jl, jk)
      zlate(jl, jk) = pt(jl, jk)
      pout(jl, jk) = zcond(jl, jk) + zpart(jl, jk) + zlast(jl, jk) &
        + zearly(jl, jk) + zboth(jl, jk) + zout(jl, jk) + zlate(jl, jk)
      if (jk > 1) pout(jl, jk) = pout(jl, jk) + zfar(jl, jk - 1)
    end do
  end do
  zlate(:, :) = 0.0d0
  do jl = kidia, kfdia
    pout(jl, 1) = pout(jl, 1) + zlast(jl, klev - 1) + zlate(jl, 1)
  end do
end subroutine kc_fused_no
"""

@pytest.fixture(scope="module")
def mapped():
    """kc_cases mapped one column per work-item, nothing cached yet."""
    unit = parse_fortran(CASES, "kc_cases.f90")
    return scc(unit["kc_cases"], block=32, specialize=True, kcache=False, fuse=False)


def test_which_temporaries_are_cached_and_why_not(mapped):
    verdicts = {v.name: v for v in level_caches(mapped)}
    assert verdicts["ztp1"] == LevelCache("ztp1", loop="jk_1", axis=0, previous=True)
    assert verdicts["zflx"] == LevelCache("zflx", loop="jk_1", axis=0, previous=True)
    # only its own level: one value, no copy
    assert verdicts["zloc"] == LevelCache("zloc", loop="jk_1", axis=0, previous=False)
    assert verdicts["zqx"] == LevelCache("zqx", loop="jk_1", axis=0, previous=True)
    # written and read at level jk only, in a loop of step 2
    assert verdicts["zstep"] == LevelCache("zstep", loop="jk_2", axis=0, previous=False)
    reasons = {n: v.reason for n, v in verdicts.items() if not v.cached}
    assert reasons == {
        "zpre": "it is used in two loops (line 16 and line 22)",
        "zup": "it is used in two loops (line 17 and line 39)",
        "zw": "line 40 writes level 'jk_1 - 1'",
        "zfix": "line 43 uses it at a fixed level",
        "zbig": "its other axes hold more than 32 elements",
        "zacc": "the loop its subscripts read, 'jk_3', runs inside loop 'jt'",
        # a species array: its loop is not the outermost one
        "zspc": "the loop its subscripts read, 'jm', runs inside loop 'jk_1'",
    }


def test_loops_whose_previous_iteration_is_not_the_level_above():
    unit = parse_fortran(ORDERS, "kc_orders.f90")
    knl = scc(unit["kc_orders"], block=32, specialize=True, kcache=False)
    reasons = {v.name: v.reason for v in level_caches(knl)}
    assert reasons["zodd"] == "loop 'jk' does not step by one (and level 'jk - 1' is read)"
    # a loop with a negative step runs over a trip counter: its levels are
    # klev - 1 - jk_t..., not jk_t or jk_t + 1
    assert reasons["zup"] == "line 16 writes a level other than 'jk_t' and 'jk_t + 1'"
    assert scc(unit["kc_orders"], block=32, specialize=True).temporaries == knl.temporaries


def test_cached_temporaries_in_the_ir(mapped):
    knl = cache_levels(mapped)
    temps = knl.temporaries
    for gone in ("ztp1", "zflx", "zloc", "zqx", "zstep"):
        assert gone not in temps
    assert {n: temps[n].shape for n in temps if n.endswith(("_k", "_km1"))} == {
        "ztp1_k": (), "ztp1_km1": (), "zflx_k": (), "zflx_km1": (), "zloc_k": (),
        "zqx_k": (3,), "zqx_km1": (3,), "zstep_k": ()}
    assert temps["zpre"].shape == mapped.temporaries["zpre"].shape
    shifts = [i for i in knl.instructions if "_shift" in i.id]
    assert sorted(i.id for i in shifts) == [
        "zflx_km1_shift", "zqx_km1_shift", "zqx_km1_shift_1", "zqx_km1_shift_2",
        "ztp1_km1_shift"]
    for insn in shifts:
        assert insn.within_inames == {"jk_1", "jl_inner", "jl_outer"}
    # each copy runs after every statement that used the array
    users = {i.id for i in mapped.instructions if "zqx" in i.dependency_names()}
    assert knl.id_to_insn["zqx_km1_shift_2"].depends_on == users
    assert {"ztp1_k", "ztp1_km1", "zqx_k"} <= set(knl.options.per_work_item)
    assert "ztp1" not in knl.options.per_work_item
    # scc applies it unless told not to
    again = scc(parse_fortran(CASES, "kc_cases.f90")["kc_cases"], block=32, specialize=True,
                fuse=False)
    assert again.temporaries == temps


def test_generated_code_keeps_two_levels(mapped):
    src = generate_code(cache_levels(mapped)).source
    assert "double ztp1_k;\n    double ztp1_km1;" in src
    assert "double zqx_k[3];" in src and "double ztp1[" not in src
    assert "zflx_k = zflx_km1 + zsum * (ztp1_k - ztp1_km1);" in src
    assert ("zqx_km1[0] = zqx_k[0];\n            zqx_km1[1] = zqx_k[1];\n"
            "            zqx_km1[2] = zqx_k[2];") in src
    # the copy comes after the last use of the level in the iteration
    body = src[src.index("for (int jk_1 = 1;"):src.index("for (int jk_2 = 1;")]
    assert body.index("ztp1_km1 = ztp1_k;") > body.index("ztp1_k - ztp1_km1")
    assert body.index("zflx_km1 = zflx_k;") > body.index("] = zflx_k;\n")
    assert "double zpre[klev];" in src and "zw[jk_1 - 2] = zsum;" in src


def test_names_option(mapped):
    only = cache_levels(mapped, names=["zloc"])
    assert "zloc_k" in only.temporaries and "ztp1" in only.temporaries
    for names, message in [
            (["zpre"], "cache_levels: 'zpre' is not cached: it is used in two loops "
                       "(line 16 and line 22)"),
            (["pt"], "cache_levels: 'pt' is not a private temporary with axes that kernel "
                     "'kc_cases' uses"),
            ("zloc", "cache_levels: names is a list of temporary names, not 'zloc'")]:
        with pytest.raises(TransformError) as exc:
            cache_levels(mapped, names=names)
        assert exc.value.message == message
    with pytest.raises(TransformError) as exc:
        scc(parse_fortran(CASES, "kc_cases.f90")["kc_cases"], kcache="no")
    assert exc.value.message == "scc: kcache is True or False, not 'no'"


@pytest.mark.usefixtures("sandbox_process")
def test_auto_says_what_it_cached(tmp_path):
    src = tmp_path / "kc_cases.f90"
    src.write_text(CASES)
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D", "fuse=false",
                                    "-o", str(tmp_path / "a"), str(src)])
    assert res.exit_code == 0, res.output
    assert "; levels cached: zflx, zloc, zqx, zstep, ztp1; compiled per value of klev\n" \
        in res.output
    assert "double ztp1_km1;" in (tmp_path / "a" / "kc_cases.cl").read_text()
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D", "kcache=false",
                                    "-D", "fuse=false", "-o", str(tmp_path / "b"), str(src)])
    assert res.exit_code == 0, res.output
    assert "levels cached" not in res.output
    assert "double ztp1[klev];" in (tmp_path / "b" / "kc_cases.cl").read_text()


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("options", [["--transform", "auto"],
                                     ["--transform", "scc", "-D", "block=4"]])
def test_cached_levels_check_against_gfortran(tmp_path, options):
    src = tmp_path / "kc_cases.f90"
    src.write_text(CASES)
    res = CliRunner().invoke(main, ["check", *options, "--size", "klon=13", "--size",
                                    "kidia=2", "--size", "kfdia=12", "--size", "klev=9",
                                    "--size", "nstep=3", str(src)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output and "ok: 3 output(s)" in res.output


@pytest.fixture(scope="module")
def fused():
    """kc_fused mapped one column per work-item, nothing cached yet."""
    return scc(parse_fortran(FUSED, "kc_fused.f90")["kc_fused"], block=32, specialize=True,
               kcache=False)


def test_fused_level_loop_verdicts(fused):
    verdicts = {v.name: v for v in level_caches(fused)}
    assert verdicts == {
        "ztp1": LevelCache("ztp1", loop="jk", axis=0, previous=True),
        "zqx": LevelCache("zqx", loop="jk", axis=0),
        # filled with zeros before the loop, written at jk under conditions
        "zqxn2d": LevelCache("zqxn2d", loop="jk", axis=0, fill="zqxn2d"),
        # written at jk + 1, read at jk, its last level read after the loop
        # (also in a loop of one iteration)
        "zpfplsx": LevelCache("zpfplsx", loop="jk", axis=0, previous=True, shift=1,
                              fill="zpfplsx", after=("pplsl_1", "pplsl_2")),
    }
    # the loops as written (level fusion would merge the partial fill and the
    # fill after the loop into the level loop)
    knl = scc(parse_fortran(FUSED_NO, "kc_fused_no.f90")["kc_fused_no"], block=32,
              specialize=True, kcache=False, fuse=False)
    assert {v.name: v.reason for v in level_caches(knl)} == {
        "zcond": "line 11 fills it under a condition",
        "zpart": "line 12 does not fill all of it",
        "zearly": "line 15 reads it before loop 'jk'",
        "zout": "line 16 writes it outside the loops",
        "zboth": "line 25 writes level 'jk + 1', another statement level 'jk'",
        "zfar": "line 30 reads a level other than 'jk + 1' and 'jk'",
        "zlate": "line 33 fills it after loop 'jk'",
        "zlast": "line 35 reads it after loop 'jk' at a level other than the one its last "
                 "iteration writes",
    }


def test_fused_level_loop_in_the_ir_and_the_code(fused):
    knl = cache_levels(fused)
    temps = knl.temporaries
    assert not {"ztp1", "zqx", "zqxn2d", "zpfplsx"} & set(temps)
    assert {n: temps[n].shape for n in temps if n.endswith(("_k", "_km1"))} == {
        "ztp1_k": (), "ztp1_km1": (), "zqx_k": (3,), "zqxn2d_k": (3,), "zpfplsx_k": (3,),
        "zpfplsx_km1": (3,)}
    ids = knl.id_to_insn
    # the fill's statements outside the loop, the resets inside it; every
    # statement of the loop that used the array runs after the resets
    assert "zpfplsx" not in ids and "zqxn2d" not in ids
    assert ids["zpfplsx_k_init"].within_inames == {"jl_inner", "jl_outer"}
    assert ids["zpfplsx_k_reset_2"].within_inames == {"jk", "jl_inner", "jl_outer"}
    assert {"zpfplsx_k_reset", "zpfplsx_k_reset_1", "zpfplsx_k_reset_2"} \
        <= ids["zpfplsx_1"].depends_on
    # the read after the loop follows the fill (directly, or through the
    # statements it follows: dependences implied by others are not repeated)
    follows, todo = set(), ["pplsl_1"]
    while todo:
        for d in ids[todo.pop()].depends_on - follows:
            follows.add(d)
            todo.append(d)
    assert "zpfplsx_k_init" in follows
    src = generate_code(knl).source
    loop = src.index("for (int jk = 1; jk <= klev; ++jk)")
    end = src.index("pplsl[jl_inner + 32 * jl_outer + kidia - 1 + klon * klev]")
    head, body = src[:loop], src[loop:end]
    assert ("zpfplsx_k[2] = 0.0;\n        zpfplsx_km1[0] = 0.0;" in head
            and "zqxn2d_k[2] = 0.0;" in head and "zqxn2d_km1" not in src)
    assert body.index("zpfplsx_k[0] = 0.0;") < body.index("zpfplsx_k[jm_1 - 1] = 0.25")
    assert body.index("zqxn2d_k[0] = 0.0;") < body.index("zqxn2d_k[jm_1 - 1] = zqx_k")
    assert "zqxn2d_k[jm_1 - 1] = zqx_k[jm_1 - 1] + 0.5 * zpfplsx_km1[jm_1 - 1];" in body
    assert body.index("zpfplsx_km1[0] + zpfplsx_km1[1];") < body.index(
        "zpfplsx_km1[0] = zpfplsx_k[0];")
    # the level the last iteration wrote, after the loop
    assert src[end:].startswith("pplsl[jl_inner + 32 * jl_outer + kidia - 1 + klon * klev] "
                                "= zpfplsx_k[0] + zpfplsx_k[1];")
    assert ("{\n            int const jk_1 = klev + 1;\n            pplsl[jl_inner "
            "+ 32 * jl_outer + kidia - 1 + klon * (jk_1 - 1)] = pplsl[jl_inner + 32 * jl_outer "
            "+ kidia - 1 + klon * (jk_1 - 1)] + zpfplsx_k[2];") in src[end:]


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("options", [["--transform", "auto", "--size", "ncldtop=3"],
                                     ["--transform", "scc", "-D", "block=4",
                                      "--size", "ncldtop=0"]])
def test_fused_level_loop_checks_against_gfortran(tmp_path, options):
    src = tmp_path / "kc_fused.f90"
    src.write_text(FUSED)
    res = CliRunner().invoke(main, ["translate", *options[:-2], "-o", str(tmp_path / "t"),
                                    str(src)])
    assert res.exit_code == 0, res.output
    assert "double zpfplsx_km1[3];" in (tmp_path / "t" / "kc_fused.cl").read_text()
    res = CliRunner().invoke(main, ["check", *options, "--size", "klon=13", "--size",
                                    "kidia=2", "--size", "kfdia=12", "--size", "klev=9",
                                    str(src)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output and "ok: 3 output(s)" in res.output


@pytest.mark.usefixtures("sandbox_process")
def test_auto_lists_only_what_it_cached(tmp_path):
    # zdead is never read: dead-store removal drops it, it is not "cached"
    src = tmp_path / "kc_dead.f90"
    src.write_text("""\
subroutine kc_dead(klon, klev, kidia, kfdia, pt, pout)
  implicit none
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pt(klon, klev)
  double precision, intent(out) :: pout(klon, klev)
  double precision :: zt(klon, klev), zdead(klon, klev)
  integer :: jk, jl
  do jk = 1, klev
    do jl = kidia, kfdia
      zt(jl, jk) = 2.0d0 * pt(jl, jk)
      zdead(jl, jk) = zt(jl, jk) + 1.0d0
    end do
    do jl = kidia, kfdia
      pout(jl, jk) = zt(jl, jk)
    end do
  end do
end subroutine kc_dead
""")
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-o",
                                    str(tmp_path / "a"), str(src)])
    assert res.exit_code == 0, res.output
    assert "; levels cached: zt; compiled per value of klev\n" in res.output
