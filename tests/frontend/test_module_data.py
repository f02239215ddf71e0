"""Module variables as kernel arguments: the IR, the Python glue's
``glue.<module>`` objects, and the Fortran glue (drop-in, against the
original built by gfortran in the same program, also device-resident)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran
from f2loopy.ir.serialize import decode_kernel, encode_kernel
from f2loopy.ir.roles import SavedLocal
from fortran_util import assert_all_ok, build_runtime, compile_and_run, needs_toolchain

PHYS = """\
module phys
  implicit none
  integer, parameter :: nt = 4
  real(8) :: alpha = 0.5d0
  real(8), save :: table(0:nt-1) = [1d0, 2d0, 3d0, 4d0]
  integer :: calls
  real :: unused(3)
end module phys
"""

HEAT = """\
subroutine heat(n, u)
  use phys, only: alpha, table, nt
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: u(n)
  integer :: i
  do i = 1, n
    u(i) = alpha * u(i) + table(mod(i - 1, nt))
  end do
  call bump(u(1))
end subroutine heat

subroutine bump(x)
  use phys, only: c => calls, t => table
  implicit none
  real(8), intent(in) :: x
  c = c + 1
  t(0) = t(0) + x
end subroutine bump
"""


def _kernels(tmp_path=None):
    return parse_fortran(PHYS + HEAT, "heat.f90")


def test_module_variables_are_arguments():
    heat = _kernels()["heat"]
    assert [a.name for a in heat.fortran_args] == ["n", "u"]
    stored = {a.name: a for a in heat.storage_args}
    assert sorted(stored) == ["alpha", "calls", "table"]
    assert stored["calls"].role.key == ("module", "phys", "calls")
    assert stored["table"].shape == (4,) and stored["table"].lower_bounds == (0,)
    assert stored["table"].role.init.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert float(stored["alpha"].role.init) == 0.5
    assert stored["calls"].role.init is None
    again = decode_kernel(encode_kernel(heat))
    assert [a.role for a in again.storage_args] == [a.role for a in heat.storage_args]
    assert again.storage_args[2].role.init.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_renamed_in_a_callee_is_the_same_argument():
    bump = _kernels()["bump"]
    assert [(a.name, a.role.key[2]) for a in bump.storage_args] == [("c", "calls"),
                                                                  ("t", "table")]


@pytest.mark.parametrize("decl, message", [
    ("real, allocatable :: a(0:)", "t.f90:2:24: error: allocatable array 'a' must have a "
     "deferred shape (a(:))"),
    ("real :: a(n)", "t.f90:2:11: error: module array 'a' must have constant bounds"),
])
def test_module_arrays_need_constant_bounds(decl, message):
    src = f"module m\n  {decl}\nend module\n" \
          "subroutine s(x)\n  use m\n  real x\n  x = a(1)\nend subroutine\n"
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "t.f90")
    assert e.value.format().splitlines()[0] == message


def _load(tmp_path):
    from f2loopy.pipeline import translate_text, write_outputs
    (tmp_path / "phys.f90").write_text(PHYS)
    path = tmp_path / "heat.f90"
    path.write_text(HEAT)
    result = translate_text(HEAT, path, include_dirs=[tmp_path])
    write_outputs(result.outputs)
    spec = importlib.util.spec_from_file_location("heat_cl", tmp_path / "heat_cl.py")
    glue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glue)
    return glue


def _reference(n, u, steps, alpha=0.5):
    table = np.array([1.0, 2.0, 3.0, 4.0])
    calls = 0
    for _ in range(steps):
        for i in range(n):
            u[i] = alpha * u[i] + table[i % 4]
        calls += 1
        table[0] += u[0]
    return table, calls


def test_python_glue_module_objects(tmp_path, cl_queue):
    glue = _load(tmp_path)
    # every variable of the module, also one no kernel uses
    assert repr(glue.phys) == "<Fortran module phys: alpha, calls, table, unused>"
    assert glue.phys.unused.dtype == np.float32 and glue.phys.unused.shape == (3,)
    assert glue.phys.table.dtype == np.float64 and glue.phys.table.flags.f_contiguous
    assert glue.phys.calls == 0 and glue.phys.alpha == 0.5
    u = np.linspace(0.0, 1.0, 7)
    want = u.copy()
    glue.heat(7, u, queue=cl_queue)
    glue.heat(7, u, queue=cl_queue)
    table, calls = _reference(7, want, 2)
    np.testing.assert_allclose(u, want, rtol=1e-14)
    np.testing.assert_allclose(glue.phys.table, table, rtol=1e-14)
    assert glue.phys.calls == calls == 2
    glue.phys.alpha = 2.0
    glue.bump(1.5, queue=cl_queue)
    assert glue.phys.calls == 3
    assert glue.phys.table[0] == table[0] + 1.5
    with pytest.raises(AttributeError) as e:
        glue.phys.beta = 1
    assert str(e.value) == "module phys has no variable 'beta' used by these kernels"
    glue.phys.table = np.zeros(4, dtype=np.float32)
    with pytest.raises(glue.KernelArgumentError) as e:
        glue.heat(7, u, queue=cl_queue)
    assert str(e.value).startswith("heat: argument 'table' must have dtype float64, got "
                                   "float32")


MAIN = """
program main
  use checks
  use phys
  use heat_cl_mod
  implicit none
  real(8) :: u(7), v(7), t0(0:3), t1(0:3)
  integer :: k, c1
  do k = 1, 7
    u(k) = k / 7d0
  end do
  v = u
  ! the original twice
  call heat(7, u)
  call heat(7, u)
  t1 = table; c1 = calls
  ! back to the start, then the OpenCL version twice
  table = [1d0, 2d0, 3d0, 4d0]; calls = 0
  call heat_cl(7, v)
  call heat_cl(7, v)
  call check(maxval(abs(u - v)) < 1d-13, "u")
  call check(maxval(abs(table - t1)) < 1d-13, "module array written")
  call check(calls == c1 .and. calls == 2, "module scalar written")
  ! device resident: the module array stays on the device
  t0 = table
  call f2l_upload(table)
  call heat_cl(7, v)
  call check(all(table == t0), "resident: host copy untouched")
  call f2l_download(table)
  call check(table(0) /= t0(0), "resident: downloaded")
  call done()
