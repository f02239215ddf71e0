"""``f2loopy check`` (issue 9, part 1): the samples pass, wrong transformations
fail and name the array, inputs fit the declarations and assumptions."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.frontend import parse_fortran
from f2loopy.pipeline.options import TranslateOptions
from f2loopy.verify.check import (
    CheckError, CheckOptions, check_source, original_sequence, parse_tolerances, run_isolated,
    tolerance_for)
from f2loopy.verify.inputs import InputError, plan_inputs
from check_util import needs_check

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def _check(args):
    return CliRunner().invoke(main, ["check", *args])


# {{{ the samples

#: options some samples need (the value their header comment gives)
SAMPLE_ARGS = {
    "numa_volume/volume.f90": ["-D", "Nq=4", "--size", "Ne=3"],
    "numa_volume/volume_tunable.f90": ["-D", "Nq=4", "--size", "Ne=3"],
    "numa_volume/volume_cpu.f90": ["-D", "Nq=4", "--size", "Ne=3"],
    "paper/ref_flux.f90": ["-D", "Nq=4"],
    # fluxes of both signs reach both upwind branches (the drawn values are positive)
    "hydro2d/hydro_steps.f90": ["--size", "x_min=1", "--size", "x_max=11", "--size", "y_min=1",
                                "--size", "y_max=7", "--size", "depth=2", "--range", "dir=1:2",
                                "--range", "vol_flux_x=-1:1", "--range", "vol_flux_y=-1:1",
                                "--range", "mass_flux_x=-1:1"],
}


def _samples():
    """Every Fortran source under samples/ (not generated glue, not main programs)."""
    found = []
    for p in sorted(SAMPLES.rglob("*")):
        if p.suffix not in (".f90", ".f") or p.name.endswith("_cl.f90"):
            continue
        if "multifile" in p.parts:      # a project: tests/builds/test_multifile_sample.py
            continue
        found.append(str(p.relative_to(SAMPLES)))
    return found


def test_samples_are_found():
    assert {"saxpy.f90", "numa_volume/volume.f90", "heat_app/heat.f90"} <= set(_samples())


@needs_check
@pytest.mark.parametrize("sample", _samples())
def test_check_passes_on_sample(sample):
    res = _check([*SAMPLE_ARGS.get(sample, []), str(SAMPLES / sample)])
    assert res.exit_code == 0, res.output
    assert "ok:" in res.output and "FAIL" not in res.output


@needs_check
def test_numa_volume_every_checkpoint_is_checked():
    res = _check(["-D", "Nq=4", "--size", "Ne=3", str(SAMPLES / "numa_volume" / "volume.f90")])
    assert res.exit_code == 0, res.output
    for level in range(1, 9):
        assert f"refFluxR_refFluxS [checkpoint 'level {level}'] = refFluxR then refFluxS" \
            in res.output
    assert "Ne=3, Nq=4" in res.output
    assert res.output.count("rhsq(4,4,4,8,3) float32") == 9
    assert "ok: 9 output(s) of 9 kernel(s)" in res.output

# }}}


# {{{ wrong transformations are caught

SCAN = """\
subroutine scan(n, x, y, z)
  implicit none
  integer n, i
  real x(n), y(n), z(n), acc
  acc = 0
  do i = 1, n
    acc = acc + x(i)
    y(i) = acc
    z(i) = 2 * x(i)
  end do
