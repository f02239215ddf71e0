"""Control flow that leaves early (issue 16): ``do while``, endless ``do``
with ``exit``, named ``exit`` and ``cycle`` out of nested loops, forward
``goto`` (F77 early exits), and loops stepping by a run-time increment of
either sign, in the style of the reference BLAS: run on PoCL and compared
with gfortran, plus the exact diagnostics."""

import numpy as np
import pytest

from f2loopy.diagnostics import CodegenError, FortranError
from f2loopy.frontend import parse_fortran
from shared_kernels import INT8_TIME_LOOP
from util import farray, needs_gfortran, run_both, zeros

CASES = {}


def case(name, source, make_args, *, sub=None, **kw):
    CASES[name] = (source, make_args, sub, kw)


case("idamax_style_runtime_step", """
      subroutine damaxi(n, dx, incx, imax, dmax)
      integer n, incx, imax
      double precision dx(*), dmax
      integer i, ix
      imax = 0
      dmax = -1.0d0
      if (n .lt. 1 .or. incx .le. 0) return
      imax = 1
      ix = 1
      dmax = dabs(dx(1))
      do i = 2, n
         ix = ix + incx
         if (dabs(dx(ix)) .gt. dmax) then
            imax = i
            dmax = dabs(dx(ix))
         end if
      end do
      end
""", lambda: [7, farray(21, np.float64, seed=3), 3, 0, 0.0])

DSCAL = """
      subroutine dscalr(n, da, dx, incx, last)
      integer n, incx, last
      double precision da, dx(*)
      integer i, nincx
      nincx = n*incx
      do 10 i = 1, nincx, incx
         dx(i) = da*dx(i)
   10 continue
      last = i
      end
"""
case("dscal_runtime_step_positive", DSCAL,
     lambda: [6, 2.5, farray(20, np.float64, seed=4), 3, 0])
case("dscal_runtime_step_too_short", DSCAL,
     lambda: [0, 2.5, farray(20, np.float64, seed=4), 3, 0])

# Fortran 77 loops written with a backward goto (Reference LAPACK's dlarfg,
# dlamrg, dlascl...): a labelled statement, the statements after it, and an
# 'if (...) go to' back to it, also from inside a nested loop and an if block
BACKWARD = """
      subroutine rescale(n, x, beta, knt, iters)
      integer n, knt, iters
      double precision x(*), beta
      integer i, j
      knt = 0
      iters = 0
      if (abs(beta) .lt. 1.0d-3) then
   10    continue
         knt = knt + 1
         do 20 i = 1, n
            x(i) = x(i)*2
   20    continue
         beta = beta*2
         if ((abs(beta) .lt. 1.0d-3) .and. (knt .lt. 20)) go to 10
      end if
      j = 0
   30 j = j + 1
      do i = 1, n
         iters = iters + 1
         if (x(i) .gt. 100*j) go to 30
      end do
      if (j .gt. 50) return
      end
"""
case("goto_backwards_loops_small_beta", BACKWARD,
     lambda: [5, farray(5, np.float64, seed=6, low=0, high=300), 1.5e-6, 0, 0])
case("goto_backwards_loops_large_beta", BACKWARD,
     lambda: [5, farray(5, np.float64, seed=7), 0.5, 0, 0])

# computed goto (LAPACK's dlasy2, dlacn2's reverse communication) to labels
# before and after it, out of range falling through; and Fortran 66's
# arithmetic if
COMPUTED = """
      subroutine cg(k, n, x, r, y)
      integer k, n, r
      double precision x(*), y
      integer i
      r = 0
      i = 0
      go to (10, 20, 30, 10) k
      r = -1
      go to 40
   10 continue
      r = r + 1
   20 continue
      i = i + 1
      x(i) = x(i) + r
      r = r + 10
      if (i .lt. n) go to (20, 30) 1 + mod(i, 2)
   30 continue
      r = r + 100
   40 continue
      if (y - 0.5d0) 50, 60, 70
   50 y = -y
      go to 70
   60 y = 10*y
   70 continue
      end
"""
for _k in (-1, 1, 2, 3, 4, 5):
    case(f"computed_goto_{_k}", COMPUTED,
         lambda k=_k: [k, 6, farray(6, np.float64, seed=8), 0,
                       {-1: 0.5, 1: 0.25, 2: 0.75}.get(k, -0.5)])

