"""Implied-do lists in ``data`` statements (LAPACK's dlaruv initialises its
128 x 4 multiplier table row by row: ``data (mm(1, j), j = 1, 4) / ... /``):
the elements they name in order, nested ones too; a zero step is an error."""

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from util import needs_gfortran, run_both

TABLE = """
      subroutine ruv( n, x )
      integer n
      double precision x( n )
      integer i, j, mm( 3, 4 )
      data ( mm( 1, j ), j = 1, 4 ) / 494, 322, 2508, 2549 /
      data ( mm( 2, j ), j = 4, 1, -1 ) / 1, 2, 3, 4 /
      data ( ( mm( i, j ), i = 3, 3 ), j = 1, 4 ) / 4*7 /
      do 10 i = 1, n
         x( i ) = mm( 1 + mod( i, 3 ), 1 + mod( i, 4 ) )
   10 continue
      end
"""


def test_data_implied_do_fills_the_named_elements():
    knl = parse_fortran(TABLE, "ruv.f")["ruv"]
    table = dict(knl.temporaries)["mm"].initializer
    assert table.tolist() == [[494, 322, 2508, 2549], [4, 3, 2, 1], [7, 7, 7, 7]]


@needs_gfortran
def test_data_implied_do_as_gfortran(tmp_path, cl_queue):
    run_both(TABLE, "ruv", [12, np.zeros(12)], tmp_path, cl_queue, filename="ruv.f")


def test_data_implied_do_with_zero_step_is_an_error():
    src = TABLE.replace("j = 4, 1, -1", "j = 4, 1, 0")
    with pytest.raises(FortranError) as info:
        parse_fortran(src, "ruv.f")
    assert info.value.format().splitlines()[0] == (
        "ruv.f:7:36: error: the step of an implied-do is zero")
