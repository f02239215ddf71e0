"""``f2loopy check`` on a module whose default is PRIVATE and whose data are
made PUBLIC by an attribute (``real, allocatable, public :: r(:,:)``), as the
Allen-Tildesley MD modules write them (issue 27, measure stop): the harness
``use``s them; before, it took them for PRIVATE and crashed aliasing an
allocatable array by its symbol.  A PRIVATE allocatable array is reached
through accessors compiled into the module."""

from __future__ import annotations

import pytest
from check_util import check_text as _check
from check_util import needs_check

from f2loopy.verify.fortran import module_access

pytestmark = [needs_check, pytest.mark.differential]

CHAIN = """module chain_m
  implicit none
  private
  public :: zero_cm
  integer, public :: n
  real, dimension(:,:), allocatable, public :: r   ! positions (3,n)
  real, dimension(:,:), allocatable, public :: v
contains
  subroutine zero_cm
    real, dimension(3) :: c
    c = sum(r, dim=2) / real(n)
    r = r - spread(c, dim=2, ncopies=n)
    c = sum(v, dim=2) / real(n)
    v = v - spread(c, dim=2, ncopies=n)
  end subroutine zero_cm
end module chain_m
"""


def test_public_attributes_under_a_private_default():
    default, private, public, procs = module_access(CHAIN)["chain_m"]
    assert (default, private, public, procs) == ("private", set(), {"zero_cm", "n", "r", "v"},
                                                 ["zero_cm"])


def test_check_reaches_public_allocatable_arrays(tmp_path):
    _, res = _check(tmp_path, CHAIN)
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[1:4] == [
        "zero_cm", "  chain_m.r(3,4) float32  max |error| 0  ok",
        "  chain_m.v(3,4) float32  max |error| 0  ok"]


def test_a_private_allocatable_array_is_reached_through_accessors(tmp_path):
    # (before the merge of allocatable components, the harness crashed here)
    text = CHAIN.replace("allocatable, public :: r", "allocatable :: r")
    assert "r" not in module_access(text)["chain_m"][2]
    _, res = _check(tmp_path, text)
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[1:4] == [
        "zero_cm", "  chain_m.r(3,4) float32  max |error| 0  ok",
        "  chain_m.v(3,4) float32  max |error| 0  ok"]
