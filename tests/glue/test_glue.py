"""The generated Python glue: argument checking, in-place results, scalar outputs."""

import numpy as np
import pytest

from util import translate_and_load

SRC = """
subroutine update(n, m, alpha, a, b, total, count)
  implicit none
  integer n, m, count, i, j
  real*8 alpha, total
  real a(n, m)
  integer b(m)
  total = 0.0d0
  count = 0
  do j = 1, m
    do i = 1, n
      a(i, j) = a(i, j) * real(alpha) + real(b(j))
      total = total + dble(a(i, j))
      if (a(i, j) > 0.0) count = count + 1
    end do
  end do
end subroutine

subroutine fill(n, v, x)
  implicit none
  integer n, i
  real v, x(n)
  do i = 1, n
    x(i) = v
  end do
end subroutine
"""


@pytest.fixture(scope="module")
def glue(tmp_path_factory):
    module, _ = translate_and_load(SRC, tmp_path_factory.mktemp("glue"))
    return module


def _inputs():
    a = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4) - 5)
    b = np.array([1, -2, 3, 0], dtype=np.int32)
    return a, b


def test_results_in_place_and_scalar_outputs(glue, cl_queue):
    a, b = _inputs()
    expect = a * np.float32(2.0) + b[None, :].astype(np.float32)
    total, count = glue.update(3, 4, 2.0, a, b, 0.0, 0, queue=cl_queue)
    assert np.array_equal(a, expect)
    assert total == pytest.approx(float(expect.astype(np.float64).sum()))
    assert count == int((expect > 0).sum())


def test_pyopencl_arrays_are_used_in_place(glue, cl_queue):
    import pyopencl.array as cla
    x = cla.zeros(cl_queue, 5, np.float32)
    assert glue.fill(5, 3.5, x, queue=cl_queue) is None
    assert np.array_equal(x.get(), np.full(5, 3.5, np.float32))


@pytest.mark.parametrize("bad, message", [
    (lambda a, b: (a.astype(np.float64), b), "argument 'a' must have dtype float32, got float64"),
    (lambda a, b: (np.ascontiguousarray(a), b), "argument 'a' must be a Fortran-ordered"),
    (lambda a, b: (a[:, :3], b), "argument 'a' must have shape (3, 4)"),
    (lambda a, b: (a, b.astype(np.int64)), "argument 'b' must have dtype int32, got int64"),
    (lambda a, b: (a.tolist(), b), "argument 'a' must be a numpy or pyopencl array"),
])
def test_bad_arrays_are_refused(glue, cl_queue, bad, message):
    a, b = _inputs()
    a2, b2 = bad(a, b)
    with pytest.raises(glue.KernelArgumentError) as info:
        glue.update(3, 4, 2.0, a2, b2, 0.0, 0, queue=cl_queue)
    assert message in str(info.value)


def test_bad_scalars_are_refused(glue, cl_queue):
    a, b = _inputs()
    with pytest.raises(glue.KernelArgumentError, match="argument 'n' must be an integer"):
        glue.update(3.0, 4, 2.0, a, b, 0.0, 0, queue=cl_queue)
    with pytest.raises(glue.KernelArgumentError, match="does not fit in int32"):
        glue.update(2**40, 4, 2.0, a, b, 0.0, 0, queue=cl_queue)
    with pytest.raises(glue.KernelArgumentError, match="argument 'alpha' must be a real"):
        glue.update(3, 4, "2", a, b, 0.0, 0, queue=cl_queue)


def test_read_only_array_that_is_written_is_refused(glue, cl_queue):
    a, b = _inputs()
    a.setflags(write=False)
    with pytest.raises(glue.KernelArgumentError, match="read-only"):
        glue.update(3, 4, 2.0, a, b, 0.0, 0, queue=cl_queue)