end subroutine
!$loopy begin
! (k,) = parse_fortran(SOURCE, FILENAME)
! k = set_options(k, check_races=False)
! bad = split_iname(k, "i", 4, outer_tag="g.0", inner_tag="l.0")
{rest}
!$loopy end
"""


@needs_check
def test_racing_transformation_fails_and_names_the_array(tmp_path):
    path = tmp_path / "scan.f90"
    path.write_text(SCAN.format(rest="! RESULT = [bad]"))
    res = _check([str(path)])
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    (y_line,) = [ln for ln in lines if ln.strip().startswith("y(")]
    (z_line,) = [ln for ln in lines if ln.strip().startswith("z(")]
    assert y_line.endswith("FAIL") and "max |error|" in y_line and "at y(" in y_line
    assert z_line.endswith("ok")
    assert "MISMATCH" in res.output and "Traceback" not in res.output


@needs_check
def test_wrong_checkpoint_is_reported_with_its_label(tmp_path):
    path = tmp_path / "scan.f90"
    path.write_text(SCAN.format(rest="! k2 = bad\n! checkpoint(\"racy\")\n! RESULT = [k]"))
    report = check_source(path.read_text(), path)
    assert not report.passed
    (bad,) = report.failures()
    assert bad.label == "racy"
    assert [o.name for o in bad.outputs if not o.passed] == ["y"]
    assert "[checkpoint 'racy']" in report.format()
    # without checkpoints only the (correct) final kernel is checked
    assert check_source(path.read_text(), path,
                        CheckOptions(translation=TranslateOptions(checkpoints=False))).passed


@needs_check
def test_transformation_that_drops_a_statement_fails(tmp_path):
    src = """\
subroutine two(n, a, b, c)
  integer n, i
  real a(n), b(n), c(n)
  do i = 1, n
    b(i) = a(i) + 1
    c(i) = a(i) * 3
  end do
end subroutine
!$loopy begin
! (k,) = parse_fortran(SOURCE, FILENAME)
! RESULT = [remove_instructions(k, {"c"})]
!$loopy end
"""
    path = tmp_path / "two.f90"
    path.write_text(src)
    report = check_source(src, path)
    (kc,) = report.checks
    assert {o.name: o.passed for o in kc.outputs} == {"b": True, "c": False}


@needs_check
def test_fused_kernel_is_compared_with_the_sequence(tmp_path):
    src = """\
subroutine first(n, a, b)
  integer n, i
  real a(n), b(n)
  do i = 1, n
    b(i) = a(i) * 2
  end do
end subroutine
subroutine second(n, b, c, s)
  integer n, i
  real b(n), c(n), s
  s = 0
  do i = 1, n
    c(i) = b(i) + 1
    s = s + c(i)
  end do
end subroutine
!$loopy begin
! f, g = parse_fortran(SOURCE, FILENAME)
! RESULT = [fuse_kernels([f, g])]
!$loopy end
"""
    path = tmp_path / "fused.f90"
    path.write_text(src)
    report = check_source(src, path)
    (kc,) = report.checks
    assert kc.kernel == "first_second" and kc.originals == ("first", "second")
    assert [o.name for o in kc.outputs] == ["b", "c", "s"]
    assert report.passed, report.format()


@needs_check
def test_unrelated_subroutines_get_inputs_of_their_own(tmp_path):
    # 'a' is a vector in one subroutine and a matrix in the other: each
    # subroutine is checked on inputs that fit its own declarations
    src = """\
subroutine scale(n, a)
  integer n, i
  real a(n)
  do i = 1, n
    a(i) = 2 * a(i)
  end do
end subroutine
subroutine trace(n, a, t)
  integer n, i
  real a(n, n), t
  t = 0
  do i = 1, n
    t = t + a(i, i)
  end do
end subroutine
"""
    path = tmp_path / "two.f90"
    path.write_text(src)
    report = check_source(src, path, CheckOptions(sizes={"n": 5}))
    assert report.passed, report.format()
    assert report.inputs == "scale: n=5; trace: n=5"
    assert [(c.kernel, [o.shape for o in c.outputs]) for c in report.checks] == [
        ("scale", [(5,)]), ("trace", [()])]
    # a name no checked kernel has is ignored with a note (issue 28: one set of
    # options serves every kernel of a project)
    report = check_source(src, path, CheckOptions(sizes={"n": 5, "m": 5}))
    assert report.passed, report.format()
    assert "--size m ignored: no argument called 'm' in scale, trace" in report.notes


def test_original_sequence_splits_joined_names():
    names = {"ref_a": 1, "ref": 2, "b_c": 3, "b": 4}
    assert original_sequence("ref_a", names) == ["ref_a"]
    assert original_sequence("REF_A_b_c", names) == ["ref_a", "b_c"]
    assert original_sequence("ref_b", names) == ["ref", "b"]
    assert original_sequence("b_b_b", names) == ["b", "b", "b"]
    assert original_sequence("other", names) is None
    assert original_sequence("ref_", names) is None


@needs_check
def test_unknown_kernel_name_is_a_failure(tmp_path):
    src = SCAN.split("!$loopy")[0] + """\
