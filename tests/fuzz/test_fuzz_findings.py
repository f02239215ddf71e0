"""Unit tests for the bugs the fuzzers found (issue 9), next to the programs in
tests/regressions/ that found them: the facts each fix establishes."""

from __future__ import annotations

import numpy as np
import pytest

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


@pytest.mark.parametrize("exit_statement", ["", "      if (w > 0) cycle\n",
                                            "      if (w > 0) return\n"])
def test_else_if_guard_reads_the_earlier_snapshot_negated(exit_statement):
    # seed 500140 (tests/regressions/fuzz_500140.f90): 'else if (.not. flag)'
    # after 'if (flag)' that sets flag: the term 'not flag' (first branch not
    # taken) was rewritten into the second branch's own snapshot, evaluated
    # only when flag was false, so the branch ran on a stale value
    k = _kernel(f"""subroutine t(m, v, w, flag)
  integer m, i
  double precision v, w
  logical flag
  do i = 1, m
    if (flag) then
      flag = .false.
    else if (.not. flag) then
      v = v - 0.5d0
{exit_statement}    else
      w = 0
    end if
  end do
end""")
    first, second = (i.assignee.name for i in k.instructions if i.id.startswith("cond"))
    (upd,) = [i for i in k.instructions if i.id == "v"]
    assert str(upd.predicates[0]) == f"not {first} and {second}"
    (other,) = [i for i in k.instructions if i.id == "w"]
    assert str(other.predicates[0]) == f"not {first} and not {second}"


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


def test_long_chains_are_flat_where_the_types_agree():
    import pymbolic.primitives as p
    k = _kernel("""subroutine s(a, b, c, d, r, q)
  real a, b, c, r
  double precision d, q
  r = a + b - c + a
  q = a + b + d
  r = a * b * c / a * b
end""")
    same, mixed, prod = (i.expression for i in k.instructions)
    assert isinstance(same, p.Sum) and len(same.children) == 4
    # a + b is single precision, then promoted: the double does not join it
    assert len(mixed.children) == 2 and isinstance(mixed.children[0], p.Sum)
    assert isinstance(prod, p.Product) and isinstance(prod.children[0], p.Quotient)


def test_a_sum_of_hundreds_of_terms_translates():
    terms = " + ".join(f"x({1 + k % 3}) * {k}.0" for k in range(150))
    k = _kernel(f"subroutine s(x, y)\n  real x(3), y\n  y = {terms}\nend\n")
    assert len(k.instructions[0].expression.children) == 150


# {{{ the flag that ends a loop early (GPU fuzz campaign, seed 30691)

EXIT_FLAG = """subroutine pe(m, a)
  integer m, i, j
  real a(4, m)
  do i = 1, 4
    do j = 1, m
      if (a(i, j) < 0) exit
      a(i, j) = 1
    end do
  end do
end"""


def test_an_exit_flag_does_not_become_a_substitution_rule():
    from f2loopy.diagnostics import TransformError
    k = _kernel(EXIT_FLAG)
    assert k.loop_exits["j"].flags == ("exited",)
    with pytest.raises(TransformError) as info:
        f2loopy.assignment_to_subst(k, "exited")
    assert info.value.message == (
        "assignment_to_subst: 'exited' ends loop 'j' early (an 'exit' or 'do while' flag, "
        "read by the loop's condition); it cannot become a substitution rule")


def test_privatizing_leaves_an_exit_flag_scalar():
    k = _kernel(EXIT_FLAG)
    out = f2loopy.privatize_temporaries_with_inames(k, "i", only_var_names="exited")
    assert out.temporaries["exited"].shape == ()
    assert "!exited" in generate_code(out).device_code

# }}}


def test_exit_among_statements_a_goto_repeats_leaves_the_do_loop():
    # (GPU fuzz campaign, seed 30797: it left only the repetition)
    k = _kernel("""subroutine g(n, u, ng)
  integer, intent(in) :: n, ng
  double precision, intent(inout) :: u(2)
  integer :: i1
  do i1 = 1, n
    510 continue
    u(1) = u(1) - .5d0
    exit
    if (ng == 2) goto 510
  end do
end subroutine g""")
    flag = k.loop_exits["i1"].flags[0]
    assert "exit" in k.loop_exits["i1"].sequential
    assert flag in k.loop_exits["goto510_k"].flags
    set_at = [i.span.line for i in k.instructions
              if tuple(i.assignee_names()) == (flag,) and i.expression is np.True_]
    assert set_at == [8]
