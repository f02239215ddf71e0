"""Merging loops (rename_iname with existing_ok=True, rename_inames, the scc
recipe's merge): refused where it would reorder a dependence
(f2loopy.transform.loop_fusion); unit tests and one differential test."""

import numpy as np
import pytest

import f2loopy
from f2loopy import TransformError
from f2loopy.transform.scc import scc
from util import farray, needs_gfortran, run_transformed

SPEC = """SUBROUTINE SPEC(KIDIA, KFDIA, KLON, KLEV, IMAP, PT, POUT)
  INTEGER, INTENT(IN) :: KIDIA, KFDIA, KLON, KLEV, IMAP(3)
  REAL(8), INTENT(IN) :: PT(KLON, KLEV, 3)
  REAL(8), INTENT(INOUT) :: POUT(KLON, KLEV, 3)
  REAL(8) :: ZS
  INTEGER :: JK, JL, JN, JM
  ZS = 0.0D0
  DO JK = 1, KLEV
    DO JM = 1, 3
      JN = IMAP(JM)
      DO JL = KIDIA, KFDIA
        POUT(JL, JK, JM) = PT(JL, JK, JN) + ZS
      END DO
    END DO
    DO JL = KIDIA, KFDIA
      ZS = PT(JL, JK, 1)
    END DO
  END DO
END SUBROUTINE SPEC
"""


def kernel(src):
    return f2loopy.parse_fortran(src, "t.f90").kernels[0]


def test_scalar_carried_across_the_enclosing_loop_is_refused():
    k = f2loopy.parse_fortran(SPEC, "spec.f90")["spec"]
    with pytest.raises(TransformError) as e:
        f2loopy.rename_iname(k, "JL_1", "JL", existing_ok=True)
    assert str(e.value).splitlines()[0] == (
        "spec.f90:16:7: error: rename_iname: merging loop 'JL_1' (line 16) into loop 'JL' "
        "(line 12) would change results on 'ZS': line 12 reads it and line 16 writes it in "
        "iterations that the merged loop would run in the other order")
    # loopy's name reaches the same check
    with pytest.raises(TransformError, match="merging loop 'JL_1'"):
        f2loopy.rename_inames(k, ["JL_1"], "JL", existing_ok=True)
    # the recipe refused it before (the loop carries a dependence) and still does
    with pytest.raises(TransformError, match="scc: the horizontal loop 'JL_1' carries"):
        scc(k)


SEQ = """subroutine seq(n, a, b, c)
  integer n, i
  real a(n), b(n), c(n), s
  s = 0.0
  do i = 1, n
    b(i) = a(i) + s
  end do
  do i = 1, n
    s = a(i) * 2.0
    c(i) = s
  end do
end subroutine
"""

SHIFT = """subroutine shift(n, a, b)
  integer n, i
  real a(n), b(n), x(n)
  do i = 1, n
    x(i) = a(i) * 2.0
  end do
  do i = 2, n + 1
    b(i - 1) = x(n + 2 - i)
  end do
end subroutine
"""


def test_sequential_merge_that_reverses_a_dependence_is_refused():
    # the first loop reads s before the second loop sets it; merged, b(i)
    # for i > 1 would see the second loop's s of iteration i - 1
    k = kernel(SEQ)
    with pytest.raises(TransformError, match=r"^t\.f90:9:5: error: rename_iname: merging "
                       r"loop 'i_1' \(lines 9-10\) into loop 'i' \(line 6\) would change "
                       r"results on 's': line 6 reads it and line 9 writes it in iterations"):
        f2loopy.rename_iname(k, "i_1", "i", existing_ok=True)


def test_array_read_in_an_earlier_iteration_is_refused():
    # b(i - 1) = x(n + 2 - i) reads the element the first loop writes last;
    # the ranges are the same after renaming the second loop's index
    src = """subroutine rev(n, a, b)
  integer n, i
  real a(n), b(n), x(n)
  do i = 1, n
    x(i) = a(i) * 2.0
  end do
  do i = 1, n
    b(i) = x(n + 1 - i)
  end do
end subroutine
"""
    with pytest.raises(TransformError, match=r"on 'x': line 5 writes it and line 8 reads "
                                             r"it in iterations that the merged loop"):
        f2loopy.rename_iname(kernel(src), "i_1", "i", existing_ok=True)


LEGAL = """subroutine legal(n, a, b, c, d)
  integer n, i
  real a(n), b(n), c(n), d(n), x(n), t
  do i = 1, n
    t = a(i) + 1.0
    x(i) = t * t
    c(i) = a(i) - 1.0
  end do
  do i = 1, n
    t = x(i) * 0.5
    b(i) = t + x(i)
    if (i > 1) d(i) = x(i - 1)
  end do
end subroutine
"""


def test_legal_merges_are_allowed():
    # x(i) written then read at the same i, x(i - 1) read after it was
    # written, a private scalar t in both loops, independent statements
    k = kernel(LEGAL)
    merged = f2loopy.rename_iname(k, "i_1", "i", existing_ok=True)
    assert set(merged.all_inames()) == {"i"}
    f2loopy.generate_code(merged)
    indep = """subroutine indep(n, a, b, c)
  integer n, i
  real a(n), b(n), c(n)
  do i = 1, n
    b(i) = a(i)
  end do
  do i = 1, n
    c(i) = a(i) * 3.0
  end do
end subroutine
"""
    assert set(f2loopy.rename_iname(kernel(indep), "i_1", "i",
                                    existing_ok=True).all_inames()) == {"i"}