!$loopy begin
! (k,) = parse_fortran(SOURCE, FILENAME)
! k = fuse_kernels([k, k], suffixes=["_a", "_b"], name="mystery")
! RESULT = [k]
!$loopy end
"""
    path = tmp_path / "m.f90"
    path.write_text(src)
    res = _check([str(path)])
    assert res.exit_code == 1
    assert "cannot tell which subroutines kernel 'mystery' computes" in res.output

# }}}


# {{{ errors and options

def test_missing_gfortran_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("F2LOOPY_FC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    res = _check([str(SAMPLES / "saxpy.f90")])
    assert res.exit_code == 1
    assert "gfortran was not found" in res.output
    assert "Traceback" not in res.output and "internal error" not in res.output


def test_fortran_compiler_from_environment_must_exist(monkeypatch):
    monkeypatch.setenv("F2LOOPY_FC", "/nonexistent/gfortran")
    res = _check([str(SAMPLES / "saxpy.f90")])
    assert res.exit_code == 1
    assert "F2LOOPY_FC" in res.output and "Traceback" not in res.output


def test_translation_error_is_reported(tmp_path):
    path = tmp_path / "bad.f90"
    path.write_text("subroutine s(x)\n  real x\n  rewind(10)\nend\n")
    res = _check([str(path)])
    assert res.exit_code == 1
    assert "bad.f90:3:3: error: 'rewind' is not supported" in res.output


@pytest.mark.parametrize("args, message", [
    (["--size", "n"], "expected NAME=VALUE"),
    (["--range", "x=3"], "bad value"),
    (["--rtol", "float16=1"], "unknown type"),
    (["--ulps", "x"], "bad value"),
])
def test_bad_options_are_usage_errors(args, message):
    res = _check([*args, str(SAMPLES / "saxpy.f90")])
    assert res.exit_code == 2
    assert message in res.output


def test_tolerance_options():
    tol = parse_tolerances(rtol=["1e-3", "float64=1e-9"], ulps=["2"], atol=["real=0.5"])
    assert tolerance_for(np.float32, tol).rtol == 1e-3
    assert tolerance_for(np.float32, tol).atol == 0.5
    assert tolerance_for(np.float64, tol).rtol == 1e-9
    assert tolerance_for(np.float64, tol).atol is None
    assert tolerance_for(np.float64, tol).ulps == 2
    assert tolerance_for(np.int32, tol).rtol == 0.0


@needs_check
def test_tolerances_decide_the_verdict(tmp_path):
    # with fp_contract the OpenCL compiler fuses a*b - c (one rounding instead of
    # two): results differ from gfortran's in the last bit
    src = """\
subroutine fm(n, a, b, c, d)
  integer n, i
  real a(n), b(n), c(n), d(n)
  do i = 1, n
    d(i) = a(i) * b(i) - c(i)
  end do
