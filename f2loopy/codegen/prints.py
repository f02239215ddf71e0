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
    args: list[str] = []
    setup: list[str] = []
    for k, (v, conv) in enumerate(zip(values, conversions, strict=True)):
        if conv.startswith("fortran_e"):
            setup.append(_fortran_e(emitter.printer(v), conv, k))
            big, sign = f"(abs(f2l_e{k}) > 99)", f"(f2l_e{k} < 0 ? '-' : '+')"
            args += [f"f2l_m{k}", f"{big} ? {sign} : 'E'",
                     f"{big} ? '0' + abs(f2l_e{k}) / 100 : {sign}", f"abs(f2l_e{k}) % 100"]
        elif conv == "logical":
            args.append(f"({emitter.printer(v)}) ? 'T' : 'F'")
        elif conv == "long":
            args.append(emitter.printer(v, np.dtype(np.int64)))
        elif conv == "int":
            args.append(emitter.printer(v, np.dtype(np.int32)))
        else:
            args.append(emitter.printer(v))
    call = f'printf("{c_string(fmt)}"' + "".join(f", {a}" for a in args) + ");"
    return "{ " + " ".join(setup) + " " + call + " }" if setup else call


def _fortran_e(value: str, conv: str, k: int) -> str:
    """C declarations of ``f2l_m{k}`` and ``f2l_e{k}``: the mantissa in [0.1, 1)
    (rounded to the digits of *conv*, ``fortran_e8.4``) and the exponent of
    *value*, as Fortran's ``Ew.d`` writes them (``0.1235E+02``, ``0.1000-299``);
    zero is ``0.0000E+00``."""
    kind, digits = conv[len("fortran_e"):].split(".")
    ctype = {"4": "float", "8": "double"}[kind]
    scale = f"{10.0 ** int(digits)!r}"
    return (f"{ctype} f2l_m{k} = {value}; int f2l_e{k} = 0; "
            f"if (f2l_m{k} != 0) {{ f2l_e{k} = (int)floor(log10(fabs(f2l_m{k}))) + 1; "
            f"f2l_m{k} = f2l_m{k} / pow(({ctype})10, ({ctype})f2l_e{k}); "
            f"if (fabs(f2l_m{k}) < ({ctype})0.1) {{ f2l_m{k} *= 10; f2l_e{k} -= 1; }} "
            f"if (rint(fabs(f2l_m{k}) * ({ctype}){scale}) >= ({ctype}){scale}) "
            f"{{ f2l_m{k} /= 10; f2l_e{k} += 1; }} }}")