end program
"""


@needs_toolchain
def test_fortran_glue_uses_the_module(tmp_path):
    runtime = build_runtime(tmp_path)
    _load(tmp_path)
    sources = [tmp_path / "phys.f90", tmp_path / "heat.f90", tmp_path / "heat_cl.c",
               tmp_path / "heat_cl.f90"]
    proc = compile_and_run(tmp_path, runtime, sources, MAIN)
    assert_all_ok(proc, 5)


# {{{ common blocks

COMMON = """\
subroutine advance(n, x)
  implicit none
  integer n, i
  real(8) x(n)
  real(8) w(3), s
  integer cnt
  common /blk/ w, s, cnt
  do i = 1, n
    x(i) = x(i) * w(mod(i - 1, 3) + 1) + s
  end do
  call tick()
end subroutine advance

subroutine tick()
  implicit none
  real(8) w(3), s
  integer cnt
  common /blk/ w, s, cnt
  cnt = cnt + 1
  s = s + 0.5d0
end subroutine tick
"""


def test_common_block_is_passed_whole():
    tick = parse_fortran(COMMON, "c.f90")["tick"]
    assert [(a.name, a.role.key) for a in tick.storage_args] == [
        ("w", ("common", "blk", "w")), ("s", ("common", "blk", "s")),
        ("cnt", ("common", "blk", "cnt"))]
    assert "w: float64, shape (3), common /blk/ member w" in str(tick)


def test_common_block_declared_differently():
    head, tick = COMMON.split("subroutine tick()")
    src = head + "subroutine tick()" + tick.replace("cnt", "c")
    with pytest.raises(FortranError) as e:
        parse_fortran(src, "c.f90")
    assert e.value.format().splitlines()[0] == (
        "c.f90:19:3: error: common block /blk/ is declared differently in 'tick' and where "
        "it was used before: 'c' does not match 'cnt' (f2loopy needs the same names, types and "
        "shapes everywhere)")


def test_blank_common_is_refused():
    with pytest.raises(FortranError) as e:
        parse_fortran("subroutine s(x)\n  real x, y\n  common y\n  x = y\nend\n", "t.f90")
    assert e.value.format().splitlines()[0] == (
        "t.f90:3:3: error: blank 'common' is not supported (name the block: common /name/ ...)")


def test_python_glue_common_block(tmp_path, cl_queue):
    from util import translate_and_load
    glue, _ = translate_and_load(COMMON, tmp_path, filename="c.f90")
    assert repr(glue.blk) == "<Fortran common /blk/: cnt, s, w>"
    glue.blk.w[:] = [1.0, 2.0, 3.0]
    x = np.ones(4)
    glue.advance(4, x, queue=cl_queue)
    assert x.tolist() == [1.0, 2.0, 3.0, 1.0]
    assert (glue.blk.s, glue.blk.cnt) == (0.5, 1)
    glue.tick(queue=cl_queue)
    glue.advance(4, x, queue=cl_queue)
    assert x.tolist() == [2.0, 5.0, 10.0, 2.0]
    assert (glue.blk.s, glue.blk.cnt) == (1.5, 3)


COMMON_MAIN = """
program main
  use checks
  use advance_cl_mod
  implicit none
  real(8) w(3), s, x(5), y(5), s1
  integer cnt, c1, k
  common /blk/ w, s, cnt
  w = [1d0, 2d0, 3d0]; s = 0.25d0; cnt = 0
  do k = 1, 5
    x(k) = k
  end do
  y = x
  call advance(5, x)
  call advance(5, x)
  s1 = s; c1 = cnt
  s = 0.25d0; cnt = 0
  call advance_cl(5, y)
  call advance_cl(5, y)
  call check(maxval(abs(x - y)) < 1d-13, "x")
  call check(s == s1 .and. cnt == c1 .and. cnt == 2, "common members written")
  call done()
