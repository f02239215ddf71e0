"""``f2loopy check`` on kernels with module data, common blocks, saved locals
and derived-type arguments: the original (through its shim) and the kernel
(through ``glue.<module>.<var>`` and objects with components) get the same
values, and every output is compared, module data included."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.frontend import parse_fortran
from f2loopy.frontend.search_path import SearchPath
from f2loopy.pipeline import TranslateOptions, translate_text
from f2loopy.verify.check import CheckOptions, check_source
from f2loopy.verify.fortran import FortranLibrary, FortranToolError, _shim
from check_util import needs_check

from f2loopy.ir.roles import Component

#: a module with kinds, parameters, arrays and derived types (one with an
#: array component), in the style of the IFS modules
PHYSCONST = """\
module physconst
  implicit none
  integer, parameter :: jprb = selected_real_kind(13, 300)
  integer, parameter :: nspec = 3
  real(kind=jprb) :: rgrav = 9.81_jprb
  real(kind=jprb) :: weights(nspec) = [0.5_jprb, 0.25_jprb, 0.25_jprb]
  real(kind=jprb) :: total_mass
  integer :: ncalls = 0
  type tparams
    real(kind=jprb) :: rmin
    real(kind=jprb) :: coef(nspec)
    logical :: lclip
  end type tparams
  type tcolumn
    real(kind=jprb) :: t
    real(kind=jprb) :: q(nspec)
  end type tcolumn
end module physconst
"""

#: a kernel that reads and writes all of it, a common block and an array of
#: a derived type
CLOUD_STEP = """\
subroutine cloud_step(klon, klev, pt, pq, ydpar, cols)
  use physconst, only: jprb, nspec, rgrav, weights, total_mass, ncalls, tparams, tcolumn
  implicit none
  integer, intent(in) :: klon, klev
  real(kind=jprb), intent(inout) :: pt(klon, klev)
  real(kind=jprb), intent(in) :: pq(klon, klev, nspec)
  type(tparams), intent(inout) :: ydpar
  type(tcolumn), intent(inout) :: cols(klon)
  real(kind=jprb) :: zsum, acc
  integer :: jl, jk, js
  common /diag/ acc
  ncalls = ncalls + 1
  total_mass = 0
  do jk = 1, klev
    do jl = 1, klon
      zsum = 0
      do js = 1, nspec
        zsum = zsum + weights(js) * ydpar%coef(js) * pq(jl, jk, js)
      end do
      if (ydpar%lclip) zsum = max(zsum, ydpar%rmin)
      pt(jl, jk) = pt(jl, jk) + zsum / rgrav
      total_mass = total_mass + zsum
    end do
  end do
  do jl = 1, klon
    cols(jl)%t = pt(jl, klev)
    do js = 1, nspec
      cols(jl)%q(js) = cols(jl)%q(js) + pq(jl, klev, js) * weights(js)
    end do
  end do
  ydpar%rmin = ydpar%rmin * 0.5_jprb
  weights(1) = weights(1) + 1
  acc = acc + total_mass
