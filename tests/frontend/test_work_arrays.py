"""Work arrays (issue 27): automatic arrays of called procedures (sized by
the caller's actuals), allocatable local arrays, and ``save, allocatable``
scratch arrays allocated on the first call (proved to carry no value from
one call to the next)."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from util import farray, fortran_reference, needs_gfortran, run_both, translate_and_load

# {{{ automatic arrays of called procedures

CALLED = """module grid
  implicit none
  integer :: nx = 6, nz = 7
end module
module columns
  use grid
  implicit none
contains
  subroutine tridiag(a, b, c, d, x, n)
    integer, intent(in) :: n
    real(8), dimension(n), intent(in) :: a, b, c, d
    real(8), dimension(n), intent(out) :: x
    real(8), dimension(n) :: cp, dp
    real(8) :: m
    integer :: i
    cp(1) = c(1) / b(1)
    dp(1) = d(1) / b(1)
    do i = 2, n
      m = b(i) - cp(i-1) * a(i)
      cp(i) = c(i) / m
      dp(i) = (d(i) - dp(i-1) * a(i)) / m
    end do
    x(n) = dp(n)
    do i = n - 1, 1, -1
      x(i) = dp(i) - cp(i) * x(i+1)
    end do
  end subroutine
  subroutine smooth(is_, ie_, nk, f, acc)
    integer :: is_, ie_, nk
    real(8), dimension(is_:ie_, nk) :: f, acc, work
    real(8) :: fixed(3)
    integer :: i, k
    work = 0
    fixed = (/0.25d0, 0.5d0, 0.25d0/)
    do k = 1, nk
      do i = is_ + 1, ie_ - 1
        work(i, k) = fixed(1) * f(i-1, k) + fixed(2) * f(i, k) + fixed(3) * f(i+1, k)
      end do
    end do
    acc = acc + work
  end subroutine
  subroutine implicit_mix(kb, u, v, acc)
    integer, intent(in) :: kb(nx)
    real(8), intent(in) :: u(nx, nz)
    real(8), intent(inout) :: v(nx, nz), acc(0:nx+1, nz)
    real(8) :: at(nz), bt(nz), ct(nz), dt(nz), loc(0:nx+1, nz)
    integer :: i, k, ks
    do i = 1, nx
      ks = kb(i)
      if (ks > 0) then
        do k = ks, nz
          at(k) = -0.25d0
          bt(k) = 2 + u(i, k)**2
          ct(k) = -0.5d0
          dt(k) = v(i, k)
        end do
        call tridiag(at(ks:nz), bt(ks:nz), ct(ks:nz), dt(ks:nz), v(i, ks:nz), nz - ks + 1)
      end if
    end do
    loc = 0
    loc(1:nx, :) = v
    call smooth(0, nx + 1, nz, loc, acc)
  end subroutine
end module
"""


def test_automatic_arrays_of_called_procedures_are_temporaries_sized_by_the_actuals():
    k = parse_fortran(CALLED, "c.f90")["implicit_mix"]
    temps = {n: (tuple(map(str, t.shape)), tuple(map(str, t.lower_bounds)),
                 t.address_space and str(t.address_space))
             for n, t in k.temporaries.items() if n in ("cp", "dp", "work", "fixed")}
    # cp(n), n = nz - ks + 1 with ks > 0 at the call: at most nz elements;
    # work(is_:ie_, nk) with the actuals 0, nx + 1, nz; fixed(3) stays private
    assert temps == {"cp": (("nz",), ("1",), "global"), "dp": (("nz",), ("1",), "global"),
                     "work": (("nx + 2", "nz"), ("0", "1"), "global"),
                     "fixed": (("3",), ("1",), None)}


def _user(body: str, decls: str = "") -> str:
    head = CALLED.split("  subroutine implicit_mix")[0]
    return head + ("  subroutine user(kb, u, v)\n    integer, intent(in) :: kb(nx)\n"
                   "    real(8) :: u(nx, nz), v(nx, nz)\n    real(8) :: at(nz)\n"
                   "    integer :: i, ks\n" + decls + body + "  end subroutine\nend module\n")


WORK = """  subroutine scale(n, m, x)
    integer :: n, m
    real(8) :: x(m)
    real(8) :: w(n)
    n = n + 1
    w = 2
    x = x * w(n)
  end subroutine