# an arithmetic if on a NaN (red team): neither negative nor zero, it goes to
# the third label as gfortran's does (it went on to the next statement); an
# integer one for comparison
ARITHMETIC_IF_NAN = """
subroutine aif(n, a, k, r)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: a(n)
  integer, intent(in) :: k(n)
  integer, intent(out) :: r(n)
  integer :: i
  do i = 1, n
    if (a(i)) 10, 20, 30
10  r(i) = 1
    go to 40
20  r(i) = 2
    go to 40
30  r(i) = 3
40  continue
    if (k(i)) 50, 60, 70
50  r(i) = r(i) + 10
60  r(i) = r(i) + 100
70  continue
  end do
end subroutine aif
"""
case("arithmetic_if_nan", ARITHMETIC_IF_NAN,
     lambda: [6, np.array([np.nan, -1.0, 0.0, 2.0, np.nan, -np.nan], np.float64),
              np.array([-2, 0, 3, np.iinfo(np.int32).min, 0, 1], np.int32),
              np.zeros(6, np.int32)])

# a goto back out of two nested loops, restarting them (red team), and a
# computed goto whose index is a function call with a side effect (once)
case("goto_backwards_out_of_nested_do", """
subroutine bg2(n, a, cnt)
  implicit none
  integer, intent(in) :: n
  double precision, intent(inout) :: a(n, n)
  integer, intent(out) :: cnt
  integer :: i, j
  cnt = 0
10 continue
  cnt = cnt + 1
  do j = 1, n
    do i = 1, n
      if (a(i, j) > 0.5d0 .and. cnt < 30) then
        a(i, j) = a(i, j) * 0.5d0 - 0.1d0
        go to 10
      end if
      a(i, j) = a(i, j) + 0.01d0
    end do
  end do
  if (cnt < 3) go to 10
end subroutine bg2
""", lambda: [4, farray((4, 4), np.float64, seed=9), 0])
case("computed_goto_side_effect_index", """
module cgm
  implicit none
contains
  integer function nxt(k)
    integer, intent(inout) :: k
    k = k + 1
    nxt = k
  end function
end module cgm
subroutine cgs(k, r)
  use cgm
  implicit none
  integer, intent(inout) :: k
  integer, intent(out) :: r
  r = 0
  go to (10, 20, 30) nxt(k)
  r = 1000
  go to 40
10 r = 1
  go to 40
20 r = 2
  go to 40
30 r = 3
40 continue
end subroutine cgs
""", lambda: [1, 0], sub="cgs")

# an integer(8) loop variable computes in 64 bits (red team: its iname is a
# 32-bit int, and t*t*t*1000 overflowed from t = 130)
case("int64_loop_variable_arithmetic", INT8_TIME_LOOP, lambda: [np.int64(200), 6, np.arange(6, dtype=np.int64), np.zeros(6, np.int64)])

# the same with a step known only at run time (its own loop form): 64 bits too,
# also for the value after the loop
case("int64_runtime_step_loop_variable", """
subroutine t8s(ts, inc, n, a, last)
  implicit none
  integer, intent(in) :: ts, inc, n
  integer(8), intent(inout) :: a(n), last
  integer(8) :: t
  integer :: i
  do t = ts, 1, inc
    do i = 1, n
      a(i) = a(i) + t * t * t * 1000 + i
    end do
  end do
  last = t * 100000
end subroutine t8s
""", lambda: [300, -7, 4, np.arange(4, dtype=np.int64), np.int64(0)])

# a computed goto on an integer(8) index (red team): 2**32 + 1 is out of range,
# not label 1 as its low 32 bits would say
COMPUTED_INT8 = """
subroutine cg64(k, r)
  implicit none
  integer(8), intent(in) :: k
  integer, intent(out) :: r
  r = 0
  go to (10, 20) k
  r = 5
  go to 40
10 r = 1
  go to 40
20 r = 2
40 continue
end subroutine cg64
"""
for _k in (2**32 + 1, -2**32 + 2, 2):
    case(f"computed_goto_int64_{_k}", COMPUTED_INT8, lambda k=_k: [np.int64(k), 0])

# a function whose result is also its loop variable, returning from inside the
# loop (LAPACK's iladlc: the last non-zero column)
LASTCOL = """
      subroutine useil(m, n, a, lda, lastc)
      integer m, n, lda, lastc
      double precision a(lda, *)
      integer iladlc
      lastc = iladlc(m, n, a, lda)
      end
      integer function iladlc(m, n, a, lda)
      integer m, n, lda
      double precision a(lda, *)
      double precision zero
      parameter (zero = 0.0d+0)
      integer i
      if (n .eq. 0) then
         iladlc = n
      else if (a(1, n) .ne. zero .or. a(m, n) .ne. zero) then
         iladlc = n
      else
         do iladlc = n, 1, -1
            do i = 1, m
               if (a(i, iladlc) .ne. zero) return
            end do
         end do
      end if
      return
      end
"""