end subroutine cloud_step
"""


def _with_path(include_dirs) -> CheckOptions:
    """The check's defaults, with the modules' folder on the search path."""
    return CheckOptions(translation=TranslateOptions(include_dirs=include_dirs))


def _project(tmp_path, kernel=CLOUD_STEP):
    inc = tmp_path / "mods"
    inc.mkdir(exist_ok=True)
    (inc / "physconst.f90").write_text(PHYSCONST)
    path = tmp_path / "cloud_step.f90"
    path.write_text(kernel)
    return path, [str(inc)]


def test_shim_sets_module_data_common_blocks_and_derived_arguments(tmp_path):
    path, inc = _project(tmp_path)
    (k,) = parse_fortran(PHYSCONST + CLOUD_STEP, str(path)).kernels
    shim = _shim(k).splitlines()
    # (every name of the shim's own prefixed: a user's procedure may be 'a1')
    head = "".join(ln.rstrip("&").lstrip(" &") for ln in shim[:3])
    assert head.startswith(
        "subroutine f2l_shim_cloud_step(" + ", ".join(f"f2l_a{k}" for k in range(14)) +
        ", f2l_x5_0, f2l_x7_0, f2l_x8_0, f2l_x8_1) bind(c, name='f2l_shim_cloud_step')")
    for line in ("  use physconst, only: f2l_s0 => ncalls",
                 "  use physconst, only: f2l_s1 => rgrav",
                 "  use physconst, only: f2l_s2 => total_mass",
                 "  use physconst, only: f2l_s3 => weights",
                 "  use physconst, only: f2l_t0 => tparams",
                 "  use physconst, only: f2l_t1 => tcolumn",
                 "  real(c_double) :: f2l_a13(3)",
                 "  real(c_double) :: f2l_a8(f2l_x8_0, f2l_x8_1)",
                 "  common /diag/ f2l_c0_0",
                 "  type(f2l_t0) :: f2l_d0",
                 "  type(f2l_t1) :: f2l_d1(f2l_x7_0)",
                 "  f2l_s3 = f2l_a13",
                 "  f2l_d0%coef = f2l_a5",
                 "    f2l_d1(f2l_i0)%q = f2l_a8(:, f2l_i0)",
                 "    f2l_a8(:, f2l_i0) = f2l_d1(f2l_i0)%q",
                 "  f2l_a6 = f2l_d0%lclip"):
        assert line in shim, line
    # values in before the call, out after it
    call = "  call cloud_step(f2l_a0, f2l_a1, f2l_a2, f2l_a3, f2l_d0, f2l_d1)"
    assert shim.index("  f2l_c0_0 = f2l_a9") < shim.index(call) < shim.index("  f2l_a9 = f2l_c0_0")


@needs_check
def test_check_compares_module_data_and_components(tmp_path, cl_queue):
    path, inc = _project(tmp_path)
    report = check_source(CLOUD_STEP, path, _with_path(inc), queue=cl_queue)
    text = report.format()
    assert report.passed, text
    outputs = [o.name for c in report.checks for o in c.outputs]
    assert outputs == ["pt", "ydpar_rmin", "cols_t", "cols_q", "acc", "ncalls", "total_mass",
                       "weights"]
    # shown as the user knows them: components, the glue's module.variable
    for shown in ("  ydpar%rmin float64 ", "  cols(4)%q(3) float64 ", "  diag.acc float64 ",
                  "  physconst.weights(3) float64 "):
        assert shown in text, shown
    assert text.splitlines()[-1] == "ok: 8 output(s) of 1 kernel(s) match the original Fortran"
    # the kernel saw the drawn values: nothing trivially zero
    (check,) = report.checks
    assert all(o.max_error < 1e-12 for o in check.outputs)


@needs_check
@pytest.mark.parametrize("wrong, output", [
    ("weights(1) = weights(1) + 1", "weights"),
    ("ydpar%rmin = ydpar%rmin * 0.5_jprb", "ydpar_rmin"),
    ("acc = acc + total_mass", "acc"),
    ("cols(jl)%q(js) = cols(jl)%q(js) + pq(jl, klev, js) * weights(js)", "cols_q"),
    ("zsum = zsum + weights(js) * ydpar%coef(js) * pq(jl, jk, js)", "pt"),
])
def test_wrong_module_data_or_components_are_caught(wrong, output, tmp_path, cl_queue):
    # the kernel translated from a variant that computes one thing wrongly
    path, inc = _project(tmp_path)
    bad = CLOUD_STEP.replace(wrong, wrong.replace(" + ", " - ", 1).replace(" * 0.5", " * 0.25"))
    assert bad != CLOUD_STEP
    result = translate_text(bad, path, include_dirs=inc)
    report = check_source(CLOUD_STEP, path, _with_path(inc), queue=cl_queue, result=result)
    (check,) = report.checks
    failed = [o.name for o in check.outputs if not o.passed]
    assert output in failed, report.format()
    assert report.format().splitlines()[-1].startswith("MISMATCH: 1 of 1 kernel(s)")
    if output == "cols_q":     # located as in Fortran: the element, then the component
        assert " at cols(1)%q(1): got " in report.format()


SAVED = """\
subroutine counted(n, x)
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  integer, save :: calls = 10
  real(8), save :: last(2)
  integer :: i
  calls = calls + 1
  do i = 1, n
    x(i) = x(i) * calls + last(1)
  end do
  last(1) = x(1)
