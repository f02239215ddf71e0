"""``f2loopy check`` on shapes of code seen in real projects (issue 27): the
kernels around an unnamed main program, loop variables that are arguments."""

from __future__ import annotations

from check_util import check_text, needs_check
from shared_kernels import LOOP_VARIABLES, UNNAMED_MAIN


@needs_check
def test_loop_variables_as_arguments_match_gfortran(tmp_path):
    _, res = check_text(tmp_path, LOOP_VARIABLES, "--size", "n=9", name="lv.f90")
    assert res.exit_code == 0, res.output
    assert "count_to" in res.output and "grid_state.j" in res.output and " i " in res.output


@needs_check
def test_kernels_around_an_unnamed_main_program_match_gfortran(tmp_path):
    _, res = check_text(tmp_path, UNNAMED_MAIN, name="lb.f")
    assert res.exit_code == 0, res.output
    assert "relax" in res.output and "shift" in res.output
