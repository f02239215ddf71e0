"""``character`` flags (issue 16): dummy arguments compared with one-character
constants, in ``select case``, through ``lsame`` (the BLAS function by name,
or a function of the file) and ``ichar``; the kernel sees integer codes, the
Python glue takes a str.  Differential tests against gfortran in the style of
the reference BLAS, and the exact messages for what stays refused."""

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.frontend.characters import character_code
from f2loopy.ir.roles import Character, Dummy
from util import farray, needs_gfortran, run_both, translate_and_load

DGEMV = """
      subroutine dgemvs(trans, m, n, alpha, a, lda, x, incx, beta, y, incy)
      character*1 trans
      integer m, n, lda, incx, incy
      double precision alpha, beta, a(lda, *), x(*), y(*)
      logical lsame
      external lsame
      double precision temp
      integer i, j, jx, jy, kx, ky, lenx, leny, ix, iy
      if (m .eq. 0 .or. n .eq. 0) return
      if (lsame(trans, 'N')) then
         lenx = n
         leny = m
      else
         lenx = m
         leny = n
      end if
      kx = 1
      ky = 1
      if (incx .lt. 0) kx = 1 - (lenx - 1)*incx
      if (incy .lt. 0) ky = 1 - (leny - 1)*incy
      iy = ky
      do 10 i = 1, leny
         y(iy) = beta*y(iy)
         iy = iy + incy
   10 continue
      if (lsame(trans, 'N')) then
         jx = kx
         do 60 j = 1, n
            temp = alpha*x(jx)
            iy = ky
            do 50 i = 1, m
               y(iy) = y(iy) + temp*a(i, j)
               iy = iy + incy
   50       continue
            jx = jx + incx
   60    continue
      else
         jy = ky
         do 100 j = 1, n
            temp = 0.0d0
            ix = kx
            do 90 i = 1, m
               temp = temp + a(i, j)*x(ix)
               ix = ix + incx
   90       continue
            y(jy) = y(jy) + alpha*temp
            jy = jy + incy
  100    continue
      end if
      end
"""

LSAME_IN_FILE = """
      logical function lsame(ca, cb)
      character ca, cb
      integer inta, intb, zcode
      lsame = ca .eq. cb
      if (lsame) return
      zcode = ichar('Z')
      inta = ichar(ca)
      intb = ichar(cb)
      if (zcode .eq. 90 .or. zcode .eq. 122) then
         if (inta .ge. 97 .and. inta .le. 122) inta = inta - 32
         if (intb .ge. 97 .and. intb .le. 122) intb = intb - 32
      end if
      lsame = inta .eq. intb
      end
"""

FLAGS = """
subroutine flags(side, uplo, diag, n, x, k)
  implicit none
  character(len=*), intent(in) :: side
  character*1 uplo
  character*(*) diag
  integer n, k, i
  real x(n)
  k = 0
  if (side == 'L') k = k + 1
  if (side .ne. 'R') k = k + 2
  if (uplo .eq. 'u' .or. uplo == 'U') k = k + 4
  select case (uplo)
  case ('a':'m')
    k = k + 8
  case ('N', 'n')
    k = k + 16
  case default
    k = k + 32
  end select
  select case (diag)
  case ('U')
    k = k + 64
  end select
  do i = 1, n
    if (diag(1:1) == 'N') x(i) = x(i) + ichar(uplo)
  end do
end subroutine
"""


@needs_gfortran
@pytest.mark.parametrize("trans, incx, incy", [("N", 1, 1), ("n", -2, 3), ("T", 2, -1),
                                               ("transpose", 1, 1), ("c", -1, -2)])
@pytest.mark.parametrize("lsame_source", ["builtin", "in_file"])
def test_dgemv_style_trans_flag(trans, incx, incy, lsame_source, tmp_path, cl_queue):
    source = DGEMV + (LSAME_IN_FILE if lsame_source == "in_file" else "")
    m, n, lda = 5, 4, 6
    a = farray((lda, n), np.float64, seed=1)
    lenx, leny = (n, m) if trans[0] in "Nn" else (m, n)
    x = farray(1 + (lenx - 1) * abs(incx), np.float64, seed=2)
    y = farray(1 + (leny - 1) * abs(incy), np.float64, seed=3)
    run_both(source, "dgemvs", [trans, m, n, 1.5, a, lda, x, incx, 0.5, y, incy],
             tmp_path, cl_queue)


