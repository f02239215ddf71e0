"""Kernels of real projects nobody had tried (issue 27): generic interfaces
that only seemed to write a size, dummies sized by module variables, ..."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend import parse_fortran
from util import needs_gfortran, run_both, translate_and_load

# {{{ a call through a generic name writes what its specific writes (cause 9)

SET_TO_SCALAR = """module setm
  implicit none
  interface set_to_scalar
    module procedure set_1d, set_2d
  end interface
contains
  subroutine set_1d(ni, array, val)
    integer, intent(in) :: ni
    real(8), intent(out) :: array(ni)
    real(8), intent(in) :: val
    array = val
  end subroutine
  subroutine set_2d(ni, nj, array, val)
    integer, intent(in) :: ni, nj
    real(8), intent(out) :: array(ni, nj)
    real(8), intent(in) :: val
    array = val
  end subroutine
end module
subroutine init(ni, nj, a, b)
  use setm
  implicit none
  integer, intent(in) :: ni, nj
  real(8), intent(out) :: a(ni, nj), b(ni)
  call set_to_scalar(ni, nj, a, 1.5d0)
  call set_to_scalar(ni, b, val=-2d0)
end subroutine
"""


def test_a_generic_call_writes_only_what_a_fitting_specific_writes():
    k = parse_fortran(SET_TO_SCALAR, "s.f90")["init"]
    assert [a.name for a in k.args] == ["ni", "nj", "a", "b"]
    assert tuple(map(str, k.arg_dict["a"].shape)) == ("ni", "nj")
    assert [i.assignee_var_names() for i in k.instructions] == [("a",), ("b",)]


@needs_gfortran
def test_a_generic_call_matches_gfortran(tmp_path, cl_queue):
    run_both(SET_TO_SCALAR, "init", [5, 3, np.zeros((5, 3), order="F"), np.zeros(5)],
             tmp_path, cl_queue)

# }}}


# {{{ logical of any kind (cause 2)

CLIP = """subroutine clip(n, x, mask, lo, any_clipped) bind(C, name="clip")
  use iso_c_binding
  implicit none
  integer(c_int), value :: n
  real(c_double), intent(inout) :: x(n)
  logical(c_bool), intent(in) :: mask(n)
  real(c_double), value :: lo
  logical(c_bool), intent(out) :: any_clipped
  integer :: i
  any_clipped = .false.
  do i = 1, n
    if (mask(i) .and. x(i) < lo) then
      x(i) = lo
      any_clipped = .true._c_bool
    end if
  end do
end subroutine

subroutine flags(n, x, neg, big, wide)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  logical(1), intent(out) :: neg(n)
  logical(2), intent(inout) :: big(n)
  logical(8), intent(out) :: wide(n)
  logical(1) :: seen
  integer :: i
  seen = .false.
  do i = 1, n
    neg(i) = x(i) < 0
    big(i) = big(i) .or. abs(x(i)) > 1
    wide(i) = neg(i) .neqv. seen
    seen = seen .or. neg(i)
  end do