end subroutine counted
"""


@needs_check
def test_saved_locals_start_from_their_initial_values(tmp_path, cl_queue):
    path = tmp_path / "counted.f90"
    path.write_text(SAVED)
    report = check_source(SAVED, path, queue=cl_queue)
    text = report.format()
    assert report.passed, text
    # what the call wrote into its saved locals is out of the original's
    # reach: compared through what depends on it, also in a second call
    assert [o.name for c in report.checks for o in c.outputs] == ["x", "x"]
    assert "counted (called again: its saved variables carried over)" in text
    assert text.splitlines()[-1] == "ok: 2 output(s) of 1 kernel(s) match the original Fortran"


@needs_check
def test_a_wrong_saved_value_shows_in_the_second_call(tmp_path, cl_queue):
    path = tmp_path / "counted.f90"
    path.write_text(SAVED)
    bad = SAVED.replace("  last(1) = x(1)\n", "  last(1) = x(1) + 1\n")
    result = translate_text(bad, path)
    report = check_source(SAVED, path, queue=cl_queue, result=result)
    first, second = report.checks
    assert first.passed and not second.passed, report.format()
    assert report.format().splitlines()[-1] == (
        "MISMATCH: 1 of 1 kernel(s) differ from the original Fortran: counted")


@needs_check
def test_check_cli_on_a_project_with_module_data(tmp_path):
    from click.testing import CliRunner
    from f2loopy.cli import main
    path, inc = _project(tmp_path)
    res = CliRunner().invoke(main, ["check", str(path), "-I", inc[0]])
    assert res.exit_code == 0, res.output
    assert "  physconst.weights(3) float64  max |error| 0  ok" in res.output
    assert res.output.splitlines()[-1] == \
        "ok: 8 output(s) of 1 kernel(s) match the original Fortran"


def test_compile_order_includes_the_modules_the_path_files_use(tmp_path):
    (tmp_path / "a.f90").write_text("module a\n  use b\nend module a\n")
    (tmp_path / "b.f90").write_text("module b\n  use c\nend module b\n")
    (tmp_path / "c.f90").write_text("module c\n  integer :: x\nend module c\n")
    (tmp_path / "d.f90").write_text("module d\nend module d\n")
    search = SearchPath([str(tmp_path)])
    search.files_read.append(tmp_path / "a.f90")
    assert search.build_order() == [tmp_path / "a.f90"]
    assert search.build_order(closure=True) == [tmp_path / "c.f90", tmp_path / "b.f90",
                                                tmp_path / "a.f90"]


@needs_check
def test_a_module_missing_from_the_path_is_named(tmp_path):
    (tmp_path / "uses_io.f90").write_text("module uses_io\n  use file_io\n  real :: r\n"
                                          "end module uses_io\n")
    src = "subroutine s(x)\n  use uses_io\n  real :: x\n  x = r\nend subroutine s\n"
    kernels = parse_fortran("module uses_io\n  real :: r\nend module uses_io\n" + src,
                            "s.f90").kernels
    with pytest.raises(FortranToolError) as info:
        FortranLibrary(src, kernels, extra_sources=[str(tmp_path / "uses_io.f90")],
                       workdir=str(tmp_path))
    assert str(info.value).splitlines()[-1] == (
        "(no file on the search path defines module 'file_io', which the sources compiled "
        "with the original use: give the directory of its source with -I)")


def test_structured_arrays_hold_the_components_in_fortran_order():
    from f2loopy.verify.shared_data import _structured
    (k,) = parse_fortran(PHYSCONST + CLOUD_STEP, "k.f90").kernels
    members = [a for a in k.fortran_args if isinstance(a.role, Component) and a.role.root == "cols"]
    q = np.asfortranarray(np.arange(12.0).reshape(3, 4, order="F"))
    t = np.arange(4.0) + 100
    arr = _structured(members, {"cols_q": q, "cols_t": t})
    assert arr.shape == (4,) and arr.dtype.names == ("t", "q")
    assert arr["q"][2].tolist() == q[:, 2].tolist() and arr["t"][3] == 103.0


def test_sizes_keep_subscripts_in_bounds_beside_integer_flags():
    # an integer argument that is no size (kflag) used to make the planner
    # skip every access, so kfdia > klon (out of bounds) could be drawn
    from f2loopy.verify.inputs import plan_inputs
    src = """subroutine part(kidia, kfdia, klon, kflag, x)
  integer, intent(in) :: kidia, kfdia, klon, kflag
  real(8), intent(inout) :: x(klon)
  integer :: jl
  do jl = kidia, kfdia
    if (kflag > 0) x(jl) = x(jl) * 2
  end do
