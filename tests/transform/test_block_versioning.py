"""Block versioning (:mod:`f2loopy.transform.block_versioning`): the body
of a loop that indexes small private arrays through a run-time key (a
species chosen by a sort, in CLOUDSC's style) as one block per value of the
key: which keys are versioned, their values and loops, the exact reasons
for the others (IR facts), the IR and generated code of the blocks, the
options, and PoCL against gfortran on a column code that sorts its
species."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.diagnostics import TransformError
from f2loopy.frontend import parse_fortran
from f2loopy.transform.block_versioning import BlockVersion, block_versions, version_blocks
from f2loopy.transform.scc import scc
from f2loopy.transform.versioning import version_indices

from util import needs_gfortran

#: a column code sorting its species each level, as CLOUDSC does
SORT = """\
subroutine bv_sort(klon, klev, kidia, kfdia, pq, psrc, pout)
  implicit none
  integer, parameter :: nclv = 5
  integer, intent(in) :: klon, klev, kidia, kfdia
  real(8), intent(in) :: pq(klon, klev, nclv), psrc(klon, klev, nclv, nclv)
  real(8), intent(inout) :: pout(klon, klev, nclv)
  real(8) :: zsolqa(klon, nclv, nclv), zsinksum(klon, nclv), zratio(klon, nclv), zmin(klon)
  real(8) :: zmm, zrr, zzratio
  integer :: iorder(klon, nclv), jl, jk, jm, jn, jo
  logical :: llindex1(klon, nclv), llindex3(klon, nclv, nclv)
  do jk = 1, klev
    do jm = 1, nclv
      do jn = 1, nclv
        do jl = kidia, kfdia
          zsolqa(jl, jn, jm) = psrc(jl, jk, jn, jm)
          llindex3(jl, jn, jm) = .false.
        end do
      end do
      do jl = kidia, kfdia
        zsinksum(jl, jm) = 0.0d0
      end do
    end do
    do jm = 1, nclv
      do jn = 1, nclv
        do jl = kidia, kfdia
          zsinksum(jl, jm) = zsinksum(jl, jm) - zsolqa(jl, jm, jn)
        end do
      end do
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        zmm = max(pq(jl, jk, jm), 1.0d-10)
        zrr = max(zsinksum(jl, jm), zmm)
        zratio(jl, jm) = zmm / zrr
      end do
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        iorder(jl, jm) = -999
      end do
    end do
    do jn = 1, nclv
      do jl = kidia, kfdia
        llindex1(jl, jn) = .true.
      end do
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        zmin(jl) = 1.0d32
      end do
      do jn = 1, nclv
        do jl = kidia, kfdia
          if (llindex1(jl, jn) .and. zratio(jl, jn) < zmin(jl)) then
            iorder(jl, jm) = jn
            zmin(jl) = zratio(jl, jn)
          end if
        end do
      end do
      do jl = kidia, kfdia
        llindex1(jl, iorder(jl, jm)) = .false.
      end do
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        zsinksum(jl, jm) = 0.0d0
      end do
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        jo = iorder(jl, jm)
        do jn = 1, nclv
          llindex3(jl, jo, jn) = zsolqa(jl, jo, jn) < 0.0d0
        end do
        zsinksum(jl, jo) = zsinksum(jl, jo) - sum(zsolqa(jl, jo, 1:nclv))
      end do
      do jl = kidia, kfdia
        jo = iorder(jl, jm)
        zmm = max(pq(jl, jk, jo), 1.0d-10)
        zrr = max(zsinksum(jl, jo), zmm)
        zratio(jl, jo) = zmm / zrr
      end do
      do jl = kidia, kfdia
        jo = iorder(jl, jm)
        zzratio = zratio(jl, jo)
        do jn = 1, nclv
          if (llindex3(jl, jo, jn)) then
            zsolqa(jl, jo, jn) = zsolqa(jl, jo, jn) * zzratio
            zsolqa(jl, jn, jo) = zsolqa(jl, jn, jo) * zzratio
          end if
        end do
      end do
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        pout(jl, jk, jm) = pout(jl, jk, jm) + sum(zsolqa(jl, jm, :)) + zratio(jl, jm)
      end do
    end do
  end do
