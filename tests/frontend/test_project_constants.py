"""Shapes met in fresh real projects (issue 27, the measure stop): character
named constants (NPB's ``npbparams.h``, routine names kept for messages), a
serial stub that prints its character argument before ``stop``, intrinsic
modules' entities a module uses for its host-side parts (``type(c_ptr)``
components of a GOcean-style grid type), and type definitions with
attributes (``type, public ::``, ``extends``, ``sequence``, ``bind(c)``)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.pipeline import translate_text, write_outputs
from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain
from util import farray, needs_gfortran, run_both


def _error(source: str, **keywords) -> str:
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "k.f90", **keywords)
    return e.value.format().splitlines()[0]


def _load(tmp_path: Path, stem: str, source: str, search: Path | None = None):
    path = tmp_path / f"{stem}.f90"
    path.write_text(source)
    result = translate_text(source, path,
                            include_dirs=[str(search)] if search is not None else [])
    write_outputs(result.outputs)
    spec = importlib.util.spec_from_file_location(f"{stem}_cl", tmp_path / f"{stem}_cl.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# {{{ character parameters

PARAMS = """subroutine scale_tagged(n, a, tag, total)
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: a(n)
  character, intent(in) :: tag
  integer, intent(out) :: total
  character compiletime*11
  parameter (compiletime='28 Nov 2026')
  character(len=*), parameter :: subname = 'scale' // '_tagged'
  character(len=4), parameter :: short = 'abcdefg'
  character, parameter :: upper = 'U'
  character(len=*), parameter :: alias = subname
  integer :: i
  total = len(subname) + 100*len(short) + 10000*len(compiletime)
  if (alias(1:5) == 'scale' .and. short == 'abcd  ') total = -total
  do i = 1, n
    if (tag == upper) then
      a(i) = 2*a(i)
    else if (tag == short(2:2)) then
      a(i) = a(i) + len(alias)
    end if
  end do
  print *, subname, ': done', n
end subroutine
"""


def test_character_parameters_are_constants():
    k = parse_fortran(PARAMS, "k.f90")["scale_tagged"]
    assert [s.items for s in k.prints] == [
        (("text", "scale_tagged"), ("text", ": done"), ("integer", 4))]
    # the lengths and comparisons fold away: no character data in the kernel
    assert [a.name for a in k.args] == ["n", "a", "tag", "total"]


@pytest.mark.parametrize("decl, message", [
    ("character(len=n), parameter :: c = 'x'",
     "k.f90:5:34: error: the length of character parameter 'c' is not supported (give it as "
     "a number or as len=*)"),
    ("character(len=2), parameter :: c(2) = ['ab', 'cd']",
     "k.f90:5:34: error: character array parameter 'c' is not supported"),
    ("character(len=2), parameter :: c = 'a' // char(66)",
     "k.f90:5:45: error: the value of character parameter 'c' must be a character constant, "
     "a concatenation of them or another character parameter"),
])
def test_character_parameters_we_cannot_hold(decl, message):
    source = ("subroutine s(n, x)\n  implicit none\n  integer, parameter :: n = 3\n"
              "  real :: x(3)\n  " + decl + "\n  x = 1\nend subroutine\n")
    assert _error(source) == message


@needs_gfortran
@pytest.mark.parametrize("tag", ["U", "b", "q"])
def test_character_parameters_match_gfortran(tmp_path, cl_queue, tag):
    run_both(PARAMS, "scale_tagged", [5, farray(5, np.float64, seed=3), tag, 0],
             tmp_path, cl_queue)

# }}}


# {{{ a serial stub printing its character argument

STUBS = """subroutine halt_stop(string)
  implicit none
  character*(*) :: string
  print*,string
  stop
end subroutine halt_stop

subroutine warn(string, n)
  implicit none
  character(len=*), intent(in) :: string
  integer, intent(in) :: n
  print *, 'warning: ', string, n
  write(*, '(a,a,i3)') 'w: ', string, n
end subroutine warn
"""

PICK = """subroutine pick(n, a, tag)
  implicit none
  integer :: n, i
  real*8 :: a(n)
  character*1 :: tag
  if (tag == 'U') then
    do i = 1, n
      a(i) = 2*a(i)
      if (a(i) > 100) call warn('large value at', i)
    end do
  else
    call halt_stop(' unknown tag in pick')
  end if
