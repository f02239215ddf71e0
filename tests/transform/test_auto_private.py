"""Privatisation in the automatic recipe (:mod:`f2loopy.analysis.private`):
per-column scalars assigned under conditionals, early exits, sorts through
index arrays (``samples/columns``) and CloverLeaf-style hydro kernels
(``samples/hydro2d``): which loops are parallel, the located reason where a
value really crosses iterations, and the translations against gfortran."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.frontend import parse_fortran
from f2loopy.query import loop_dependences, plan_auto

from util import needs_gfortran

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ROOT / "samples" / "columns" / "column_physics.f90"
HYDRO = ROOT / "samples" / "hydro2d" / "hydro_kernels.f90"


def _unit(path: Path):
    return parse_fortran(path.read_text(), path.name)


def _verdicts(knl):
    return {x: (v.parallel, v.reason) for x, v in loop_dependences(knl).items()}


def _kernel(body: str, decls: str, args: str):
    src = f"subroutine t({args})\n  implicit none\n{decls}\n{body}\nend subroutine t\n"
    return parse_fortran(src, "t.f90")["t"]


COLUMN_DECLS = """
  integer, intent(in) :: klon, klev, kidia, kfdia
  double precision, intent(in) :: pt(klon, klev)
  double precision, intent(out) :: pout(klon, klev)
  double precision :: zfac
  integer :: jk, jl"""


def test_column_loops_are_parallel_with_private_scalars():
    tu = _unit(COLUMNS)
    assert _verdicts(tu["cond_scalars"]) == {
        "jl": (True, ""), "jk": (False, "carries a dependence on 'pflux' (lines 47 and 47)"),
        "jl_1": (True, "")}
    # the search leaves its level loop early; the column loop stays parallel
    assert _verdicts(tu["early_exit"])["jl"] == (True, "")
    # the loop index's value after the exit is the column's own
    assert _verdicts(tu["insertion_order"])["jl"] == (True, "")
    # data-dependent subscripts in the species axis: the column axis differs
    v = _verdicts(tu["species_order"])
    assert [x for x, (par, _) in v.items() if x.startswith("jl")] == \
        ["jl", "jl_1", "jl_2", "jl_3", "jl_4"]
    assert all(v[x][0] for x in v if x.startswith("jl"))


def test_plans_map_every_column_loop():
    tu = _unit(COLUMNS)
    summaries = [plan_auto(k, verify=generate_code).summary() for k in tu]
    assert summaries == [
        "auto: kernel 'cond_scalars': plan grid, jl -> g.0/l.0, jl_1 -> g.0/l.0",
        "auto: kernel 'early_exit': plan grid, jl -> g.0/l.0",
        "auto: kernel 'species_order': plan grid, jm -> g.1/l.1, jl -> g.0/l.0, "
        "jl_1 -> g.0/l.0, jl_2 -> g.0/l.0, jl_3 -> g.0/l.0, jn_1 -> g.1/l.1, jl_4 -> g.0/l.0",
        "auto: kernel 'insertion_order': plan grid, jl -> g.0/l.0, jm -> g.1/l.1",
        "auto: kernel 'whole_fills': plan one-group, zacc_i1 -> l.0 (one group of 128), "
        "pflux_i1 -> l.0 (one group of 128), psum_i1 -> l.0 (one group of 128), "
        "jl -> l.0 (one group of 128), jl_1 -> l.0 (one group of 128)"]


def test_scalar_assigned_only_under_a_condition_keeps_the_loop_sequential():
    knl = _kernel("""
  do jk = 1, klev
    do jl = kidia, kfdia
      if (pt(jl, jk) > 0.5d0) zfac = pt(jl, jk)
      pout(jl, jk) = zfac
    end do
  end do""", COLUMN_DECLS, "klon, klev, kidia, kfdia, pt, pout")
    why = ("carries a dependence on 'zfac': line 13 may read the value of an earlier "
           "iteration (the assignment at line 12 before it does not cover every case)")
    assert _verdicts(knl) == {"jk": (False, why), "jl": (False, why)}
    out = plan_auto(knl, verify=generate_code)
    assert out.plan == "sequential"
    assert f"loop 'jl' {why}" in out.notes


@pytest.mark.parametrize("branches, parallel", [
    # if / else if / else: every case assigns
    ("""if (pt(jl, jk) > 0.5d0) then
        zfac = 1.0d0
      else if (pt(jl, jk) > 0.25d0) then
        zfac = 2.0d0
      else
        zfac = 3.0d0
      end if""", True),
    # no else: a case leaves the previous column's value
    ("""if (pt(jl, jk) > 0.5d0) then
        zfac = 1.0d0
      else if (pt(jl, jk) > 0.25d0) then
        zfac = 2.0d0
      end if""", False),
    # a default, then a conditional update
    ("""zfac = 0.0d0
      if (pt(jl, jk) > 0.5d0) zfac = zfac + 1.0d0""", True),
    # the condition changes between the assignment and the read
    ("""if (pt(jl, jk) > 0.5d0) zfac = 1.0d0
      pout(jl, jk) = 2.0d0
      if (pout(jl, jk) > 0.5d0) pout(jl, jk) = zfac""", False),
])
def test_conditional_assignments(branches, parallel):
    knl = _kernel(f"""
  do jk = 1, klev
    do jl = kidia, kfdia
      {branches}
      pout(jl, jk) = pout(jl, jk) + zfac
    end do
  end do""", COLUMN_DECLS.replace("intent(out) :: pout", "intent(inout) :: pout"),
                  "klon, klev, kidia, kfdia, pt, pout")
    assert _verdicts(knl)["jl"][0] is parallel


def test_value_read_after_the_loop_keeps_it_sequential():
    knl = _kernel("""
  do jl = kidia, kfdia
    zfac = pt(jl, 1)
  end do
  pout(1, 1) = zfac""", COLUMN_DECLS, "klon, klev, kidia, kfdia, pt, pout")
    assert _verdicts(knl) == {"jl": (False, "carries a dependence on 'zfac': line 13 reads "
                                     "the value the loop leaves in it (each iteration "
                                     "would need its own copy)")}


def test_value_from_an_enclosing_loops_earlier_iteration():
    # zfac is read at the level loop's start: the previous level's last column
    knl = _kernel("""
  zfac = 0.0d0
  do jk = 1, klev
    pout(1, jk) = zfac
    do jl = kidia, kfdia
      zfac = pt(jl, jk)
    end do
  end do""", COLUMN_DECLS, "klon, klev, kidia, kfdia, pt, pout")
    assert _verdicts(knl)["jl"] == (False, "carries a dependence on 'zfac': line 12 reads "
                                    "the value the loop leaves in it (each iteration "
                                    "would need its own copy)")


def test_hydro_kernels_are_parallel_in_both_loops():
    tu = _unit(HYDRO)
    for name in ("viscosity", "pdv"):
        assert _verdicts(tu[name]) == {"k": (True, ""), "j": (True, "")}
        assert plan_auto(tu[name], verify=generate_code).summary() == \
            f"auto: kernel '{name}': plan grid, k -> g.1/l.1, j -> g.0/l.0"


@needs_gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("path, sizes", [
    (COLUMNS, ["klon=13", "kidia=2", "kfdia=12", "klev=9"]),
    (HYDRO, ["x_min=1", "x_max=11", "y_min=1", "y_max=7"]),
])
def test_check_transform_auto(path, sizes):
    args = [a for s in sizes for a in ("--size", s)]
    res = CliRunner().invoke(main, ["check", "--transform", "auto", *args, str(path)])
    assert res.exit_code == 0, res.output
    assert "FAIL" not in res.output


SPECIES = """subroutine t(n, opt, lflag, a, b)
  integer, intent(in) :: n, opt
  logical, intent(in) :: lflag
  double precision, intent(in) :: a(n)
  double precision, intent(out) :: b(n)
  double precision :: z, zv(3)
  integer :: i, m
  z = 0
  zv(1) = 1
  zv(2) = 2
  zv(3) = 3
  do i = 1, n
    if (opt == 0) then
      z = a(i)
    else if (opt == 1) then
      z = 2*a(i)
    end if
    b(i) = z
    do m = 1, 3
      if (lflag .and. m == 2) zv(2) = a(i)
      b(i) = b(i) + zv(m)
    end do
  end do