end subroutine bv_sort
"""

#: keys that must not be versioned, and one versioned over the values its
#: array holds (never run)
REFUSED = """\
subroutine bv_refused(klon, klev, kidia, kfdia, kidx, pq, pout)
  implicit none
  integer, intent(in) :: klon, klev, kidia, kfdia
  integer, intent(in) :: kidx(klon, klev)
  double precision, intent(in) :: pq(klon, klev)
  double precision, intent(inout) :: pout(klon, klev)
  double precision :: za(klon, 4), zb(klon, 4), zc(klon, 4), zd(klon, 4), zbig(klon, 20)
  integer :: isel(klon, 4), jk, jl, jm, ja, jb, jc, jd
  do jk = 1, klev
    do jm = 1, 4
      do jl = kidia, kfdia
        za(jl, jm) = 0.0d0
        zb(jl, jm) = 0.0d0
        zc(jl, jm) = 0.0d0
        zd(jl, jm) = 0.0d0
        isel(jl, jm) = 2
      end do
    end do
    do jl = kidia, kfdia
      if (pq(jl, jk) > 0.5d0) isel(jl, 4) = 3
      jc = kidx(jl, jk)
      if (jc > 0) zc(jl, jc) = pq(jl, jk)
      jd = kidx(jl, 1)
      zbig(jl, jd) = pq(jl, jk)
    end do
    do jm = 1, 4
      do jl = kidia, kfdia
        ja = kidx(jl, jk)
        za(jl, ja) = pq(jl, jk)
        ja = ja + 1
      end do
    end do
    do jl = kidia, kfdia
      jb = kidx(jl, 1)
      do jm = 1, 4
        zb(jl, jb) = zb(jl, jb) + pq(jl, jk)
        jb = kidx(jl, jk)
      end do
    end do
    do jm = 1, 4
      do jl = kidia, kfdia
        zd(jl, isel(jl, jm)) = zd(jl, isel(jl, jm)) + pq(jl, jk)
      end do
    end do
    do jl = kidia, kfdia
      pout(jl, jk) = pout(jl, jk) + za(jl, 1) + zb(jl, 1) + zc(jl, 1) + zd(jl, 1) + zbig(jl, 1)
    end do
  end do
