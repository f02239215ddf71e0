"""Code generation stays near linear in the number of parallel loops (issue 25,
item 4): a kernel with 100 loops, each split and tagged on its own (200
hardware inames), generates, and each statement keeps the guard of its own
loop only.  The seconds per loop are a benchmark's
(``benchmarks/translate_speed.py --loops N``), not a test's."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from f2loopy.codegen import generate_code
from f2loopy.frontend import parse_fortran
from f2loopy.transform.iname import split_iname


@functools.lru_cache(maxsize=None)
def _many_loops(n: int):
    """A kernel of *n* loops, each split and tagged (made once per size: the
    IR is immutable, and 200 loops take seconds to build)."""
    body = "\n".join(f"  do i{k} = 1, m\n    a(i{k}, {k + 1}) = a(i{k}, {k + 1}) + {k}.0d0\n"
                     f"  end do" for k in range(n))
    src = (f"subroutine t(m, a)\n  integer, intent(in) :: m\n"
           f"  double precision, intent(inout) :: a(m, {n})\n"
           f"  integer :: {', '.join(f'i{k}' for k in range(n))}\n{body}\nend subroutine t\n")
    knl = parse_fortran(src, "t.f90")["t"]
    for k in range(n):
        knl = split_iname(knl, f"i{k}", 64, outer_tag="g.0", inner_tag="l.0")
    return knl


@pytest.mark.codegen
def test_a_hundred_tagged_loops():
    src = generate_code(_many_loops(100)).source
    assert src.count("get_group_id(0)") == 100
    # statement k is guarded by its own loop's range, nothing else
    assert "    if (m >= i57_inner + 64 * i57_outer + 1)\n" \
           "        a[i57_inner + 64 * i57_outer + m * 57] = " \
           "a[i57_inner + 64 * i57_outer + m * 57] + 57.0;\n" in src


def test_guards_are_those_of_a_kernel_with_one_loop():
    one = generate_code(_many_loops(1)).source
    many = generate_code(_many_loops(3)).source
    guard = "    if (m >= i0_inner + 64 * i0_outer + 1)\n"
    assert guard in one and guard in many


# {{{ column kernels (issue 25: CLOUDSC's code generation took minutes)

#: level loops of the column kernels below: enough that a count per statement
#: (4 per nest) exceeds the per-block bounds the tests allow
NESTS = 6


def _column_source(n: int) -> str:
    """A column routine of *n* level loops, each reading the level above of
    a (KLON, KLEV) temporary and updating a per-column one under a branch."""
    nests = "\n".join(f"""  DO JK = 2, KLEV
    DO JL = KIDIA, KFDIA
      ZA = PT(JL, JK) * {k + 1}.0D0 + ZT(JL, JK - 1)
      IF (ZA > 0.5D0) THEN
        ZT(JL, JK) = ZA - PQ(JL, JK)
      ELSE
        ZT(JL, JK) = ZA + ZQ(JL)
      END IF
      ZQ(JL) = ZQ(JL) + ZT(JL, JK)
    END DO
  END DO""" for k in range(n))
    return f"""SUBROUTINE COL(KIDIA, KFDIA, KLON, KLEV, PT, PQ, POUT)
  INTEGER, INTENT(IN) :: KIDIA, KFDIA, KLON, KLEV
  REAL(8), INTENT(IN) :: PT(KLON, KLEV), PQ(KLON, KLEV)
  REAL(8), INTENT(OUT) :: POUT(KLON, KLEV)
  REAL(8) :: ZT(KLON, KLEV), ZQ(KLON), ZA
  INTEGER :: JK, JL
  DO JL = KIDIA, KFDIA
    ZQ(JL) = 0.0D0
  END DO
  DO JK = 1, KLEV
    DO JL = KIDIA, KFDIA
      ZT(JL, JK) = PT(JL, JK)
    END DO
  END DO
{nests}
  DO JK = 1, KLEV
    DO JL = KIDIA, KFDIA
      POUT(JL, JK) = ZT(JL, JK) + ZQ(JL)
    END DO
  END DO
END SUBROUTINE COL
"""


def _counting(monkeypatch, cls, name: str) -> list:
    calls: list = []
    original = getattr(cls, name)

    def counted(self, *args, **kwargs):
        calls.append(name)
        return original(self, *args, **kwargs)
    monkeypatch.setattr(cls, name, counted)
    return calls


def test_column_kernel_race_check_needs_no_pairs(monkeypatch):
    """Every access of the global temporary ZT has the column index alone in
    its first subscript: one isl test for the variable shows that no two
    work-items share an element, instead of an isl pair set for each of the
    (3n)^2 pairs of accesses (quadratic in the statements before)."""
    from f2loopy.schedule.races import RaceAnalysis
    from f2loopy.transform.scc import scc
    pairs = _counting(monkeypatch, RaceAnalysis, "pair_set")
    knl = scc(parse_fortran(_column_source(NESTS), "col.f90")["col"], block=32)
    assert knl.temporaries["ZT"].ndim == 2        # a global buffer, not demoted
    src = generate_code(knl).source
    assert pairs == []
    assert "barrier" not in src


def test_column_kernel_guards_are_computed_per_block(monkeypatch):
    """The statements of one loop body share the guard of the column range:
    isl computes it once per body (and once per region that the hoisted
    column guard covers: hoist_guards), not once per statement."""
    from f2loopy.codegen.emit import KernelEmitter
    from f2loopy.transform.scc import scc
    guards = _counting(monkeypatch, KernelEmitter, "_domain_guard")
    knl = scc(parse_fortran(_column_source(NESTS), "col.f90")["col"], block=32, fuse=False)
    src = generate_code(knl).source
    assert len(knl.instructions) > 4 * NESTS
    assert len(guards) <= 2 * NESTS + 4 < len(knl.instructions)
    assert src.count("if (KFDIA >= ") == 1      # tested once, around every nest
    # with the level loops fused (scc's default) the nests are blocks of one
    # loop; one guard more: the first level's loop, of another range
    guards.clear()
    knl = scc(parse_fortran(_column_source(NESTS), "col.f90")["col"], block=32)
    src = generate_code(knl).source
    assert len(guards) <= 2 * NESTS + 5 < len(knl.instructions)
    assert src.count("if (KFDIA >= ") == 1


def test_aliased_storage_is_not_taken_for_one_element_per_work_item():
    """t1(i, 1) and t2(i, 2) share one storage: the same first subscript 'i'
    names different elements (work-item 3's t1(3, 1) is work-item 1's t2(1, 2)),
    so the per-variable shortcut must not apply and the barrier stays."""
    from f2loopy.transform import alias_temporaries, tag_inames
    src = """subroutine al(ne, u, y, z)
  implicit none
  integer ne, e, i
  real u(4, ne), y(4, ne), z(4, ne), t1(4, 1), t2(2, 2)
  do e = 1, ne
    do i = 1, 4
      t1(i, 1) = u(i, e) * 2.0
      y(i, e) = t1(i, 1)
      if (i <= 2) then
        t2(i, 2) = u(i, e) + 1.0
        z(i, e) = t2(i, 2)
      end if
    end do
  end do