def _last_columns(zero_from):
    a = farray((5, 6), np.float64, seed=9)
    a[:, zero_from:] = 0.0
    return [5, 6, a, 5, -7]


for _z in (0, 2, 5, 6):
    case(f"function_result_is_loop_variable_{_z}", LASTCOL, lambda z=_z: _last_columns(z),
         sub="useil")

STEPS = """
subroutine walk(n, x, incx, i0, i1, y, cnt, iv)
  implicit none
  integer n, incx, i0, i1, cnt, iv
  real x(n), y(n)
  integer i
  cnt = 0
  do i = i0, i1, incx
    cnt = cnt + 1
    y(cnt) = x(i) + cnt
  end do
  iv = i
end subroutine
"""
for label, i0, i1, inc in (("down", 9, 2, -2), ("up", 1, 9, 4), ("empty_up", 5, 1, 1),
                           ("empty_down", 1, 5, -1), ("zero_trip_exact", 3, 3, -7)):
    case(f"runtime_step_{label}", STEPS,
         lambda i0=i0, i1=i1, inc=inc: [10, farray(10, seed=5), inc, i0, i1, zeros(10), 0, 0])

case("daxpy_style_negative_increments", """
      subroutine daxpyr(n, da, dx, incx, dy, incy)
      integer n, incx, incy
      double precision da, dx(*), dy(*)
      integer i, ix, iy
      if (n .le. 0) return
      if (da .eq. 0.0d0) return
      ix = 1
      iy = 1
      if (incx .lt. 0) ix = (-n+1)*incx + 1
      if (incy .lt. 0) iy = (-n+1)*incy + 1
      do i = 1, n
        dy(iy) = dy(iy) + da*dx(ix)
        ix = ix + incx
        iy = iy + incy
      end do
      end
""", lambda: [5, 0.5, farray(11, np.float64, seed=6), -2, farray(16, np.float64, seed=7), 3])

case("do_while_newton_per_element", """
subroutine newton_sqrt(n, a, x, iters)
  implicit none
  integer n, iters(n)
  real*8 a(n), x(n)
  integer i, it
  real*8 r
  do i = 1, n
    r = a(i)
    it = 0
    do while (abs(r*r - a(i)) > 1d-12 * a(i) .and. it < 60)
      r = 0.5d0 * (r + a(i) / r)
      it = it + 1
    end do
    x(i) = r
    iters(i) = it
  end do
end subroutine
""", lambda: [9, np.linspace(0.5, 40, 9), zeros(9, np.float64), np.zeros(9, np.int32)])

case("endless_do_with_exit_and_cycle", """
subroutine collatz(n, start, steps, peak)
  implicit none
  integer n, start(n), steps(n), peak(n)
  integer i, v, k
  do i = 1, n
    v = start(i)
    k = 0
    peak(i) = v
    do
      if (v == 1) exit
      k = k + 1
      if (mod(v, 2) == 0) then
        v = v / 2
        cycle
      end if
      v = 3 * v + 1
      peak(i) = max(peak(i), v)
    end do
    steps(i) = k
  end do
end subroutine
""", lambda: [8, np.array([1, 2, 3, 6, 7, 9, 27, 97], np.int32), np.zeros(8, np.int32),
              np.zeros(8, np.int32)])

case("exit_keeps_loop_variable", """
subroutine first_negative(n, x, pos, after)
  implicit none
  integer n, pos, after
  real x(n)
  integer i
  pos = 0
  do i = 1, n
    if (x(i) < 0) then
      pos = i
      exit
    end if
    x(i) = 2 * x(i)
  end do
  after = i
end subroutine
""", lambda: [8, np.array([1, 2, 3, -1, 5, -2, 7, 8], np.float32), 0, 0])
case("exit_never_taken", CASES["exit_keeps_loop_variable"][0],
     lambda: [5, np.arange(1, 6, dtype=np.float32), 0, 0])