end subroutine pick
"""


def test_a_stub_prints_the_constant_it_is_passed(tmp_path):
    stubs = tmp_path / "stubs.f90"
    stubs.write_text(STUBS)
    k = parse_fortran(PICK, "k.f90", search_files=[stubs])["pick"]
    assert [s.items for s in k.prints] == [
        (("text", "warning: "), ("text", "large value at"), ("integer", 4)),
        (("text", "w: "), ("text", "large value at"), ("integer", 4))]
    assert [s.actions for s in k.error_sites] == [
        (("write", "*", "*", (("text", " unknown tag in pick"),)), ("stop", None))]


def test_a_stub_given_a_variable_string_is_still_refused(tmp_path):
    stubs = tmp_path / "stubs.f90"
    stubs.write_text(STUBS)
    caller = PICK.replace("character*1 :: tag", "character*1 :: tag\n  character*8 :: msg") \
        .replace("call halt_stop(' unknown tag in pick')", "msg = tag\n    call halt_stop(msg)")
    assert _error(caller, search_files=[stubs]) == (
        "stubs.f90:4:10: error: character variable 'string' can only be compared (==, /=), "
        "used in 'select case', or passed to lsame or ichar in a kernel".replace(
            "stubs.f90", str(stubs)))


@needs_gfortran
@pytest.mark.usefixtures("opencl_device")
def test_a_stub_prints_and_stops_as_gfortran_does(tmp_path, cl_queue, capfd):
    (tmp_path / "stubs.f90").write_text(STUBS)
    main = tmp_path / "main.f90"
    main.write_text(STUBS + PICK + """program main
  implicit none
  real(8) :: a(4) = [1d0, 70d0, 2d0, 60d0]
  call pick(4, a, 'U')
  print *, a
end program
""")
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    expect = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True,
                            check=True).stdout
    glue = _load(tmp_path, "pick", PICK, tmp_path)
    capfd.readouterr()
    a = np.array([1.0, 70.0, 2.0, 60.0])
    glue.pick(4, a, "U", queue=cl_queue)
    cl_queue.finish()
    got = capfd.readouterr().out
    assert expect.splitlines()[:4] == got.splitlines() == [
        " warning: large value at           2", "w: large value at  2",
        " warning: large value at           4", "w: large value at  4"]
    assert a.tolist() == [2.0, 140.0, 4.0, 120.0]
    with pytest.raises(glue.KernelStopError) as info:
        glue.pick(4, a, "V", queue=cl_queue)
    assert str(info.value) == f"pick: {info.value.where}:  unknown tag in pick; STOP"

# }}}


# {{{ iso_c_binding's pointers in a module's host-side type

GRID = """module grid_m
  use iso_c_binding, only: c_ptr, c_null_ptr
  implicit none
  private
  type, public :: grid_t
     integer :: nx, ny
     real(8) :: dx
     type(c_ptr) :: dx_device
  end type grid_t
end module grid_m
"""

KERN = """module kern_m
  use grid_m
  implicit none
contains
  subroutine compute_cu(n, m, cu, p, u)
    integer, intent(in) :: n, m
    real(8), intent(out) :: cu(n, m)
    real(8), intent(in) :: p(n, m), u(n, m)
    integer :: i, j
    do j = 1, m
      do i = 2, n
        cu(i, j) = 0.5d0*(p(i, j) + p(i-1, j))*u(i, j)
      end do
    end do
  end subroutine compute_cu