end subroutine
"""


@pytest.mark.parametrize("change, why", [
    # z: for other values of opt no iteration assigns it (the value from
    # before the loop); zv(m): the element each iteration assigns is assigned
    # before it is read where m == 2, and no iteration assigns the others
    (("", ""), ""),
    # the element is assigned at m == 1 but read at m == 2: not proven
    (("lflag .and. m == 2", "lflag .and. m == 1"),
     "line 21 may read the value of an earlier iteration (the assignment at line 20 "
     "before it does not cover every case)"),
    # a condition that changes from iteration to iteration
    (("lflag .and. m == 2", "a(i) > 0 .and. m == 2"),
     "line 21 may read the value of an earlier iteration (the assignment at line 20 "
     "before it does not cover every case)"),
    # read before this iteration assigns it
    (("b(i) = z", "b(i) = z + zv(2)"), "line 18 may read the value of an earlier iteration"),
])
def test_species_arrays_and_switches(change, why):
    knl = parse_fortran(SPECIES.replace(*change), "t.f90")["t"]
    v = loop_dependences(knl)["i"]
    assert (v.parallel, v.reason) == (not why, f"carries a dependence on 'zv': {why}"
                                      if why else "")


def test_assumptions_rule_out_switch_values():
    knl = parse_fortran("""subroutine t(n, opt, a, b)
  integer, intent(in) :: n, opt
  double precision, intent(in) :: a(n)
  double precision, intent(out) :: b(n)
  double precision :: z
  integer :: i
  z = 0
  do i = 1, n
    if (opt == 0) then
      z = a(i)
    else if (opt == 1) then
      z = 2*a(i)
    end if
    b(i) = z
    if (a(i) > 0.5d0) z = 1
  end do