end subroutine
"""


def test_logical_kinds_are_the_arguments_storage():
    from f2loopy.codegen import generate_code
    tu = parse_fortran(CLIP, "clip.f90")
    clip, flags = tu["clip"], tu["flags"]
    assert clip.arg_dict["mask"].logical_kind == 1 and clip.arg_dict["any_clipped"].logical_kind == 1
    assert clip.arg_dict["x"].logical_kind == 4
    assert [flags.arg_dict[n].logical_kind for n in ("neg", "big", "wide")] == [1, 2, 8]
    code = generate_code(clip).source
    assert "int const n, __global double *x, __global char const *__restrict__ mask, " \
        "double const lo, __global char *any_clipped)" in code
    code = generate_code(flags).source
    assert "__global char *neg, __global short *big, __global long *wide)" in code


def test_logical_kinds_survive_serialization():
    from f2loopy.ir.serialize import SerializationError, decode_kernel, encode_kernel
    clip = parse_fortran(CLIP, "clip.f90")["clip"]
    record = encode_kernel(clip)
    again = decode_kernel(record)
    assert again.arg_dict["mask"].logical_kind == 1 and again.arg_dict["n"].logical_kind == 4
    assert "logical_kind" not in next(a for a in record["args"] if a["name"] == "n")
    for bad, message in ((3, "invalid logical kind"), (True, "invalid logical kind")):
        next(a for a in record["args"] if a["name"] == "mask")["logical_kind"] = bad
        with pytest.raises(SerializationError, match=message):
            decode_kernel(record)
    next(a for a in record["args"] if a["name"] == "mask")["logical_kind"] = 1
    next(a for a in record["args"] if a["name"] == "x")["logical_kind"] = 1
    with pytest.raises(SerializationError, match="not logical"):
        decode_kernel(record)


def test_logical_kinds_of_module_variables_and_assigned_value_dummies_are_located_errors():
    with pytest.raises(UnsupportedFeatureError) as e:
        parse_fortran("module m\n  logical(1) :: on(4)\nend module\nsubroutine s(x)\n"
                      "  use m\n  real x(4)\n  if (on(1)) x(1) = 0\nend subroutine\n", "m.f90")
    assert e.value.format().splitlines()[0] == (
        "m.f90:2:17: error: logical(1) variable 'on' of a module is not supported (declare it "
        "'logical', or pass it as an argument)")
    with pytest.raises(UnsupportedFeatureError) as e:
        parse_fortran("subroutine s(n, x)\n  integer, value :: n\n  real x(*)\n"
                      "  n = n + 1\n  x(n) = 0\nend subroutine\n", "v.f90")
    assert e.value.format().splitlines()[0] == (
        "v.f90:2:21: error: 'value' dummy argument 'n' is assigned in the procedure: not "
        "supported (assign a local copy of it instead)")


@needs_gfortran
def test_logical_kinds_match_gfortran(tmp_path, cl_queue):
    n = 11
    x = np.linspace(-2, 2, n)
    mask = np.array([k % 3 != 0 for k in range(n)], dtype=np.bool_)
    module, _ = translate_and_load(CLIP, tmp_path)
    for lo in (-1.5, 5.0):
        run_both(CLIP, "clip", [n, x.copy(), mask, lo, True], tmp_path, cl_queue,
                 module=module)
        assert module.clip(n, x.copy(), mask, lo, False, queue=cl_queue) is (lo > -2)
    big = np.zeros(n, np.bool_)
    big[0] = True
    run_both(CLIP, "flags", [n, x, np.zeros(n, np.bool_), big, np.zeros(n, np.bool_)],
             tmp_path, cl_queue, module=module)
    with pytest.raises(Exception, match="must have dtype bool"):
        module.clip(n, x.copy(), mask.astype(np.int32), 0.0, False, queue=cl_queue)

# }}}


# {{{ internal procedures of a main program (cause 3)

HEAT = """program heat
  implicit none
  integer, parameter :: n = 30
  real(8) :: u(n), alpha, total
  integer :: steps
  alpha = 0.1d0
  u = 1
  call step(u)
  total = energy(u)
  print *, total
contains
  subroutine step(v)
    real(8), intent(inout) :: v(n)
    integer :: i
    do i = 2, n - 1
      v(i) = v(i) + alpha * (v(i-1) - 2*v(i) + v(i+1))
    end do
    steps = steps + 1
  end subroutine
  real(8) function energy(v)
    real(8), intent(in) :: v(n)
    integer :: i
    energy = 0
    do i = 1, n
      energy = energy + v(i)**2
    end do
  end function
