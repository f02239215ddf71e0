"""Character strings of a known length (issue 27 item 12): the local
``character*8 subnam`` of an ``ilaenv``-style block-size function, upper-cased
character by character, cut into substrings and compared with routine names;
the routine name and ``side // trans`` options it is passed.  IR facts, the
exact messages for what stays refused, and differential tests against gfortran
on Fortran written in LAPACK's style."""

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.frontend.strings import compare_strings, fitted, flag_code
from f2loopy.ir.roles import Character, Dummy
from util import needs_gfortran, run_both

BLOCK_SIZE = """
      INTEGER FUNCTION IBLK( ISPEC, NAME, OPTS, N1 )
      CHARACTER*( * )    NAME, OPTS
      INTEGER            ISPEC, N1
      INTEGER            I, IC, NB
      CHARACTER          C1*1, C2*2, C3*3, C4*2, SUBNAM*8
      INTRINSIC          CHAR, ICHAR, LEN
      IBLK = 1
      SUBNAM = NAME
      IC = ICHAR( SUBNAM( 1: 1 ) )
      IF( IC.GE.97 .AND. IC.LE.122 ) THEN
         SUBNAM( 1: 1 ) = CHAR( IC-32 )
         DO 20 I = 2, 6
            IC = ICHAR( SUBNAM( I: I ) )
            IF( IC.GE.97 .AND. IC.LE.122 )
     $         SUBNAM( I: I ) = CHAR( IC-32 )
   20    CONTINUE
      END IF
      C1 = SUBNAM( 1: 1 )
      IF( .NOT.( C1.EQ.'S' .OR. C1.EQ.'D' ) ) RETURN
      C2 = SUBNAM( 2: 3 )
      C3 = SUBNAM( 4: 6 )
      C4 = C3( 2: 3 )
      NB = 1
      IF( C2.EQ.'GE' ) THEN
         IF( C3.EQ.'QRF' ) THEN
            NB = 32
         ELSE IF( C3.EQ.'TRF' ) THEN
            NB = 64
         END IF
      ELSE IF( SUBNAM( 2: 6 ).EQ.'ORMQR' ) THEN
         IF( OPTS.EQ.'LN' .OR. OPTS( 1: 1 ).EQ.'l' ) THEN
            NB = 16
         ELSE
            NB = 8
         END IF
      ELSE IF( C2.EQ.'OR' .AND. C4.EQ.'LQ' ) THEN
         NB = 4 + N1
      END IF
      IF( LEN( SUBNAM ).NE.8 .OR. LEN( NAME ).LT.6 ) NB = -1
      IBLK = NB + ISPEC*0
      RETURN
      END

      SUBROUTINE blks( SIDE, TRANS, N, NB )
      CHARACTER          SIDE, TRANS
      INTEGER            N, NB( 6 )
      INTEGER            IBLK
      EXTERNAL           IBLK
      NB( 1 ) = IBLK( 1, 'DGEQRF', ' ', N )
      NB( 2 ) = IBLK( 1, 'dgetrf', ' ', N )
      NB( 3 ) = IBLK( 1, 'DORMQR', SIDE // TRANS, N )
      NB( 4 ) = IBLK( 1, 'ZGEQRF', ' ', N )
      NB( 5 ) = IBLK( 1, 'sOrGlQ', ' ', N )
      NB( 6 ) = IBLK( 1, 'DGE', ' ', N )
      END
"""


@needs_gfortran
@pytest.mark.parametrize("side, trans", [("L", "N"), ("L", "T"), ("R", "N"), ("l", "n"),
                                         ("Left", "Transpose")])
def test_block_size_function_as_gfortran(side, trans, tmp_path, cl_queue):
    run_both(BLOCK_SIZE, "blks", [side, trans, 3, np.zeros(6, np.int32)], tmp_path,
             cl_queue, filename="blk.f")


def test_string_locals_are_private_arrays_of_codes():
    knl = parse_fortran(BLOCK_SIZE, "blk.f")["blks"]
    temps = dict(knl.temporaries)
    # one inlined copy per call: each has its own 8 characters
    subnams = sorted(n for n in temps if n.lower().startswith("subnam_chars"))
    assert len(subnams) == 6
    assert all(temps[n].shape == (8,) and temps[n].lower_bounds == (1,)
               and temps[n].dtype == np.int32 for n in subnams)
    assert temps["C3_chars"].shape == (3,)
    # C1 (character*1) stays a flag: one code
    assert temps["C1"].shape == ()


SUBROUTINE = "      subroutine s(trans, n, x)\n      character trans\n      integer n\n" \
    "      real x(n)\n{decls}{body}      end\n"