"""


@pytest.mark.parametrize("source, message", [
    (_user("    do i = 1, nx\n      ks = kb(i)\n"
           "      call tridiag(at(ks:nz), at(ks:nz), at(ks:nz), at(ks:nz), u(i, ks:nz), "
           "nz - ks + 1)\n    end do\n"),
     "c.f90:16:5: error: work array 'cp' has an extent (axis 1) that depends on values the "
     "kernel computes, and f2loopy finds no largest value for it in terms of the kernel's "
     "arguments (a work array of run-time size is device memory the host allocates for each "
     "launch): pass the work array as an argument, or size it with the kernel's arguments"),
    (_user("    do i = 1, nx\n      ks = kb(i)\n      call smooth(ks, nx, nz, u, v)\n"
           "    end do\n"),
     "c.f90:33:5: error: the lower bound of work array 'work' (axis 1) depends on 'ks', which "
     "the kernel computes (a work array of run-time size is device memory the host allocates "
     "for each launch: give it lower bounds the kernel takes as arguments, or pass the work "
     "array as an argument)"),
    (_user("    ks = 2\n    call scale(ks, nz, at)\n")[:-len("end module\n")] + WORK +
     "end module\n",
     "c.f90:55:5: error: the bounds of work array 'w' depend on 'n', which 'scale' assigns "
     "(Fortran sizes the array when the procedure starts): size it with a variable the "
     "procedure leaves unchanged"),
], ids=["unbounded", "lower-bound", "assigned"])
def test_work_arrays_that_cannot_be_are_located_errors(source, message):
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "c.f90")
    assert e.value.format().splitlines()[0] == message


@needs_gfortran
def test_automatic_arrays_of_called_procedures_match_gfortran(tmp_path, cl_queue):
    nx, nz = 6, 7          # the module's initial values
    kb = np.array([0, 1, 3, 7, 2, -1], dtype=np.int32)
    run_both(CALLED, "implicit_mix", [kb, farray((nx, nz), np.float64, seed=1),
                                      farray((nx, nz), np.float64, seed=2),
                                      farray((nx + 2, nz), np.float64, seed=3)],
             tmp_path, cl_queue, filename="c.f90")

# }}}


# {{{ allocatable local arrays

LOCAL = """module filters
  implicit none
contains
  subroutine box(n, a, b)
    integer, intent(in) :: n
    real(8), intent(in) :: a(n)
    real(8), intent(out) :: b(n)
    real(8), allocatable :: pad(:)
    integer :: i, ierr
    allocate(pad(0:n+1), stat=ierr)
    pad(0) = 0
    pad(n+1) = 0
    pad(1:n) = a
    do i = 1, n
      b(i) = (pad(i-1) + pad(i) + pad(i+1)) / 3 + ierr
    end do
    if (allocated(pad)) deallocate(pad)
  end subroutine
  subroutine twice(n, a, b)
    integer, intent(in) :: n
    real(8), intent(in) :: a(n)
    real(8), intent(out) :: b(n)
    real(8), allocatable :: mid(:)
    allocate(mid(n))
    call box(n, a, mid)
    call box(n, mid, b)
    deallocate(mid)
  end subroutine
