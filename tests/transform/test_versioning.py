"""Index versioning (:mod:`f2loopy.transform.versioning`): which small
private arrays indexed through a run-time key (a species chosen by a sort,
in CLOUDSC's style) are versioned and why the others are not (IR facts,
exact reasons), the shape of the generated code, the options, and PoCL
against gfortran on a column code that sorts its species."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.diagnostics import TransformError
from f2loopy.frontend import parse_fortran
from f2loopy.transform.scc import scc
from f2loopy.transform.versioning import IndexVersion, index_versions, version_indices

from util import needs_gfortran

#: a column code sorting its species each level (every read written first)
SORT = """\
subroutine vs_sort(klon, klev, kidia, kfdia, pq, psrc, pout, kord)
  implicit none
  integer, parameter :: nclv = 4
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pq(klon, klev, nclv), psrc(klon, klev, nclv, nclv)
  double precision, intent(out) :: pout(klon, klev, nclv)
  integer, intent(out) :: kord(klon, klev, nclv)
  double precision :: zsol(klon, nclv, nclv), zratio(klon, nclv), zsink(klon, nclv)
  double precision :: zmin(klon), zzr, zmm
  logical :: llidx(klon, nclv), lls(klon, nclv, nclv)
  integer :: iorder(klon, nclv), imap(nclv)
  integer :: jk, jl, jm, jn, jo, ip
  imap(1) = 2
  imap(2) = 3
  imap(3) = 4
  imap(4) = 1
  do jk = 1, klev
    do jm = 1, nclv
      do jn = 1, nclv
        do jl = kidia, kfdia
          zsol(jl, jn, jm) = psrc(jl, jk, jn, jm)
        end do
      end do
    end do
    do jm = 1, nclv
      ip = imap(jm)
      do jl = kidia, kfdia
        zsol(jl, ip, jm) = zsol(jl, ip, jm) + 0.5d0
      end do
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        zsink(jl, jm) = 0.0d0
        do jn = 1, nclv
          zsink(jl, jm) = zsink(jl, jm) + abs(zsol(jl, jm, jn))
        end do
        zratio(jl, jm) = pq(jl, jk, jm) / (zsink(jl, jm) + 1.0d0)
      end do
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        iorder(jl, jm) = -999
        llidx(jl, jm) = .true.
      end do
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        zmin(jl) = 1.0d32
      end do
      do jn = 1, nclv
        do jl = kidia, kfdia
          if (llidx(jl, jn) .and. zratio(jl, jn) < zmin(jl)) then
            iorder(jl, jm) = jn
            zmin(jl) = zratio(jl, jn)
          end if
        end do
      end do
      do jl = kidia, kfdia
        llidx(jl, iorder(jl, jm)) = .false.
      end do
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        jo = iorder(jl, jm)
        kord(jl, jk, jm) = jo
        do jn = 1, nclv
          lls(jl, jo, jn) = zsol(jl, jo, jn) < 0.0d0
        end do
        zmm = max(pq(jl, jk, jo), 1.0d-12)
        zratio(jl, jo) = zmm / max(zsink(jl, jo), zmm)
        zzr = zratio(jl, jo)
        do jn = 1, nclv
          if (lls(jl, jo, jn)) then
            zsol(jl, jo, jn) = zsol(jl, jo, jn) * zzr
            zsol(jl, jn, jo) = zsol(jl, jn, jo) * zzr
          end if
        end do
      end do
    end do
    do jm = 1, nclv
      do jl = kidia, kfdia
        pout(jl, jk, jm) = zratio(jl, jm)
        do jn = 1, nclv
          pout(jl, jk, jm) = pout(jl, jk, jm) + zsol(jl, jm, jn)
        end do
      end do
    end do
  end do
end subroutine vs_sort
"""

#: arrays that must not be versioned (never run)
REFUSED = """\
subroutine vs_refused(klon, klev, kidia, kfdia, kidx, pq, pout)
  implicit none
  integer, intent(in) :: klon, klev, kidia, kfdia
  integer, intent(in) :: kidx(klon, klev)
  double precision, intent(in) :: pq(klon, klev)
  double precision, intent(out) :: pout(klon, klev)
  double precision :: ztwo(klon, 3, 3), zsum(klon, 6), zcond(klon, 3), zbig(klon, 80)
  integer :: jk, jl, ja, jb
  do jk = 1, klev
    do jl = kidia, kfdia
      ja = kidx(jl, jk)
      jb = kidx(jl, 1)
      ztwo(jl, ja, jb) = pq(jl, jk)
      zsum(jl, ja + jb) = pq(jl, jk)
      pout(jl, jk) = merge(zcond(jl, ja), 0.0d0, ja > 0)
      zbig(jl, ja) = pq(jl, jk)
      pout(jl, jk) = pout(jl, jk) + zbig(jl, 1) + zsum(jl, 1) + ztwo(jl, 1, 1)
    end do
  end do
