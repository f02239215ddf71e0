"""Code generated elsewhere: the sandbox child's code of a script's kernels.

The parent never generates the code of a kernel a transformation script
returned (its shape is the script's choice, and scheduling it may cost
hours): a limited child does (:mod:`f2loopy.directives.child_codegen`) and
sends the code back.  Two things hold it in the parent:

* :class:`ChildCode`, the table that the transformation stage returns with
  its kernels (kernel identity -> generated code or the error); the pipeline
  asks it, never :func:`~f2loopy.codegen.generate_code`, for the code of the
  script's result and checkpoints, and a kernel it lacks is an internal
  error, not code generated here;
* a registry for everything else that holds such a kernel
  (``check``, ``bench``, a user of :func:`~f2loopy.parse_transformed_fortran`
  calling ``generate_code``): an entry lives exactly as long as its kernel
  (a weak reference ends it), so no count of kernels can push one out
  while the kernel is still in use.
"""

from __future__ import annotations

import weakref
from typing import Any

from f2loopy.diagnostics import F2LoopyError
from f2loopy.ir.kernel import Kernel

# id(kernel) -> (weak reference to it, GeneratedKernel or the F2LoopyError)
_REGISTRY: dict[int, tuple[weakref.ref, Any]] = {}


def _forget(key: int) -> None:
    _REGISTRY.pop(key, None)


def remember_code(kernel: Kernel, result: Any) -> None:
    """Make :func:`~f2loopy.codegen.generate_code` return *result* (a
    :class:`~f2loopy.codegen.GeneratedKernel`, or raise it if it is an
    :class:`~f2loopy.diagnostics.F2LoopyError`) for this kernel object, for
    as long as the object lives."""
    key = id(kernel)
    known = _REGISTRY.get(key)
    if known is not None and known[0]() is kernel:
        _REGISTRY[key] = (known[0], result)
        return
    _REGISTRY[key] = (weakref.ref(kernel), result)
    weakref.finalize(kernel, _forget, key)


def remembered(kernel: Kernel) -> Any | None:
    """The remembered code (or error) of this kernel object, or None."""
    known = _REGISTRY.get(id(kernel))
    if known is not None and known[0]() is kernel:
        return known[1]
    return None


def unwrap(result: Any) -> Any:
    """*result* itself, or a fresh copy of it raised if it is an error (the
    same class, message, location and notes)."""
    if isinstance(result, F2LoopyError):
        raise type(result)(result.message, result.span, result.notes)
    return result


class ChildCode:
    """The generated code (or the error) of the kernels a script returned,
    by kernel identity, as the limited child made it.  Holds its kernels."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[Kernel, Any]] = {}

    def add(self, kernel: Kernel, result: Any) -> None:
        """Record *result* (code or error) for *kernel*, also in the registry
        that :func:`~f2loopy.codegen.generate_code` asks."""
        self._entries[id(kernel)] = (kernel, result)
        remember_code(kernel, result)

    def __contains__(self, kernel: object) -> bool:
        entry = self._entries.get(id(kernel))
        return entry is not None and entry[0] is kernel

    def __len__(self) -> int:
        return len(self._entries)

    def code(self, kernel: Kernel) -> Any:
        """The :class:`~f2loopy.codegen.GeneratedKernel` of *kernel*.

        :raises F2LoopyError: the child could not generate it (its error).
        :raises LookupError: the child was not asked for this kernel (an
            f2loopy bug: the parent does not generate it instead).
        """
        entry = self._entries.get(id(kernel))
        if entry is None or entry[0] is not kernel:
            raise LookupError(f"no code from the sandbox child for kernel '{kernel.name}' "
                              "(the parent never generates a script's code)")
        return unwrap(entry[1])
