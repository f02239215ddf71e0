"""Unit tests for the bugs the fuzzers found (issue 9), next to the programs in
tests/regressions/ that found them: the facts each fix establishes."""

from __future__ import annotations

import f2loopy
from f2loopy.codegen import generate_code
from f2loopy.schedule.linearize import legal_priorities


def _kernel(src):
    return f2loopy.parse_fortran(src, "t.f90").kernels[0]


def test_priority_that_reverses_a_dependence_is_dropped():
    k = _kernel("""subroutine s(n, u)
  integer n, i, j
  real u(n)
  do i = 1, n
    do j = 1, n
      u(j) = u(j) - u(i)
    end do
  end do
end""")
    assert legal_priorities(f2loopy.prioritize_loops(k, "j,i")) == frozenset()


def test_priority_without_crossing_dependences_is_kept():
    k = _kernel("""subroutine mm(n, a, b, c)
  integer n, i, j, k
  real a(n, n), b(n, n), c(n, n)
  do j = 1, n
    do i = 1, n
      do k = 1, n
        c(i, j) = c(i, j) + a(i, k) * b(k, j)
      end do
    end do
  end do
end""")
    k = f2loopy.prioritize_loops(k, "i,j")
    assert legal_priorities(k) == k.loop_priority
    assert "for (int j" in generate_code(k).device_code.split("for (int i")[1]


def test_if_snapshot_keeps_the_enclosing_condition():
    k = _kernel("""subroutine t(n, u, mask)
  integer n, i, it
  real u(4)
  logical mask(2)
  it = 0
  do i = 0, n
    if (mask(1)) then
      if ((i - it) == it) then
        it = it + 1
      else if (mask(1)) then
        u(1) = 0.0
      end if
    end if
  end do
end""")
    (upd,) = [i for i in k.instructions if i.id == "it_1"]
    assert "mask" in str(upd.predicates[0]) and "cond" in str(upd.predicates[1])


def test_select_case_snapshots_are_all_evaluated():
    k = _kernel("""subroutine sc(n, k, v)
  integer n, i, it, k
  real v(n)
  it = 0
  do i = 1, n
    select case (it)
    case (0)
      it = k
    case (1)
      v(i) = 1.0
    end select
  end do
end""")
    snaps = [i for i in k.instructions if i.assignee_name.startswith("cond")]
    assert len(snaps) == 2 and all(not s.predicates for s in snaps)


def test_double_negation_is_not_a_decrement():
    k = _kernel("""subroutine s(n, q)
  integer n, q
  q = -(-(n / 7))
end""")
    code = generate_code(k).device_code
    assert "--" not in code and "-(-(n / 7))" in code