end module kern_m
"""


def test_c_pointers_of_a_used_module_do_not_block_a_kernel(tmp_path):
    grid = tmp_path / "grid_m.f90"
    grid.write_text(GRID)
    k = parse_fortran(KERN, "k.f90", search_files=[grid])["compute_cu"]
    assert [a.name for a in k.args] == ["n", "m", "cu", "p", "u"]


@pytest.mark.parametrize("use, body, message", [
    ("use iso_c_binding", "type(c_ptr) :: q",
     "k.f90:5:8: error: 'c_ptr' of intrinsic module 'iso_c_binding' cannot be used in a kernel "
     "(only its kind constants are supported: a kernel has no C pointers, procedures or "
     "character constants of it)"),
    ("use iso_c_binding, only: c_associated, c_null_ptr",
     "if (c_associated(c_null_ptr)) x = 1",
     "k.f90:2:28: error: 'c_associated' of intrinsic module 'iso_c_binding' cannot be used in a "
     "kernel (only its kind constants are supported: a kernel has no C pointers, procedures "
     "or character constants of it)"),
    ("use iso_c_binding, only: p => c_ptr", "x = 1",
     "k.f90:2:33: error: 'c_ptr' of intrinsic module 'iso_c_binding' cannot be used in a "
     "kernel (only its kind constants are supported: a kernel has no C pointers, procedures "
     "or character constants of it)"),
    ("use iso_c_binding, only: c_nope", "x = 1",
     "k.f90:2:28: error: module 'iso_c_binding' has no public entity 'c_nope'"),
    ("use iso_fortran_env, only: lock_type", "type(lock_type) :: l",
     "k.f90:5:8: error: 'lock_type' of intrinsic module 'iso_fortran_env' cannot be used in "
     "a kernel (only its kind, unit and iostat constants are supported)"),
])
def test_c_pointers_in_a_kernel_are_located_errors(use, body, message):
    source = (f"subroutine s(x)\n  {use}\n  implicit none\n  real(8) :: x\n  {body}\n"
              "end subroutine\n")
    assert _error(source) == message

# }}}


# {{{ type definitions with attributes

TYPES = """module fields_m
  implicit none
  type, public :: base_t
     integer :: n
     real(8) :: scale
  end type base_t
  type, public, extends(base_t) :: field_t
     real(8) :: offset
  end type field_t
  type, extends(field_t) :: tagged_t
     integer :: tag
  end type tagged_t
  type :: pair_t
     sequence
     real(8) :: a, b
  end type pair_t
  type, bind(c) :: cpair_t
     real(8) :: a, b
  end type cpair_t
  type, abstract :: shape_t
     integer :: id
  end type shape_t
contains
  subroutine apply(f, t, p, c, m, x)
    type(field_t), intent(inout) :: f
    type(tagged_t), intent(in) :: t
    type(pair_t), intent(in) :: p
    type(cpair_t), intent(in) :: c
    integer, intent(in) :: m
    real(8), intent(inout) :: x(m)
    integer :: i
    do i = 1, min(m, f%n)
      x(i) = f%scale*x(i) + f%offset + f%base_t%scale + t%field_t%base_t%n + t%tag
    end do
    x(m) = x(m) + p%a - p%b + c%a*c%b + t%offset
    f%base_t%n = f%n + 1
  end subroutine apply
end module fields_m
"""


def test_type_attributes_and_inherited_components():
    k = parse_fortran(TYPES, "k.f90")["apply"]
    assert [(a.name, a.intent) for a in k.fortran_args] == [
        ("f_n", "inout"), ("f_scale", "inout"), ("f_offset", "inout"), ("t_n", "in"),
        ("t_offset", "in"), ("t_tag", "in"), ("p_a", "in"), ("p_b", "in"), ("c_a", "in"),
        ("c_b", "in"), ("m", "in"), ("x", "inout")]


@pytest.mark.parametrize("body, message", [
    ("f%base_t = f%base_t",
     "k.f90:36:5: error: the parent component 'base_t' of type 'field_t' cannot be used as a "
     "whole (use its components, which the extended type inherits)"),
    ("x(1) = f%shape_t%id", "k.f90:36:5: error: type 'field_t' has no component 'shape_t'"),
])
def test_parent_components_errors(body, message):
    source = TYPES.replace("    f%base_t%n = f%n + 1\n", f"    {body}\n")
    assert _error(source) == message


def test_type_attributes_we_do_not_know_are_refused():
    source = TYPES.replace("type, abstract :: shape_t", "type, bind(c, name='x') :: shape_t") \
        .replace("type(tagged_t), intent(in) :: t", "type(shape_t), intent(in) :: t")
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "k.f90")
    assert e.value.format().splitlines()[0].startswith("k.f90:20:")


TYPES_MAIN = """
program main
  use checks
  use fields_m
  use apply_cl_mod
  implicit none
  type(field_t) :: f1, f2
  type(tagged_t) :: t
  type(pair_t) :: p
  type(cpair_t) :: c
  real(8) :: x(5) = [1d0, 2d0, 3d0, 4d0, 5d0], y(5)
  y = x
  f1%n = 4; f1%scale = 1.5d0; f1%offset = -0.25d0
  f2 = f1
  t%n = 3; t%scale = 0; t%offset = 7; t%tag = 11
  p%a = 2; p%b = 0.5d0; c%a = 3; c%b = 4
  call apply(f1, t, p, c, 5, x)
  call apply_cl(f2, t, p, c, 5, y)
  call check(maxval(abs(x - y)) < 1d-12, "x")
  call check(f1%n == f2%n .and. f2%n == 5, "inherited component written")
  call done()
