"""The generated Fortran glue of transformed kernels and of other argument
forms: layouts changed by transformations (converted on the host), argument
names the glue itself uses, the paper's kernel through its script, global
temporaries and assumed-shape arrays (see :mod:`test_fortran_glue`)."""

from pathlib import Path

import pytest

from fortran_util import (
    assert_all_ok, build_runtime, compile_and_run, glue_from_kernels, needs_toolchain,
    translate)

pytestmark = [needs_toolchain, pytest.mark.opencl, pytest.mark.gfortran]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    return build_runtime(tmp_path_factory.getbasetemp())


# {{{ layouts changed by transformations

def _with_layout(kernel, name, axis_tags):
    """*kernel* with array *name* stored with *axis_tags*, remembering the
    caller's layout, as tag_array_axes does."""
    from f2loopy.ir.kernel import ArrayLayout
    from f2loopy.ir.tags import parse_axis_tags
    args = []
    for a in kernel.args:
        if a.name == name:
            a = a.copy(axis_tags=parse_axis_tags(axis_tags, a.ndim),
                       fortran_layout=ArrayLayout(shape=a.shape, lower_bounds=a.lower_bounds))
        args.append(a)
    return kernel.copy(args=tuple(args))


TRANSPOSE = """
subroutine colsum(n, m, a, s, b)
  implicit none
  integer n, m, i, j
  double precision a(n, 0:m-1), s(m), b(2, n, m)
  do j = 0, m - 1
    s(j + 1) = 0
    do i = 1, n
      s(j + 1) = s(j + 1) + a(i, j) * i
      b(1, i, j + 1) = a(i, j) + b(2, i, j + 1)
    end do
  end do
end subroutine
"""

TRANSPOSE_MAIN = """
program main
  use checks
  use colsum_cl_mod
  implicit none
  integer, parameter :: n = 5, m = 3
  double precision :: a(n, 0:m-1), s1(m), s2(m), b1(2, n, m), b2(2, n, m)
  integer :: i, st
  a = reshape([(dble(i * i), i = 1, n * m)], shape(a))
  b1 = reshape([(dble(-i), i = 1, 2 * n * m)], shape(b1)); b2 = b1
  call colsum(n, m, a, s1, b1)
  call colsum_cl(n, m, a, s2, b2, st)
  call check(st == F2L_OK, "status")
  call check(all(s1 == s2), "a read in C order")
  call check(all(b1 == b2), "b written in a permuted order, converted back")
  call f2l_upload(b2)
  call colsum_cl(n, m, a, s2, b2, st)
  call check(st == F2L_ERROR_RESIDENT .and. index(f2l_error_message(), "colsum_cl: argument " &
             // "'b' is device-resident, but the kernel stores it in another layout") == 1, &
             "a converted array cannot be device-resident")
  call done()
end program
"""


def test_permuted_layouts_are_converted_on_the_host(tmp_path, runtime):
    from f2loopy.frontend import parse_fortran
    (knl,) = parse_fortran(TRANSPOSE, "colsum.f90")
    knl = _with_layout(knl, "a", "c")
    knl = _with_layout(knl, "b", "N1,N0,N2")
    sources = glue_from_kernels(tmp_path, "colsum", TRANSPOSE, [knl])
    assert "call f2l_c%array_mapped(" in sources[2].read_text()
    proc = compile_and_run(tmp_path, runtime, sources, TRANSPOSE_MAIN)
    assert_all_ok(proc, 4)


SPLIT = """
subroutine axpy8(n, a, x, y)
  implicit none
  integer n, i, j
  real a, x(8, n), y(0:7, n)
  do j = 1, n
    do i = 1, 8
      y(i - 1, j) = a * x(i, j) + y(i - 1, j) * j
    end do
  end do
end subroutine
"""

SPLIT_MAIN = """
program main
  use checks
  use axpy8_cl_mod
  implicit none
  integer, parameter :: n = 7
  real :: x(8, n), y1(0:7, n), y2(0:7, n)
  integer :: st, i
  x = reshape([(real(i), i = 1, 8 * n)], shape(x))
  y1 = reshape([(real(3 * i - 100), i = 1, 8 * n)], shape(y1)); y2 = y1
  call axpy8(n, 2.0, x, y1)
  call axpy8_cl(n, 2.0, x, y2, st)
  call check(st == F2L_OK, "status")
  call check(all(y1 == y2), "split, vector and permuted axes converted both ways")
  call done()
end program
"""


def test_split_and_vector_layouts_are_converted_on_the_host(tmp_path, runtime):
    """split_array_axis + vec tags (the paper's level 2 on q and rhsq): the
    glue maps each caller element to its place in the kernel's layout."""
    from f2loopy.frontend import parse_fortran
    from f2loopy.transform import split_array_axis, tag_array_axes
    (knl,) = parse_fortran(SPLIT, "axpy8.f90")
    knl = split_array_axis(knl, "x", 0, count=4, order="F")      # x(4, 2, n)
    knl = tag_array_axes(knl, "x", "vec,N1,N0")                  # n-axis before the pair
    knl = split_array_axis(knl, "y", 0, count=2, order="C")      # y(4, 2, n)
    knl = tag_array_axes(knl, "y", "N0,vec,N1")
    sources = glue_from_kernels(tmp_path, "axpy8", SPLIT, [knl])
    assert "call f2l_c%array_mapped(" in sources[2].read_text()
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, SPLIT_MAIN), 2)