case("named_exit_and_cycle_out_of_nested_loops", """
subroutine search(n, m, a, hits, row, col)
  implicit none
  integer n, m, row, col
  real a(n, m), hits(n)
  integer i, j
  row = 0
  col = 0
  outer: do j = 1, m
    inner: do i = 1, n
      if (a(i, j) > 0.9) then
        row = i
        col = j
        exit outer
      end if
      if (a(i, j) < 0) cycle outer
      hits(i) = hits(i) + a(i, j)
    end do inner
  end do outer
end subroutine
""", lambda: [6, 7, farray((6, 7), seed=11, low=-0.3, high=0.95), zeros(6), 0, 0])

case("goto_forward_f77_early_exit", """
      subroutine dnrm(n, x, incx, res)
      integer n, incx
      double precision x(*), res
      integer i
      res = 0.0d0
      if (n .lt. 1 .or. incx .lt. 1) go to 100
      if (n .eq. 1) goto 90
      do 10 i = 1, 1 + (n - 1)*incx, incx
         if (x(i) .eq. 0.0d0) goto 10
         res = res + x(i)**2
   10 continue
      res = sqrt(res)
      goto 100
   90 res = abs(x(1))
  100 continue
      end
""", lambda: [6, np.array([1.0, 0, 2, 0, 0, 3, -4, 0, 0, 0, 5], np.float64), 2, 0.0])
case("goto_forward_single", CASES["goto_forward_f77_early_exit"][0],
     lambda: [1, np.array([-3.0, 1], np.float64), 1, 0.0])
case("goto_forward_none", CASES["goto_forward_f77_early_exit"][0],
     lambda: [0, np.array([-3.0, 1], np.float64), 1, 0.0])

case("goto_out_of_while_loop", """
subroutine bisect(n, lo, hi, root)
  implicit none
  integer n
  real*8 lo(n), hi(n), root(n)
  integer i
  real*8 a, b, c
  do i = 1, n
    a = lo(i)
    b = hi(i)
    do while (b - a > 1d-10)
      c = 0.5d0 * (a + b)
      if (c * c == 2d0 * i) goto 20
      if (c * c < 2d0 * i) then
        a = c
      else
        b = c
      end if
    end do
    c = a
 20 root(i) = c
  end do
end subroutine
""", lambda: [5, np.zeros(5), np.full(5, 4.0), zeros(5, np.float64)])


@needs_gfortran
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_gfortran(name, tmp_path, cl_queue):
    source, make_args, sub, kw = CASES[name]
    if sub is None:
        sub = parse_fortran(source, "k.f90").kernels[0].name
    run_both(source, sub, make_args(), tmp_path, cl_queue, **kw)


# {{{ diagnostics and generated code

def _kernel(body, decls="", args="n, x"):
    src = (f"subroutine s({args})\n  implicit none\n  integer n\n  real x(n)\n{decls}"
           f"{body}end subroutine\n")
    return parse_fortran(src, "t.f90")[0], src


def _error(body, decls=""):
    with pytest.raises(FortranError) as info:
        _kernel(body, decls)
    return info.value.format().splitlines()


def test_goto_backwards_into_another_loop_is_refused():
    """Two backward gotos whose statements overlap (neither repeats a part of
    the other) have no loop structure: a located error at the second."""
    lines = _error("  integer i\n  i = 0\n10 i = i + 1\n20 i = i + 2\n"
                   "  if (i < n) goto 10\n  if (i < 2*n) goto 20\n", "")
    assert lines[0] == ("t.f90:10:16: error: 'goto 20' jumps backwards: only a forward goto "
                        "to a later statement of the same or an enclosing block, or back to "
                        "the start of statements it then repeats, is supported (write the "
                        "loop as 'do' or 'do while')")
    assert lines[2].strip() == "^~~~"


def test_goto_backwards_is_a_sequential_loop():
    knl, _ = _kernel("  integer i\n  i = 0\n10 i = i + 1\n  x(i) = i\n"
                     "  if (i < n) goto 10\n")
    (loop,) = [n for n in knl.all_inames() if n.startswith("goto10_k")]
    assert knl.loop_exits[loop].sequential == "a 'goto 10' repeats it"


def test_goto_into_a_block_is_refused():
    lines = _error("  integer i\n  go to 20\n  do i = 1, n\n20  x(i) = 0\n  end do\n")
    assert lines[0] == ("t.f90:6:3: error: 'go to 20' does not jump to a later statement of "
                        "the same or an enclosing block (only such a forward goto is "
                        "supported)")
    assert lines[2].strip() == "^~~~~"