end program
"""


@needs_toolchain
def test_extended_types_against_gfortran(tmp_path):
    from fortran_util import translate
    runtime = build_runtime(tmp_path)
    sources = translate(tmp_path, "apply", TYPES)
    proc = compile_and_run(tmp_path, runtime, sources, TYPES_MAIN)
    assert_all_ok(proc, 2)

# }}}


def test_an_array_for_a_scalar_dummy_says_what_to_declare():
    # a serial build's empty halo-exchange stub declared its dummy as a scalar
    source = """subroutine border_exchg_xy(is_, ie_, a)
  implicit none
  integer, intent(in) :: is_, ie_
  real*8, intent(inout) :: a
end subroutine border_exchg_xy
subroutine calc_beta(n, beta)
  implicit none
  integer, intent(in) :: n
  real*8, intent(inout) :: beta(n)
  beta = 2*beta
  call border_exchg_xy(1, n, beta)
end subroutine calc_beta
"""
    assert _error(source) == (
        "k.f90:11:30: error: array 'beta' is passed for scalar argument 'a' of "
        "'border_exchg_xy' (an array needs an array dummy: declare 'a' with dimensions "
        "there, e.g. a(*), or pass one element)")


# {{{ transpose in a constant initializer (a lattice's velocity table)

LATTICE = """module lattice_m
  implicit none
  real(kind=8), dimension(3) :: w = (/ 0.5d0, 0.25d0, 0.25d0 /)
  integer, dimension(3,2) :: c = transpose(reshape((/ 0, 0, &
       1, -1, &
       -1, 1 /), (/2, 3/)))
  integer, parameter :: m(2, 3) = reshape([1, 2, 3, 4, 5, 6], [2, 3])
  integer, parameter :: mt(3, 2) = transpose(m)
end module
subroutine moments(n, f, u)
  use lattice_m
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: f(3, n)
  real(8), intent(out) :: u(2, n)
  integer :: i, q, k
  do i = 1, n
    do k = 1, 2
      u(k, i) = 0
      do q = 1, 3
        u(k, i) = u(k, i) + w(q)*f(q, i)*c(q, k) + mt(q, k)
      end do
    end do
  end do
end subroutine
"""


def test_transpose_of_constant_matrices():
    k = parse_fortran(LATTICE, "k.f90")["moments"]
    assert k.arg_dict["c"].role.init.tolist() == [[0, 0], [1, -1], [-1, 1]]
    assert k.temporaries["mt"].initializer.tolist() == [[1, 2], [3, 4], [5, 6]]


@pytest.mark.parametrize("decl, message", [
    ("integer, parameter :: t(2, 2) = transpose(reshape([1, 2, 3, 4, 5, 6], [2, 3]))",
     "k.f90:2:45: error: 'reshape' gives shape (2, 3) but 't' is declared with shape (2, 2)"),
    ("integer, parameter :: t(6) = transpose(reshape([1, 2, 3, 4, 5, 6], [2, 3]))",
     "k.f90:2:32: error: 'transpose' gives a matrix, but 't' is declared with rank 1"),
    ("integer, parameter :: t(2, 2) = transpose([1, 2, 3, 4])",
     "k.f90:2:35: error: the argument of 'transpose' in an initializer must be a 'reshape' "
     "or a named constant matrix"),
])
def test_transpose_initializer_errors(decl, message):
    source = f"subroutine s(x)\n  {decl}\n  real :: x\n  x = t(1, 1)\nend subroutine\n"
    assert _error(source) == message


@needs_gfortran
def test_transpose_of_constant_matrices_matches_gfortran(tmp_path, cl_queue):
    run_both(LATTICE, "moments", [4, farray((3, 4), np.float64, seed=5),
                                  np.zeros((2, 4), order="F")], tmp_path, cl_queue)

# }}}


# {{{ type-bound procedures; reductions over allocatable module arrays

CHAIN = """module chain_m
  implicit none
  integer :: n
  real, dimension(:,:), allocatable :: r, v
  type, public :: potential_type
     real    :: pot
     logical :: ovr
   contains
     procedure :: add_potential_type
     generic   :: operator(+) => add_potential_type
  end type potential_type