def test_parallel_merge_refuses_a_dependence_between_iterations():
    # legal in sequence (x(i - 1) was written one iteration earlier), not
    # when the merged loop runs in parallel: the recipe must refuse it
    src = """subroutine cols(kidia, kfdia, klon, a, b)
  integer kidia, kfdia, klon, jl
  real a(klon), b(klon), x(klon)
  do jl = kidia, kfdia
    x(jl) = a(jl) * 2.0
  end do
  do jl = kidia, kfdia
    b(jl) = x(max(jl - 1, kidia)) + x(jl)
  end do
end subroutine
"""
    k = kernel(src)
    assert set(f2loopy.rename_iname(k, "jl_1", "jl", existing_ok=True).all_inames()) == {"jl"}
    with pytest.raises(TransformError) as e:
        scc(k, block=32)
    assert str(e.value).splitlines()[0] == (
        "t.f90:8:5: error: scc: merging loop 'jl_1' (line 8) into loop 'jl' (line 5) would "
        "change results on 'x': line 5 writes it and line 8 reads it in different iterations, "
        "which the merged loop would run in parallel")


@needs_gfortran
def test_legal_merge_matches_gfortran(tmp_path, cl_queue):
    n = 37
    args = [n, farray((n,), seed=1), np.zeros(n, np.float32), np.zeros(n, np.float32),
            np.zeros(n, np.float32)]
    run_transformed(LEGAL, "legal", lambda k: f2loopy.rename_iname(
        k, "i_1", "i", existing_ok=True), args, tmp_path, cl_queue)


def test_join_inames_refuses_a_nest_whose_order_matters():
    # a(i, j) = a(i + 1, j - 1): j outside i reads the new value, i outside
    # j the old one; the joined loop would fix one of the two orders
    src = """subroutine skew(a)
  integer i, j
  real a(0:5, 5)
  do j = 2, 5
    do i = 1, 4
      a(i, j) = a(i + 1, j - 1) + 1.0
    end do
  end do
end subroutine
"""
    for order in ("j,i", "i,j"):
        with pytest.raises(TransformError, match="join_inames: the instructions in loops "
                                                 f"'{order[0]}' and '{order[2]}' depend"):
            f2loopy.join_inames(kernel(src), order)
    # without that skew either order keeps the results
    plain = src.replace("a(i + 1, j - 1)", "a(i, j - 1)")
    assert set(f2loopy.join_inames(kernel(plain), "i,j").all_inames()) == {"i_j"}


def test_scc_merges_loops_around_an_index_set_before_each():
    # CLOUDSC's pattern: jn = imelt(jm) set before a horizontal loop that
    # reads it, and a later loop over jn ending with its own value of jn:
    # every column sees the jn it set itself, so the recipe merges them
    src = """subroutine melt(kidia, kfdia, klon, imelt, q, r)
  integer kidia, kfdia, klon, imelt(3), jl, jm, jn
  real q(klon, 3), r(klon)
  do jm = 1, 3
    jn = imelt(jm)
    do jl = kidia, kfdia
      q(jl, jn) = q(jl, jn) + 1.0
    end do
  end do
  do jl = kidia, kfdia
    do jn = 1, 3
      r(jl) = r(jl) + q(jl, jn)
    end do
  end do
end subroutine
"""
    out = scc(kernel(src), block=32)
    assert {"jl_outer", "jl_inner"} <= set(out.all_inames())
    f2loopy.generate_code(out)


def test_merging_many_loops_asks_each_instruction_once_per_merge_at_most(monkeypatch):
    """The check of a merge looks at the instructions that may touch what
    the moved loop touches, not at every instruction of the loop it grows
    (CLOUDSC's 85 horizontal loops: 352,742 access lists computed before,
    so the check cost the square of the number of loops); the merges are
    still checked: a loop that reads what the merged loop wrote is refused."""
    import f2loopy.transform.loop_fusion as lf
    n = 24
    body = "\n".join(f"  do i{k} = 1, m\n    a{k}(i{k}) = {k}.0d0 * b(i{k})\n  end do"
                     for k in range(n))
    src = (f"subroutine many(m, b, {', '.join(f'a{k}' for k in range(n))})\n"
           f"  integer, intent(in) :: m\n  double precision, intent(in) :: b(m)\n"
           f"  double precision, intent(out) :: {', '.join(f'a{k}(m)' for k in range(n))}\n"
           f"  integer :: {', '.join(f'i{k}' for k in range(n))}\n{body}\nend subroutine\n")
    k = kernel(src)
    calls = []
    real = lf.instruction_accesses
    monkeypatch.setattr(lf, "instruction_accesses",
                        lambda kernel, insn, **kw: calls.append(insn.id) or real(kernel, insn, **kw))
    for j in range(1, n):
        k = f2loopy.rename_iname(k, f"i{j}", "i0", existing_ok=True)
    assert len([i for i in k.instructions if "i0" in i.within_inames]) == n
    # one moved instruction per merge (the grown loop's only share 'b' and 'm': read only)
    assert len(calls) <= 3 * n, len(calls)
    bad = src.replace("a1(i1) = 1.0d0 * b(i1)", "a1(i1) = 1.0d0 * a0(m + 1 - i1)")
    with pytest.raises(TransformError, match="would change results on 'a0'"):
        f2loopy.rename_iname(kernel(bad), "i1", "i0", existing_ok=True)
