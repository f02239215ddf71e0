"""Where an array element lives in memory: the linear offset of a subscript."""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p

from f2loopy.ir.folding import normalize_integer


class LayoutError(ValueError):
    pass


def axes_fastest_first(var) -> list[int]:
    """Axes of *var* from the fastest- to the slowest-varying in memory (a
    ``vec`` axis is the fastest, then nesting order N0, N1, ...)."""
    tags = var.axis_tags
    return sorted(range(var.ndim), key=lambda a: -1 if tags[a].kind == "vec" else tags[a].order)


def _is_zero(expr) -> bool:
    return isinstance(expr, (int, np.integer)) and int(expr) == 0


def _times(a, b):
    if _is_zero(a) or _is_zero(b):
        return 0
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return int(a) * int(b)
    if isinstance(a, (int, np.integer)) and int(a) == 1:
        return b
    return p.Product((a, b))


def linear_offset(var, indices):
    """Offset of ``var(indices)`` in its storage, in Horner form from the
    slowest- to the fastest-varying axis: ``(i - 1) + n*((j - 1) + m*(k - 1))``."""
    offset = None
    for a in reversed(axes_fastest_first(var)):
        rel = normalize_integer(p.Sum((indices[a], p.Product((-1, var.lower_bounds[a])))))
        if offset is None:
            offset = rel
            continue
        extent = var.shape[a]
        if extent is None:
            raise LayoutError(f"assumed-size axis of '{var.name}' must be the slowest-varying "
                              "one")
        scaled = _times(normalize_integer(extent), offset)
        offset = scaled if _is_zero(rel) else (rel if _is_zero(scaled) else p.Sum((rel, scaled)))
    return offset if offset is not None else 0


def storage_size(var) -> int:
    """Number of elements of a temporary with constant extents."""
    return int(np.prod([int(s) for s in var.shape])) if var.shape else 1
