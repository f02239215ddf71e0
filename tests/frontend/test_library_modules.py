"""Modules of compiled libraries (MPI, the OpenMP runtime) used by the module
that holds a kernel (issue 27: a shallow-water model's ``use mpi``, a
finite-volume code's ``use omp_lib``): the kernels that use nothing of them
translate, and a name the library may provide is refused where it is needed."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend import parse_fortran
from f2loopy.frontend.library_modules import LIBRARIES, library_module
from f2loopy.ir.roles import Dummy
from util import needs_gfortran, run_both

# a flux module in the style of a finite-volume code: the host timing and the
# halo exchange use the libraries, the flux kernel does not
FLUXES = """module fluxes
  use omp_lib
  use mpi
  implicit none
  integer, parameter :: rp = 8
  real(rp), parameter :: grav = 9.81_rp
  real(rp) :: cfl = 0.5_rp
contains
  subroutine face_flux(n, h, hu, f)
    integer, intent(in) :: n
    real(rp), intent(in) :: h(n), hu(n)
    real(rp), intent(out) :: f(n)
    integer :: i
    do i = 1, n
      f(i) = hu(i) * hu(i) / h(i) + 0.5_rp * grav * h(i) * h(i)
    end do
  end subroutine
  subroutine timed(n, h, t)
    integer, intent(in) :: n
    real(rp), intent(inout) :: h(n)
    real(rp), intent(out) :: t
    t = omp_get_wtime()
    h = 2 * h
  end subroutine
  subroutine exchange(n, h)
    integer, intent(in) :: n
    real(rp), intent(inout) :: h(n)
    integer :: ierr
    call mpi_barrier(MPI_COMM_WORLD, ierr)
    h(1) = h(n)
  end subroutine
end module
"""


def _error(text: str, name: str = "fluxes.f90", **kw) -> list[str]:
    with pytest.raises(FortranError) as info:
        parse_fortran(text, name, **kw)
    return info.value.format().splitlines()


def test_kernel_that_uses_nothing_of_the_libraries_translates():
    kernel = parse_fortran(FLUXES.split("  subroutine timed")[0] + "end module\n",
                           "fluxes.f90")["face_flux"]
    assert [a.name for a in kernel.args if isinstance(a.role, Dummy)] == ["n", "h", "hu", "f"]
    # nothing of the libraries is an argument
    assert {a.name for a in kernel.args} == {"n", "h", "hu", "f"}


def test_library_function_is_refused_where_it_is_called():
    text = FLUXES.replace("end module", "").split("  subroutine exchange")[0] + "end module\n"
    lines = _error(text)
    assert lines[0] == (
        "fluxes.f90:2:7: error: 'omp_get_wtime' is not declared here and may come from module "
        "'omp_lib' (the OpenMP runtime), which has no Fortran source f2loopy can read: a "
        "kernel cannot use the OpenMP runtime (call it around the kernel, or declare the "
        "name in the kernel if it is its own)")
    assert lines[1] == "      use omp_lib"


def test_library_subroutine_is_refused():
    text = FLUXES.replace("    t = omp_get_wtime()\n", "    t = 0\n")
    with pytest.raises(UnsupportedFeatureError) as info:
        parse_fortran(text, "fluxes.f90")
    assert info.value.format().splitlines()[0] == (
        "fluxes.f90:3:7: error: 'mpi_barrier' is not declared here and may come from module "
        "'mpi' (MPI), which has no Fortran source f2loopy can read: a kernel cannot use MPI "
        "(call it around the kernel, or declare the name in the kernel if it is its own)")


def test_library_constant_without_implicit_none_is_no_local_variable():
    """Without ``implicit none`` an undeclared MPI constant would have been an
    uninitialised local real: it is refused."""
    text = ("module halo\n  use mpi\ncontains\n  subroutine tag(n, x)\n"
            "    integer n\n    real x(n)\n    x(1) = mpi_any_tag\n  end subroutine\n"
            "end module\n")
    assert _error(text, "halo.f90")[0].startswith(
        "halo.f90:2:7: error: 'mpi_any_tag' is not declared here and may come from module "
        "'mpi' (MPI)")


def test_library_seen_through_a_used_module_and_a_host():
    """``use comm`` (which uses mpi, no only list) in another module: the
    kernel there sees mpi's names through it."""
    text = ("module comm\n  use mpi\n  integer :: nranks = 1\nend module\n"
            "module work\n  use comm\ncontains\n  subroutine scale(n, x)\n"
            "    integer n, i\n    real x(n)\n    do i = 1, n\n      x(i) = x(i) * nranks\n"
            "    end do\n  end subroutine\n  subroutine bad(n, x)\n    integer n\n"
            "    real x(n)\n    x(1) = mpi_proc_null\n  end subroutine\nend module\n")
    kernel = parse_fortran(text.split("  subroutine bad")[0] + "end module\n", "w.f90")["scale"]
    assert "nranks" in {a.name for a in kernel.args}
    assert _error(text, "w.f90")[0].startswith(
        "w.f90:2:7: error: 'mpi_proc_null' is not declared here and may come from module "
        "'mpi' (MPI)")
    only = text.replace("  use comm\n", "  use comm, only: nranks, mpi_comm_world\n")
    assert _error(only, "w.f90")[0].startswith(
        "w.f90:2:7: error: 'mpi_comm_world' is not declared here and may come from module "
        "'mpi' (MPI)")


