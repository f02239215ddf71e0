"""loopy calls that scripts written for loopy's Fortran frontend use, which
either follow from the Fortran or are another spelling of a transformation.

* ``add_dtypes`` / ``add_and_infer_dtypes``: in loopy, arguments may lack a
  type; a Fortran declaration always gives one, so these check that what the
  script says agrees with the declarations (a disagreement would otherwise go
  unnoticed and change nothing).
* ``chunk_iname``: a split into a given number of chunks.
* ``rename_inames``: several loops renamed to one.
* ``temporary_to_subst`` and ``split_arg_axis``: loopy's older names of
  :func:`assignment_to_subst` and :func:`split_array_axis`.
"""

from __future__ import annotations

import numpy as np

from collections.abc import Mapping, Sequence

from f2loopy.diagnostics import TransformError, UnsupportedArgumentError
from f2loopy.ir.types import type_name
from f2loopy.ir.domains import constant_trip_count
from f2loopy.ir.kernel import Kernel, TranslationUnit
from f2loopy.transform.data import split_array_dim
from f2loopy.transform.iname import rename_iname, split_iname
from f2loopy.transform.match import MatchSpec
from f2loopy.transform.subst import assignment_to_subst
from f2loopy.transform.util import NameNotFoundError, TagSpec, for_each_kernel, resolve_iname


@for_each_kernel
def add_dtypes(kernel: Kernel, dtype_dict: Mapping[str, object]) -> Kernel:
    """Check the types a loopy script gives (``{"a, b": np.float64}``)
    against the Fortran declarations; the kernel is returned unchanged.

    Names are matched case-insensitively and may be comma-separated.  A type
    that differs from the declaration is an error (the Fortran decides: change
    the declaration, not the script)."""
    if not isinstance(dtype_dict, dict):
        raise TransformError(f"add_dtypes: expected a dict of name -> dtype, got "
                             f"{type(dtype_dict).__name__}")
    by_lower = {a.name.lower(): a for a in kernel.args}
    by_lower.update({n.lower(): t for n, t in kernel.temporaries.items()})
    for names, dtype in dtype_dict.items():
        if dtype is None:
            continue
        try:
            want = np.dtype(dtype)
        except TypeError:
            raise TransformError(f"add_dtypes: {dtype!r} is not a numpy dtype") from None
        for name in str(names).split(","):
            name = name.strip()
            if not name:
                continue
            var = by_lower.get(name.lower())
            if var is None:
                raise NameNotFoundError(f"add_dtypes: kernel '{kernel.name}' has no variable "
                                     f"'{name}'")
            have = np.dtype(var.dtype)
            if have.kind == "b" and want == np.dtype(np.int32):
                continue               # loopy's spelling of a Fortran logical
            if have != want:
                raise TransformError(f"add_dtypes: '{var.name}' is declared "
                                     f"{type_name(have)} ({have.name}) in the Fortran, not "
                                     f"{want.name}")
    return kernel


def add_and_infer_dtypes(kernel: Kernel | TranslationUnit, dtype_dict: Mapping[str, object],
                         expect_completion: bool = False, *,
                         skip_missing: bool = False) -> Kernel | TranslationUnit:
    """:func:`add_dtypes`: with Fortran every type is known already, so
    inference is always complete (*expect_completion* holds either way)."""
    return add_dtypes(kernel, dtype_dict, skip_missing=skip_missing)


@for_each_kernel
def chunk_iname(kernel: Kernel, split_iname_name: str, num_chunks: int, *,
                outer_iname: str | None = None, inner_iname: str | None = None,
                outer_tag: TagSpec = None, inner_tag: TagSpec = None,
                slabs: Sequence[int] = (0, 0), within: MatchSpec = None) -> Kernel:
    """Split loop *split_iname_name* into *num_chunks* chunks of equal length
    (the last may be shorter): :func:`split_iname` with the chunk length
    ``ceil(trip count / num_chunks)``; the outer loop counts the chunks.  The
    trip count must be a constant (fix the parameters it depends on first)."""
    if not isinstance(num_chunks, (int, np.integer)) or isinstance(num_chunks, bool) \
            or num_chunks < 1:
        raise TransformError(f"chunk_iname: num_chunks must be a positive integer, got "
                             f"{num_chunks!r}")
    iname = resolve_iname(kernel, split_iname_name)
    count = constant_trip_count(kernel, iname)
    if count is None:
        raise TransformError(f"chunk_iname: the trip count of loop '{iname}' is not a "
                             "constant; fix the parameters it depends on "
                             "(fix_parameters), or use split_iname with a chunk length")
    length = max(1, -(-count // int(num_chunks)))
    return split_iname(kernel, iname, length, outer_iname=outer_iname,
                       inner_iname=inner_iname, outer_tag=outer_tag, inner_tag=inner_tag,
                       slabs=slabs, within=within)


def rename_inames(kernel: Kernel | TranslationUnit, old_inames: str | Sequence[str],
                  new_iname: str, existing_ok: bool = False, within: MatchSpec = None,
                  raise_on_domain_mismatch: bool = True, *,
                  skip_missing: bool = False) -> Kernel | TranslationUnit:
    """Rename every loop of *old_inames* (a list or comma-separated names) to
    *new_iname*: the loops must have the same bounds, and become one.

    :arg raise_on_domain_mismatch: loops of different bounds are always
        refused (merging them would change which iterations run); False,
        loopy's way to merge them anyway, is refused.
    """
    if not raise_on_domain_mismatch:
        raise UnsupportedArgumentError(
            "rename_inames", "raise_on_domain_mismatch", raise_on_domain_mismatch,
            "loops of different bounds are never merged (that would change which "
            "iterations run)")
    if isinstance(old_inames, str):
        old_inames = [n.strip() for n in old_inames.split(",") if n.strip()]
    if not old_inames:
        raise TransformError("rename_inames: no inames given")
    out = rename_iname(kernel, old_inames[0], new_iname, within=within,
                       existing_ok=existing_ok, skip_missing=skip_missing)
    for old in old_inames[1:]:
        out = rename_iname(out, old, new_iname, within=within, existing_ok=True,
                           skip_missing=skip_missing)
    return out


def temporary_to_subst(kernel: Kernel | TranslationUnit, temp_name: str,
                       extra_arguments: str | Sequence[str] = (),
                       within: None = None, *,
                       skip_missing: bool = False) -> Kernel | TranslationUnit:
    """loopy's older name of :func:`assignment_to_subst`."""
    return assignment_to_subst(kernel, temp_name, extra_arguments=extra_arguments,
                               within=within, skip_missing=skip_missing)


def split_arg_axis(kernel: Kernel | TranslationUnit,
                   args_and_axes: tuple | Sequence[tuple], count: int,
                   auto_split_inames: bool = True,
                   split_kwargs: dict | None = None, *,
                   skip_missing: bool = False) -> Kernel | TranslationUnit:
    """loopy's older name of :func:`split_array_axis` (as ``split_array_dim``)."""
    return split_array_dim(kernel, args_and_axes, count, auto_split_inames=auto_split_inames,
                           split_kwargs=split_kwargs, skip_missing=skip_missing)


__all__ = ["add_dtypes", "add_and_infer_dtypes", "chunk_iname", "rename_inames",
           "temporary_to_subst", "split_arg_axis"]
