"""Findings of the check sweep (issue 26, scripts/check_sweep.py): F77's
``real a(1)`` dummies under the reference's ``-fcheck=bounds``, a main
program that uses the glue module of its own kernels, a name the
transformation sandbox cannot send back, and a kernel that reads a variable
nothing assigns (an undefined ``-D`` macro)."""

from __future__ import annotations

import pytest
from check_util import check_text, needs_check

from f2loopy.diagnostics import F2LoopyError
from f2loopy.frontend import parse_fortran
from f2loopy.verify.coverage import procedure_ranges
from f2loopy.verify.honesty import undefined_reads
from f2loopy.verify.legacy import assumed_size_copy
from f2loopy.verify.programs import program_as_module

# {{{ F77 'real a(1)' dummies: assumed size in the reference too

F77 = """\
      subroutine axpy1(n, da, dx, dy, w)
      integer n, i
      real da, dx(1), w(2)
      double precision dy
      dimension dy(n, 1)
      real loc(1)
      loc(1) = da
   10 do 20 i = 1, n
        dy(i, 1) = dy(i, 1) + loc(1)*dx(i)
        w(1) = dx(1)
   20 continue
      end
"""


def test_last_extent_one_is_written_as_assumed_size_for_the_reference():
    k = parse_fortran(F77, "axpy.f")["axpy1"]
    out = assumed_size_copy(F77, [k], procedure_ranges(F77, [k]), fixed=True)
    before, after = F77.splitlines(), out.splitlines()
    assert len(before) == len(after)
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    # the dummies only, in their declarations, one character for one; a
    # local 'loc(1)', the executable 'dx(1)' and 'w(2)' as they were
    assert changed == [("      real da, dx(1), w(2)", "      real da, dx(*), w(2)"),
                       ("      dimension dy(n, 1)", "      dimension dy(n, *)")]


def test_free_form_and_bounds_that_are_not_the_idiom():
    src = """subroutine s(n, a, b, c)
  integer n
  real :: a(0:1), b(n, 1), c(1) ! c(1)
  a(0) = b(1, 1) + c(1)
end subroutine
"""
    k = parse_fortran(src, "s.f90")["s"]
    out = assumed_size_copy(src, [k], procedure_ranges(src, [k]), fixed=False)
    assert out.splitlines()[2] == "  real :: a(0:1), b(n, *), c(*) ! c(1)"
    assert out.splitlines()[3] == src.splitlines()[3]


@needs_check
def test_f77_dummy_of_extent_one_checks(tmp_path):
    src = """\
      subroutine dscal1(n, da, dx)
      integer n, i
      real da, dx(1)
      do 10 i = 1, n
        dx(i) = da*dx(i)
   10 continue
      end
"""
    _, res = check_text(tmp_path, src, name="dscal1.f")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == \
        "ok: 1 output(s) of 1 kernel(s) match the original Fortran"

# }}}


# {{{ a main program using its own kernels' glue module

PROGRAM = """subroutine twice(n, x)
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = 2.0*x(i)
  end do
end subroutine

program main
  use twice_cl_mod
  implicit none
  real :: x(8)
  x = 1.0
  call twice_cl(8, x)
  print *, x
end program
"""


def test_a_program_without_internal_procedures_is_blanked_for_the_reference():
    out = program_as_module(PROGRAM, "p.f90", False).split("\n")
    assert out[:8] == PROGRAM.split("\n")[:8]
    assert out[8:16] == [""] * 8
    assert len(out) == len(PROGRAM.split("\n"))


def test_a_program_hosting_kernels_loses_only_its_use_of_the_glue():
    src = """program host
  use host_cl_mod
  implicit none
  real :: s
  s = 1.0
  call bump(s)
contains
  subroutine bump(v)
    real v
    v = v + 1.0
  end subroutine
end program
"""
    out = program_as_module(src, "h.f90", False).split("\n")
    assert out[0] == "module host" and out[1] == "" and out[2] == "  implicit none"
    assert out[4:6] == ["", ""] and out[-2] == "end module host"