end module
"""


def test_an_allocatable_local_is_a_temporary_of_its_allocation():
    tu = parse_fortran(LOCAL, "l.f90")
    t = tu["box"].temporaries["pad"]
    assert (tuple(map(str, t.shape)), t.lower_bounds, str(t.address_space)) == \
        (("n + 2",), (0,), "global")
    inlined = {n: tuple(map(str, t.shape)) for n, t in tu["twice"].temporaries.items()
               if n.startswith(("pad", "mid")) and "allocated" not in n}
    assert inlined == {"mid": ("n",), "pad": ("n + 2",), "pad_1": ("n + 2",)}


@pytest.mark.parametrize("body, at, message", [
    ("    allocate(w(n))\n    w = 1\n    deallocate(w)\n    allocate(w(n + 1))\n", 1,
     "l.f90:{line}:5: error: allocatable local array 'w' is allocated with different bounds "
     "in 'user' (f2loopy gives it one size for the whole call): allocate it once, or with the "
     "same bounds everywhere"),
    ("    w(1) = 2\n", 0,
     "l.f90:{line}:5: error: allocatable local array 'w' is used but never allocated in "
     "'user' (a kernel cannot keep an allocation between calls): allocate it there"),
    ("    k = n\n    allocate(w(k))\n    w = 0\n", 2,
     "l.f90:{line}:5: error: the bounds of allocatable local array 'w' depend on 'k', which "
     "'user' assigns (f2loopy sizes the array once per call): allocate it with values the "
     "procedure leaves unchanged"),
    ("    allocate(w(n), source=a)\n", 0,
     "l.f90:{line}:20: error: 'allocate' with source= is not supported (only stat=)"),
], ids=["two-sizes", "never", "assigned", "source"])
def test_allocatable_locals_that_cannot_be_are_located_errors(body, at, message):
    head = LOCAL.split("  subroutine twice")[0]
    source = head + ("  subroutine user(n, a)\n    integer, intent(in) :: n\n"
                     "    real(8) :: a(n)\n    real(8), allocatable :: w(:)\n"
                     "    integer :: k\n" + body + "  end subroutine\nend module\n")
    line = head.count("\n") + 6 + at
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "l.f90")
    assert e.value.format().splitlines()[0] == message.format(line=line)


@needs_gfortran
def test_allocatable_locals_match_gfortran(tmp_path, cl_queue):
    module, _ = translate_and_load(LOCAL, tmp_path, filename="l.f90")
    ref = fortran_reference(LOCAL, "l.f90")
    for name in ("box", "twice"):
        run_both(LOCAL, name, [9, farray(9, np.float64, seed=4), np.zeros(9)], tmp_path,
                 cl_queue, module=module, reference=ref, filename="l.f90")

# }}}


# {{{ saved allocatable scratch arrays

SAVED = """module stencil
  implicit none
  integer :: nx, ny, halo = 2
contains
  subroutine diffuse(f, out, alpha, steps)
    real(8), intent(inout) :: f(:, :)
    real(8), intent(inout) :: out(:, :)
    real(8), intent(in) :: alpha
    integer, intent(in) :: steps
    real(8), save, allocatable :: lap(:, :)
    integer :: it, i, j
    if (allocated(lap) .and. any(shape(lap) /= (/nx + 2 * halo, ny + 2 * halo/))) then
      deallocate(lap)
    end if
    if (.not. allocated(lap)) then
      allocate(lap(nx + 2 * halo, ny + 2 * halo))
      lap = 0
    end if
    do it = 1, steps
      do j = halo, ny + halo + 1
        do i = halo, nx + halo + 1
          lap(i, j) = -4 * f(i, j) + f(i-1, j) + f(i+1, j) + f(i, j-1) + f(i, j+1)
        end do
      end do
      do j = 1 + halo, ny + halo
        do i = 1 + halo, nx + halo
          out(i, j) = f(i, j) - alpha * (-4 * lap(i, j) + lap(i-1, j) + lap(i+1, j) &
                                         + lap(i, j-1) + lap(i, j+1))
        end do
      end do
      f(1 + halo:nx + halo, 1 + halo:ny + halo) = out(1 + halo:nx + halo, 1 + halo:ny + halo)
    end do
  end subroutine
end module
"""


def test_a_saved_scratch_array_gets_fresh_memory_each_call():
    k = parse_fortran(SAVED, "s.f90")["diffuse"]
    t = k.temporaries["lap"]
    assert (tuple(map(str, t.shape)), str(t.address_space)) == \
        (("2*halo + nx", "2*halo + ny"), "global")
    assert "lap" not in {a.name for a in k.args}


TWO = """subroutine pair(n, a, b)
  integer, intent(in) :: n
  real(8), intent(in) :: a(n)
  real(8), intent(out) :: b(n)
  real(8), save, allocatable :: s1(:), s2(:)
  integer :: i
  if (allocated(s1) .and. any(shape(s1) /= (/n/))) deallocate(s1, s2)
  if (.not. allocated(s1)) then
    allocate(s1(n), s2(n))
    s1 = 0
    s2 = 0
  end if
  s1 = a
  do i = 1, n
    s2(i) = 2 * s1(i)
  end do
  b = s2 + USE