end program
"""


def test_internal_procedures_of_a_program_are_kernels_with_host_data():
    tu = parse_fortran(HEAT, "heat.f90")
    step = tu["step"]
    assert [k.name for k in tu] == ["step", "energy"]
    assert step.host_program and step.module == "heat"
    assert [(a.name, a.role.key) for a in step.storage_args] == [
        ("alpha", ("module", "heat", "alpha")), ("steps", ("module", "heat", "steps"))]
    assert [a.name for a in step.fortran_args] == ["v"]
    from f2loopy.ir.serialize import decode_kernel, encode_kernel
    assert decode_kernel(encode_kernel(step)).host_program


def test_a_file_with_only_a_main_program_does_not_talk_about_modules(tmp_path):
    from f2loopy.pipeline import NothingToTranslate, translate_text
    with pytest.raises(NothingToTranslate) as e:
        translate_text("! a driver\nprogram p\n  integer i\n  real x(3)\n  do i = 1, 3\n"
                       "    x(i) = i\n  end do\nend program\n", tmp_path / "p.f90")
    assert e.value.format().splitlines()[0] == (
        f"{tmp_path / 'p.f90'}:2:1: error: nothing to translate: the file has a main program "
        "and no subroutine or function (f2loopy translates procedures: put the loops in a "
        "subroutine after the program's 'contains')")


@needs_gfortran
def test_program_variables_are_glue_data_and_match_gfortran(tmp_path, cl_queue):
    glue, _ = translate_and_load(HEAT, tmp_path)
    assert glue.heat.alpha == 0.0 and glue.heat.steps == 0
    glue.heat.alpha = 0.2
    glue.heat.steps = 5
    v = np.asfortranarray(np.sin(np.arange(30.0)))
    expect = v.copy()
    for i in range(1, 29):          # in place, as the Fortran loop does
        expect[i] = expect[i] + 0.2 * (expect[i - 1] - 2 * expect[i] + expect[i + 1])
    glue.step(v, queue=cl_queue)
    assert np.allclose(v, expect, rtol=1e-14, atol=0) and glue.heat.steps == 6
    assert glue.energy(v, queue=cl_queue) == pytest.approx(float(np.sum(v ** 2)), rel=1e-14)
    from f2loopy.verify.check import check_source
    report = check_source(HEAT, tmp_path / "heat.f90", queue=cl_queue)
    assert report.passed and [c.kernel for c in report.checks] == ["step", "energy"]

# }}}


# {{{ dummies sized by module variables (cause 7)

NMAT = """module dims
  implicit none
  integer :: nmat = 3, ncell = 2
contains
  subroutine grow()
    nmat = nmat + 1
  end subroutine
end module
subroutine mix(xs, frac, out)
  use dims, only: nmat, ncell
  implicit none
  real(8), intent(in) :: xs(nmat, 0:ncell)
  real(8), intent(in) :: frac(nmat)
  real(8), intent(out) :: out(0:ncell)
  integer :: i, c
  do c = 0, ncell
    out(c) = 0
    do i = 1, nmat
      out(c) = out(c) + frac(i) * xs(i, c)
    end do
  end do
end subroutine
"""


def test_dummies_sized_by_module_variables():
    k = parse_fortran(NMAT, "n.f90")["mix"]
    assert tuple(map(str, k.arg_dict["xs"].shape)) == ("nmat", "ncell + 1")
    assert [(a.name, a.role.key) for a in k.storage_args] == [
        ("ncell", ("module", "dims", "ncell")), ("nmat", ("module", "dims", "nmat"))]
    with pytest.raises(UnsupportedFeatureError) as e:
        parse_fortran(NMAT.replace("  use dims, only: nmat, ncell\n",
                                   "  use dims, only: nmat, ncell, grow\n")
                      .replace("  do c = 0, ncell\n", "  call grow()\n  do c = 0, ncell\n"),
                      "n.f90")
    assert e.value.format().splitlines()[0] == (
        "n.f90:12:26: error: the bounds of 'xs' depend on module variable 'nmat', which the "
        "subroutine or a procedure it calls assigns: not supported (give 'xs' bounds the "
        "subroutine leaves unchanged)")


@needs_gfortran
def test_dummies_sized_by_module_variables_match_gfortran(tmp_path, cl_queue):
    glue, _ = translate_and_load(NMAT, tmp_path)
    glue.dims.nmat, glue.dims.ncell = 4, 1
    xs = np.asfortranarray(np.arange(8.0).reshape(4, 2))
    frac = np.array([0.5, 0.25, 0.125, 0.125])
    out = np.zeros(2)
    glue.mix(xs, frac, out, queue=cl_queue)
    assert np.allclose(out, frac @ xs, rtol=1e-15)
    with pytest.raises(Exception, match="shape"):
        glue.mix(xs, frac[:3].copy(), out, queue=cl_queue)
    from f2loopy.verify.check import CheckOptions, check_source
    report = check_source(NMAT, tmp_path / "n.f90", CheckOptions(kernel="mix"), queue=cl_queue)
    assert report.passed, report.format()


# a local array and a callee's dummy sized by the module variable, written in
# another case than its declaration ('Ns' for 'ns': an internal error
# "KeyError: 'Ns'" in code generation on a shallow-water project)
NS_CASE = """module grid
  implicit none
  integer :: ns