end subroutine bv_refused
"""


@pytest.fixture(scope="module")
def mapped():
    """bv_sort mapped one column per work-item, nothing versioned yet."""
    return scc(parse_fortran(SORT, "bv_sort.f90")["bv_sort"], block=32)


def test_keys_loops_and_values(mapped):
    assert block_versions(mapped) == (
        # the sort's own loop writes the array it is indexed through
        BlockVersion("iorder[jm_4]", reason="'iorder[jm_4]' changes in loop 'jm_4': line 54 "
                     "writes 'iorder'"),
        # the scaling loop: jo = iorder(jm) once per iteration; iorder holds
        # -999 or 1..5 (the values stored), and llindex3(jl, jo, jn), which
        # every iteration evaluates, keeps only 1..5
        BlockVersion("iorder[jm_6]", "jm_6", ("jo",), (1, 2, 3, 4, 5)),
    )


def test_refusals_name_the_line():
    knl = scc(parse_fortran(REFUSED, "bv_refused.f90")["bv_refused"], block=32)
    col = "kidia + jl_inner + 32*jl_outer"
    assert block_versions(knl) == (
        BlockVersion("jc", "jk", ("jc",), reason=(
            f"the values of 'kidx[{col}, jk]' are not known: no statement that runs in every "
            "iteration of loop 'jk' indexes an array with it, and it is not a temporary that "
            "only literals and loop indices are stored in")),
        BlockVersion("jd", "jk", ("jd",),
                     reason=f"'kidx[{col}, 1]' takes 20 values, more than 16"),
        BlockVersion("ja", None, ("ja",), reason=(
            f"in loop 'jm_1', line 30 assigns 'ja' other than 'ja = kidx[{col}, jk]' once "
            "per iteration")),
        BlockVersion("jb", None, ("jb",),
                     reason="in loop 'jm_2', line 36 reads 'jb' before the loop's body assigns it"),
        # isel holds 2 or 3 (the values stored), zd(jl, isel(jl, jm)) keeps 1..4
        BlockVersion("isel[jm_3]", "jm_3", (), (2, 3)),
    )
    out = version_blocks(knl)
    assert {i.id for i in out.instructions} - {i.id for i in knl.instructions} == {
        "jm_3_key_read", *(f"{i.id}_v{c}" for i in knl.instructions
                           if "jm_3" in i.within_inames for c in (2, 3))}
    with pytest.raises(TransformError) as exc:
        version_blocks(knl, loops=["jm_1"])
    assert exc.value.message == (
        "version_blocks: no key of kernel 'bv_refused' is versioned in loop 'jm_1' (jc: the "
        f"values of 'kidx[{col}, jk]' are not known: no statement that runs in every iteration "
        "of loop 'jk' indexes an array with it, and it is not a temporary that only literals "
        "and loop indices are stored in)")
    with pytest.raises(TransformError) as exc:
        version_blocks(knl, loops=["jk"])
    assert exc.value.message == (
        "version_blocks: loop 'jk' is not versioned: the values of "
        f"'kidx[{col}, jk]' are not known: no statement that runs in every iteration of loop "
        "'jk' indexes an array with it, and it is not a temporary that only literals and loop "
        "indices are stored in")


def test_blocks_in_the_ir(mapped):
    from f2loopy.ir.expressions import variables_read
    before = str(mapped)
    knl = version_blocks(mapped)
    assert str(mapped) == before          # the input is not changed
    body = [i for i in mapped.instructions if "jm_6" in i.within_inames]
    inner = {"jn_4", "jn_5", "sum_i1"}
    assert set().union(*(i.within_inames for i in body)) - set(
        body[0].within_inames) == inner
    new = knl.id_to_insn
    key = new["jm_6_key_read"]
    assert str(key.assignee) == "jm_6_key" and str(key.expression) == "iorder[jm_6]"
    assert key.within_inames == frozenset.intersection(*(i.within_inames for i in body))
    assert knl.temporaries["jm_6_key"].dtype == knl.temporaries["jo"].dtype
    assert not {i.id for i in body} & set(new)
    for c in range(1, 6):
        dom = knl.domains[knl.iname_domain_index[f"jm_6_v{c}"]]
        assert dom.is_equal(dom.read_from_str(
            dom.get_ctx(), f"[jm_6_key] -> {{ [jm_6_v{c}] : jm_6_v{c} = 0 and jm_6_key = {c} }}"))
        for i in body:
            copy = new[f"{i.id}_v{c}"]
            assert copy.within_inames == (
                {x for x in i.within_inames if x not in inner}
                | {f"{x}_v{c}" for x in i.within_inames if x in inner} | {f"jm_6_v{c}"})
            # the key is the constant: neither jo nor iorder is read
            assert not variables_read(*copy.read_expressions()) & ({"jo", "iorder"} | inner)
            assert "jm_6_key_read" in copy.depends_on
            assert all(d in new for d in copy.depends_on)
    # jo = iorder(jm) became jo = c (its value after the loop is kept)
    assigns = [new[f"{i.id}_v4"] for i in body if i.assignee_names() == ("jo",)]
    assert len(assigns) == 3 and all(a.expression == 4 for a in assigns)
    # the statements after the loop depend on every copy
    later = [i for i in knl.instructions if "jm_7" in i.within_inames]
    for i in later:
        old = mapped.id_to_insn[i.id]
        for d in old.depends_on & {b.id for b in body}:
            assert {f"{d}_v{c}" for c in range(1, 6)} | {"jm_6_key_read"} <= i.depends_on
    assert not inner & set(knl.all_inames())
    # version_blocks is a function of the kernel: the same again
    assert version_blocks(mapped) == knl


def test_generated_code_is_one_block_per_species(mapped):
    src = generate_code(version_blocks(mapped)).source
    assert re.search(r"jm_6_key = iorder\[jm_6 - 1\];\n\s*if \(jm_6_key == 1\)\n\s*\{\n"
                     r"\s*\{\n\s*int const jm_6_v1 = 0;\n"
                     r"\s*jo = 1;", src), src
    assert "zsolqa[2 + 5 * (jn_5_v3 - 1)] = zsolqa[2 + 5 * (jn_5_v3 - 1)] * zzratio;" in src
    assert "zsinksum[4] = zsinksum[4] - sum;" in src
    # one chain of tests: the key is not written in the blocks
    assert src.count("if (jm_6_key == ") == 5
    assert [int(c) for c in re.findall(r"else if \(jm_6_key == (\d)\)", src)] == [2, 3, 4, 5]
    for name in ("zsolqa", "llindex3", "zratio", "zsinksum"):
        assert f"{name}[jo" not in src and f"{name}[iorder" not in src
    # the sort's own loop keeps its dynamic index (version_indices' part)
    assert "llindex1[iorder[jm_4 - 1] - 1] = 0;" in src


def test_chain_stops_where_a_block_writes_the_key(mapped):
    import pymbolic.primitives as p

    from f2loopy.ir.kernel import Assignment
    knl = version_blocks(mapped)
    insns = list(knl.instructions)
    first = next(i for i in insns if "jm_6_v1" in i.within_inames)
    insns.insert(insns.index(first) + 1, Assignment(
        id="rekey", within_inames=first.within_inames, depends_on=frozenset({first.id}),
        assignee=p.Variable("jm_6_key"), expression=2))
    src = generate_code(knl.copy(instructions=tuple(insns))).source
    # the test of 2 is reached after block 1 changed the key: not 'else'
    assert re.findall(r"(else if|if) \(jm_6_key == (\d)\)", src) == [
        ("if", "1"), ("if", "2"), ("else if", "3"), ("else if", "4"), ("else if", "5")]


def test_inner_loops_bounded_by_inner_loops_are_copied_together():
    src = SORT.replace("        zzratio = zratio(jl, jo)\n", """\
        zzratio = zratio(jl, jo)
        do jn = 1, nclv
          do jp = 1, jn
            zzratio = zzratio + 0.0d0 * zsolqa(jl, jo, jp)
          end do
        end do