end subroutine
"""


@pytest.mark.parametrize("use", ["1", "s2(1)", "s1(n)"])
def test_one_flag_may_decide_the_allocation_of_several_saved_arrays(use):
    k = parse_fortran(TWO.replace("USE", use), "p.f90")["pair"]
    assert {n: str(t.address_space) for n, t in k.temporaries.items() if n in ("s1", "s2")} \
        == {"s1": "global", "s2": "global"}


def test_a_saved_array_zeroed_under_another_arrays_flag_is_not_written_by_it():
    source = TWO.replace("  s1 = a\n", "  s1 = a\n  b(1) = s2(1)\n").replace("USE", "1")
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "p.f90")
    assert e.value.format().splitlines()[0] == (
        "p.f90:14:3: error: saved allocatable array 's2' may carry values from one call to the "
        "next, which a kernel cannot keep (f2loopy gives it fresh memory on every call): the "
        "elements read at p.f90:14 are not all written earlier in the same call; write every "
        "element in the call before reading it, or pass the array as an argument")


def test_check_does_not_require_the_deallocate_of_a_later_call():
    # (it runs only on a call after the first, with other sizes: a check
    # makes first calls; f2loopy.verify.coverage)
    from f2loopy.verify.coverage import required_lines
    k = parse_fortran(SAVED, "s.f90")["diffuse"]
    counts = dict.fromkeys(range(1, SAVED.count("\n") + 1), 0)
    need = set(required_lines(SAVED, k, 5, SAVED.count("\n"), counts, fixed_form=False).values())
    assert "allocate(lap(nx + 2 * halo, ny + 2 * halo))" in need and "lap = 0" in need
    assert "deallocate(lap)" not in need


_SAVED_HEAD = SAVED.split("    do it = 1, steps")[0]


@pytest.mark.parametrize("body, at, why", [
    # reads lap(i+1, j) one column past what the call wrote
    ("    do j = 1 + halo, ny + halo\n      do i = 1 + halo, nx + halo\n"
     "        lap(i, j) = f(i, j)\n      end do\n    end do\n"
     "    do j = 1 + halo, ny + halo\n      do i = 1 + halo, nx + halo\n"
     "        out(i, j) = lap(i, j) + lap(i + 1, j)\n      end do\n    end do\n",
     8, "the elements read at s.f90:{line} are not all written earlier in the same call"),
    # the zeros of the first call would be read
    ("    out(1, 1) = lap(1, 1)\n",
     1, "the elements read at s.f90:{line} are not all written earlier in the same call"),
    # a value that depends on whether the array is allocated on entry
    ("    if (allocated(lap)) out(1, 1) = 1\n",
     1, "whether it is allocated when the call starts decides a value that is not the array "
         "(at s.f90:{line})"),
], ids=["past", "first-zeros", "flag"])
def test_saved_arrays_that_may_carry_values_are_located_errors(body, at, why):
    source = _SAVED_HEAD + body + "  end subroutine\nend module\n"
    line = _SAVED_HEAD.count("\n") + at
    why = why.format(line=line)
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "s.f90")
    assert e.value.format().splitlines()[0] == (
        f"s.f90:{line}:{e.value.span.column}: error: saved allocatable array 'lap' may carry "
        "values from one call to the next, which a kernel cannot keep (f2loopy gives it fresh "
        f"memory on every call): {why}; write every element in the call before reading it, or "
        "pass the array as an argument")


@needs_gfortran
def test_saved_scratch_arrays_match_gfortran_over_calls(tmp_path, cl_queue):
    module, _ = translate_and_load(SAVED, tmp_path, filename="s.f90")
    ref = fortran_reference(SAVED, "s.f90")
    # the second call has other sizes (Fortran reallocates), the third the
    # same (Fortran keeps the second call's array and what it holds)
    for seed, (nx, ny) in enumerate([(5, 4), (7, 6), (7, 6)]):
        f = farray((nx + 4, ny + 4), np.float64, seed=seed)
        want = ref.call_named("diffuse", {"f": f.copy(order="F"), "out": np.zeros_like(f),
                                          "alpha": 0.1, "steps": 3, "nx": nx, "ny": ny,
                                          "halo": 2})
        module.stencil.nx, module.stencil.ny = nx, ny
        got_f, got_out = f.copy(order="F"), np.zeros_like(f)
        module.diffuse(got_f, got_out, 0.1, 3, queue=cl_queue)
        np.testing.assert_allclose(got_f, want["f"], rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(got_out, want["out"], rtol=1e-13, atol=1e-14)

# }}}


# {{{ a sibling: local arrays sized by a module variable the kernel assigns

GROWS = """module dims
  implicit none
  integer :: nz
end module
module m
  use dims
  implicit none
