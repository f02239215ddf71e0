"""A forward ``goto`` into the statements a backward ``goto`` repeats (issue
27 item 12): LAPACK's reverse-communication routines (dlacn2) return to the
caller in the middle of an iteration and, called again, jump back to where
they were with a computed ``goto`` on a saved state.  Differential tests
against gfortran on a routine written in that style, and the IR's shape."""

import numpy as np
import pytest

from f2loopy.frontend import parse_fortran
from util import farray, needs_gfortran, run_both

RCOMM = """
      SUBROUTINE rcomm( N, X, KASE, ISAVE, EST )
      INTEGER            N, KASE, ISAVE( 3 )
      DOUBLE PRECISION   X( * ), EST
      INTEGER            I
      IF( KASE.EQ.0 ) THEN
         DO 10 I = 1, N
            X( I ) = 1.0D0 / DBLE( N )
   10    CONTINUE
         KASE = 1
         ISAVE( 1 ) = 1
         RETURN
      END IF
      GO TO ( 20, 70, 110 )ISAVE( 1 )
   20 CONTINUE
      EST = X( 1 )
      ISAVE( 3 ) = 1
   50 CONTINUE
      DO 60 I = 1, N
         X( I ) = X( I ) + DBLE( ISAVE( 3 ) )
   60 CONTINUE
      ISAVE( 1 ) = 2
      KASE = 2
      RETURN
   70 CONTINUE
      EST = EST + X( N )
      IF( EST.GT.100.0D0 )
     $   GO TO 120
      IF( EST.GT.50.0D0 )
     $   GO TO 110
      EST = EST*2.0D0
  110 CONTINUE
      ISAVE( 3 ) = ISAVE( 3 ) + 1
      IF( ISAVE( 3 ).LT.5 )
     $   GO TO 50
  120 CONTINUE
      KASE = 0
      RETURN
      END
"""


@needs_gfortran
@pytest.mark.parametrize("kase, state, count, est", [
    (0, 1, 1, 0.0), (1, 1, 1, 0.0), (1, 2, 1, 3.0), (1, 2, 4, 3.0), (1, 2, 2, 99.5),
    (1, 3, 2, 1.0), (1, 3, 4, 1.0), (1, 4, 1, 2.0), (1, 0, 3, 2.0)])
def test_jump_into_repeated_statements_as_gfortran(kase, state, count, est, tmp_path,
                                                   cl_queue):
    """Entered at 70 or 110 (inside the statements 'go to 50' repeats), at 20
    (before them) or past the computed goto's range; the repetitions after a
    jump in run the whole statements again."""
    isave = np.array([state, 0, count], np.int32)
    run_both(RCOMM, "rcomm", [4, farray(4, np.float64, seed=3), kase, isave, est],
             tmp_path, cl_queue, filename="rcomm.f")


def test_jump_in_is_a_flag_guarding_the_statements_before_the_label():
    knl = parse_fortran(RCOMM, "rcomm.f")["rcomm"]
    flags = {name for name in dict(knl.temporaries) if name.startswith("goto_")}
    assert {"goto_70", "goto_110"} <= flags
    # the flag of the goto to 110 inside the repeated statements is cleared
    # on entering them, also when a goto jumped in at 70 (a stale flag would
    # skip 'est = est*2')
    inner = sorted(f for f in flags if f.startswith("goto_110_"))
    assert inner
    (init,) = [i for i in knl.instructions if i.assignee_name == inner[0]
               and str(i.expression) in ("False", "false", "0")]
    assert not any("goto_70" in str(q) for q in init.predicates)
    # the loop over the statements 'go to 50' repeats runs sequentially
    (loop,) = [n for n in knl.all_inames() if n.startswith("goto50_k")]
    assert knl.loop_exits[loop].sequential is not None