@pytest.mark.parametrize("body, message", [
    ("  exit\n", "t.f90:5:3: error: 'exit' outside a loop"),
    ("  integer i\n  do i = 1, n\n    exit outer\n  end do\n",
     "t.f90:7:10: error: 'exit outer': no enclosing loop is called 'outer' (leaving other "
     "constructs is not supported)"),
    ("  integer i\n  do concurrent (i = 1:n)\n    if (x(i) > 0) exit\n  end do\n",
     "t.f90:7:19: error: 'exit' cannot leave a 'do concurrent' loop"),
])
def test_exit_errors(body, message):
    assert _error(body)[0] == message


WHILE = """  integer i, k
  do i = 1, n
    k = 0
    do while (x(i) > 1)
      x(i) = x(i) / 2
    end do
  end do
"""


def test_parallel_tag_on_while_loop_is_located_error():
    from f2loopy.codegen import generate_code
    from f2loopy.transform import tag_inames
    knl, _ = _kernel(WHILE)
    generate_code(tag_inames(knl, "i:g.0"))          # the outer loop is parallel
    with pytest.raises(CodegenError) as info:
        generate_code(tag_inames(knl, "while_k:l.0"))
    assert info.value.format().splitlines()[0] == (
        "t.f90:8:5: error: loop 'while_k' cannot be tagged 'l.0': it must run sequentially "
        "in one work-item (it is a 'do while' loop)")


def test_parallel_tag_on_runtime_step_loop_is_located_error():
    from f2loopy.codegen import generate_code
    from f2loopy.transform import tag_inames
    knl, _ = _kernel("  integer i, inc\n  inc = n / 3\n  do i = 1, n, inc\n    x(i) = 0\n"
                     "  end do\n")
    with pytest.raises(CodegenError) as info:
        generate_code(tag_inames(knl, "i_t:g.0"))
    assert info.value.format().splitlines()[0] == (
        "t.f90:7:3: error: loop 'i_t' cannot be tagged 'g.0': it must run sequentially in one "
        "work-item (its step 'inc' is only known at run time)")


def test_parallel_tag_on_loop_left_by_exit_is_located_error():
    from f2loopy.codegen import generate_code
    from f2loopy.transform import tag_inames
    knl, _ = _kernel("  integer i\n  do i = 1, n\n    if (x(i) < 0) exit\n    x(i) = 1\n"
                     "  end do\n")
    with pytest.raises(CodegenError) as info:
        generate_code(tag_inames(knl, "i:g.0"))
    assert info.value.format().splitlines()[0] == (
        "t.f90:6:3: error: loop 'i' cannot be tagged 'g.0': it must run sequentially in one "
        "work-item (it is left by 'exit')")


def test_split_while_loop_is_refused():
    from f2loopy.codegen import generate_code
    from f2loopy.transform import split_iname
    knl, _ = _kernel(WHILE)
    with pytest.raises(CodegenError) as info:
        generate_code(split_iname(knl, "while_k", 4))
    assert "loop 'while_k' must run sequentially (it is a 'do while' loop), but a " \
        "transformation removed it" in str(info.value)


def test_while_loop_code_stops_on_its_flag():
    from f2loopy.codegen import generate_code
    from f2loopy.ir.serialize import roundtrip
    knl, _ = _kernel(WHILE)
    assert roundtrip(knl).loop_exits == knl.loop_exits
    code = generate_code(knl).device_code
    assert "for (int while_k = 0; while_k <= 2147483646 && !ended; ++while_k)" in code
    # the condition is evaluated apart from the statements it guards
    assert "            if (!ended)\n                ended = !(x[i - 1] > 1);\n" in code
    assert "LOOP EXITS:\nwhile_k: ends when ended; sequential (it is a 'do while' loop)" \
        in str(knl)


def test_while_loop_under_false_condition_ends_at_once():
    knl, _ = _kernel("  if (n > 3) then\n    do while (x(1) > 1)\n      x(1) = x(1) / 2\n"
                     "    end do\n  end if\n")
    first = knl.instructions[0]
    assert first.assignee.name == "ended" and first.predicates == ()
    assert str(first.expression) == "not (n > 3)"

# }}}


@needs_gfortran
def test_while_loop_per_work_item(tmp_path, cl_queue):
    # each work-item runs its own do-while loop to its own end
    from util import run_transformed
    from f2loopy.transform import split_iname
    src = CASES["do_while_newton_per_element"][0]
    run_transformed(src, "newton_sqrt",
                    lambda k: split_iname(k, "i", 4, outer_tag="g.0", inner_tag="l.0"),
                    [9, np.linspace(0.5, 40, 9), zeros(9, np.float64), np.zeros(9, np.int32)],
                    tmp_path, cl_queue)