""").replace("jl, jk, jm, jn, jo\n", "jl, jk, jm, jn, jo, jp\n")
    knl = scc(parse_fortran(src, "bv_tri.f90")["bv_sort"], block=32)
    out = generate_code(version_blocks(knl)).source
    for c in range(1, 6):
        assert f"for (int jp_v{c} = 1; jp_v{c} <= jn_5_v{c}; ++jp_v{c})" in out
        assert f"zzratio = zzratio + 0.0 * zsolqa[{c - 1} + 5 * (jp_v{c} - 1)];" in out \
            or f"zzratio = zzratio + 0.0 * zsolqa[5 * (jp_v{c} - 1)];" in out


def test_a_key_read_through_a_conversion_is_refused():
    src = SORT.replace("  integer :: iorder(klon, nclv), jl,",
                       "  integer(8) :: iorder(klon, nclv)\n  integer :: jl,")
    knl = scc(parse_fortran(src, "bv_kinds.f90")["bv_sort"], block=32)
    # jo = int32(iorder(jm)): a conversion, not the element itself
    assert block_versions(knl)[-1] == BlockVersion(
        "jo", reason="no statement assigns 'jo' an array element")


def test_options(mapped):
    assert version_blocks(mapped, loops=["jm_6"]) == version_blocks(mapped)
    for loops, message in [
            ("jm_6", "version_blocks: loops is a list of loop indices, not 'jm_6'"),
            (["jm_4"], "version_blocks: no key of kernel 'bv_sort' is versioned in loop 'jm_4' "
                       "(iorder[jm_4]: 'iorder[jm_4]' changes in loop 'jm_4': line 54 writes "
                       "'iorder')")]:
        with pytest.raises(TransformError) as exc:
            version_blocks(mapped, loops=loops)
        assert exc.value.message == message
    unit = parse_fortran(SORT, "bv_sort.f90")
    both = scc(unit["bv_sort"], block=32, version="blocks")
    assert both.instructions == version_indices(version_blocks(mapped)).instructions
    assert scc(unit["bv_sort"], block=32, version="statements").instructions == \
        version_indices(mapped).instructions
    with pytest.raises(TransformError) as exc:
        scc(unit["bv_sort"], version="block")
    assert exc.value.message == ("scc: version is True, False, 'blocks' or 'statements', "
                                 "not 'block'")


@pytest.mark.sandbox
def test_recipe_option_is_checked(tmp_path):
    src = tmp_path / "bv_sort.f90"
    src.write_text(SORT)
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D", "version=block",
                                    "-o", str(tmp_path / "out"), str(src)])
    assert res.exit_code == 1
    assert ("recipe 'auto': option 'version' is true or false (-D version=false) or 'blocks' "
            "or 'statements', not 'block' (given with -D)") in res.output
    assert not (tmp_path / "out").exists()


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("options", [["--transform", "auto", "-D", "version=blocks"],
                                     ["--transform", "scc", "-D", "block=4", "-D",
                                      "version=blocks"]])
def test_block_versioned_sort_checks_against_gfortran(tmp_path, options):
    src = tmp_path / "bv_sort.f90"
    src.write_text(SORT)
    res = CliRunner().invoke(main, ["check", *options, "--size", "klon=13", "--size",
                                    "kidia=2", "--size", "kfdia=12", "--size", "klev=7",
                                    str(src)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output
    assert re.search(r"^ok: \d+ output\(s\) of 1 kernel\(s\) match the original Fortran",
                     res.output, re.M), res.output
