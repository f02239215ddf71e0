"""Derived types: type(t) dummy arguments and module variables (IFS style
``use yoecldp, only: yrecldp``), nested types, array components, ``%``
access; the glue takes objects with attributes; the Fortran glue is a
drop-in checked against the original in the same gfortran-built program."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from types import SimpleNamespace as NS

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.ir.serialize import decode_kernel, encode_kernel
from f2loopy.ir.roles import Component
from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain

YOECLDP = """\
module yoecldp
  implicit none
  integer, parameter :: jprb = selected_real_kind(13, 300)
  type inner
    real(jprb) :: x = 2.0_jprb
  end type inner
  type tecldp
    real(jprb) :: ramin = 1.0e-8_jprb
    real(jprb) :: rlmin
    integer :: ncount
    real(jprb) :: coef(3) = 0.5_jprb
    type(inner) :: q
  end type tecldp
  type(tecldp) :: yrecldp
end module yoecldp
"""

KERNEL = """\
subroutine clk(n, t, st)
  use yoecldp, only: yrecldp, tecldp, jprb
  implicit none
  integer, intent(in) :: n
  real(jprb), intent(inout) :: t(n)
  type(tecldp), intent(inout) :: st
  integer :: i
  do i = 1, n
    t(i) = max(t(i), yrecldp%ramin) * yrecldp%coef(2) + st%q%x + st%coef(1)
  end do
  st%ncount = st%ncount + 1
  st%coef(3) = t(1)
  yrecldp%rlmin = t(n)
end subroutine clk
"""


def test_components_are_flattened():
    knl = parse_fortran(YOECLDP + KERNEL, "k.f90")["clk"]
    comps = [(a.name, a.role.path, a.intent) for a in knl.fortran_args
             if isinstance(a.role, Component)]
    assert comps == [("st_ncount", ("st", "ncount"), "inout"),
                     ("st_coef", ("st", "coef"), "inout"), ("st_q_x", ("st", "q", "x"), "inout")]
    assert knl.arg_dict["st_coef"].shape == (3,)
    assert knl.arg_dict["st_coef"].role == Component(
        path=("st", "coef"), type_module="yoecldp", type_name="tecldp", type_rank=0)
    stored = {a.role.key: a for a in knl.storage_args}
    assert sorted(stored) == [("module", "yoecldp", "yrecldp", "coef"),
                              ("module", "yoecldp", "yrecldp", "ramin"),
                              ("module", "yoecldp", "yrecldp", "rlmin")]
    assert float(stored[("module", "yoecldp", "yrecldp", "ramin")].role.init) == 1e-8
    again = decode_kernel(encode_kernel(knl))
    assert again.arg_dict["st_q_x"].role.path == ("st", "q", "x")
    assert [a.role for a in again.storage_args] == [a.role for a in knl.storage_args]


@pytest.mark.parametrize("body, message", [
    ("st%nope = 1", "k.f90:28:3: error: type 'tecldp' has no component 'nope'"),
    ("st%q = 1", "k.f90:28:3: error: 'st%q' is of type(inner): only a variable, element or "
     "component of type(inner) can be assigned to it (assign the components one by one)"),
    ("t(1) = n%x", "k.f90:28:10: error: 'n' is not of a derived type"),
])
def test_component_errors(body, message):
    src = YOECLDP + KERNEL.replace("  yrecldp%rlmin = t(n)\n", f"  {body}\n")
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "k.f90")
    assert e.value.format().splitlines()[0] == message


def test_unknown_type_and_arrays_of_types():
    with pytest.raises(FortranError) as e:
        parse_fortran("subroutine s(p)\n  type(nowhere) :: p\nend\n", "t.f90")
    assert e.value.format().splitlines()[0] == (
        "t.f90:2:8: error: type 'nowhere' is not defined (define it in this unit or in a module "
        "the unit uses)")
    # a module array of derived type: one module array per component (issue 27)
    src = YOECLDP.replace("type(tecldp) :: yrecldp", "type(tecldp) :: yrecldp(2)") + \
        "subroutine s(x)\n  use yoecldp\n  real(8) x\n  x = yrecldp(1)%rlmin\nend\n"
    arg = next(a for a in parse_fortran(src, "t.f90").kernels[0].args
               if a.name.startswith("yrecldp"))
    assert arg.shape == (2,) and arg.role.path == ("yrecldp", "rlmin")
    assert arg.role.type_rank == 1


def _load(tmp_path):
    from f2loopy.pipeline import translate_text, write_outputs
    (tmp_path / "yoecldp.f90").write_text(YOECLDP)
    path = tmp_path / "clk.f90"
    path.write_text(KERNEL)
    write_outputs(translate_text(KERNEL, path, include_dirs=[tmp_path]).outputs)
    spec = importlib.util.spec_from_file_location("clk_cl", tmp_path / "clk_cl.py")
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)
    return glue


def _reference(t, st_coef, q_x, ncount, ramin=1e-8, coef2=0.5):
    t = t.copy()
    coef = st_coef.copy()
    t = np.maximum(t, ramin) * coef2 + q_x + coef[0]
    coef[2] = t[0]
    return t, coef, ncount + 1, t[-1]


def test_python_glue_takes_objects(tmp_path, cl_queue):
    glue = _load(tmp_path)
    t0 = np.array([1e-9, 1.0, 2.0, -3.0])
    st = NS(q=NS(x=1.0), coef=np.array([10.0, 20.0, 30.0]), ncount=3)
    t = t0.copy()
    glue.clk(4, t, st, queue=cl_queue)
    want_t, want_coef, want_n, rlmin = _reference(t0, np.array([10.0, 20.0, 30.0]), 1.0, 3)
    np.testing.assert_allclose(t, want_t, rtol=1e-14)
    np.testing.assert_allclose(st.coef, want_coef, rtol=1e-14)      # updated in place
    assert st.ncount == want_n                                      # set on the object
    assert glue.yoecldp.yrecldp.rlmin == rlmin
    assert "st: type(tecldp) of module yoecldp: an object with the components ncount " \
        "(updated), coef (updated), q%x" in glue.clk.__doc__

    @dataclass
    class Inner:
        x: float

    @dataclass
    class Tecldp:
        ncount: int
        coef: np.ndarray
        q: Inner
    glue.yoecldp.yrecldp.ramin = 5.0           # IFS style: constants set by the caller
    d = Tecldp(0, np.zeros(3), Inner(0.0))
    t = np.array([1.0, 7.0])
    glue.clk(2, t, d, queue=cl_queue)
    assert t.tolist() == [2.5, 3.5] and d.ncount == 1 and d.coef[2] == 2.5
    with pytest.raises(glue.KernelArgumentError) as e:
        glue.clk(2, t, NS(ncount=1, coef=np.zeros(3)), queue=cl_queue)
    assert str(e.value) == ("clk: argument 'st' has no component 'st%q' (pass an object with "
                            "attributes named like the type's components)")


MAIN = """
program main
  use checks
  use yoecldp
  use clk_cl_mod
  implicit none
  real(jprb) :: t(5), u(5)
  type(tecldp) :: a, b
  integer :: k
  do k = 1, 5
    t(k) = k - 2.5d0
  end do
  u = t
  a%ncount = 7; a%coef = [1d0, 2d0, 3d0]; a%q%x = -1d0
  b = a
  yrecldp%ramin = 0.25d0
  call clk(5, t, a)
  yrecldp%rlmin = 0
  call clk_cl(5, u, b)
  call check(maxval(abs(t - u)) < 1d-13, "t")
  call check(b%ncount == a%ncount .and. maxval(abs(b%coef - a%coef)) < 1d-13, "st written")
  call check(abs(yrecldp%rlmin - t(5)) < 1d-13, "module variable written")
  call done()