end subroutine
!$loopy begin
! (k,) = parse_fortran(SOURCE, FILENAME)
! RESULT = [set_options(k, fp_contract=True)]
!$loopy end
"""
    path = tmp_path / "fm.f90"
    path.write_text(src)
    assert check_source(src, path, CheckOptions(sizes={"n": 200})).passed
    # beyond a zero tolerance, the rerun without contraction tells the
    # difference from a translation error (issue 16): the check passes and says so
    res = _check(["--size", "n=200", "--rtol", "0", "--atol", "0", "--ulps", "0", str(path)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    (k,) = [k for k, ln in enumerate(lines) if ln.strip().startswith("d(200)")]
    assert lines[k].endswith("ok") and "max |error| 1.19e-07" in lines[k]
    assert lines[k + 1].strip().startswith("differs only by fused multiply-add contraction: "
                                           "without it (FP_CONTRACT OFF")
    res = _check(["--size", "n=200", "--ulps", "0", "--rtol", "float32=1e-6", str(path)])
    assert res.exit_code == 0, res.output


@pytest.mark.usefixtures("python_process")
def test_run_isolated_reports_crashes_and_timeouts():
    assert run_isolated(lambda: {"a": np.arange(3)})["a"].tolist() == [0, 1, 2]
    with pytest.raises(CheckError, match="crashed \\(SIGSEGV\\)"):
        run_isolated(lambda: os.kill(os.getpid(), signal.SIGSEGV))
    with pytest.raises(CheckError, match="ran longer than"):
        run_isolated(lambda: __import__("time").sleep(10), timeout=0.5)
    with pytest.raises(CheckError, match="ZeroDivisionError"):
        run_isolated(lambda: 1 // 0)

# }}}


# {{{ inputs

def _plan(src, names=None, **kw):
    tu = parse_fortran(src, "t.f90")
    ks = list(tu) if names is None else [tu[n] for n in names]
    return plan_inputs(ks, **kw)


CSR = """\
subroutine spmv(n, nnz, rowptr, col, val, x, y, k)
  integer n, nnz, i, j, k
  integer rowptr(n+1), col(nnz)
  real val(nnz), x(n), y(n)
  do i = 1, n
    y(i) = 0
    do j = rowptr(i), rowptr(i+1) - 1
      y(i) = y(i) + val(j) * x(col(j))
    end do
    y(k) = y(k) + 1
  end do
end subroutine
"""


@pytest.mark.parametrize("seed", range(5))
def test_index_arrays_stay_in_bounds(seed):
    plan = _plan(CSR, seed=seed)
    v = plan.generate(seed)
    n, nnz = int(v["n"]), int(v["nnz"])
    assert 1 <= v["k"] <= n
    assert v["col"].min() >= 1 and v["col"].max() <= n
    rp = v["rowptr"]
    assert np.all(np.diff(rp) >= 0)           # nondecreasing: CSR row pointers
    assert rp.min() >= 1 and rp.max() <= nnz + 1


@needs_check
def test_csr_kernel_checks(tmp_path):
    path = tmp_path / "csr.f90"
    path.write_text(CSR)
    for seed in range(3):
        report = check_source(CSR, path, CheckOptions(seed=seed))
        assert report.passed, report.format()


def test_sizes_follow_assumptions_and_fixed_values():
    src = "subroutine s(n, m, a)\n  integer n, m, i\n  real a(n)\n" \
          "  do i = 1, n\n    a(i) = m\n  end do\nend\n"
    import islpy as isl
    for seed in range(4):
        plan = _plan(src, assumptions=[isl.Set("[n] -> { : n mod 16 = 0 }")], seed=seed)
        assert plan.values["n"] % 16 == 0 and plan.values["n"] > 0
    plan = _plan(src, given={"N": 7})
    assert plan.values["n"] == 7 and plan.shapes["a"] == (7,)


def test_sizes_keep_affine_subscripts_in_bounds():
    src = """\
subroutine s(n, m, off, a, b)
  integer n, m, off, i
  real a(n), b(0:m)
  do i = 1, m
    a(i + off) = b(i - 1) + b(i)
  end do
end
"""
    for seed in range(6):
        plan = _plan(src, seed=seed)
        n, m, off = (plan.values[x] for x in ("n", "m", "off"))
        assert 1 + off >= 1 and m + off <= n, plan.values


def test_given_sizes_that_break_bounds_are_refused():
    src = "subroutine s(n, m, a)\n  integer n, m, i\n  real a(n)\n" \
          "  do i = 1, m\n    a(i) = 0\n  end do\nend\n"
    with pytest.raises(InputError, match="with n=3, m=5, 'a\\(i\\)' \\(t.f90:5:5\\) goes out "
                                         "of bounds of 'a'"):
        _plan(src, given={"n": 3, "m": 5})


def test_unknown_index_use_asks_for_a_range():
    src = """\
