"""CloverLeaf-style hydro kernels under ``--transform auto`` (issue 25): for
each kernel of ``samples/hydro2d``, which loops auto runs in parallel (the
loop nests an OpenMP version runs in parallel), the located reason where a
loop stays sequential, and the translations against gfortran."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.frontend import parse_fortran
from f2loopy.query import loop_dependences

from util import needs_gfortran

ROOT = Path(__file__).resolve().parents[2]
STEPS = ROOT / "samples" / "hydro2d" / "hydro_steps.f90"
KERNELS = ROOT / "samples" / "hydro2d" / "hydro_kernels.f90"


def _verdicts(path: Path) -> dict:
    tu = parse_fortran(path.read_text(), path.name)
    return {k.name: {x: (v.parallel, v.reason) for x, v in loop_dependences(k).items()}
            for k in tu}


def test_which_loops_carry_no_dependence():
    v = _verdicts(STEPS)
    both = {"k": (True, ""), "j": (True, "")}
    # per-cell scalars (also those assigned in both branches of an IF on the
    # flux's sign, and the upwind indices) are private to the cell
    for name in ("ideal_gas", "accelerate", "advec_mom"):
        assert v[name] == both, name
    for name in ("flux_calc", "advec_cell"):
        assert v[name] == {**both, "k_1": (True, ""), "j_1": (True, "")}, name
    # the halo's depth loops copy cells onto cells of the same row (column)
    # for every extent of the interior, also an empty one: OpenMP runs the
    # other loop of each nest in parallel, as auto does
    assert v["update_halo"] == {
        "k": (True, ""), "j": (False, "carries a dependence on 'field' (lines 288 and 288)"),
        "k_1": (False, "carries a dependence on 'field' (lines 294 and 294)"),
        "j_1": (True, "")}
    # the minimum with its location: a reduction (the recipe's plan
    # reduction, below), which no loop alone can run in parallel
    why = "carries a dependence on 'dt_min_val' (lines 269 and 270)"
    assert v["calc_dt"] == {"k": (False, why), "j": (False, why)}


def test_reductions_into_several_scalars_carry_a_dependence():
    v = _verdicts(KERNELS)["field_summary"]
    assert v["k"] == v["j"] == (False, "carries a dependence on 'ie' (lines 148 and 148)")
    assert v["kv"] == (False, "carries a dependence on 'vsqrd': line 141 may read the value "
                              "of an earlier iteration")


@pytest.mark.usefixtures("sandbox_process")
def test_recipe_maps_every_parallel_nest(tmp_path):
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-o", str(tmp_path),
                                    str(STEPS)])
    assert res.exit_code == 0, res.output
    lines = [line for line in res.output.splitlines() if line.startswith("auto:")]
    assert lines == [
        "auto: kernel 'ideal_gas': plan grid, k -> g.1/l.1, j -> g.0/l.0",
        # the scalar halfdt = 0.5*dt before the nest runs in a launch of its own
        "auto: kernel 'accelerate': plan grid, k -> g.1/l.1, j -> g.0/l.0; 1 global barrier",
        "auto: kernel 'flux_calc': plan grid, k -> g.1/l.1, j -> g.0/l.0, k_1 -> g.1/l.1, "
        "j_1 -> g.0/l.0",
        "auto: kernel 'advec_cell': no plan of its launches was taken; one launch",
        "auto: kernel 'advec_cell': plan grid, k -> g.1/l.1, j -> g.0/l.0, k_1 -> g.1/l.1, "
        "j_1 -> g.0/l.0",
        "auto: kernel 'advec_mom': plan grid, k -> g.1/l.1, j -> g.0/l.0",
        # the minimum and where it first occurs: each work-item's, then
        # each group's to scratch arrays; a second launch combines the groups'
        "auto: kernel 'calc_dt': plan reduction, k -> g.1 (128 groups), j -> g.0/l.0 "
        "(8 groups of 128; 1024, then one); parallel reduction of dt_min_val (min, located: "
        "jldt, kldt); 1 global barrier",
        # the rows of the left and right halo, then the columns of the bottom
        # and top (one launch per depth: the host runs k_1)
        "auto: kernel 'update_halo': plan grid, k -> g.0/l.0, j_1 -> g.0/l.0; "
        "2 global barriers, host loop k_1"]


@pytest.mark.usefixtures("sandbox_process")
def test_reductions_into_several_scalars_run_in_one_group(tmp_path):
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-o", str(tmp_path),
                                    str(KERNELS)])
    assert res.exit_code == 0, res.output
    assert "auto: kernel 'field_summary': plan reduction, k -> g.1 (128 groups), j -> " \
        "g.0/l.0 (8 groups of 128; 1024, then one); parallel reduction of ie (sum), ke (sum), " \
        "mass (sum), press (sum), vol (sum); 1 global barrier" in res.output.splitlines()


@needs_gfortran
@pytest.mark.opencl
def test_check_transform_auto_kernels():
    args = ["--size", "x_min=1", "--size", "x_max=11", "--size", "y_min=1", "--size",
            "y_max=7"]
    res = CliRunner().invoke(main, ["check", "--transform", "auto", *args, str(KERNELS)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output and "NOT COVERED" not in res.output


@needs_gfortran
@pytest.mark.opencl
def test_check_transform_auto_steps():
    # fluxes of both signs reach both upwind branches; dir 1 and 2 both sweeps
    args = ["--size", "x_min=1", "--size", "x_max=11", "--size", "y_min=1", "--size",
            "y_max=7", "--size", "depth=2", "--range", "dir=1:2",
            "--range", "vol_flux_x=-1:1", "--range", "vol_flux_y=-1:1",
            "--range", "mass_flux_x=-1:1"]
    res = CliRunner().invoke(main, ["check", "--transform", "auto", *args, str(STEPS)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output and "NOT COVERED" not in res.output