def test_own_name_with_a_library_prefix_declared_in_the_kernel():
    text = ("module halo\n  use mpi\n  implicit none\ncontains\n  subroutine s(n, x)\n"
            "    integer n\n    real x(n)\n    integer :: mpi_rank\n    mpi_rank = 2\n"
            "    x(1) = mpi_rank\n  end subroutine\nend module\n")
    assert parse_fortran(text, "halo.f90")["s"] is not None


#: a module procedure, so that the module's specification is read
S = "contains\n  subroutine s(x)\n    real x\n    x = 1\n  end subroutine\nend module\n"


def test_only_list_names_the_library_cannot_provide():
    lines = _error("module m\n  use mpi, only: mpi_comm_world, comm_size\n" + S, "m.f90")
    assert lines[0] == (
        "m.f90:2:34: error: 'comm_size' is no name of module 'mpi' that f2loopy knows (MPI: "
        "its names begin with mpi_, pmpi_, mpix_, ompi_)")
    lines = _error("module m\n  use omp_lib, only: wtime => omp_get_wtime\n" + S,
                   "m.f90")
    assert lines[0] == (
        "m.f90:2:22: error: renaming a name of module 'omp_lib' (the OpenMP runtime) is not "
        "supported: it has no Fortran source f2loopy can read")


def test_intrinsic_use_of_a_library_module_is_still_refused():
    lines = _error("module m\n  use, intrinsic :: omp_lib\n" + S, "m.f90")
    assert lines[0].startswith("m.f90:2:21: error: intrinsic module 'omp_lib' is not "
                               "supported (only iso_fortran_env, iso_c_binding")


def test_unknown_module_is_still_a_located_error():
    assert _error("module m\n  use netcdf_like\n" + S, "m.f90")[0].startswith(
        "m.f90:2:7: error: module 'netcdf_like' is not defined in this file and no search path")


def test_library_table_prefixes():
    assert library_module("MPI") is LIBRARIES["mpi"]
    assert LIBRARIES["mpi"].provides("MPI_Comm_World") and LIBRARIES["mpi"].provides("ompi_major_version")
    assert LIBRARIES["netcdf"].provides("NF90_NOERR") and not LIBRARIES["netcdf"].provides("nc")
    assert not LIBRARIES["mpi"].provides("comm") and not LIBRARIES["omp_lib"].provides("sqrt")


@needs_gfortran
def test_kernel_beside_omp_lib_matches_gfortran(tmp_path, cl_queue):
    """gfortran builds the original with its own omp_lib module."""
    text = FLUXES.replace("  use mpi\n", "").split("  subroutine timed")[0] + "end module\n"
    rng = np.random.default_rng(3)
    n = 9
    h = rng.uniform(1, 2, n)
    hu = rng.uniform(-1, 1, n)
    run_both(text, "face_flux", [n, h, hu, np.zeros(n)], tmp_path, cl_queue,
             filename="fluxes.f90")


def test_internal_procedure_sees_its_hosts_library():
    """An internal procedure's undeclared MPI name is its host's (use
    association through the host), never a local of its own."""
    text = ("subroutine outer(n, x)\n  use mpi\n  integer n\n  real x(n)\n  call inner()\n"
            "contains\n  subroutine inner()\n    x(1) = mpi_any_source\n  end subroutine\n"
            "end subroutine\n")
    assert _error(text, "o.f90")[0].startswith(
        "o.f90:2:7: error: 'mpi_any_source' is not declared here and may come from module "
        "'mpi' (MPI)")