def _error(body, decls):
    with pytest.raises(FortranError) as info:
        parse_fortran(SUBROUTINE.format(decls=decls, body=body), "t.f")
    return info.value.format().splitlines()[0]


@pytest.mark.parametrize("body, decls, message", [
    ("      name = 'DGEQRF'\n      if (name(n:4) .eq. 'AB') x(1) = 1\n",
     "      character*6 name\n", "t.f:7:11: error: substring name(n:4) is not supported: its "
     "length must be known when translating (constant bounds, or name(i:i))"),
    ("      name = 'DGEQRF'\n      if (name(5:8) .eq. 'AB') x(1) = 1\n",
     "      character*6 name\n", "t.f:7:11: error: substring name(5:8) is out of bounds (the "
     "string has 6 character(s))"),
    ("      name = 'DGEQRF'\n      if (name .lt. 'DGE') x(1) = 1\n",
     "      character*6 name\n", "t.f:7:16: error: strings can only be compared with '==' "
     "and '/=' in a kernel, not '.LT.'"),
    ("      name = 'DGEQRF'\n      if (name .eq. n) x(1) = 1\n",
     "      character*6 name\n", "t.f:7:21: error: 'n' is compared with a string but is not "
     "a character of a known length"),
    ("      name = n\n", "      character*6 name\n", "t.f:6:7: error: 'name' is a "
     "character: only a character of a known length (a constant, a character variable, a "
     "substring, a concatenation, char(i)) can be assigned to it in a kernel"),
    ("      name = 'DGEQRF'\n      x(1) = name(1:2)\n", "      character*6 name\n",
     "t.f:7:14: error: character variable 'name' can only be compared (==, /=), used in "
     "'select case', or passed to lsame or ichar in a kernel"),
])
def test_string_uses_that_stay_refused(body, decls, message):
    assert _error(body, decls) == message


def test_concatenation_needs_known_lengths():
    src = ("      subroutine s(opts, n, x)\n      character*(*) opts\n      integer n\n"
           "      real x(n)\n      character*4 both\n      both = opts // 'N'\n"
           "      if (both .eq. 'LN') x(1) = 1\n      end\n")
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "t.f")
    assert info.value.format().splitlines()[0] == (
        "t.f:6:19: error: 'opts' in a concatenation is not a character of a known length (a "
        "constant, a local character variable, or a one-character argument)")


def test_entity_lengths_are_read():
    """``character c*2`` is a character of length 2, as ``character*2 c``
    (the entity's own length was ignored: a kernel saw one character)."""
    src = ("      subroutine dl(c, n, x)\n      character d*3, c*2\n      integer n\n"
           "      double precision x(*)\n      if (c .eq. 'N') x(1) = 1\n      end\n")
    knl = parse_fortran(src, "dl.f")["dl"]
    assert knl.arg_dict["c"].role == Dummy(character=Character(length=2))


ENTITY_LENGTH = """
      subroutine dl2(c, n, x)
      character c*2
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
@pytest.mark.parametrize("actual", ["N   X", "NX", "N"])
def test_entity_length_dummy_as_gfortran(actual, tmp_path, cl_queue):
    run_both(ENTITY_LENGTH, "dl2", [actual, 1, np.zeros(2)], tmp_path, cl_queue,
             filename="dl2.f")


def test_folding_helpers():
    assert fitted((65, 66, 67), 2) == (65, 66)
    assert fitted((65,), 3) == (65, 32, 32)
    assert compare_strings((68, 71, 69), (68, 71, 69, 32), True) is np.bool_(True)
    assert compare_strings((68, 71), (68, 72), True) is np.bool_(False)
    assert compare_strings((68, 71), (68, 72), False) is np.bool_(True)
    assert flag_code((78, 32, 32)) == 78
    assert flag_code((78, 111)) == 78 + 256
    assert flag_code(()) == 32


IEEE_CHECK = """
      INTEGER          FUNCTION IECK( ISPEC, ZERO, ONE )
      USE, INTRINSIC :: IEEE_ARITHMETIC, ONLY:
     &                                     IEEE_SUPPORT_INF,
     &                                     IEEE_SUPPORT_NAN
      INTEGER            ISPEC
      REAL               ONE, ZERO
      IECK = 1
      IF ( .NOT.IEEE_SUPPORT_INF(ONE) ) THEN
         IECK = 0
         RETURN
      END IF
      IF( ISPEC.EQ.0 ) RETURN
      IF( .NOT.IEEE_SUPPORT_NAN(ONE) ) IECK = 0
      RETURN
      END

      subroutine ieck2( K )
      INTEGER K( 2 ), IECK
      K( 1 ) = IECK( 0, 0.0, 1.0 ) + 2
      K( 2 ) = IECK( 1, 0.0, 1.0 )
      END