def test_other_layout_changes_are_refused_precisely(tmp_path, runtime):
    import pymbolic.primitives as p
    from f2loopy.frontend import parse_fortran
    from f2loopy.glue.fortran import _layout_conversion
    from f2loopy.ir.kernel import ArrayLayout
    (knl,) = parse_fortran(TRANSPOSE, "colsum.f90")
    a = knl.arg_dict["a"]
    # a shape change that no recorded split explains
    changed = a.copy(shape=(p.Variable("n"), 2, p.Quotient(p.Sum((p.Variable("m"), 1)), 2)),
                     lower_bounds=(1, 1, 1),
                     fortran_layout=ArrayLayout(shape=a.shape, lower_bounds=a.lower_bounds))
    msg = _layout_conversion(changed)
    assert msg == ("the kernel uses it as a(n, 2, (m + 1) / 2) but the caller passes "
                   "a(n, 0:m - 1); the Fortran glue converts only reorderings, splits and "
                   "vector axes, not this layout change")
    # the glue compiles and answers with the message of a separate-arrays axis
    sep = _with_layout(knl, "a", "sep,N0")
    sources = glue_from_kernels(tmp_path, "colsum", TRANSPOSE, [sep])
    main = """
program main
  use checks
  use colsum_cl_mod
  implicit none
  double precision :: a(5, 0:2), s(3), b(2, 5, 3)
  integer :: st
  a = 1; b = 0
  call colsum_cl(5, 3, a, s, b, st)
  call check(st == F2L_ERROR_ARGUMENT, "status")
  print '(a)', f2l_error_message()
  call done()
end program
"""
    proc = compile_and_run(tmp_path, runtime, sources, main)
    assert_all_ok(proc, 1)
    assert ("colsum_cl: argument 'a': the kernel stores it with axis tags sep, N0; the Fortran "
            "glue converts reorderings, splits and vector axes of a(n, 0:m - 1) only"
            ) in proc.stdout

# }}}


def test_arguments_named_like_what_the_glue_uses(tmp_path, runtime):
    """Arguments may be called size, rank, status...: keyword calls keep working."""
    src = """
subroutine clash(size, rank, status, x)
  implicit none
  integer size, rank, status, i
  real x(size)
  status = 0
  do i = 1, size
    x(i) = x(i) * rank
    status = status + 1
  end do
end subroutine
"""
    sources = translate(tmp_path, "clash", src)
    glue = sources[2].read_text()
    assert "subroutine clash_cl(size, rank, status, x, f2l_status)" in glue
    main = """
program main
  use checks
  use clash_cl_mod
  implicit none
  real :: x(5) = [1, 2, 3, 4, 5]
  integer :: count, st
  call clash_cl(x=x, rank=3, size=4, status=count, f2l_status=st)
  call check(st == F2L_OK .and. count == 4 .and. all(x == [3, 6, 9, 12, 5]), "keywords")
  call clash_cl(6, 3, count, x, st)
  call check(st == F2L_ERROR_ARGUMENT .and. f2l_error_message() == "clash_cl: argument 'x' " &
             // "has 5 elements, but its declaration x(size) needs 6", "message")
  call done()
end program
"""
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, main), 2)


# {{{ the paper's kernel through its own script

PAPER_MAIN = """
program main
  use checks
  use refFluxR_refFluxS_cl_mod
  implicit none
  integer, parameter :: nq = 4, ne = 3
  real :: geo(nq, nq, nq, 11, ne), d(nq, nq), q(nq, nq, nq, 8, ne)
  real :: rhs1(nq, nq, nq, 8, ne), rhs2(nq, nq, nq, 8, ne)
  integer :: st
  call random_seed(put=[(17, st = 1, 64)])
  call random_number(geo); call random_number(d); call random_number(q)
  q(:, :, :, 4:5, :) = q(:, :, :, 4:5, :) + 1     ! density and theta away from 0
  call random_number(rhs1); rhs2 = rhs1
  call refFluxR(ne, nq, geo, d, q, rhs1, 1.0, 1.4, 1.0)
  call refFluxS(ne, nq, geo, d, q, rhs1, 1.0, 1.4, 1.0)
  call refFluxR_refFluxS_cl(ne, nq, geo, d, q, rhs2, 1.0, 1.4, 1.0, st)
  call check(st == F2L_OK, "status")
  call check(all(abs(rhs1 - rhs2) <= 1e-4 * max(1.0, abs(rhs1))), "fused, fixed, tagged: same")
  call refFluxR_refFluxS_cl(ne, nq, geo, d, q, rhs2, 1.0, 1.5, 1.0, st)
  call check(st == F2L_ERROR_ARGUMENT .and. f2l_error_message() == "refFluxR_refFluxS_cl: " &
             // "argument 'p_Gamma' was fixed to 1.4 when the kernel was translated; got 1.5", &
             "fixed gamma")
  call done()
end program
"""


