"""``printf`` calls for the kernel's list-directed output
(:mod:`f2loopy.ir.prints`)."""

from __future__ import annotations

import numpy as np

from f2loopy.diagnostics import CodegenError
from f2loopy.escape import c_string
from f2loopy.ir.prints import printf_format


def printf_call(emitter, parameters) -> str:
    """The C statement printing site ``parameters[0]`` of *emitter*'s kernel
    with the values ``parameters[1:]``."""
    site, *values = parameters
    sites = emitter.kernel.prints
    if not 0 < int(site) <= len(sites) or len(values) != sites[int(site) - 1].value_count:
        raise CodegenError(f"invalid print site {int(site)}")
    fmt, conversions = printf_format(sites[int(site) - 1])
    args = []
    for v, conv in zip(values, conversions, strict=True):
        if conv == "logical":
            args.append(f"({emitter.printer(v)}) ? 'T' : 'F'")
        elif conv == "long":
            args.append(emitter.printer(v, np.dtype(np.int64)))
        elif conv == "int":
            args.append(emitter.printer(v, np.dtype(np.int32)))
        else:
            args.append(emitter.printer(v))
    return f'printf("{c_string(fmt)}"' + "".join(f", {a}" for a in args) + ");"