@needs_gfortran
@pytest.mark.parametrize("side, uplo, diag", [("L", "u", "U"), ("Left", "N", "Non-unit"),
                                              ("R", "b", "U  "), ("r", "z", "N"),
                                              ("", "m", "u"),
                                              # longer than uplo's one character (as
                                              # LAPACK passes 'Upper'): it sees 'U', 'n'
                                              ("L", "Upper", "U"), ("R", "non", "N")])
def test_comparisons_and_select_case(side, uplo, diag, tmp_path, cl_queue):
    run_both(FLAGS, "flags", [side, uplo, diag, 3, farray(3, seed=4), 0], tmp_path,
             cl_queue)


def test_codes():
    assert character_code("N") == 78
    assert character_code("No") == 78 + 256
    assert character_code("N   ") == 78
    assert character_code("") == 32


@pytest.mark.usefixtures("opencl_device")
def test_kernel_sees_codes_and_glue_takes_str(tmp_path):
    src = ("subroutine s(trans, n, k)\n  character trans\n  integer n, k\n  k = 0\n"
           "  if (trans == 'T') k = n\nend subroutine\n")
    knl = parse_fortran(src, "t.f90")[0]
    arg = knl.arg_dict["trans"]
    assert arg.role == Dummy(character=Character(length=1)) and arg.dtype == np.int32
    # the code of the caller's string says whether more characters follow,
    # which a character*1 dummy does not see: only the first one counts
    assert "if (mod(trans, 256) == 84) k = n" in str(knl)
    module, _ = translate_and_load(src, tmp_path)
    assert module.s("T", 5, 0) == 5
    assert module.s("t", 5, 0) == 0
    assert module.s("Transpose", 5, 0) == 5      # as LAPACK calls CHARACTER TRANSA
    with pytest.raises(module.KernelArgumentError) as info:
        module.s(84, 5, 0)
    assert str(info.value) == "s: argument 'trans' must be a character (str), got int"


def _error(body, decls="  character trans\n"):
    src = f"subroutine s(trans, n, x)\n  integer n\n  real x(n)\n{decls}{body}end subroutine\n"
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "t.f90")
    return info.value


@pytest.mark.parametrize("body, decls, message", [
    ("  n = trans\n", "  character trans\n", "t.f90:5:7: error: character variable 'trans' "
     "can only be compared (==, /=), used in 'select case', or passed to lsame or ichar in a "
     "kernel"),
    ("  if (trans == 'No') n = 1\n", "  character*2 trans\n", "t.f90:5:16: error: comparing "
     "with 'No' is not supported: a kernel only knows the first character of a character "
     "argument (compare with one character)"),
    ("  if (trans < 'N') n = 1\n", "  character trans\n", "t.f90:5:13: error: characters can "
     "only be compared with '==' and '/=' in a kernel, not '<'"),
    ("  if (trans == 1) n = 1\n", "  character trans\n", "t.f90:5:13: error: a character can "
     "only be compared with a character"),
    ("  character c\n  c = 'a'\n  trans = c\n", "  character trans\n", "t.f90:7:11: error: "
     "'trans' is assigned a text computed at run time (c): a kernel only returns which of "
     "its constant messages it assigned; assign a character constant (or a concatenation of "
     "constants) and return the value in an integer argument"),
    ("  character c\n  c = 1\n", "", "t.f90:5:3: error: 'c' is a character: only a character "
     "constant or another character variable can be assigned to it in a kernel"),
    ("  x(1) = 1\n", "  character trans(3)\n", "t.f90:4:13: error: character array 'trans' is "
     "not supported (only scalar character arguments used as flags are)"),
    ("  x(1) = trans(2:2)\n", "  character*4 trans\n", "t.f90:5:10: error: character "
     "variable 'trans' can only be compared (==, /=), used in 'select case', or passed to "
     "lsame or ichar in a kernel"),
    ("  trans(1:1) = 'a'\n", "  character*8 trans\n", "t.f90:5:3: error: assigning a "
     "substring of character variable 'trans' is not supported (a kernel only knows a "
     "character's first character, as a flag)"),
    ("  if (trans(1:2) == 'a') n = 1\n", "  character*4 trans\n", "t.f90:5:7: error: "
     "substring trans(1:2) is not supported: a kernel only knows the first character of a "
     "character argument (use trans(1:1))"),
])
def test_other_character_uses_stay_errors(body, decls, message):
    assert _error(body, decls).format().splitlines()[0] == message