end module
module scheme
  use grid
  implicit none
contains
  subroutine state(u, wg)
    real(8), dimension(Ns, 3), intent(in) :: u
    real(8), dimension(Ns, 3), intent(out) :: wg
    real(8), dimension(Ns, 3) :: sigma
    integer :: i
    call slopes(u, sigma)
    do i = 2, Ns - 1
      wg(i, :) = u(i, :) - 0.5d0 * sigma(i, :)
    end do
    wg(1, :) = u(1, :)
    wg(NS, :) = sigma(nS, :)
  end subroutine
  subroutine slopes(u, s)
    real(8), dimension(:, :), intent(in) :: u
    real(8), dimension(Ns, 3), intent(out) :: s
    s = 0
    s(2:, :) = u(2:, :) - u(:Ns - 1, :)
  end subroutine
end module
"""


def test_local_arrays_sized_by_a_module_variable_in_another_case():
    k = parse_fortran(NS_CASE, "ns.f90")["state"]
    assert tuple(map(str, k.temporaries["sigma"].shape)) == ("ns", "3")
    assert tuple(map(str, k.arg_dict["wg"].shape)) == ("ns", "3")
    assert [a.name for a in k.storage_args] == ["ns"]


@needs_gfortran
def test_local_arrays_sized_by_a_module_variable_in_another_case_match_gfortran(
        tmp_path, cl_queue):
    from f2loopy.verify.check import CheckOptions, check_source
    report = check_source(NS_CASE, tmp_path / "ns.f90",
                          CheckOptions(kernel="state", sizes={"ns": 6}), queue=cl_queue)
    assert report.passed, report.format()

# }}}


# {{{ inquiry intrinsics of a dummy in a parameter (cause 11)

TOL = """subroutine tol(n, x, y, k)
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n)
  real(4), intent(out) :: y(n)
  integer(8), intent(inout) :: k
  real(8), parameter :: eps = epsilon(x), big = huge(x)
  real(4), parameter :: small = tiny(y)
  integer(8), parameter :: kmax = huge(k)
  integer, parameter :: nd = digits(x)
  integer :: i
  do i = 1, n
    y(i) = real(x(i) * eps + min(big, abs(x(i))), 4) + small
  end do
  k = min(k, kmax - nd)
end subroutine
"""


def test_inquiry_intrinsics_of_dummies_in_parameters():
    from f2loopy.codegen import generate_code
    code = generate_code(parse_fortran(TOL, "t.f90")["tol"]).source
    assert "2.220446049250313e-16" in code and "1.7976931348623157e+308" in code
    assert "1.1754944e-38f" in code and "9223372036854775754" in code


@needs_gfortran
def test_inquiry_intrinsics_of_dummies_match_gfortran(tmp_path, cl_queue):
    x = np.array([1.0, -2.5, 3e30, 0.0])
    run_both(TOL, "tol", [4, x, np.zeros(4, np.float32), np.int64(2**62)], tmp_path, cl_queue)

# }}}


# {{{ F77 labelled DO ending on an action statement (Nekbone's math.f style)

ACTION_DO = """      subroutine sq(a, b, n, m)
      integer n, m, i, j
      real a(n), b(n, m)
      do 100 i = 1, n
 100     a(i) = a(i)**2
      do 200 j = 1, m
      do 200 i = 1, n
         if (b(i, j) .lt. 0) goto 200
         b(i, j) = b(i, j) + j
 200  b(i, j) = 2 * b(i, j)
      end