end subroutine vs_refused
"""


@pytest.fixture(scope="module")
def mapped():
    """vs_sort mapped one column per work-item, nothing versioned yet."""
    unit = parse_fortran(SORT, "vs_sort.f90")
    return scc(unit["vs_sort"], block=32, version=False)


def test_which_arrays_are_versioned(mapped):
    verdicts = {v.name: v for v in index_versions(mapped)}
    # imap is set from literals only: zsol(ip, jm) with ip = imap(jm) is
    # known once the jm loop is unrolled, so it needs no versioning
    assert verdicts == {
        "llidx": IndexVersion("llidx", keys=("iorder[jm_4]",)),
        "lls": IndexVersion("lls", keys=("jo",)),
        "zratio": IndexVersion("zratio", keys=("jo",)),
        "zsink": IndexVersion("zsink", keys=("jo",)),
        "zsol": IndexVersion("zsol", keys=("jo",)),
    }


def test_refusals_name_the_line():
    unit = parse_fortran(REFUSED, "vs_refused.f90")
    knl = scc(unit["vs_refused"], block=32, version=False)
    reasons = {v.name: v.reason for v in index_versions(knl)}
    assert reasons == {
        "ztwo": "line 13 indexes it with two run-time values",
        "zsum": "line 14 indexes it with 'ja + jb', not a run-time key",
        "zcond": "line 15 indexes it with 'ja' only under a condition",
    }
    # zbig has more elements than registers are worth: not considered
    assert version_indices(knl) == knl


def test_versioned_statements_in_the_ir(mapped):
    knl = version_indices(mapped)
    old = {i.id: i for i in mapped.instructions}
    new = {i.id: i for i in knl.instructions}
    copies = sorted(i for i in new if i not in old)
    gone = sorted(i for i in old if i not in new)
    # each statement reading zsol/lls/zratio/zsink through jo, and the
    # llidx update through iorder(jm), one copy per species 1..4
    assert len(gone) == 6 and len(copies) == 4 * len(gone)
    for g in gone:
        mine = [new[f"{g}_v{c}"] for c in range(1, 5)]
        for c, insn in enumerate(mine, 1):
            assert str(insn.predicates[0]) in (f"jo == {c}", f"iorder[jm_4] == {c}")
            assert insn.within_inames == old[g].within_inames
            assert "jo" not in {str(x) for x in insn.assignee.index_tuple} \
                if hasattr(insn.assignee, "index_tuple") else True
        # statements after it depend on every copy
        for insn in knl.instructions:
            if any(f"{g}_v" in d for d in insn.depends_on):
                assert {f"{g}_v{c}" for c in range(1, 5)} <= insn.depends_on
    # temporaries and the rest unchanged
    assert knl.temporaries == mapped.temporaries
    # scc applies it when asked (off by default)
    unit = parse_fortran(SORT, "vs_sort.f90")
    assert scc(unit["vs_sort"], block=32, version=True).instructions == knl.instructions
    assert scc(unit["vs_sort"], block=32).instructions == mapped.instructions


def test_generated_code_has_constant_subscripts(mapped):
    src = generate_code(version_indices(mapped)).source
    assert "if (jo == 3)\n                    zratio[2] = zmm / fmax(zsink[2], zmm);" in src
    assert "if (iorder[jm_4 - 1] == 4)\n                    llidx[3] = 0;" in src
    assert "if (jo == 2 && lls[1 + 4 * (jn_4 - 1)])" in src
    for name in ("zsol", "lls", "zratio", "zsink", "llidx"):
        assert f"{name}[jo" not in src and f"{name}[iorder" not in src
    # the settled index is left to the compiler
    assert "zsol[ip - 1 + 4 * (jm_1 - 1)]" in src


def test_names_option(mapped):
    only = version_indices(mapped, names=["llidx"])
    assert sum(i.id.endswith("_v1") for i in only.instructions) == 1
    for names, message in [
            (["pq"], "version_indices: 'pq' is not a small private array that kernel "
                     "'vs_sort' indexes at run time"),
            ("zsol", "version_indices: names is a list of array names, not 'zsol'")]:
        with pytest.raises(TransformError) as exc:
            version_indices(mapped, names=names)
        assert exc.value.message == message
    refused = scc(parse_fortran(REFUSED, "r.f90")["vs_refused"], block=32, version=False)
    with pytest.raises(TransformError) as exc:
        version_indices(refused, names=["ztwo"])
    assert exc.value.message == ("version_indices: 'ztwo' is not versioned: line 13 "
                                 "indexes it with two run-time values")
    with pytest.raises(TransformError) as exc:
        scc(parse_fortran(SORT, "vs_sort.f90")["vs_sort"], version="no")
    assert exc.value.message == ("scc: version is True, False, 'blocks' or 'statements', "
                                 "not 'no'")


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("options", [["--transform", "auto", "-D", "version=true"],
                                     ["--transform", "scc", "-D", "block=4", "-D",
                                      "version=true"]])
def test_versioned_sort_checks_against_gfortran(tmp_path, options):
    src = tmp_path / "vs_sort.f90"
    src.write_text(SORT)
    res = CliRunner().invoke(main, ["check", *options, "--size", "klon=13", "--size",
                                    "kidia=2", "--size", "kfdia=12", "--size", "klev=7",
                                    str(src)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output
    assert re.search(r"^ok: \d+ output\(s\) of 1 kernel\(s\) match the original Fortran",
                     res.output, re.M), res.output
