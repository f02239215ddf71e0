"""The value of a loop variable after every way out of its loop (issue 26,
item 1): the normal end, ``exit`` (also named, out of nested loops), a
forward ``goto`` out of one or more loops, ``cycle`` of an enclosing loop,
a backward ``goto`` from inside a loop, loops of either step sign and with
run-time steps, zero-trip loops.  Each case runs on PoCL and is compared
with gfortran."""

import numpy as np
import pytest

from f2loopy.frontend import parse_fortran
from util import farray, needs_gfortran, run_both

CASES = {}


def case(name, source, make_args):
    CASES[name] = (source, make_args)


# the LINPACK-style search: a forward goto out of the loop
FIRST_BIG = """
subroutine first_big(n, a, tol, idx)
  integer n, idx, j
  real a(n), tol
  idx = 0
  do j = 1, n
    if (abs(a(j)) > tol) goto 20
  end do
  return
20 idx = j
end subroutine
"""
case("goto_out_found", FIRST_BIG,
     lambda: [6, np.array([3, 0.1, 0.2, 5, 0.3, 0.1], np.float32), 1.0, 0])
case("goto_out_not_found", FIRST_BIG,
     lambda: [6, np.full(6, 0.5, np.float32), 1.0, 0])
case("goto_out_zero_trip", FIRST_BIG,
     lambda: [0, np.zeros(0, np.float32), 1.0, 0])

# a goto out of two nested loops: both variables keep their values
case("goto_out_of_nest", """
subroutine find2(n, m, a, tol, ii, jj)
  integer n, m, ii, jj, i, j
  real a(n, m), tol
  ii = -1
  jj = -1
  do j = 1, m
    do i = n, 1, -1
      if (a(i, j) > tol) go to 30
    end do
  end do
30 ii = i
  jj = j
end subroutine
""", lambda: [4, 5, np.asfortranarray(np.arange(20, dtype=np.float32).reshape(4, 5, order="F")), 9.5, 0, 0])

# the goto leaves the inner loop only; its label is in the outer body
case("goto_out_of_inner_to_outer_body", """
subroutine firsts(n, m, a, tol, pos)
  integer n, m, i, j
  integer pos(m)
  real a(n, m), tol
  do j = 1, m
    do i = 1, n
      if (a(i, j) > tol) goto 10
    end do
10  pos(j) = i
  end do
end subroutine
""", lambda: [5, 4, farray((5, 4), np.float32, seed=2), 0.6, np.zeros(4, np.int32)])

# run-time steps of either sign, left by a goto
RUNTIME = """
subroutine stepped(n, lo, hi, inc, x, tol, last, after)
  integer n, lo, hi, inc, last, after, k
  real x(n), tol
  last = -99
  after = -99
  do k = lo, hi, inc
    if (x(k) > tol) goto 40
  end do
  after = k
  return
40 last = k
end subroutine
"""
case("goto_out_runtime_step_up", RUNTIME,
     lambda: [9, 1, 9, 2, np.array([0, 0, 0, 0, 1, 0, 1, 0, 0], np.float32), 0.5, 0, 0])
case("goto_out_runtime_step_down", RUNTIME,
     lambda: [9, 9, 1, -3, np.array([0, 0, 1, 0, 0, 1, 0, 0, 0], np.float32), 0.5, 0, 0])
case("runtime_step_normal_end_down", RUNTIME,
     lambda: [9, 9, 1, -3, np.zeros(9, np.float32), 0.5, 0, 0])
case("runtime_step_zero_trip", RUNTIME,
     lambda: [9, 1, 9, -2, np.ones(9, np.float32), 0.5, 0, 0])

# 'cycle outer' from an inner loop: the inner variable keeps its value
case("cycle_outer_keeps_inner", """
subroutine cyc(n, m, a, tol, iout, jout)
  integer n, m, iout, jout, i, j
  real a(n, m), tol
  outer: do j = 1, m
    do i = 1, n
      if (a(i, j) > tol) cycle outer
    end do
  end do outer
  iout = i
  jout = j
end subroutine
""", lambda: [5, 3, np.asfortranarray(np.array(
    [[0, 0, 1], [0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 0]], np.float32)), 0.5, 0, 0])

# 'exit outer' from the inner loop of a named nest
case("exit_named_outer", """
subroutine exn(n, m, a, tol, iout, jout)
  integer n, m, iout, jout, i, j
  real a(n, m), tol
  outer: do j = m, 1, -1
    inner: do i = 1, n, 2
      if (a(i, j) > tol) exit outer
    end do inner
  end do outer
  iout = i
  jout = j
end subroutine
""", lambda: [5, 3, np.asfortranarray(np.array(
    [[0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 0]], np.float32)), 0.5, 0, 0])

# a backward goto out of a loop: the statements from the label run again
# and read the variable the goto left
case("goto_back_out_of_loop", """
subroutine again(n, x, first, rounds)
  integer n, first, rounds, j
  real x(n)
  rounds = 0
  first = 0
10 rounds = rounds + 1
  if (rounds > 1) first = first + 10 * j
  do j = 1, n
    x(j) = x(j) - 1.0
    if (x(j) > 0.0 .and. rounds < 5) goto 10
  end do
  first = first + j
end subroutine
""", lambda: [4, np.array([0.5, 3.0, 0.2, 0.1], np.float32), 0, 0])

# labelled F77 loops sharing one terminal statement, left by an arithmetic if
case("arithmetic_if_out_of_shared_label", """
      subroutine shared(n, a, ii, jj)
      integer n, ii, jj, i, j
      real a(n, n)
      ii = 0
      jj = 0
      do 10 j = 1, n
      do 10 i = 1, n
         if (a(i, j) - 0.9) 10, 20, 20
   10 continue
   20 ii = i
      jj = j
      end
""", lambda: [4, farray((4, 4), np.float32, seed=7), 0, 0])

# a computed goto out of a loop with a step of 3
case("computed_goto_out", """
subroutine comp(n, k, pos)
  integer n, k, pos, i
  pos = 0
  do i = 1, n, 3
    go to (50, 60) k - i
  end do
  pos = i
  return
50 pos = 100 + i
  return
60 pos = 200 + i
end subroutine
""", lambda: [20, 9, 0])


@needs_gfortran
@pytest.mark.parametrize("name", sorted(CASES))
def test_loop_variable_after_exit_path(name, tmp_path, cl_queue):
    source, make_args = CASES[name]
    sub = parse_fortran(source, "k.f90").kernels[0].name
    run_both(source, sub, make_args(), tmp_path, cl_queue)