"""


def test_a_labelled_do_may_end_on_an_action_statement():
    k = parse_fortran(ACTION_DO, "sq.f")["sq"]
    written = [i.assignee_var_names() for i in k.instructions]
    assert written.count(("a",)) == 1 and written.count(("b",)) == 2
    assert sorted(k.all_inames()) == ["i", "i_1", "j"]


@needs_gfortran
def test_a_labelled_do_ending_on_an_action_matches_gfortran(tmp_path, cl_queue):
    a = np.array([1.0, -2.0, 3.0], np.float32)
    b = np.asfortranarray(np.array([[1, -1], [-2, 2], [3, 0.5]], np.float32))
    run_both(ACTION_DO, "sq", [a, b, 3, 2], tmp_path, cl_queue, filename="sq.f")

# }}}


# {{{ F77 'dimension a(1)' dummies take arrays of any length

ONE = """      subroutine add2(a, b, n)
      real a(1), b(1)
      do 100 i = 1, n
 100     a(i) = a(i) + b(i)
      end
      subroutine keep(c, m, n)
      real c(m, 1)
      c(:, 1) = size(c)
      c(m, n) = c(m, n) + 1
      end
"""


def test_a_last_extent_of_one_is_assumed_size_for_the_glue():
    tu = parse_fortran(ONE, "one.f")
    assert tu["add2"].arg_dict["a"].shape == (None,)
    assert tuple(map(str, tu["keep"].arg_dict["c"].shape[:1])) == ("m",)
    assert tu["keep"].arg_dict["c"].shape[1] is None


@needs_gfortran
def test_a_last_extent_of_one_matches_gfortran(tmp_path, cl_queue):
    a, b = np.arange(7, dtype=np.float32), np.ones(7, np.float32)
    run_both(ONE, "add2", [a, b, 7], tmp_path, cl_queue, filename="one.f")
    c = np.asfortranarray(np.zeros((3, 4), np.float32))
    run_both(ONE, "keep", [c, 3, 4], tmp_path, cl_queue, filename="one.f")

# }}}


def test_host_intrinsic_subroutines_are_a_precise_error():
    from f2loopy.diagnostics import FortranError
    src = ("subroutine t(n, x)\n  integer n, i, c0\n  real x(n)\n  call system_clock(c0)\n"
           "  do i = 1, n\n    x(i) = 0\n  end do\nend subroutine\n")
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "clk.f90")
    assert e.value.format().splitlines()[0] == (
        "clk.f90:4:8: error: intrinsic subroutine 'system_clock' runs on the host (clock, "
        "date, command line, random numbers): a kernel cannot call it; call it around the "
        "kernel instead")


@pytest.mark.parametrize("call, message", [
    # a heat-equation solver's swap of two fields' allocations
    ("call move_alloc(w, x)",
     "intrinsic subroutine 'move_alloc' moves an allocation: a kernel cannot allocate or "
     "deallocate memory; move or swap the arrays in the caller, around the kernel"),
    ("call MVBITS(n, 0, 3, i, 2)",
     "intrinsic subroutine 'mvbits' is not supported in a kernel: write the copy of the bits "
     "with iand, ior, not and ishft"),
    ("call co_sum(x)",
     "intrinsic subroutine 'co_sum' works on the images of a coarray program: a kernel runs "
     "within one image; call it around the kernel instead"),
    ("call atomic_add(i, 1)",
     "intrinsic subroutine 'atomic_add' works on the images of a coarray program: a kernel "
     "runs within one image; call it around the kernel instead"),
    ("call c_f_pointer(i, x)",
     "intrinsic subroutine 'c_f_pointer' associates a pointer: a kernel cannot; associate it "
     "in the caller and pass the array it points to"),
])
def test_other_intrinsic_subroutines_are_a_precise_error(call, message):
    from f2loopy.diagnostics import FortranError
    src = ("subroutine t(n, x)\n  integer n, i\n  real x(n), w(n)\n  " + call + "\n"
           "  do i = 1, n\n    x(i) = 0\n  end do\nend subroutine\n")
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "intr.f90")
    assert e.value.format().splitlines()[0] == f"intr.f90:4:8: error: {message}"


def test_a_subroutine_of_the_file_named_like_an_intrinsic_is_called():
    # the file's own 'mvbits' is no intrinsic: it is inlined as any other
    src = ("subroutine t(n, x)\n  integer n\n  real x(n)\n  call mvbits(n, x)\nend subroutine\n"
           "subroutine mvbits(n, x)\n  integer n, i\n  real x(n)\n  do i = 1, n\n"
           "    x(i) = 2\n  end do\nend subroutine\n")
    kernels = parse_fortran(src, "own.f90")
    assert len(kernels["t"].instructions) == 1


# {{{ enumerations (issue 27: a particle-in-cell mini-app selects its
# initialisation mode with enumerators; there, of its main program)

ENUMS = """\
module colours
  use iso_c_binding, only: c_int
  implicit none
  enum, bind(c)
    enumerator :: red, green = 5, blue
    enumerator yellow
  end enum