@needs_check
def test_main_program_using_its_own_cl_mod_checks(tmp_path):
    _, res = check_text(tmp_path, PROGRAM, name="prog.f90")
    assert res.exit_code == 0, res.output
    assert "twice\n  x(4) float32  max |error| 0  ok" in res.output

# }}}


# {{{ a name the sandbox cannot send back

@pytest.mark.parametrize("src, where, what", [
    ("subroutine a$b(n, x)\n  integer n, i\n  real x(n)\n  do i = 1, n\n"
     "    x(i) = 2.0*x(i)\n  end do\nend subroutine\n", (1, 12), "the kernel name 'a$b'"),
    ("subroutine ab(n, x)\n  integer n, i\n  real x(n), t$1\n  do i = 1, n\n"
     "    t$1 = x(i)\n    x(i) = 2.0*t$1\n  end do\nend subroutine\n", (3, 14),
     "the variable name 't$1'"),
])
def test_dollar_names_are_refused_before_a_recipe_runs(tmp_path, src, where, what):
    from f2loopy.pipeline import TranslateOptions, translate_text
    path = tmp_path / "d.f90"
    with pytest.raises(F2LoopyError) as info:
        translate_text(src, path, TranslateOptions(transform="auto"))
    text = info.value.format()
    assert text.splitlines()[0] == (
        f"{path}:{where[0]}:{where[1]}: error: {what} cannot be translated: names must be "
        "letters, digits and underscores"), text
    assert "sandbox" not in text

# }}}


# {{{ reading what nothing assigns

MACRO = """subroutine scale(n, x)
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = x(i) * FACTOR
  end do
end subroutine
"""


def test_undefined_reads_are_found():
    k = parse_fortran(MACRO.replace("FACTOR", "factor"), "m.f90")["scale"]
    assert [(n, sp.line, sp.column) for n, sp in undefined_reads([k])] == [("factor", 5, 19)]
    assigned = MACRO.replace("  do i", "  factor = 2\n  do i")
    assert undefined_reads([parse_fortran(assigned, "m.f90")["scale"]]) == []


@needs_check
def test_an_undefined_macro_is_said_to_be_undefined_not_a_mismatch(tmp_path):
    where, res = check_text(tmp_path, MACRO, name="macro.F90")
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert "MISMATCH" not in res.output and "translation error" not in res.output
    assert lines[-2] == (
        f"  {where}:5:19: error: 'FACTOR' is read but nothing assigns it: its value is "
        "undefined in the original Fortran and in the kernel alike (a macro that needs -D? a "
        "variable that needs a value?), so these results prove nothing either way")
    assert lines[-1] == ("UNDEFINED: 1 of 1 kernel(s) read variables that nothing assigns "
                         "(above), so their results are undefined in the original too: scale")
    _, res = check_text(tmp_path, MACRO, "-D", "FACTOR=3.0", name="macro.F90")
    assert res.exit_code == 0, res.output

# }}}


# {{{ a fixed-length character dummy; an access guarded by a cycle; a located run-time error

FLAG = """
      subroutine dl(c, n, x)
      character*2 c
      integer n
      double precision x(*)
      if (c .eq. 'N') then
         x(1) = 1
      else if (c(1:1) .eq. 'N') then
         x(1) = 2
      else
         x(1) = 3
      end if
      end
"""

GUARDED = """subroutine mixed_control(n, k, v)
  implicit none
  integer n, i
  integer k(n), v(n)
  do i = n, 1, -1
    select case (k(i))
    case (1:3)
      v(i) = v(i) + 100
    case default
      if (i == 1) cycle
      v(i) = v(i) - v(i - 1)
    end select
  end do
end subroutine
"""


@needs_check
def test_a_character_dummy_of_declared_length_gets_a_padded_string(tmp_path, cl_queue):
    from f2loopy.verify.check import CheckOptions, check_source
    report = check_source(FLAG, tmp_path / "dl.f", queue=cl_queue)
    assert report.passed, report.format()
    assert report.char_values == {"c": "N "}
    # a value given with --size too
    report = check_source(FLAG, tmp_path / "dl.f", CheckOptions(sizes={"c": "X"}), queue=cl_queue)
    assert report.passed, report.format()
    assert report.char_values == {"c": "X "}


