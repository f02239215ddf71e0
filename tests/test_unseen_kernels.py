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