end program
"""


@needs_toolchain
def test_fortran_glue_takes_the_derived_type(tmp_path):
    runtime = build_runtime(tmp_path)
    _load(tmp_path)
    sources = [tmp_path / "yoecldp.f90", tmp_path / "clk.f90", tmp_path / "clk_cl.c",
               tmp_path / "clk_cl.f90"]
    proc = compile_and_run(tmp_path, runtime, sources, MAIN)
    assert_all_ok(proc, 3)


def test_component_names_ignore_case(tmp_path, cl_queue):
    """Fortran names ignore case: an object may spell the components in lower
    or upper case whatever the declaration says."""
    from util import translate_and_load
    src = """\
module yomcst
  type tomcst
    real(8) :: RTT
    integer :: NCALL
  end type
end module
subroutine bump(x, YDCST)
  use yomcst
  real(8), intent(inout) :: x
  type(tomcst), intent(inout) :: YDCST
  x = x + ydcst%rtt
  YDCST%ncall = YDCST%NCALL + 1
end subroutine
"""
    glue, _ = translate_and_load(src, tmp_path, filename="b.f90")
    low = NS(rtt=2.0, ncall=0)
    assert glue.bump(1.0, low, queue=cl_queue) == 3.0
    assert low.ncall == 1 and not hasattr(low, "NCALL")
    up = NS(RTT=0.5, NCALL=4)
    assert glue.bump(1.0, up, queue=cl_queue) == 1.5
    assert up.NCALL == 5


CALLS = """\
module yomcst
  type inner
    real(8) :: w(3)
  end type
  type tomcst
    real(8) :: rtt = 273.16d0
    integer :: ncall
    type(inner) :: q
  end type
end module
subroutine helper(x, c)
  use yomcst
  real(8), intent(inout) :: x
  type(tomcst), intent(inout) :: c
  x = x + c%rtt + c%q%w(2)
  c%ncall = c%ncall + 1
end subroutine
subroutine set_w3(q, y)
  use yomcst
  type(inner), intent(inout) :: q
  real(8) y
  q%w(3) = y
end subroutine
subroutine top(n, x, ydcst)
  use yomcst
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  type(tomcst), intent(inout) :: ydcst
  integer :: i
  do i = 1, n
    call helper(x(i), ydcst)
  end do
  call set_w3(ydcst%q, x(1))
