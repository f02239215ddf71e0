"""Modules of libraries that come compiled, without Fortran source: MPI,
netCDF, the OpenMP and OpenACC runtimes.

A module whose host code talks to MPI (``use mpi``) or times itself with
``omp_get_wtime`` often holds the numerical kernels too.  f2loopy cannot read
these modules, and a kernel cannot use them (they run on the host), but a
kernel that uses nothing of them does not need them: the ``use`` is accepted
and every name the library could provide is refused where the kernel needs
it.  Which names that are is known exactly: every public name of these
modules begins with one of the library's prefixes (the modules' own symbol
tables as gfortran writes them: Open MPI's ``mpi`` and ``mpi_f08``,
netCDF-Fortran's ``netcdf``, GCC's ``omp_lib``, ``omp_lib_kinds`` and
``openacc``), so a name without them
cannot come from the library, neither as a variable nor as a procedure that
would hide an intrinsic one of the same name.
"""

from __future__ import annotations

from dataclasses import dataclass

from f2loopy.diagnostics import SourceSpan, UnsupportedFeatureError


@dataclass(frozen=True)
class Library:
    """A library module without source: what it is and the prefixes of all
    its public names."""

    module: str
    what: str
    prefixes: tuple[str, ...]
    #: public names without one of the prefixes
    names: frozenset[str] = frozenset()
    #: for the entities of an intrinsic module that f2loopy knows but does not
    #: provide (``c_ptr`` of ``iso_c_binding``): why a kernel cannot use them
    reason: str | None = None

    def provides(self, name: str) -> bool:
        """Whether *name* may be one of the module's public names."""
        low = name.lower()
        return low.startswith(self.prefixes) or low in self.names


_MPI = ("mpi_", "pmpi_", "mpix_", "ompi_")

LIBRARIES: dict[str, Library] = {lib.module: lib for lib in (
    Library("mpi", "MPI", _MPI),
    # (mpi_f08 passes on iso_c_binding's names too)
    Library("mpi_f08", "MPI", _MPI + ("c_",)),
    Library("netcdf", "netCDF", ("nf90_", "nf_", "nf904_")),
    Library("omp_lib", "the OpenMP runtime", ("omp_", "openmp_")),
    Library("omp_lib_kinds", "the OpenMP runtime", ("omp_",)),
    Library("openacc", "the OpenACC runtime", ("acc_", "openacc_")),
)}


def library_module(name: str) -> Library | None:
    """The library module *name* (any case), or None."""
    return LIBRARIES.get(name.lower())


def library_name_error(name: str, library: Library,
                       span: SourceSpan | None) -> UnsupportedFeatureError:
    """The refusal of *name*, which may come from *library* (used at *span*)."""
    if library.reason is not None:
        return UnsupportedFeatureError(
            f"'{name.lower()}' of intrinsic module '{library.module}' cannot be used in a "
            f"kernel ({library.reason})", span)
    return UnsupportedFeatureError(
        f"'{name.lower()}' is not declared here and may come from module "
        f"'{library.module}' ({library.what}), which has no Fortran source f2loopy can "
        f"read: a kernel cannot use {library.what} (call it around the kernel, or "
        "declare the name in the kernel if it is its own)", span)


def only_item_refusal(library: Library, name: str, renamed: bool) -> str | None:
    """Why *name* of a ``use`` of *library*'s module with an ``only`` list
    (*renamed*: ``local => name``) is refused there, or None: the names it
    provides are refused where a kernel needs them."""
    if renamed:
        return (f"renaming a name of module '{library.module}' ({library.what}) is not "
                "supported: it has no Fortran source f2loopy can read")
    if not library.provides(name):
        return (f"'{name.lower()}' is no name of module '{library.module}' that f2loopy "
                f"knows ({library.what}: its names begin with "
                f"{', '.join(library.prefixes)})")
    return None