LOCAL_FLAGS = """
      subroutine ch(trans, n, x, y)
      character trans
      integer n
      double precision x(*), y(*)
      character transt, norm*4
      logical lsame
      integer i
      if (lsame(trans, 'N')) then
         transt = 'T'
      else
         transt = 'Nope'
      end if
      norm = transt
      do i = 1, n
         if (transt .eq. 'T') then
            y(i) = x(i)*2
         else if (lsame(norm, 'n')) then
            y(i) = x(i) + 1
         end if
      end do
      end
""" + LSAME_IN_FILE


@needs_gfortran
@pytest.mark.parametrize("trans", ["N", "n", "T", "x"])
def test_local_character_flags(trans, tmp_path, cl_queue):
    """Local character variables set from constants and other flags (LAPACK's
    TRANST = 'T', then passed on), as gfortran computes them."""
    run_both(LOCAL_FLAGS, "ch", [trans, 5, farray(5, np.float64, seed=1),
                                 np.zeros(5)], tmp_path, cl_queue, filename="ch.f")


FLAGS_MAIN = """
program main
  use checks
  use flags_cl_mod
  implicit none
  real :: x1(3), x2(3)
  integer :: k1, k2, st, t
  character(len=8), parameter :: sides(4) = [character(len=8) :: 'L', 'Left', 'R', 'r']
  character(len=1), parameter :: uplos(4) = ['u', 'N', 'b', 'z']
  character(len=9), parameter :: diags(4) = [character(len=9) :: 'U', 'Non-unit', 'U  ', 'n']
  do t = 1, 4
    x1 = [1.0, 2.0, 3.0]; x2 = x1; k1 = -1; k2 = -2
    call flags(trim(sides(t)), uplos(t), diags(t), 3, x1, k1)
    call flags_cl(trim(sides(t)), uplos(t), diags(t), 3, x2, k2, status=st)
    call check(st == 0 .and. k1 == k2 .and. all(x1 == x2), "flags " // sides(t))
  end do
  call done()
end program
"""


@pytest.mark.opencl
@pytest.mark.gfortran
def test_fortran_glue_takes_characters(tmp_path, gfortran, gcc, opencl_headers, opencl_device):
    from fortran_util import (
        assert_all_ok, build_runtime, compile_and_run, translate)
    runtime = build_runtime(tmp_path)
    sources = translate(tmp_path, "flags", FLAGS)
    proc = compile_and_run(tmp_path, runtime, sources, FLAGS_MAIN)
    assert_all_ok(proc, 4)


# a BLAS-style routine on the search path deciding its variant from flags, and
# a caller passing it constant and run-time flags (LAPACK's dlarfb calling dtrmm)
TRI_LIB = """
      subroutine tri(side, uplo, n, alpha, x)
      character side, uplo
      integer n
      double precision alpha, x(*)
      logical lside, upper, lsame
      integer i, info
      lside = lsame(side, 'L')
      upper = lsame(uplo, 'U')
      info = 0
      if (.not. lside .and. .not. lsame(side, 'R')) then
         info = 1
      end if
      if (info .ne. 0) then
         call xerbla('TRI   ', info)
         return
      end if
      if (n .eq. 0) return
      if (lside) then
         if (upper) then
            do i = 1, n
               x(i) = alpha*x(i) + i
            end do
         else
            do i = n, 1, -1
               x(i) = alpha*x(i) - i
            end do
         end if
      else
         if (upper) then
            x(1) = x(1) + alpha
         else
            x(n) = x(n) - alpha
         end if
      end if
      end
"""