"""


def test_ieee_support_inquiries_are_true():
    """ieeeck's ieee_arithmetic inquiries (LAPACK's ilaenv calls it for
    ISPEC 10 and 11) hold for a kernel's real types."""
    knl = parse_fortran(IEEE_CHECK, "ie.f")["ieck2"]
    assert "IEEE_SUPPORT" not in str(knl).upper()


@needs_gfortran
def test_ieee_support_inquiries_as_gfortran(tmp_path, cl_queue):
    run_both(IEEE_CHECK, "ieck2", [np.zeros(2, np.int32)], tmp_path, cl_queue,
             filename="ie.f")


BLOCKED = BLOCK_SIZE.split("      SUBROUTINE blks")[0] + """
      SUBROUTINE blocked( SIDE, TRANS, N, X )
      CHARACTER          SIDE, TRANS
      INTEGER            N
      DOUBLE PRECISION   X( * )
      INTEGER            I, J, NB
      INTEGER            IBLK
      EXTERNAL           IBLK
      NB = IBLK( 1, 'DORMQR', SIDE // TRANS, N )
      DO 20 I = 1, N, NB
         DO 10 J = I, MIN( I+NB-1, N )
            X( J ) = X( J ) + DBLE( I )
   10    CONTINUE
   20 CONTINUE
      END
"""


@needs_gfortran
@pytest.mark.parametrize("side, trans", [("L", "N"), ("R", "T")])
def test_block_size_steps_a_blocked_loop_as_gfortran(side, trans, tmp_path, cl_queue):
    """The block size chosen from the routine name and options is the step of
    a blocked loop (a run-time step), as LAPACK's dormqr uses ilaenv's."""
    run_both(BLOCKED, "blocked", [side, trans, 40, np.zeros(40)], tmp_path, cl_queue,
             filename="blocked.f")


PASSED_ON = """
      INTEGER FUNCTION KIND2( OPTS )
      CHARACTER*( * )    OPTS
      KIND2 = LEN( OPTS )
      IF( OPTS.EQ.'N' ) KIND2 = KIND2 + 10
      IF( OPTS( 1: 1 ).EQ.'t' ) KIND2 = KIND2 + 20
      END

      subroutine passon( TRANS, K )
      CHARACTER          TRANS
      INTEGER            K( 2 ), KIND2
      K( 1 ) = KIND2( TRANS )
      K( 2 ) = KIND2( TRANS // 'X' )
      END
"""


@needs_gfortran
@pytest.mark.parametrize("trans", ["N", "t", "Transpose"])
def test_one_character_flag_passed_to_a_string_dummy(trans, tmp_path, cl_queue):
    """A character*1 argument passed on to a character*(*) dummy is a string
    of one character there (len 1, compared padded with blanks)."""
    run_both(PASSED_ON, "passon", [trans, np.zeros(2, np.int32)], tmp_path, cl_queue,
             filename="passon.f")


EDGES = """
      subroutine edge( FLAG, N, K )
      CHARACTER          FLAG
      INTEGER            N, K( 8 )
      CHARACTER*4        A
      CHARACTER*6        B
      CHARACTER*12       C
      A = 'DORMQR_LONGNAME'
      K( 1 ) = 0
      IF( A.EQ.'DORM' ) K( 1 ) = 1
      B = 'ABCDEF'
      B( 1: 3 ) = B( 2: 4 )
      IF( B.EQ.'BCDDEF' ) K( 2 ) = 1
      C = A // FLAG // B
      IF( C( 5: 5 ).EQ.'x' ) K( 3 ) = 1
      IF( C.EQ.'DORMxBCDDEF' ) K( 4 ) = 2
      IF( A.NE.C ) K( 5 ) = ICHAR( C( 6: 6 ) )
      SELECT CASE( C( 5: 5 ) )
      CASE( 'x' )
         K( 6 ) = 7
      CASE DEFAULT
         K( 6 ) = 9
      END SELECT
      K( 7 ) = LEN( C ) + N
      A = C( N: N+3 )
      IF( A.EQ.'RMxB' ) K( 8 ) = 1
      END
"""


@needs_gfortran
@pytest.mark.parametrize("flag, n", [("x", 3), ("y", 2), ("x", 9)])
def test_string_edges_as_gfortran(flag, n, tmp_path, cl_queue):
    """Truncation, an overlapping substring assignment, joining a string, a
    flag and a string, select case on a substring, and a substring whose
    bounds are a constant apart (c(n:n+3))."""
    run_both(EDGES, "edge", [flag, n, np.zeros(8, np.int32)], tmp_path, cl_queue,
             filename="edge.f")