contains
  function add_potential_type(a, b) result(c)
    type(potential_type) :: c
    class(potential_type), intent(in) :: a, b
    c%pot = a%pot + b%pot
    c%ovr = a%ovr .or. b%ovr
  end function add_potential_type
  subroutine zero_cm
    real, dimension(3) :: c
    c = sum(r, dim=2) / real(n)
    r = r - spread(c, dim=2, ncopies=n)
    c = sum(v, dim=2) / real(n)
    v = v - spread(c, dim=2, ncopies=n)
  end subroutine zero_cm
end module chain_m
"""


def _chain_kernel(source):
    from f2loopy.frontend import read_source, translate_source
    (k,) = translate_source(read_source(source, "k.f90"), kernels=("zero_cm",))
    return k


def test_type_bound_procedures_do_not_hide_a_module_s_kernels():
    k = _chain_kernel(CHAIN)
    assert [a.name for a in k.args if a.name in ("r", "v", "n")] == ["n", "r", "v"]


def test_a_final_procedure_is_refused():
    source = CHAIN.replace("     generic   :: operator(+) => add_potential_type\n",
                           "     generic   :: operator(+) => add_potential_type\n"
                           "     final :: drop\n")
    _chain_kernel(source)             # a kernel that does not use the type
    source = source.replace("    real, dimension(3) :: c\n",
                            "    real, dimension(3) :: c\n    type(potential_type) :: e\n")
    with pytest.raises(FortranError) as e:
        _chain_kernel(source)
    assert e.value.format().splitlines()[0] == (
        "k.f90:11:6: error: type 'potential_type' has a final procedure, which a kernel would "
        "not call (finalisation is not supported)")


CHAIN_MAIN = """program main
  use chain_m
  implicit none
  integer :: i, j
  n = 5
  allocate(r(3, n), v(3, n))
  do j = 1, n
    do i = 1, 3
      r(i, j) = i + 0.37*j*j
      v(i, j) = 0.5*i - 0.11*j
    end do
  end do
  call zero_cm
  print '(es16.8)', r, v
end program
"""


@needs_gfortran
@pytest.mark.usefixtures("opencl_device")
def test_reductions_over_allocatable_module_arrays_match_gfortran(tmp_path, cl_queue):
    main = tmp_path / "main.f90"
    main.write_text(CHAIN + CHAIN_MAIN)
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    out = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True,
                         check=True).stdout
    expect = np.array([float(x) for x in out.split()], dtype=np.float32)
    path = tmp_path / "chain.f90"
    result = translate_text(CHAIN, path, kernels=("zero_cm",))
    write_outputs(result.outputs)
    spec = importlib.util.spec_from_file_location("chain_cl", tmp_path / "chain_cl.py")
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)
    i, j = np.meshgrid(np.arange(1, 4), np.arange(1, 6), indexing="ij")
    glue.chain_m.n = 5
    glue.chain_m.r = np.asfortranarray(i + np.float32(0.37)*j*j, dtype=np.float32)
    glue.chain_m.v = np.asfortranarray(np.float32(0.5)*i - np.float32(0.11)*j,
                                       dtype=np.float32)
    glue.zero_cm(queue=cl_queue)
    got = np.concatenate([glue.chain_m.r.ravel(order="F"), glue.chain_m.v.ravel(order="F")])
    assert np.allclose(got, expect, rtol=1e-5, atol=1e-5)

# }}}


# {{{ a local with an initial value that the procedure assigns: an implicit save

COUNTER = """subroutine counter(n, x, calls)
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  integer, intent(out) :: calls
  integer :: count = 0
  real(8) :: cfl = 0.5d0, half = 0.5d0
  integer :: i
  count = count + 1
  do i = 1, n
    cfl = abs(x(i))*half
    x(i) = x(i)*cfl + count
  end do
  calls = count
end subroutine
"""


def test_assigned_initialized_locals_are_saved():
    from f2loopy.ir.roles import SavedLocal
    k = parse_fortran(COUNTER, "k.f90")["counter"]
    saved = {a.name: a.role.init for a in k.args if isinstance(a.role, SavedLocal)}
    assert saved == {"cfl": 0.5, "count": 0}     # 'half' is never assigned: a constant


@needs_gfortran
@pytest.mark.usefixtures("opencl_device")
def test_implicit_save_matches_gfortran_over_calls(tmp_path, cl_queue):
    main = tmp_path / "main.f90"
    main.write_text(COUNTER + """program main
  implicit none
  real(8) :: x(3) = [1d0, -2d0, 0.5d0]
  integer :: calls, k
  do k = 1, 3
    call counter(3, x, calls)
    print '(i3, 3es24.16)', calls, x
  end do