subroutine s(n, idx, a)
  integer n, i, idx(n)
  real a(n)
  do i = 1, n
    a(2 * idx(i)) = 0
  end do
end
"""
    # (2*idx(i) in 1..n: isl tells, idx in 1..n/2)
    plan = _plan(src, given={"n": 9})
    assert (plan.ranges["idx"].lo, plan.ranges["idx"].hi) == (1, 4)
    with pytest.raises(InputError, match="cannot tell which values of 'idx' keep the subscript "
                                         ".*give them with --range idx=LO:HI"):
        _plan(src.replace("2 * idx(i)", "idx(i) * idx(i)"))
    plan = _plan(src, ranges={"idx": (1, 2)}, given={"n": 4})
    v = plan.generate(0)["idx"]
    assert v.min() >= 1 and v.max() <= 2


def test_assumed_size_extent_comes_from_the_subscripts():
    src = """\
      subroutine s(n, x, y)
      double precision x(*), y(*)
      integer n, i
      do 10 i = 1, n
         y(i + 2) = x(2 * i)
   10 continue
      end
"""
    tu = parse_fortran(src, "t.f")
    plan = plan_inputs(list(tu), given={"n": 5})
    assert plan.shapes["x"] == (10,) and plan.shapes["y"] == (7,)


@needs_check
def test_logical_and_integer_outputs(tmp_path):
    src = """\
subroutine flags(n, x, pos, cnt, any_big)
  integer n, i, cnt
  real x(n)
  logical pos(n), any_big
  cnt = 0
  any_big = .false.
  do i = 1, n
    pos(i) = x(i) > 1.0
    if (pos(i)) cnt = cnt + 1
    any_big = any_big .or. x(i) > 1.4
  end do
end subroutine
"""
    path = tmp_path / "flags.f90"
    path.write_text(src)
    report = check_source(src, path)
    assert report.passed, report.format()
    (kc,) = report.checks
    assert [(o.name, o.dtype.name) for o in kc.outputs] == [
        ("pos", "bool"), ("cnt", "int32"), ("any_big", "bool")]

# }}}


@needs_check
def test_kernel_option_selects_one_kernel():
    path = SAMPLES / "shallow_water.f90"
    if not path.exists():
        pytest.skip("sample not present")
    res = _check(["--kernel", "DIAGNOSTICS", str(path)])
    assert res.exit_code == 0, res.output
    assert "diagnostics" in res.output and "rusanov_step" not in res.output
    res = _check(["--kernel", "nope", str(path)])
    assert res.exit_code == 1
    assert "no kernel or subroutine named 'nope'" in res.output


@needs_check
def test_floopy_files_are_checked():
    res = _check([str(ROOT / "tests" / "floopy" / "sparse.floopy")])
    assert res.exit_code == 0, res.output


@needs_check
def test_assumed_shape_arguments_outside_a_module(tmp_path):
    # the reference calls the original through an interface block; the
    # extents are chosen like sizes and keep the subscripts in bounds
    src = """\
subroutine colmax(a, s, w)
  implicit none
  real, intent(in) :: a(:, :)
  real, intent(out) :: s(:)
  logical, intent(in) :: w(2:)
  integer :: j
  do j = 1, size(a, 2)
    if (w(j + 1)) then
      s(j) = sum(a(:, j))
    else
      s(j) = maxval(a(:, j))
    end if
  end do
