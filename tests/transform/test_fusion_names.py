"""fuse_kernels with suffixes renames only the names that clash, as loopy does
(issue 19: the paper's level-6 script tells refFluxS's own temporaries from
the clashing ones by their names)."""

from __future__ import annotations

import pytest

import f2loopy
from f2loopy.bench.statistics import kernel_statistics
from shared_kernels import paper_level_8

TWO = """
subroutine first(n, x, y)
  implicit none
  integer n, i
  real x(n), y(n), t, a
  do i = 1, n
    t = x(i)
    a = 2.0 * t
    y(i) = a + t
  end do
end subroutine

subroutine second(n, x, y)
  implicit none
  integer n, i
  real x(n), y(n), t, b
  do i = 1, n
    t = y(i)
    b = 3.0 * t
    x(i) = b - t
  end do
end subroutine
"""


def test_only_clashing_locals_get_the_suffix():
    k1, k2 = f2loopy.parse_fortran(TWO, "t.f90")
    f = f2loopy.fuse_kernels([k1, k2], suffixes=["_r", "_s"])
    assert sorted(f.temporaries) == ["a", "b", "t_r", "t_s"]
    f = f2loopy.assignment_to_subst(f, "a")
    f = f2loopy.assignment_to_subst(f, "t_s")
    assert sorted(f.substitutions) == ["a_subst", "t_s_subst"]
    # without suffixes the later kernel's locals are renamed when any clashes
    f = f2loopy.fuse_kernels([k1, k2])
    assert sorted(f.temporaries) == ["a", "b_1", "t", "t_1"]


@pytest.mark.usefixtures("sandbox_process")     # (the first use translates)
def test_paper_level_8_moves_what_loopy_moves():
    r = paper_level_8()        # translate_file(volume.f90, defines={"Nq": 8}); no record
    cps = dict(r.checkpoints)
    # refFluxS's geometry factors and udotGradS are precomputed at level 6 like refFluxR's
    assert {"g11", "g12", "udotGradR", "udotGradS"} <= set(cps["level 6"][0].temporaries)
    nodes = 6910 * 8 ** 3
    # bytes per (e, k, j, i) node: the paper's level 8 moves 0.538 GB at Ne=6910
    assert kernel_statistics(cps["level 6"][0], {"Ne": 6910}, formulas=False).bytes / nodes \
        == 1592.5
    assert kernel_statistics(cps["level 8"][0], {"Ne": 6910}, formulas=False).bytes / nodes \
        == 152.5