end program
"""


@needs_toolchain
def test_fortran_glue_declares_the_common_block(tmp_path):
    from fortran_util import translate
    runtime = build_runtime(tmp_path)
    sources = translate(tmp_path, "c", COMMON)
    proc = compile_and_run(tmp_path, runtime, sources, COMMON_MAIN)
    assert_all_ok(proc, 2)

# }}}


def test_c_glue_documents_the_extra_arguments(tmp_path):
    _load(tmp_path)
    head = (tmp_path / "heat_cl.c").read_text().split("static const char")[0]
    assert head.splitlines()[3:10] == [
        "/* Kernel arguments, in order.  Scalars the kernel writes, arrays, module variables,",
        "   common blocks and the components of derived-type arguments are pointers (global",
        "   buffers); module variables and common blocks come after the Fortran arguments.",
        "   heat(n, *u, alpha = module phys variable alpha, *calls = module phys variable calls, "
        "*table =",
        "     module phys variable table)",
        "   bump(x, *c = module phys variable calls, *t = module phys variable table) */",
        ""]
    # then each kernel's signature, for C callers that want each launch checked
    assert head.splitlines()[10].startswith("/* Kernel signatures, for f2l_kernel_signature(")


# {{{ saved locals

SAVED = """\
subroutine counter(n, x)
  implicit none
  integer n, i
  real(8) x(n)
  integer, save :: calls = 0
  real(8) :: acc(2) = [0.5d0, 0d0]
  save acc
  calls = calls + 1
  do i = 1, n
    acc(1) = acc(1) + x(i)
    x(i) = x(i) + calls + acc(1)
  end do
end subroutine counter
"""


def test_saved_locals_are_storage():
    knl = parse_fortran(SAVED, "s.f90")["counter"]
    stored = {a.name: a for a in knl.storage_args}
    assert stored["calls"].role == SavedLocal(procedure="counter", name="calls", init=stored["calls"].role.init)
    assert int(stored["calls"].role.init) == 0
    assert stored["acc"].role.init.tolist() == [0.5, 0.0]
    assert "calls: int32, scalar, saved local of counter" in str(knl)


def test_python_glue_keeps_saved_locals(tmp_path, cl_queue):
    from util import translate_and_load
    glue, _ = translate_and_load(SAVED, tmp_path, filename="s.f90")
    x = np.ones(2)
    glue.counter(2, x, queue=cl_queue)
    glue.counter(2, x, queue=cl_queue)
    # call 1: acc 1.5, 2.5 -> x 3.5, 4.5; call 2: acc 6, 10.5 -> x 11.5, 17
    assert x.tolist() == [11.5, 17.0]
    assert glue.counter_save.calls == 2 and glue.counter_save.acc.tolist() == [10.5, 0.0]


SAVED_MAIN = """
program main
  use checks
  use counter_cl_mod
  implicit none
  real(8) :: x(3) = [1d0, 2d0, 3d0], y(3)
  integer :: k
  y = x
  do k = 1, 3
    call counter(3, x)
    call counter_cl(3, y)
  end do
  call check(maxval(abs(x - y)) < 1d-12, "saved state evolves alike")
  call done()
end program
"""


@needs_toolchain
def test_fortran_glue_keeps_saved_locals(tmp_path):
    from fortran_util import translate
    runtime = build_runtime(tmp_path)
    sources = translate(tmp_path, "counter", SAVED)
    proc = compile_and_run(tmp_path, runtime, sources, SAVED_MAIN)
    assert_all_ok(proc, 1)

# }}}


def test_module_array_on_the_device(tmp_path, cl_queue):
    """A module array the caller replaces by a pyopencl array stays on the
    device: the kernel works on it in place, nothing is copied back."""
    import pyopencl.array as cla
    glue = _load(tmp_path)
    table = cla.to_device(cl_queue, np.array([1.0, 2.0, 3.0, 4.0]))
    glue.phys.table = table
    u = np.zeros(4)
    glue.heat(4, u, queue=cl_queue)
    assert u.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert table.get().tolist() == [1.0 + u[0], 2.0, 3.0, 4.0]