end module colours

module pal
  use colours, only: red, green, blue, yellow
  implicit none
  enum, bind(c)
    enumerator :: geometric, sinusoidal, linear
  end enum
contains
  subroutine paint(n, mode, a)
    integer, intent(in) :: n, mode
    integer, intent(out) :: a(n)
    integer :: i
    do i = 1, n
      select case (mode)
      case (geometric)
        a(i) = red + i
      case (sinusoidal)
        a(i) = green * i + blue
      case default
        a(i) = yellow - linear
      end select
    end do
  end subroutine paint
end module pal
"""


def test_enumerators_are_int32_constants():
    from f2loopy.frontend.enumerations import ENUM_DTYPE
    (knl,) = parse_fortran(ENUMS, "pal.f90")
    # red = 0, green = 5, blue = 6, yellow = 7; geometric = 0, linear = 2
    assert ENUM_DTYPE == np.int32
    exprs = sorted(str(insn.expression) for insn in knl.instructions)
    assert exprs == ["0 + i", "5", "5*i + 6"]


@pytest.mark.parametrize("line, message", [
    ("enumerator :: a = 3.0 * 2", "pal.f90:3:19: error: the value of enumerator 'a' must be an "
                              "integer constant"),
    ("enumerator :: a, b, a", "pal.f90:3:19: error: enumerator 'a' is declared twice"),
    ("enumerator :: a = 2147483647, b",
     "pal.f90:3:35: error: the value 2147483648 of enumerator 'b' does not fit in an "
     "integer(c_int)"),
])
def test_bad_enumerators_are_located_errors(line, message):
    from f2loopy.diagnostics import FortranError
    src = ("subroutine t(n, x)\n  enum, bind(c)\n    " + line + "\n  end enum\n"
           "  integer n\n  real x(n)\n  x = 0\nend subroutine\n")
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "pal.f90")
    assert e.value.format().splitlines()[0] == message


def test_enumerators_of_a_main_program_reach_its_internal_procedures():
    src = ENUMS.replace("module pal", "program pal").replace("end program pal", "end program")
    (knl,) = parse_fortran(src, "pal.f90")
    assert sorted(str(insn.expression) for insn in knl.instructions) == ["0 + i", "5", "5*i + 6"]


@needs_gfortran
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_enumerators_match_gfortran(tmp_path, cl_queue, mode):
    run_both(ENUMS, "paint", [6, mode, np.zeros(6, np.int32)], tmp_path, cl_queue,
             filename="pal.f90")

# }}}