contains
  subroutine grow()
    nz = nz + 1
  end subroutine
  subroutine top(a)
    real(8) :: a(10)
    real(8) :: loc(nz)
    call grow()
    loc = 1
    a(1) = sum(loc)
  end subroutine
end module
"""


def test_local_arrays_sized_by_a_module_variable_the_kernel_assigns_are_refused():
    # Fortran sizes loc on entry; the kernel would index it with the new nz
    # (past the end of the buffer the glue allocated)
    with pytest.raises(FortranError) as e:
        parse_fortran(GROWS, "g.f90")
    assert e.value.format().splitlines()[0] == (
        "g.f90:14:16: error: the bounds of local array 'loc' depend on module variable 'nz', "
        "which the subroutine or a procedure it calls assigns: not supported (Fortran sizes "
        "the array on entry; size it with values the subroutine leaves unchanged)")

# }}}


PREFIX = """module m
  implicit none
contains
  subroutine prefix(k, a, s)
    integer, intent(in) :: k
    real(8), intent(in) :: a(*)
    real(8), intent(out) :: s
    real(8) :: w(2*k)
    integer :: i
    do i = 1, k
      w(i) = a(i)
      w(k + i) = a(i) * a(i)
    end do
    s = sum(w)
  end subroutine
  subroutine tri(n, a, s)
    integer, intent(in) :: n
    real(8), intent(in) :: a(n)
    real(8), intent(out) :: s(n)
    integer :: i
    do i = 1, n
      call prefix(i, a, s(i))
    end do
  end subroutine
end module
"""


def test_an_extent_that_follows_the_loop_around_the_call_is_sized_by_its_largest_value():
    t = parse_fortran(PREFIX, "p.f90")["tri"].temporaries["w"]
    assert (tuple(map(str, t.shape)), str(t.address_space)) == (("2*n",), "global")


@needs_gfortran
def test_an_extent_that_follows_the_loop_matches_gfortran(tmp_path, cl_queue):
    run_both(PREFIX, "tri", [7, farray(7, np.float64, seed=5), np.zeros(7)], tmp_path,
             cl_queue, filename="p.f90")


def test_a_loop_bounded_by_what_the_first_allocation_decides_is_refused():
    # m is n on the first call only: on later calls Fortran's loop runs no times
    source = """subroutine once(n, out)
  integer, intent(in) :: n
  real(8), intent(out) :: out(n)
  real(8), save, allocatable :: t(:)
  integer :: i, m
  m = 0
  if (.not. allocated(t)) then
    allocate(t(n))
    m = n
  end if
  out = 0
  do i = 1, m
    out(i) = 1
  end do
end subroutine
"""
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "o.f90")
    assert e.value.format().splitlines()[0] == (
        "o.f90:13:5: error: saved allocatable array 't' may carry values from one call to the "
        "next, which a kernel cannot keep (f2loopy gives it fresh memory on every call): whether "
        "it is allocated when the call starts decides a value that is not the array (at "
        "o.f90:13); write every element in the call before reading it, or pass the array as an "
        "argument")


def test_allocating_a_module_array_says_a_local_would_do():
    """The Allen-Tildesley a_res_full: module coefficient tables allocated, filled,
    used and deallocated in one function: the error says how to keep it."""
    source = """module coeffs
  implicit none
  real, allocatable :: w(:)
contains
  function a_res(tau) result(a)
    real, intent(in) :: tau
    real :: a
    allocate ( w(2) )
    w = [1.0, 2.0]
    a = sum(w) * tau
    deallocate ( w )
  end function
end module
"""
    with pytest.raises(FortranError) as e:
        parse_fortran(source, "c.f90")
    assert e.value.format().splitlines()[0] == (
        "c.f90:8:5: error: 'allocate' is not supported in a kernel (kernels cannot allocate "
        "memory): allocate the module array before the call (from Python assign a "
        "Fortran-ordered numpy array to glue.<module>.<array>, from Fortran allocate it as "
        "before) and deallocate it after; if 'w' holds values only between its allocate and "
        "deallocate in 'a_res', declare it there as an allocatable local, which a kernel "
        "makes a work array")
    local = source.replace("  real, allocatable :: w(:)\n", "").replace(
        "    real :: a\n", "    real :: a\n    real, allocatable :: w(:)\n")
    assert parse_fortran(local, "c.f90")["a_res"].name == "a_res"