end subroutine
"""
    path = tmp_path / "colmax.f90"
    path.write_text(src)
    report = check_source(src, path, CheckOptions(sizes={"a_n2": 6}))
    assert report.passed, report.format()
    sizes = dict(item.split("=") for item in report.inputs.split(", "))
    assert sizes["a_n2"] == "6" and int(sizes["w_n1"]) >= 6 and int(sizes["s_n1"]) >= 6


@needs_check
def test_long_names_and_many_arguments(tmp_path):
    # the shim calling the original must stay within Fortran's line and name
    # lengths: a 61-character subroutine name, 7 assumed-shape arguments
    name = "compute_the_upwind_flux_divergence_in_x_direction_for_cells"
    args = ", ".join(f"a{k}" for k in range(7))
    decls = "\n".join(f"  real, intent(inout) :: a{k}(:)" for k in range(7))
    src = f"""subroutine {name}({args})
{decls}
  a0 = a1 + a2 + a3 + a4 + a5 + a6
end subroutine
"""
    path = tmp_path / "long.f90"
    path.write_text(src)
    report = check_source(src, path, CheckOptions(sizes={"a0_n1": 5}))
    assert report.passed, report.format()
    from f2loopy.glue.fortran import fortran_name
    assert fortran_name(name, "_cl") == name + "_cl"
    assert len(fortran_name(name, "_cl_mod")) == 63
    assert fortran_name(name, "_cl_mod").endswith("_cl_mod")


RUNNING_INDEX = """\
subroutine fill_strided(n, inc, y)
  integer n, inc, i, iy
  real y(*)
  iy = 1
  do i = 1, n
    y(iy) = i
    iy = iy + inc
  end do
end
"""


@needs_check
def test_assumed_size_used_through_a_running_index_asks_for_its_extent(tmp_path):
    # the subscript cannot be bounded: a guessed extent would be overrun
    path = tmp_path / "strided.f90"
    path.write_text(RUNNING_INDEX)
    with pytest.raises(InputError, match="cannot tell how many elements of assumed-size array "
                                         "'y' the subroutine uses .*give them with --size "
                                         "y=N"):
        check_source(RUNNING_INDEX, path, CheckOptions(sizes={"n": 5}))
    report = check_source(RUNNING_INDEX, path, CheckOptions(sizes={"n": 5, "y": 30},
                                                         ranges={"inc": (1, 5)}))
    assert report.passed, report.format()
    assert [o.shape for o in report.checks[0].outputs] == [(30,)]
    with pytest.raises(InputError, match="--size x: 'x' is an array whose declaration gives "
                                         "its shape"):
        check_source(SCAN.split("!$loopy")[0], tmp_path / "s.f90", CheckOptions(sizes={"x": 3}))


@needs_check
def test_intent_out_integers_need_no_input_range(tmp_path):
    src = """\
subroutine pick(n, s, k, best, v)
  integer, intent(in) :: n
  real, intent(in) :: s(n)
  integer, intent(out) :: k, best
  real, intent(out) :: v
  k = n
  best = maxloc(s, dim=1)
  v = s(k) + s(best)
end
"""
    path = tmp_path / "pick.f90"
    path.write_text(src)
    assert check_source(src, path).passed


@needs_check
def test_conforming_assumed_shape_arrays_get_equal_extents(tmp_path):
    # Fortran requires c = a + b and matmul operands to conform: the kernel
    # assumes it, check draws conforming inputs, the glue refuses others
    src = """\
module ops
contains
  subroutine add2(a, b, c)
    real, intent(in) :: a(:), b(:)
    real, intent(out) :: c(:)
    c = a + b
  end subroutine
  subroutine mm(a, b, c)
    real, intent(in) :: a(:, :), b(:, :)
    real, intent(out) :: c(:, :)
    c = matmul(a, b)
  end subroutine
end module
"""
    path = tmp_path / "ops.f90"
    path.write_text(src)
    report = check_source(src, path)
    assert report.passed, report.format()
    k = parse_fortran(src, "ops.f90")["mm"]
    assert str(k.assumptions) == ("[c_n1, c_n2, a_n1, a_n2, b_n1, b_n2] -> {  : a_n1 = c_n1 "
                                  "and b_n1 = a_n2 and b_n2 = c_n2 and c_n1 >= 0 and c_n2 >= 0 "
                                  "and a_n2 >= 0 }")