end subroutine
""", "t.f90")["t"]
    # for other values of opt, the read sees what an earlier iteration left
    v = loop_dependences(knl)["i"]
    assert (v.parallel, v.reason) == (False, (
        "carries a dependence on 'z': line 14 may read the value of an earlier iteration "
        "(the assignments at lines 10, 12 before it do not cover every case)"))
    from f2loopy.transform.parameters import assume
    assert loop_dependences(assume(knl, "opt >= 0 and opt <= 1"))["i"].parallel
    assert not loop_dependences(assume(knl, "opt >= 0 and opt <= 2"))["i"].parallel


def test_an_element_written_in_another_iteration_is_not_ruled_out():
    # zv(i) written in iteration 1 is what iteration 2 reads as zv(1) when
    # a(2) <= 0: "the subscripts differ in this iteration" proves nothing
    knl = parse_fortran("""subroutine t(n, a, b)
  integer, intent(in) :: n
  double precision, intent(in) :: a(n)
  double precision, intent(out) :: b(n)
  double precision :: zv(100)
  integer :: i
  zv(1) = 0
  do i = 1, n
    if (a(i) > 0.0d0) zv(i) = a(i)
    b(i) = zv(1)
  end do
end subroutine
""", "t.f90")["t"]
    v = loop_dependences(knl)["i"]
    assert not v.parallel and "'zv'" in v.reason


# {{{ each work-item's own run (the flow check's per-lane mode)

@pytest.mark.parametrize("init, body, why", [
    ("", """    s = a(i, k)
    b(i, k) = s""", ""),
    # written under a condition that may be false: the value another
    # work-item left (with the work-items run one after the other)
    ("", """    if (a(i, k) > 0.5d0) s = a(i, k)
    b(i, k) = s""", "line 10 may read a value another work-item wrote"),
    # read before the work-item writes it
    ("", """    b(i, k) = s
    s = a(i, k)""", "line 9 may read a value another work-item wrote"),
    # every work-item sets it first: whatever it reads later is its own
    ("  s = 0", """    if (a(i, k) > 0.5d0) s = a(i, k)
    b(i, k) = s""", ""),
])
def test_private_in_each_work_items_run(init, body, why):
    """A private scalar needs no dataflow check where each work-item, running
    the statements in order, writes it before every read (with no
    sequential reference order, the kernel's meaning is that run)."""
    from f2loopy.analysis.accesses import instruction_accesses
    from f2loopy.analysis.private import Privatisation
    from f2loopy.transform.iname import tag_inames
    knl = parse_fortran(f"""subroutine t(n, m, a, b)
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  double precision, intent(out) :: b(n, m)
  double precision :: s
  integer :: i, k
{init}
  do k = 1, m
  do i = 1, n
{body}
  end do
  end do
end subroutine
""".replace("\n\n", "\n"), "t.f90")["t"]
    knl = tag_inames(knl, "i:l.0")
    accs = [a for insn in knl.instructions for a in instruction_accesses(knl, insn)
            if a.name == "s"]
    assert Privatisation(knl, lanes=knl.hardware_inames()).why_not_per_lane("s", accs) == why

# }}}