end subroutine
"""


def test_derived_arguments_of_inlined_procedures():
    top = parse_fortran(CALLS, "c.f90")["top"]
    assert [(a.name, a.intent) for a in top.fortran_args] == [
        ("n", "in"), ("x", "inout"), ("ydcst_rtt", "inout"), ("ydcst_ncall", "inout"),
        ("ydcst_q_w", "inout")]
    assert {"ydcst_ncall", "ydcst_q_w", "x"} <= top.written_variables()
    bad = CALLS.replace("call set_w3(ydcst%q, x(1))", "call set_w3(ydcst, x(1))")
    with pytest.raises(FortranError) as e:
        parse_fortran(bad, "c.f90")
    assert e.value.format().splitlines()[0] == (
        "c.f90:33:15: error: argument 'q' of 'set_w3' is type(inner), but the actual argument "
        "'ydcst' is not")


CALLS_MAIN = """
program main
  use checks
  use yomcst
  use top_cl_mod
  implicit none
  real(8) :: x(4) = [1d0, 2d0, 3d0, 4d0], y(4)
  type(tomcst) :: a, b
  y = x
  a%ncall = 0; a%q%w = [1d0, 2d0, 3d0]
  b = a
  call top(4, x, a)
  call top_cl(4, y, b)
  call check(maxval(abs(x - y)) < 1d-12, "x")
  call check(a%ncall == b%ncall .and. all(a%q%w == b%q%w), "components written")
  call done()
end program
"""


@needs_toolchain
def test_derived_arguments_of_inlined_procedures_against_gfortran(tmp_path):
    from fortran_util import translate
    runtime = build_runtime(tmp_path)
    sources = translate(tmp_path, "calls", CALLS)
    proc = compile_and_run(tmp_path, runtime, sources, CALLS_MAIN)
    assert_all_ok(proc, 2)


POINTS = """\
module geom
  type point
    real(8) :: x
    real(8) :: w(2)
    integer :: tag
  end type
end module
subroutine move(n, pts, dx)
  use geom
  integer, intent(in) :: n
  type(point), intent(inout) :: pts(n)
  real(8), intent(in) :: dx
  integer :: i
  do i = 1, n
    pts(i)%x = pts(i)%x + dx * pts(i)%w(2)
    pts(i)%w(1) = pts(i)%x
    pts(i)%tag = i
  end do
end subroutine
"""


def test_arrays_of_derived_type_are_flattened():
    knl = parse_fortran(POINTS, "p.f90")["move"]
    w = knl.arg_dict["pts_w"]
    assert w.role == Component(path=("pts", "w"), type_module="geom", type_name="point",
                               type_rank=1)
    assert [str(s) for s in w.shape] == ["2", "n"]          # the component's axes first
    with pytest.raises(FortranError) as e:
        parse_fortran(POINTS.replace("pts(i)%tag = i", "pts%tag = i"), "p.f90")
    assert e.value.format().splitlines()[0] == (
        "p.f90:17:5: error: 'pts%tag': components of a whole array of derived type are not "
        "supported (index it: pts(i)%...)")


def test_python_glue_takes_structured_arrays(tmp_path, cl_queue):
    from util import translate_and_load
    glue, _ = translate_and_load(POINTS, tmp_path, filename="p.f90")
    dt = np.dtype([("X", "f8"), ("w", "f8", (2,)), ("tag", "i4")])
    pts = np.zeros(3, dtype=dt)
    pts["X"] = [1.0, 2.0, 3.0]
    pts["w"][:, 1] = [10.0, 20.0, 30.0]
    glue.move(3, pts, 0.5, queue=cl_queue)
    assert pts["X"].tolist() == [6.0, 12.0, 18.0]
    assert pts["w"].tolist() == [[6.0, 10.0], [12.0, 20.0], [18.0, 30.0]]
    assert pts["tag"].tolist() == [1, 2, 3]
    with pytest.raises(glue.KernelArgumentError) as e:
        glue.move(3, np.zeros(3, dtype=[("x", "f8")]), 0.5, queue=cl_queue)
    assert str(e.value) == "move: argument 'pts' has no field 'pts%w' (its dtype has x)"


POINTS_MAIN = """
program main
  use checks
  use geom
  use move_cl_mod
  implicit none
  type(point) :: a(4), b(4)
  integer :: k
  do k = 1, 4
    a(k)%x = k; a(k)%w = [0d0, 0.5d0 * k]; a(k)%tag = 0
  end do
  b = a
  call move(4, a, 0.25d0)
  call move_cl(4, b, 0.25d0)
  call check(all(abs(a%x - b%x) < 1d-13), "x")
  call check(all(a%tag == b%tag), "tag")
  do k = 1, 4
    call check(all(abs(a(k)%w - b(k)%w) < 1d-13), "w")
  end do
  call done()
end program
"""


@needs_toolchain
def test_fortran_glue_takes_arrays_of_derived_type(tmp_path):
    from fortran_util import translate
    runtime = build_runtime(tmp_path)
    sources = translate(tmp_path, "points", POINTS)
    proc = compile_and_run(tmp_path, runtime, sources, POINTS_MAIN)
    assert_all_ok(proc, 6)
