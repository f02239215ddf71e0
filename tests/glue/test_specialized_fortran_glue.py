"""The Fortran glue of a kernel compiled per value of an argument (runtime
specialisation, ``--transform auto`` on a column routine whose temporaries
are dimensioned by the levels): called with two level counts and again with
the first, each call matches the original subroutine (the glue rebuilds its
cached kernel when the value changes; the runtime keeps one program per
build options)."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from fortran_util import (
    assert_all_ok, build_runtime, compile_and_run, needs_toolchain)

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]

LEVELS = Path(__file__).resolve().parents[2] / "samples" / "columns" / "column_levels.f90"

MAIN = """
program main
  use checks
  use level_temps_cl_mod
  implicit none
  integer, parameter :: klon = 11, kidia = 2, kfdia = 10
  integer :: klev, k, st
  do k = 1, 3
    klev = merge(6, 9, k /= 2)
    call one(klev)
  end do
  call done()
contains
  subroutine one(klev)
    integer, intent(in) :: klev
    double precision :: pt(klon, klev), pq(klon, klev, 3), paph(klon, klev + 1)
    double precision :: t1(klon, klev, 3), t2(klon, klev, 3), f1(klon, klev + 1), f2(klon, klev + 1)
    character(len=40) :: what
    call random_number(pt); call random_number(pq); call random_number(paph)
    call random_number(t1); t2 = t1
    f1 = 0; f2 = 0
    call level_temps(klon, klev, kidia, kfdia, pt, pq, paph, t1, f1)
    call level_temps_cl(klon, klev, kidia, kfdia, pt, pq, paph, t2, f2, st)
    write(what, '(a, i0)') "klev = ", klev
    call check(st == F2L_OK .and. maxval(abs(t1 - t2)) < 1d-12 .and. &
               maxval(abs(f1(kidia:kfdia, :) - f2(kidia:kfdia, :))) < 1d-12, trim(what))
  end subroutine
end program
"""


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


def test_fortran_glue_builds_per_level_count(tmp_path, runtime):
    path = tmp_path / "column_levels.f90"
    path.write_text(LEVELS.read_text())
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D", "block=4",
                                    "-o", str(tmp_path), str(path)])
    assert res.exit_code == 0, res.output
    assert "compiled per value of klev" in res.output
    sources = [path, tmp_path / "column_levels_cl.c", tmp_path / "column_levels_cl.f90"]
    proc = compile_and_run(tmp_path, runtime, sources, MAIN)
    assert_all_ok(proc, 3)
