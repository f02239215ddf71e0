"""The automatic recipe (``--transform auto``, :mod:`f2loopy.transform.auto`):
what it decides on small kernels (exact messages), its options, and
``f2loopy check --transform auto`` on the PolyBench-style samples (PoCL
against gfortran)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.diagnostics import TransformError
from f2loopy.frontend import parse_fortran
from f2loopy.query import (
    accumulated_arrays, grid_axes, has_choice_of_second_axis, outermost_loops, loop_dependences, parallel_loops, plan_auto, reused_tiles)

from transform_util import KeptCode
from util import needs_gfortran

ROOT = Path(__file__).resolve().parents[2]
POLYBENCH = ROOT / "samples" / "polybench"


def _kernel(body: str, decls: str, args: str = "n, m, a, b, c"):
    src = f"subroutine t({args})\n  implicit none\n{decls}\n{body}\nend subroutine t\n"
    return parse_fortran(src, "t.f90")["t"]


MATMUL = _kernel("""
  do j = 1, m
    do i = 1, n
      c(i, j) = 0.0d0
      do k = 1, m
        c(i, j) = c(i, j) + a(i, k) * b(k, j)
      end do
    end do
  end do""", """
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m), b(m, m)
  double precision, intent(out) :: c(n, m)
  integer :: i, j, k""")


# {{{ step 1: dependences

def _verdicts(knl):
    return {x: (v.parallel, v.reason) for x, v in loop_dependences(knl).items()}


def test_matmul_reduction_loop_is_sequential():
    assert _verdicts(MATMUL) == {
        "j": (True, ""), "i": (True, ""),
        "k": (False, "carries a dependence on 'c' (lines 13 and 13)")}
    assert parallel_loops(MATMUL) == ("j", "i")


def test_recurrence_and_private_scalar():
    knl = _kernel("""
  do j = 1, m
    s = 0.0d0
    do i = 2, n
      s = s + a(i, j)
      a(i, j) = a(i - 1, j) + s
    end do
    b(j) = s
  end do""", """
  integer, intent(in) :: n, m
  double precision, intent(inout) :: a(n, m)
  double precision, intent(out) :: b(m)
  double precision :: s
  integer :: i, j""", "n, m, a, b")
    # s is written first in every iteration of j: private to it
    assert _verdicts(knl) == {
        "j": (True, ""),
        "i": (False, "carries a dependence on 'a' (lines 14 and 14)")}


def test_scalar_leaving_the_loop_is_not_private():
    knl = _kernel("""
  s = 0.0d0
  do i = 1, n
    s = a(i)
  end do
  b(1) = s""", """
  integer, intent(in) :: n
  double precision, intent(in) :: a(n)
  double precision, intent(out) :: b(1)
  double precision :: s
  integer :: i""", "n, a, b")
    # the message says which read sees the last iteration's value (it used to
    # name only the assignment, "(lines 12 and 12)")
    assert _verdicts(knl) == {"i": (False, "carries a dependence on 's': line 14 reads the "
                                    "value the loop leaves in it (each iteration would "
                                    "need its own copy)")}


def test_triangular_loop_and_early_exit_stay_sequential():
    knl = _kernel("""
  do i = 1, n
    do j = i, n
      c(i, j) = a(i, j)
    end do
  end do
  do k = 1, n
    if (a(k, 1) < 0) exit
    b(k, 1) = 1.0d0
  end do""", """
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, n)
  double precision, intent(out) :: b(n, 1), c(n, n)
  integer :: i, j, k""")
    v = _verdicts(knl)
    assert v["i"] == (True, "")
    assert v["j"] == (False, "has bounds that depend on other loops or on computed values")
    assert v["k"] == (False, "stops early (exit, do while, return or a sequential loop)")

# }}}


# {{{ step 2 and 3: mapping and plans

def test_first_subscript_goes_to_axis_0_and_k_tiles_are_reused():
    axes = grid_axes(MATMUL, parallel_loops(MATMUL))
    assert axes == {"j": 1, "i": 0}
    assert reused_tiles(MATMUL, axes) == [("a", "k", ("i", "k")), ("b", "k", ("k", "j"))]
    # c(j, i): j indexes the fastest subscript, so j gets axis 0
    knl = _kernel("""
  do i = 1, n
    do j = 1, m
      c(j, i) = a(j, i)
    end do
  end do""", """
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(m, n)
  double precision, intent(out) :: c(m, n)
  integer :: i, j""", "n, m, a, c")
    assert grid_axes(knl, parallel_loops(knl)) == {"i": 1, "j": 0}


def test_outermost_loops_plan():
    kept = KeptCode()
    assert outermost_loops(MATMUL, parallel_loops(MATMUL)) == {"j": 0}
    out = plan_auto(MATMUL, plans=["outer"], verify=kept)
    assert out.summary() == "auto: kernel 't': plan outer, j -> g.0; registers for c"
    assert "get_group_id(0)" in kept.of(out.kernel).source


def test_second_axis_inner_or_outer():
    knl = _kernel("""
  do k = 2, n - 1
    do j = 2, n - 1
      do i = 2, n - 1
        b(i, j, k) = a(i, j, k - 1) + a(i, j - 1, k) + a(i - 1, j, k)
      end do
    end do
  end do""", """
  integer, intent(in) :: n
  double precision, intent(in) :: a(n, n, n)
  double precision, intent(out) :: b(n, n, n)
  integer :: i, j, k""", "n, a, b")
    loops = parallel_loops(knl)
    assert loops == ("k", "j", "i") and has_choice_of_second_axis(knl, loops)
    assert grid_axes(knl, loops) == {"j": 1, "i": 0}
    assert grid_axes(knl, loops, second="outer") == {"k": 1, "i": 0}
    assert not has_choice_of_second_axis(MATMUL, parallel_loops(MATMUL))
    with pytest.raises(TransformError, match="auto: the second grid axis is 'inner' or "
                                             "'outer', not 'middle'"):
        grid_axes(knl, loops, second="middle")


def test_matmul_plan_uses_local_memory():
    kept = KeptCode()
    out = plan_auto(MATMUL, tile=(16, 8), verify=kept)
    assert out.summary() == ("auto: kernel 't': plan grid+local, j -> g.1/l.1, "
                             "i -> g.0/l.0; local memory for a, b; registers for c")
    src = kept.of(out.kernel).source
    assert "reqd_work_group_size(16, 8, 1)" in src
    assert "__local double a_fetch" in src and "barrier(CLK_LOCAL_MEM_FENCE)" in src
    # c(i, j) is accumulated in a private variable and stored once
    assert "double c_buf;" in src and "c_buf = c_buf + a_fetch[" in src
    plain = plan_auto(MATMUL, tile=16, prefetch=False, registers=False, verify=kept)
    assert plain.summary() == "auto: kernel 't': plan grid, j -> g.1/l.1, i -> g.0/l.0"
    assert "c_buf" not in kept.of(plain.kernel).source


def test_accumulated_arrays():
    assert accumulated_arrays(MATMUL) == ["c"]
    knl = _kernel("""
  do i = 1, n
    b(i) = a(i)
  end do""", """
  integer, intent(in) :: n
  double precision, intent(in) :: a(n)
  double precision, intent(out) :: b(n)
  integer :: i""", "n, a, b")
    assert accumulated_arrays(knl) == []


def test_nests_that_exchange_data_fall_back_to_one_group():
    knl = _kernel("""
  do i = 1, n
    b(i) = 2 * a(i)
  end do
  do i = 1, n
    c(i, 1) = b(n + 1 - i)
  end do""", """
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n)
  double precision, intent(out) :: b(n), c(n, 1)
  integer :: i""")
    out = plan_auto(knl, verify=generate_code)
    assert out.plan == "one-group"
    assert out.summary() == ("auto: kernel 't': plan one-group, i -> l.0 (one group of 128), "
                             "i_1 -> l.0 (one group of 128)")
    assert out.notes[0].startswith("plan grid refused: parallel inames ")
    assert "carry a dependence on 'b'" in out.notes[0]
    # without verify the first plan is taken: the caller's responsibility
    assert plan_auto(knl).plan == "grid"


def test_nothing_parallel_stays_sequential_with_notes():
    knl = _kernel("""
  do i = 2, n
    a(i) = a(i - 1) * 0.5d0 + a(i)
  end do""", """
  integer, intent(in) :: n
  double precision, intent(inout) :: a(n)
  integer :: i""", "n, a")
    out = plan_auto(knl, verify=generate_code)
    assert out.kernel is knl and out.plan == "sequential"
    assert out.summary() == "auto: kernel 't' stays sequential (no loop can run in parallel)"
    assert out.notes == ("loop 'i' carries a dependence on 'a' (lines 9 and 9)",)


def test_options_are_checked():
    with pytest.raises(TransformError, match=r"auto: unknown plan 'fast' \(plans: grid\+local, grid, "
                       r"grid-1d, reduction, one-group, outer, sequential\)$"):
        plan_auto(MATMUL, plans=["fast"])
    with pytest.raises(TransformError, match="integers from 1 to 1024, not 0"):
        plan_auto(MATMUL, tile=(0, 8))
    with pytest.raises(TransformError, match="integers from 1 to 1024, not True"):
        plan_auto(MATMUL, group_size=True)
    with pytest.raises(TransformError, match="auto: prefetch is True or False, not 5$"):
        plan_auto(MATMUL, prefetch=5)


@pytest.mark.usefixtures("sandbox_process")
def test_recipe_option_errors_point_at_the_recipe(tmp_path):
    f = tmp_path / "gemm.f90"
    f.write_text((POLYBENCH / "gemm.f90").read_text())
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D", "tile=abc",
                                    "-o", str(tmp_path / "out"), str(f)])
    assert res.exit_code == 1
    assert "error: recipe 'auto': option 'tile' is a positive integer (-D tile=16), not 'abc' " \
        "(given with -D)" in res.output
    assert not (tmp_path / "out").exists()
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D", "style=fast",
                                    "-o", str(tmp_path / "out"), str(f)])
    assert res.exit_code == 1 and "error: recipe 'auto': option 'style' is 'grid' or 'outer', " \
        "not 'fast' (given with -D)" in res.output

# }}}


# {{{ the recipe from the command line

def test_recipe_is_listed_with_its_options():
    res = CliRunner().invoke(main, ["recipes"])
    assert res.exit_code == 0 and "auto" in res.output


@pytest.mark.usefixtures("sandbox_process")
def test_translate_sequential_kernel_prints_notes(tmp_path):
    f = tmp_path / "rec.f90"
    f.write_text("subroutine rec(n, a)\n  integer, intent(in) :: n\n  real :: a(n)\n"
                 "  integer :: i\n  do i = 2, n\n    a(i) = a(i - 1) + a(i)\n  end do\n"
                 "end subroutine rec\n")
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-o",
                                    str(tmp_path / "out"), str(f)])
    assert res.exit_code == 0, res.output
    assert "auto: kernel 'rec' stays sequential (no loop can run in parallel)" in res.output
    assert "note: loop 'i' carries a dependence on 'a' (lines 6 and 6)" in res.output
    assert (tmp_path / "out" / "rec.cl").exists()


def _translate(name, tmp_path, **kw):
    from f2loopy.pipeline import translate_text
    return translate_text((POLYBENCH / name).read_text(), tmp_path / name, output_dir=tmp_path,
                          transform="auto", **kw)


@pytest.mark.usefixtures("sandbox_process")
def test_tunables_are_declared_where_they_matter(tmp_path):
    assert _translate("gemm.f90", tmp_path).tunables == {
        "auto_tile0": (32, 16, 64), "auto_tile1": (8, 4, 16), "auto_prefetch": (True, False),
        "auto_style": ("grid", "outer")}
    # nests that exchange data: several launches, or one (then one parallel axis)
    assert _translate("2mm.f90", tmp_path).tunables == {
        "auto_launches": ("split", "one"), "auto_tile0": (32, 16, 64),
        "auto_tile1": (8, 4, 16), "auto_style": ("grid", "outer")}
    assert _translate("2mm.f90", tmp_path, defines={"launches": "one"}).tunables == {
        "auto_tile0": (32, 16, 64), "auto_style": ("grid", "outer")}
    # three parallel loops: which one joins i on the grid
    assert _translate("heat_3d_step.f90", tmp_path).tunables == {
        "auto_tile0": (32, 16, 64), "auto_tile1": (8, 4, 16), "auto_axis1": ("inner", "outer"),
        "auto_style": ("grid", "outer")}
    # loop nests inside a time loop: launches from a host loop; or in one launch, one
    # work-group, or none
    assert _translate("jacobi_2d.f90", tmp_path).tunables == {
        "auto_launches": ("split", "one"), "auto_tile0": (32, 16, 64),
        "auto_tile1": (8, 4, 16), "auto_style": ("grid", "outer")}
    assert _translate("jacobi_2d.f90", tmp_path, defines={"launches": "one"}).tunables == {
        "auto_group": ("none", 128, 256)}


@pytest.mark.usefixtures("sandbox_process")
def test_tuned_values_change_the_plan(tmp_path):
    r = _translate("gemm.f90", tmp_path, tunables={"auto_tile0": 16, "auto_prefetch": False})
    assert r.script_output == ("auto: kernel 'gemm': plan grid, j -> g.1/l.1, i -> g.0/l.0; "
                               "registers for c\n")
    assert "reqd_work_group_size(16, 8, 1)" in r.generated[0].source
    r = _translate("heat_3d_step.f90", tmp_path, tunables={"auto_axis1": "outer"})
    assert r.script_output == ("auto: kernel 'heat_3d_step': plan grid, k -> g.1/l.1, "
                               "i -> g.0/l.0\n")
    r = _translate("gemm.f90", tmp_path, tunables={"auto_style": "outer"})
    assert r.script_output == "auto: kernel 'gemm': plan outer, j -> g.0; registers for c\n"
    # in one launch, 2mm's nests exchange tmp across the outer loops' groups: the
    # grid plans; in two, each its own grid
    r = _translate("2mm.f90", tmp_path, tunables={"auto_style": "outer", "auto_launches": "one"})
    assert r.script_output == ("auto: kernel 'mm2': plan grid-1d, i -> g.0/l.0, "
                               "i_1 -> g.0/l.0; registers for d, tmp\n")
    r = _translate("2mm.f90", tmp_path, tunables={"auto_style": "outer"})
    assert r.script_output == ("auto: kernel 'mm2': plan outer, j -> g.0, j_1 -> g.0; "
                               "registers for tmp; 1 global barrier\n")
    r = _translate("jacobi_2d.f90", tmp_path)        # "split" comes first
    assert r.script_output == (
        "auto: kernel 'jacobi_2d': plan grid, j -> g.1/l.1, i -> g.0/l.0, j_1 -> g.1/l.1, "
        "i_1 -> g.0/l.0; 1 global barrier, host loop t\n")
    (loop,) = r.generated[0].launches
    assert loop.iname == "t" and [g.c_name for g in loop.body] == ["jacobi_2d_phase1",
                                                                   "jacobi_2d_phase2"]
    r = _translate("jacobi_2d.f90", tmp_path, tunables={"auto_launches": "one",
                                                        "auto_group": 128})
    assert r.script_output == ("auto: kernel 'jacobi_2d': plan one-group, i -> l.0 (one group "
                               "of 128), i_1 -> l.0 (one group of 128)\n")
    r = _translate("jacobi_2d.f90", tmp_path, tunables={"auto_launches": "one"})
    assert r.script_output.splitlines()[0] == (
        "auto: kernel 'jacobi_2d' stays sequential (loops j, i, j_1, i_1 can run in "
        "parallel, but no plan that uses them was taken)")
    assert "  note: loop 't' carries a dependence on 'a' (lines 12 and 17)" in \
        r.script_output.splitlines()
    assert not r.generated[0].kernel.hardware_inames()


# }}}


# {{{ differential: check --transform auto on the samples

POLYBENCH_SIZES = {
    "gemm.f90": ["ni=37", "nj=45", "nk=70"],
    "2mm.f90": ["ni=37", "nj=45", "nk=70", "nl=33"],
    "atax.f90": ["m=150", "n=131"],
    "bicg.f90": ["m=150", "n=131"],
    "gesummv.f90": ["n=70"],
    "jacobi_2d.f90": ["n=40", "tsteps=3"],
    "fdtd_2d.f90": ["nx=40", "ny=30", "tmax=3"],
    "heat_3d.f90": ["n=12", "tsteps=2"],
    "jacobi_2d_step.f90": ["n=40"],
    "heat_3d_step.f90": ["n=13"],
    "covariance.f90": ["m=40", "n=50"],
}


def test_every_polybench_sample_has_sizes():
    assert sorted(p.name for p in POLYBENCH.glob("*.f90")) == sorted(POLYBENCH_SIZES)


@needs_gfortran
@pytest.mark.opencl
def test_check_transform_auto_with_the_outer_second_axis(tmp_path):
    r = _translate("heat_3d_step.f90", tmp_path, defines={"axis1": "outer"})
    assert r.script_output == ("auto: kernel 'heat_3d_step': plan grid, k -> g.1/l.1, "
                               "i -> g.0/l.0\n")
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "-D", "axis1=outer",
                                    "--size", "n=13", str(POLYBENCH / "heat_3d_step.f90")])
    assert res.exit_code == 0, res.output


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("name", sorted(POLYBENCH_SIZES))
def test_check_transform_auto(name):
    sizes = [a for s in POLYBENCH_SIZES[name] for a in ("--size", s)]
    res = CliRunner().invoke(main, ["check", "--transform", "auto", *sizes,
                                    str(POLYBENCH / name)])
    assert res.exit_code == 0, res.output
    assert "ok:" in res.output and "FAIL" not in res.output

# }}}


@needs_gfortran
@pytest.mark.opencl
def test_tune_searches_the_recipe_choices(tmp_path):
    from f2loopy.tune.command import run_tune
    path = tmp_path / "gemm.f90"
    path.write_text((POLYBENCH / "gemm.f90").read_text())
    report = run_tune(path, transform="auto", sizes={"ni": 40, "nj": 24, "nk": 36},
                      budget=3, min_time=0.01, warmup=1, store=False)
    assert len(report.variants) == 3
    assert all(v.status == "ok" for v in report.variants), \
        [(v.values, v.status, v.message) for v in report.variants]
    assert set(report.best.values) == {"auto_tile0", "auto_tile1", "auto_prefetch",
                                       "auto_style"}


@needs_gfortran
@pytest.mark.opencl
def test_generated_programs_pass_check_with_auto(cl_queue):
    """Programs of the differential fuzzer's generator (loop nests, conditionals,
    array syntax, helpers) without their scripts, through auto: each must
    still match gfortran, and auto must find parallel loops in some."""
    from f2loopy.fuzz.progen import generate_program
    from f2loopy.pipeline import translate_text
    from f2loopy.pipeline.options import TranslateOptions
    from f2loopy.verify.check import CheckOptions, check_source
    from f2loopy.verify.options import parse_tolerances
    parallel = 0
    for seed in range(12):
        program = generate_program(seed)
        source = program.render()
        result = translate_text(source, Path(program.filename), transform="auto")
        parallel += "stays sequential" not in result.script_output
        tolerances = parse_tolerances(rtol=["float64=2e-5"] if program.loose64 else ())
        report = check_source(source, Path(program.filename), CheckOptions(
            translation=TranslateOptions(transform="auto"), ranges=program.data_ranges(),
            seed=seed, timeout=60, tolerances=tolerances), queue=cl_queue, result=result)
        assert report.passed, (seed, result.script_output, report.format())
    assert parallel >= 3