@pytest.mark.usefixtures("opencl_device")
def test_default_queue_works(glue):
    x = np.zeros(4, np.float32)
    glue.fill(4, 1.25, x)
    assert np.array_equal(x, np.full(4, 1.25, np.float32))


def test_docstring_describes_fortran_arguments(glue):
    doc = glue.update.__doc__
    assert "subroutine update(n, m, alpha, a, b, total, count)" in doc
    assert "a: real array (n, m), numpy dtype float32, order 'F'; updated in place" in doc
    assert "Returns the new values of total, count." in doc


ASSUMED = """
subroutine shift(a, b)
  real, intent(in) :: a(0:, :)
  real, intent(inout) :: b(:, :)
  integer :: i, j
  do j = 1, size(b, 2)
    do i = 1, size(b, 1)
      b(i, j) = b(i, j) + a(i - 1, j) * ubound(a, 1)
    end do
  end do
end subroutine
"""


def test_assumed_shape_extents_come_from_the_arrays(tmp_path, cl_queue):
    import pyopencl.array as cla
    module, _ = translate_and_load(ASSUMED, tmp_path)
    # the extents a_n1, a_n2, b_n1, b_n2 are not arguments of the glue function
    assert module.shift.__code__.co_varnames[:module.shift.__code__.co_argcount] == ("a", "b")
    assert "a: real array (:, :), numpy dtype float32" in module.shift.__doc__
    a = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(4, 3))
    b = np.ones((3, 3), dtype=np.float32, order="F")
    module.shift(a, b, queue=cl_queue)
    assert (b == 1 + a[:3] * 3).all()
    # device arrays too, of another size
    a2 = np.asfortranarray(np.arange(10, dtype=np.float32).reshape(5, 2))
    b2 = cla.to_device(cl_queue, np.zeros((2, 2), dtype=np.float32, order="F"))
    module.shift(a2, b2, queue=cl_queue)
    assert (b2.get() == a2[:2] * 4).all()
    with pytest.raises(TypeError, match="shift: argument 'a' must have 2 dimension.s. as "
                                        "declared in Fortran, got 1"):
        module.shift(np.zeros(4, np.float32), b, queue=cl_queue)
    with pytest.raises(TypeError, match="shift: argument 'b' must be a numpy or pyopencl "
                                        "array, got float"):
        module.shift(a, 1.0, queue=cl_queue)


SCALARS = """
subroutine scalars(n, z, c, r, f, k, flag, out, outc)
  implicit none
  integer, intent(in) :: n, k
  complex*16, intent(in) :: z
  complex, intent(in) :: c
  double precision, intent(in) :: r
  real, intent(in) :: f
  logical, intent(in) :: flag
  complex*16, intent(out) :: out(n)
  complex, intent(out) :: outc(n)
  integer :: i
  do i = 1, n
    if (flag) then
      out(i) = z * r + f + k * i
      outc(i) = c * i
    else
      out(i) = -1
      outc(i) = -1
    end if
  end do
end subroutine
"""


@pytest.mark.differential
def test_scalar_arguments_of_every_kind(tmp_path, cl_queue):
    """The glue sets scalars through pyopencl's raw setter (numpy scalars'
    bytes): complex, double, real, integer and logical values arrive whole."""
    module, _ = translate_and_load(SCALARS, tmp_path, filename="scalars.f90")
    i = np.arange(1, 7)
    for flag in (True, False):
        out, outc = np.zeros(6, np.complex128), np.zeros(6, np.complex64)
        module.scalars(6, 1.5 - 2.25j, 0.5 + 3j, 2.0, 0.25, 7, flag, out, outc, queue=cl_queue)
        if flag:
            np.testing.assert_allclose(out, (1.5 - 2.25j) * 2.0 + 0.25 + 7 * i, rtol=1e-15)
            np.testing.assert_allclose(outc, (0.5 + 3j) * i, rtol=1e-6)
        else:
            assert (out == -1).all() and (outc == -1).all()