end subroutine
"""
    knl = tag_inames(parse_fortran(src, "al.f90")["al"], "i:l.0")
    code = generate_code(alias_temporaries(knl, ["t1", "t2"])).source
    between = code[code.index("y["):code.index("temp_storage[i - 1 + 2] =")]
    assert "barrier(CLK_LOCAL_MEM_FENCE)" in between


def test_context_holds_for_every_column_range():
    """The loops that fill an argument's columns outside KIDIA..KFDIA are
    empty for KIDIA = 1 and KFDIA = KLON (the usual call): the context the
    guards are simplified in must still allow those values."""
    import islpy as isl
    from f2loopy.codegen.emit import KernelEmitter
    from f2loopy.codegen.grid import compute_grid
    from f2loopy.codegen.preprocess import address_spaces, preprocess
    from f2loopy.ir.isl_tools import align_params
    from f2loopy.schedule.linearize import linearize
    from f2loopy.transform.scc import scc
    src = (Path(__file__).resolve().parents[2] / "samples" / "columns"
           / "column_physics.f90").read_text()
    knl = preprocess(scc(parse_fortran(src, "column_physics.f90")["whole_fills"], block=32))
    emitter = KernelEmitter(knl, compute_grid(knl), linearize(knl),
                            address_spaces=address_spaces(knl))
    _, ctx = emitter.initial_context()
    usual = isl.Set("[kidia, kfdia, klon] -> { : kidia = 1 and kfdia = klon and klon = 100 }")
    ctx, usual = align_params(ctx, usual)
    assert not (ctx & usual).is_empty()

# }}}


# {{{ the flow check of private scalars and the reference order

#: a species index assigned outside the column loops (``JN = IMAP(JM)``) and
#: left by a ``DO JN`` loop inside them (``JN_value``), as CLOUDSC's
#: ``JN = IMELT(JM)``: the merged column loop cannot be one sequential loop
#: around the statements, so each work-item's own run is checked
SPECIES = """SUBROUTINE SPEC(KIDIA, KFDIA, KLON, KLEV, IMAP, PT, POUT)
  INTEGER, INTENT(IN) :: KIDIA, KFDIA, KLON, KLEV, IMAP(3)
  REAL(8), INTENT(IN) :: PT(KLON, KLEV, 3)
  REAL(8), INTENT(INOUT) :: POUT(KLON, KLEV, 3)
  INTEGER :: JK, JL, JN, JM
  DO JK = 1, KLEV
    DO JM = 1, 3
      JN = IMAP(JM)
      DO JL = KIDIA, KFDIA
        POUT(JL, JK, JM) = PT(JL, JK, JN)
      END DO
    END DO
    DO JL = KIDIA, KFDIA
      DO JN = 1, 3
        POUT(JL, JK, JN) = POUT(JL, JK, JN) * 2.0D0
      END DO
    END DO
  END DO
END SUBROUTINE SPEC
"""


def test_private_scalar_written_before_read_needs_no_dataflow(monkeypatch):
    """Each work-item assigns JN_value before it reads it: settled without
    isl's dataflow over the whole kernel (4 s of CLOUDSC's code generation)."""
    from f2loopy.schedule.races import RaceAnalysis
    from f2loopy.transform.scc import scc
    flows = _counting(monkeypatch, RaceAnalysis, "value_flows")
    knl = scc(parse_fortran(SPECIES, "spec.f90")["spec"], block=32)
    assert "JN_value" in knl.temporaries
    src = generate_code(knl).source
    assert flows == []
    assert "int JN_value;" in src


class _CountingDict(dict):
    lookups = 0

    def __getitem__(self, key):
        type(self).lookups += 1
        return super().__getitem__(key)


def test_linearize_looks_at_each_statement_a_bounded_number_of_times():
    """The search's steps look at the statements of the open loops only
    (each step scanned every statement before: quadratic; CLOUDSC's failed
    reference search took a second for 651 statements)."""
    from f2loopy.schedule import linearize as lin
    counts = []
    for n in (25, 100):
        search = lin._Search(_many_loops(n))
        _CountingDict.lookups = 0
        search.deps = _CountingDict(search.deps)
        search.run()
        counts.append(_CountingDict.lookups)
    # linear: 4x the statements, about 4x the lookups (quadratic gave 16x)
    assert counts[1] <= 5 * counts[0], counts

# }}}
