"""The namespace a transformation script sees.

Inside a ``!$loopy begin`` block, ``from loopy import *``, ``import loopy as lp``
and the bare names all resolve to what is listed here (loopy itself is never
imported); ``import loopy.match as m`` gives :mod:`f2loopy.transform.match`.
Every name is a pure function or a plain class: nothing here reaches the file
system, the network or other processes.  The transformations
(:mod:`f2loopy.transform`) and the queries (:mod:`f2loopy.query`) are both
here, as loopy has them in one namespace.
"""

from collections.abc import Iterable, Sequence

from f2loopy import query as _query
from f2loopy import transform as _transform
from f2loopy.codegen import GeneratedKernel, generate_code
from f2loopy.frontend import parse_fortran
from f2loopy.ir.kernel import (
    AddressSpace, ArrayArg, Assignment, Kernel, ScalarArg, Temporary, TranslationUnit)
from f2loopy.query import *  # noqa: F401,F403
from f2loopy.transform import *  # noqa: F401,F403
from f2loopy.transform import match  # noqa: F401


class CodeGenerationResult:
    """What loopy's ``generate_code_v2`` returns, as far as scripts use it:
    ``device_code()`` is the OpenCL program of the kernel(s)."""

    def __init__(self, generated: Iterable[GeneratedKernel]):
        self._generated = list(generated)

    def device_code(self) -> str:
        from f2loopy.codegen import join_program
        return join_program(self._generated)


def generate_code_v2(kernel: Kernel | TranslationUnit | Sequence[Kernel]
                     ) -> CodeGenerationResult:
    """loopy's ``generate_code_v2``: the code of *kernel* (or of every kernel
    of a translation unit or list); ``.device_code()`` gives the OpenCL
    program of them all."""
    if isinstance(kernel, TranslationUnit):
        kernels = list(kernel.kernels)
    elif isinstance(kernel, (list, tuple)):
        kernels = list(kernel)
    else:
        kernels = [kernel]
    return CodeGenerationResult(generate_code(k) for k in kernels)


#: names exported to scripts (the sandbox builds its namespace from this list)
API_NAMES = sorted(set(_transform.__all__) | set(_query.__all__) | {
    "generate_code", "generate_code_v2", "parse_fortran", "AddressSpace", "ArrayArg",
    "Assignment", "Kernel", "ScalarArg", "Temporary", "TranslationUnit", "match"})