TRI_CALLER = """
      subroutine caller(trans, n, x, y)
      character trans
      integer n
      double precision x(*), y(*)
      call tri('Left', 'Upper', n, 2.0d0, x)
      call tri('r', 'L', n, 3.0d0, y)
      call tri('L', trans, n, 0.5d0, y)
      end
"""


@needs_gfortran
@pytest.mark.parametrize("trans", ["U", "l"])
def test_constant_flags_of_a_search_path_routine_fold(tmp_path, cl_queue, trans):
    """lsame from the search path is the BLAS one: with constant flags the
    variants the callee does not take are not lowered at all, and the kernel
    computes what gfortran computes with the library's own lsame."""
    import importlib.util

    from f2loopy.pipeline import translate_text, write_outputs
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "tri.f").write_text(TRI_LIB)
    (tmp_path / "lib" / "lsame.f").write_text(LSAME_IN_FILE)
    result = translate_text(TRI_CALLER, tmp_path / "caller.f",
                            include_dirs=[tmp_path / "lib"])
    (folded,) = result.kernels
    # the same code with lsame in the file: the user's own, inlined, which
    # decides at run time, so every variant stays
    whole = TRI_CALLER + TRI_LIB + LSAME_IN_FILE
    unfolded = parse_fortran(whole, "all.f")["caller"]
    assert len(folded.instructions) < len(unfolded.instructions) // 2
    write_outputs(result.outputs)
    spec = importlib.util.spec_from_file_location("caller_cl", tmp_path / "caller_cl.py")
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)
    run_both(whole, "caller", [trans, 6, farray(6, np.float64, seed=2),
                               farray(6, np.float64, seed=3)],
             tmp_path, cl_queue, filename="all.f", module=glue)


# locals set from constant flags but changed again (conditionally, through a
# call, inside a loop): they are not constants
NOT_CONSTANT = """
      subroutine outer(n, x)
      integer n
      double precision x(*)
      call inner('N', n, x)
      end
      subroutine inner(t, n, x)
      character t
      integer n, i
      double precision x(*)
      logical nota, twice, inloop, lsame
      nota = lsame(t, 'N')
      if (x(1) .gt. 0) nota = .false.
      twice = lsame(t, 'N')
      call flip(twice)
      do i = 1, n
         inloop = i .eq. 1
      end do
      if (nota) x(2) = x(2) + 1
      if (twice) x(3) = x(3) + 1
      if (inloop) x(4) = x(4) + 1
      end
      subroutine flip(b)
      logical b
      b = .not. b
      end
""" + LSAME_IN_FILE.replace("lsame", "lsamx")


@needs_gfortran
@pytest.mark.parametrize("first", [-1.0, 1.0])
def test_locals_changed_again_are_not_constants(tmp_path, cl_queue, first):
    x = farray(5, np.float64, seed=4)
    x[0] = first
    run_both(NOT_CONSTANT, "outer", [5, x], tmp_path, cl_queue, filename="nc.f")


DECLARED_LENGTH = """
      subroutine dl(c, n, x)
      character*2 c
      integer n
      double precision x(*)
      if (c .eq. 'N') then
         x(1) = 1
      else if (c(1:1) .eq. 'N') then
         x(1) = 2
      else
         x(1) = 3
      end if
      end
"""


@needs_gfortran
@pytest.mark.parametrize("actual", ["N   X", "NX", "N", "Nope", "x"])
def test_declared_length_sees_that_many_characters(actual, tmp_path, cl_queue):
    """A character*2 dummy given 'N   X' sees 'N ' (Fortran associates the
    first two characters), so c == 'N' holds, as in gfortran."""
    run_both(DECLARED_LENGTH, "dl", [actual, 1, np.zeros(2)], tmp_path, cl_queue,
             filename="dl.f")


def test_declared_length_reaches_both_glues(tmp_path):
    from f2loopy.pipeline import translate_text
    result = translate_text(DECLARED_LENGTH, tmp_path / "dl.f")
    assert result.kernels[0].arg_dict["c"].role == Dummy(character=Character(length=2))
    texts = {p.suffix: t for p, t in result.outputs.items()}
    assert "'character2')" in texts[".py"]
    assert "(1:min(2, len(" in texts[".f90"]
