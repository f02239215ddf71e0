"""Converting arrays between the Fortran caller's layout and a kernel's.

These functions are also copied verbatim into every generated Python glue
module (which must not depend on f2loopy), so they use numpy only.
"""

import functools

import numpy as np


def relaid(value, splits, perm):
    """The Fortran-ordered array *value* in the kernel's layout: axes split as
    *splits* says, then stored C-contiguously with the axes listed slowest
    first in *perm*."""
    a = value
    for axis, count, order in splits:
        shape = list(a.shape)
        shape[axis:axis + 1] = [count, shape[axis] // count]
        a = a.reshape(shape, order="F")
        if order == "C":
            a = np.moveaxis(a, axis, axis + 1)
    return np.ascontiguousarray(a.transpose(perm))


def unrelaid(dev, target, splits, perm):
    """Write the kernel-layout array *dev* back into the Fortran array *target*."""
    a = dev.transpose(np.argsort(perm))
    for axis, count, order in reversed(splits):
        if order == "C":
            a = np.moveaxis(a, axis + 1, axis)
        shape = list(a.shape)
        shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
        a = a.reshape(shape, order="F")
    target[...] = a


@functools.cache
def source() -> str:
    """The text of the two functions, for the generated glue (read once:
    ``inspect.getsource`` tokenizes the whole module each time)."""
    import inspect
    return inspect.getsource(relaid) + "\n\n" + inspect.getsource(unrelaid)