def test_an_access_out_of_bounds_for_every_size_does_not_stop_the_planner():
    from f2loopy.verify.inputs import plan_inputs
    k = parse_fortran(GUARDED, "g.f90")["mixed_control"]
    plan = plan_inputs([k], assumptions=[k.assumptions], given={}, seed=0)
    assert plan.generate(0)["n"] >= 1


@needs_check
def test_an_access_guarded_by_a_cycle_checks(tmp_path, cl_queue):
    from f2loopy.verify.check import check_source
    report = check_source(GUARDED, tmp_path / "g.f90", queue=cl_queue)
    assert report.passed, report.format()


@needs_check
def test_the_original_going_out_of_bounds_is_located(tmp_path):
    src = """subroutine oob(n, x)
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = x(i+1)
  end do
end subroutine
"""
    where, res = check_text(tmp_path, src, name="oob.f90")
    assert res.exit_code == 1, res.output
    first = res.output.splitlines()[0]
    assert first.startswith(f"{where}:5:5: error: the original Fortran goes out of bounds on "
                            "the generated inputs (Index '"), res.output

# }}}


# {{{ the sweep script: its resumable log and its outcomes

def _sweep():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "scripts" / "check_sweep.py"
    spec = importlib.util.spec_from_file_location("check_sweep_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sweep_log_is_read_back_and_names_test_units_stably(tmp_path):
    sweep = _sweep()
    log = tmp_path / "sweep.log"
    assert sweep.read_log(log) == {}
    log.write_text("ok 3.2s samples/euler_flux.f90\nrefused 1.0s tests:test_x_3.f90\n"
                   "mismatch 2.0s tests:test_y_1.f90\nbogus 1.0s a.f90\nok 1.0")
    assert sweep.read_log(log) == {"samples/euler_flux.f90": "ok",
                                   "tests:test_x_3.f90": "refused",
                                   "tests:test_y_1.f90": "mismatch"}
    assert sweep.unit_key("samples/euler_flux.f90") == "samples/euler_flux.f90"
    assert sweep.unit_key("/tmp/f2loopy-sweep-abc/test_x_3.f90") == "tests:test_x_3.f90"
    assert sweep.unit_key(str(sweep.ROOT / "samples" / "a.f90")) == "samples/a.f90"


def test_sweep_tells_undefined_from_mismatch():
    sweep = _sweep()
    out = ("check m.F90 (seed 0; n=4)\nscale\n  x(4) float32  max |error| inf  FAIL\n"
           "  m.F90:5:19: error: 'FACTOR' is read but nothing assigns it: ...\n"
           "UNDEFINED: 1 of 1 kernel(s) read variables that nothing assigns (above), ...")
    assert sweep.classify(1, out) == "undefined"
    assert "undefined" not in sweep.BAD
    assert sweep.classify(1, "MISMATCH: 1 of 1 kernel(s) differ", name="/nonexistent") == \
        "mismatch"

# }}}


def test_a_dummy_of_extent_one_used_whole_keeps_its_declaration():
    # (gfortran refuses size(c) and c(:, 1) of an assumed-size array: sweep,
    # test_unseen_kernels_7)
    src = """      subroutine keep(c, d, m, n)
      real c(m, 1), d(1)
      c(:, 1) = size(c)
      d(n) = 0
      end
"""
    k = parse_fortran(src, "keep.f")["keep"]
    out = assumed_size_copy(src, [k], procedure_ranges(src, [k]), fixed=True)
    assert out.splitlines()[1] == "      real c(m, 1), d(*)"


def test_a_program_hosting_kernels_is_blanked_to_its_contains():
    src = """program heat
  use step_cl_mod
  implicit none
  real :: u(4)
  u = 1
  if (u(1) > 0) then
    print *, 'ok'
  end if
contains
  subroutine step(v)
    real v(4)
    v = 2*v
  end subroutine
end program
"""
    out = program_as_module(src, "h.f90", False).split("\n")
    assert out[:9] == ["module heat", "", "  implicit none", "  real :: u(4)", "", "", "",
                       "", "contains"]