end subroutine part
"""
    (k,) = parse_fortran(src, "p.f90").kernels
    for seed in range(12):
        v = plan_inputs([k], seed=seed).values
        assert v["kidia"] > v["kfdia"] or 1 <= v["kidia"] <= v["kfdia"] <= v["klon"], v


#: a module procedure using its own module's variable, a module record of a
#: derived type (the IFS style 'use yoecl, only: yrecl') and a COMMON block
#: with an array
MODULE_PROCEDURE = """\
module yoecl
  implicit none
  type tecl
    real(8) :: ramin
    real(8) :: rbeta(0:4)
    integer :: nssopt
  end type
  type(tecl) :: yrecl
  real(8) :: hist(2, 3)
end module yoecl

module physk
  use yoecl, only: yrecl, hist
  implicit none
  real(8) :: gain = 1.5d0
contains
  subroutine step(n, x, y)
    integer, intent(in) :: n
    real(8), intent(inout) :: x(n)
    real(8), intent(out) :: y(n)
    real(8) :: blk(3), s
    integer :: cnt
    common /work/ blk, cnt
    integer :: i
    do i = 1, n
      y(i) = max(x(i), yrecl%ramin) * gain + yrecl%rbeta(mod(i, 5))
      if (yrecl%nssopt > 2) y(i) = y(i) + 1
      x(i) = x(i) * blk(mod(i, 3) + 1)
    end do
    s = sum(y)
    hist(1, 2) = hist(1, 2) + s
    yrecl%rbeta(0) = yrecl%rbeta(0) * 2
    gain = gain * 0.5d0
    cnt = cnt + n
    blk(2) = s
  end subroutine step
end module physk
"""


@needs_check
def test_check_module_procedure_with_records_and_common(tmp_path, cl_queue):
    path = tmp_path / "k.f90"
    path.write_text(MODULE_PROCEDURE)
    report = check_source(MODULE_PROCEDURE, path, queue=cl_queue)
    text = report.format()
    assert report.passed, text
    for shown in ("  work.blk(3) float64 ", "  work.cnt int32 ", "  physk.gain float64 ",
                  "  yoecl.hist(2,3) float64 ", "  yoecl.yrecl.rbeta(5) float64 "):
        assert shown in text, shown


#: two subroutines sharing module data, fused by the file's script: the
#: second reads what the first wrote
FUSED = """\
module acc
  implicit none
  real(8) :: total = 0
  real(8) :: scale(4) = [1d0, 2d0, 3d0, 4d0]
end module acc

subroutine first(n, x)
  use acc
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  integer :: i
  do i = 1, n
    x(i) = x(i) * scale(mod(i, 4) + 1)
  end do
  total = total + x(1)
end subroutine first

subroutine second(n, x)
  use acc
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  integer :: j
  do j = 1, n
    x(j) = x(j) + total
  end do
  scale(1) = total
end subroutine second

!$loopy begin
! a, b = parse_fortran(SOURCE, FILENAME)
! f = fuse_kernels([a, b], suffixes=["_a", "_b"])
! RESULT = [f]
!$loopy end
"""


@needs_check
def test_check_fused_kernel_with_module_data(tmp_path, cl_queue):
    path = tmp_path / "f.f90"
    path.write_text(FUSED)
    report = check_source(FUSED, path, queue=cl_queue)
    text = report.format()
    assert report.passed, text
    assert "first_second = first then second" in text
    assert "  acc.total float64 " in text and "  acc.scale(4) float64 " in text