def test_paper_kernel_with_its_script(tmp_path, runtime):
    """samples/numa_volume/volume.f90: the paper's two subroutines through its
    whole !$loopy script (level 8: fused, fixed, split and vector layouts,
    prefetches, buffers), called from Fortran."""
    from f2loopy.pipeline import translate_text, write_outputs
    src = (Path(__file__).resolve().parents[2] / "samples" / "numa_volume"
           / "volume.f90")
    path = tmp_path / "volume.f90"
    path.write_text(src.read_text())
    write_outputs(translate_text(path.read_text(), path, defines={"Nq": 4}).outputs)
    sources = [path, tmp_path / "volume_cl.c", tmp_path / "volume_cl.f90"]
    proc = compile_and_run(tmp_path, runtime, sources, PAPER_MAIN)
    assert_all_ok(proc, 3)

# }}}


def test_global_temporaries_get_device_memory_from_the_runtime(tmp_path, runtime):
    """A temporary in global memory is scratch space the runtime allocates for
    each call (f2l_launch_scratch); results match the plain Fortran."""
    import f2loopy
    from f2loopy.frontend import parse_fortran
    src = """
subroutine phases(n, a, b)
  implicit none
  integer n, i
  real a(n), b(n), t(64)
  do i = 1, 64
    t(i) = a(i) * a(i)
  end do
  do i = 2, 63
    b(i) = t(i - 1) + t(i) + t(i + 1)
  end do
end subroutine
"""
    (knl,) = parse_fortran(src, "phases.f90")
    knl = f2loopy.set_temporary_address_space(knl, "t", "global")
    loops = sorted({i for insn in knl.instructions for i in insn.within_inames})
    knl = f2loopy.tag_inames(knl, {i: "l.0" for i in loops})
    sources = glue_from_kernels(tmp_path, "phases", src, [knl])
    assert "call f2l_c%scratch(" in sources[2].read_text()
    main = """
program main
  use checks
  use phases_cl_mod
  implicit none
  real :: a(64), b1(64), b2(64)
  integer :: i, st
  a = [(real(i) / 7, i = 1, 64)]
  b1 = -1; b2 = -1
  call phases(64, a, b1)
  call phases_cl(64, a, b2, st)
  call check(st == F2L_OK, "status")
  call check(all(abs(b1 - b2) <= 1e-6 * abs(b1)), "same as Fortran")
  call done()
end program
"""
    assert_all_ok(compile_and_run(tmp_path, runtime, sources, main), 2)


# {{{ assumed-shape arrays

ASSUMED = """
module field_ops
  implicit none
contains
  subroutine relax(u, f, w, total)
    real(8), intent(inout) :: u(0:, :)
    real(8), intent(in) :: f(:, :)
    real(8), intent(in) :: w
    real(8), intent(out) :: total
    integer :: i, j
    total = 0
    do j = 1, size(u, 2)
      do i = 1, ubound(u, 1) - 1
        u(i, j) = (1 - w) * u(i, j) + w * (u(i - 1, j) + u(i + 1, j) + f(i, j)) / 2
        total = total + u(i, j)
      end do
    end do
  end subroutine
end module
"""

ASSUMED_MAIN = """
program main
  use checks
  use field_ops
  use relax_cl_mod
  implicit none
  real(8) :: u1(0:6, 3), u2(0:6, 3), f(5, 3), big(12, 3), t1, t2
  real(8) :: v(8)
  integer :: st
  call random_number(u1); u2 = u1; call random_number(f)
  call relax(u1, f, 0.7d0, t1)
  call relax_cl(u2, f, 0.7d0, t2, st)
  call check(st == F2L_OK, "status")
  call check(all(abs(u1 - u2) < 1d-12) .and. abs(t1 - t2) < 1d-10, "whole arrays")
  ! a non-contiguous section: the compiler passes a contiguous copy
  big = 0; big(1:10:2, :) = f
  u2 = u1
  call relax(u1, big(1:10:2, :), 0.5d0, t1)
  call relax_cl(u2, big(1:10:2, :), 0.5d0, t2, st)
  call check(st == F2L_OK .and. all(abs(u1 - u2) < 1d-12) .and. abs(t1 - t2) < 1d-10, &
             "strided section")
  call relax_cl(u2, v, 0.5d0, t2, st)
  call check(st == F2L_ERROR_ARGUMENT .and. f2l_error_message() == "relax_cl: argument 'f' " &
             // "must have 2 dimension(s), got 1", "rank")
  call done()
end program
"""


def test_assumed_shape_arrays_take_their_extents_from_the_caller(tmp_path, runtime):
    sources = translate(tmp_path, "relax", ASSUMED)
    glue = sources[2].read_text()
    assert "subroutine relax_cl(u, f, w, total, status)" in glue
    assert "! u(0:, :)" in glue
    proc = compile_and_run(tmp_path, runtime, sources, ASSUMED_MAIN)
    assert_all_ok(proc, 4)

# }}}