end program
""")
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    out = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True,
                         check=True).stdout.split()
    glue = _load(tmp_path, "counter", COUNTER)
    x = np.array([1.0, -2.0, 0.5])
    for k in range(3):
        calls = glue.counter(3, x, 0, queue=cl_queue)
        assert calls == int(out[4*k]) == k + 1
        assert np.allclose(x, [float(v) for v in out[4*k + 1:4*k + 4]], rtol=1e-14)

# }}}


def test_a_module_behind_a_link_out_of_the_directory_is_named(tmp_path):
    # a course's solutions/ folder links m_utils.F90 to the one above it: the
    # link leaves the -I directory, so it is not searched, and the message says so
    (tmp_path / "m_utils.f90").write_text("module m_utils\n  integer, parameter :: wp = 8\n"
                                          "end module\n")
    sol = tmp_path / "solutions"
    sol.mkdir()
    (sol / "m_utils.f90").symlink_to("../m_utils.f90")
    source = ("subroutine s(x)\n  use m_utils, only: wp\n  real(wp) :: x\n  x = 2*x\n"
              "end subroutine\n")
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "k.f90", include_dirs=[sol])
    assert e.value.format().splitlines()[0] == (
        f"k.f90:2:7: error: module 'm_utils' is not defined in this file nor in the Fortran "
        f"sources searched ({sol}); not searched: {sol / 'm_utils.f90'}, symbolic link(s) out "
        "of the directories (add the directory a link points to with -I)")
    k = parse_fortran(source, "k.f90", include_dirs=[sol, tmp_path])["s"]
    assert [a.name for a in k.args] == ["x"]


# {{{ iso_fortran_env's units in output statements

GUARD = """subroutine guard(n, x, bad)
  use, intrinsic :: iso_fortran_env, only: output_unit, error_unit
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  integer, intent(out) :: bad
  integer :: i
  bad = 0
  do i = 1, n
    if (x(i) < 0) then
      write(output_unit, *) 'negative at', i
      bad = bad + 1
    end if
  end do
  if (bad > n/2) then
    write(unit=error_unit, fmt='(a,i3)') 'too many negatives: ', bad
    stop 'Error in guard'
  end if
end subroutine
"""


def test_output_and_error_units_of_iso_fortran_env():
    k = parse_fortran(GUARD, "k.f90")["guard"]
    assert [s.items for s in k.prints] == [(("text", "negative at"), ("integer", 4))]
    assert [s.actions for s in k.error_sites] == [
        (("write", "0", "(a,i3)", (("text", "too many negatives: "), ("value", 0))),
         ("stop", "Error in guard"))]
    # diagnostic output to error_unit (not before a stop): printf too (a kernel has no
    # standard error); another unit is a file: refused
    k = parse_fortran(GUARD.replace("write(output_unit, *)", "write(error_unit, *)"),
                      "k.f90")["guard"]
    assert [s.items for s in k.prints] == [(("text", "negative at"), ("integer", 4))]
    with pytest.raises(FortranError) as e:
        parse_fortran(GUARD.replace("write(output_unit, *)", "write(10, *)"), "k.f90")
    assert e.value.format().splitlines()[0].startswith(
        "k.f90:11:7: error: 'write(10, *) 'negative at', i' cannot be translated")


@needs_gfortran
@pytest.mark.usefixtures("opencl_device")
def test_output_unit_prints_as_gfortran_does(tmp_path, cl_queue, capfd):
    main = tmp_path / "main.f90"
    main.write_text(GUARD + """program main
  implicit none
  real(8) :: x(4) = [1d0, -2d0, 3d0, 4d0]
  integer :: bad
  call guard(4, x, bad)
end program
""")
    subprocess.run(["gfortran", "-o", str(tmp_path / "prog"), str(main)], check=True,
                   cwd=tmp_path)
    expect = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True,
                            check=True).stdout
    glue = _load(tmp_path, "guard", GUARD)
    capfd.readouterr()
    assert glue.guard(4, np.array([1.0, -2.0, 3.0, 4.0]), 0, queue=cl_queue) == 1
    cl_queue.finish()
    assert capfd.readouterr().out == expect == " negative at           2\n"
    with pytest.raises(glue.KernelStopError) as info:
        glue.guard(4, np.array([-1.0, -2.0, -3.0, 4.0]), 0, queue=cl_queue)
    assert str(info.value) == (f"guard: {info.value.where}: too many negatives:  3; "
                               "STOP Error in guard")

# }}}
