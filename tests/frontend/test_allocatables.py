"""Allocatable module arrays (issue 27, cause 1): ``glue.<module>.<var>`` is
None while unallocated, an assigned Fortran-ordered array allocates it, the
kernel receives its extents and lower bounds at run time and ``allocated()``
sees the allocation."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.ir.roles import Allocation, ModuleVariable
from util import translate_and_load

FIELDS = """module fields
  implicit none
  double precision, allocatable :: u(:,:)
  real(8), allocatable, dimension(:) :: w
  integer, allocatable :: unused(:)
  real(8) :: scale = 2d0
end module
subroutine smooth(count)
  use fields
  implicit none
  integer, intent(out) :: count
  integer :: i, j
  count = -1
  if (.not. allocated(u)) return
  count = 0
  do j = lbound(u, 2), ubound(u, 2)
    do i = 1, size(u, 1)
      u(i, j) = u(i, j) * scale
      count = count + 1
    end do
  end do
end subroutine
subroutine total(s)
  use fields, only: w
  implicit none
  real(8), intent(out) :: s
  integer :: i
  s = 0
  do i = 1, size(w)
    s = s + w(i)
  end do
end subroutine
"""


def test_allocatable_module_arrays_take_their_bounds_at_run_time():
    tu = parse_fortran(FIELDS, "f.f90")
    k = tu["smooth"]
    u = k.arg_dict["u"]
    assert u.role == ModuleVariable(module="fields", path=("u",), allocatable=True)
    assert u.role.allocatable
    assert tuple(map(str, u.shape)) == ("u_n1", "u_n2")
    assert tuple(map(str, u.lower_bounds)) == ("u_lb1", "u_lb2")
    assert [(a.name, a.role) for a in k.args if isinstance(a.role, Allocation)] == [
        ("u_n1", Allocation("u", "extent", 0)), ("u_n2", Allocation("u", "extent", 1)),
        ("u_lb1", Allocation("u", "lbound", 0)), ("u_lb2", Allocation("u", "lbound", 1)),
        ("u_allocated", Allocation("u", "allocated", 0))]
    assert [a.name for a in k.fortran_args] == ["count"]
    # no allocated(): no flag
    t = tu["total"]
    assert [a.name for a in t.args] == ["s", "w", "w_n1", "w_lb1"]
    # the other allocatable of the module is exposed by the glue as None
    assert [(a.name, a.role.allocatable, a.shape) for a in k.module_data
            if a.name == "unused"] == [("unused", True, (None,))]
    from f2loopy.ir.serialize import decode_kernel, encode_kernel
    again = decode_kernel(encode_kernel(k))
    assert again.arg_dict["u"].role.allocatable
    assert again.arg_dict["u_lb2"].role == Allocation("u", "lbound", 1)
    assert "u: float64, allocatable, shape (u_n1, u_n2), lower bounds (u_lb1, u_lb2), " \
        "module variable fields::u" in str(k)


def test_allocatable_module_arrays_in_the_generated_code():
    from f2loopy.codegen import generate_code
    code = generate_code(parse_fortran(FIELDS, "f.f90")["smooth"]).source
    assert "__global double *u, int const u_n1, int const u_n2, int const u_lb1, " \
        "int const u_lb2, int const u_allocated)" in code
    assert "u[i - u_lb1 + u_n1 * (j - u_lb2)]" in code


@pytest.mark.parametrize("source, message", [
    ("subroutine s(n)\n  integer :: n\n  real, allocatable :: t(:)\n  t(n) = 1\nend subroutine\n",
     "f.f90:4:3: error: allocatable local array 't' is used but never allocated in 's' (a "
     "kernel cannot keep an allocation between calls): allocate it there"),
    ("subroutine s(t)\n  real, allocatable :: t(:)\n  t = 1\nend subroutine\n",
     "f.f90:2:24: error: allocatable dummy argument 't' is not supported (only allocatable "
     "arrays of a module are: declare it in a module, or pass an explicit-shape array t(n) "
     "allocated by the caller)"),
    ("module m\n  real, allocatable :: t(:)\ncontains\n  subroutine s(n)\n    integer :: n\n"
     "    allocate(t(n))\n    t = 1\n  end subroutine\nend module\n",
     "f.f90:6:5: error: 'allocate' is not supported in a kernel (kernels cannot allocate "
     "memory): allocate the module array before the call (from Python assign a "
     "Fortran-ordered numpy array to glue.<module>.<array>, from Fortran allocate it as "
     "before) and deallocate it after; if 't' holds values only between its allocate and "
     "deallocate in 's', declare it there as an allocatable local, which a kernel makes a "
     "work array"),
    ("module m\n  real, allocatable :: t(:)\ncontains\n  subroutine s()\n"
     "    deallocate(t)\n  end subroutine\nend module\n",
     "f.f90:5:5: error: 'deallocate' is not supported in a kernel (kernels cannot allocate "
     "memory): allocate the module array before the call (from Python assign a "
     "Fortran-ordered numpy array to glue.<module>.<array>, from Fortran allocate it as "
     "before) and deallocate it after; if 't' holds values only between its allocate and "
     "deallocate in 's', declare it there as an allocatable local, which a kernel makes a "
     "work array"),
    ("module m\n  real :: t(3)\ncontains\n  subroutine s(f)\n    logical :: f\n"
     "    f = allocated(t)\n  end subroutine\nend module\n",
     "f.f90:6:9: error: the argument of 'allocated' must be an allocatable array (of a "
     "module, a local array of the procedure, or an array component; allocatable dummies are "
     "not supported)"),
])
def test_what_cannot_be_allocatable_is_a_located_error(source, message):
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "f.f90")
    assert e.value.format().splitlines()[0] == message


def test_python_glue_allocates_by_assignment(tmp_path, cl_queue):
    glue, _ = translate_and_load(FIELDS, tmp_path)
    assert glue.fields.u is None and glue.fields.w is None and glue.fields.unused is None
    # unallocated: allocated(u) is false in the kernel, nothing is touched
    assert glue.smooth(0, queue=cl_queue) == -1
    u = np.asfortranarray(np.arange(12.0).reshape(4, 3))
    glue.fields.u = u
    assert glue.smooth(0, queue=cl_queue) == 12
    assert glue.fields.u is u and np.array_equal(u, 2 * np.arange(12.0).reshape(4, 3))
    # another shape: a new allocation
    glue.fields.u = np.asfortranarray(np.ones((2, 5)))
    assert glue.smooth(0, queue=cl_queue) == 10 and (glue.fields.u == 2).all()
    glue.fields.w = np.linspace(0, 1, 11)
    assert glue.total(0.0, queue=cl_queue) == pytest.approx(5.5, rel=1e-15)
    glue.fields.w = np.zeros(0)
    assert glue.total(0.0, queue=cl_queue) == 0
    glue.fields.u = None            # deallocated again
    assert glue.smooth(0, queue=cl_queue) == -1
    for bad, message in [
            (np.ones(3), "smooth: allocatable fields.u must have 2 dimension(s) as declared in "
             "Fortran, got 1"),
            (np.ones((2, 2), dtype=np.float32), "smooth: argument 'u' must have dtype float64, "
             "got float32 (convert it with .astype() before the call)"),
            (np.ones((3, 2)).T.copy(), "smooth: argument 'u' must be a Fortran-ordered "
             "contiguous array (np.asfortranarray)"),
            ([1.0], "smooth: allocatable fields.u must be None (unallocated) or a numpy or "
             "pyopencl array, got list")]:
        glue.fields.u = bad
        with pytest.raises(glue.KernelArgumentError) as e:
            glue.smooth(0, queue=cl_queue)
        assert str(e.value) == message


def test_python_glue_keeps_an_allocatable_on_the_device(tmp_path, cl_queue):
    import pyopencl.array as cla
    glue, _ = translate_and_load(FIELDS, tmp_path)
    dev = cla.to_device(cl_queue, np.asfortranarray(np.full((3, 4), 1.5)))
    glue.fields.u = dev
    assert glue.smooth(0, queue=cl_queue) == 12
    assert glue.fields.u is dev and (dev.get() == 3.0).all()
