"""f2loopy: annotated Fortran to fast, verified OpenCL.

The public API mirrors loopy's names so that transformation scripts written for
loopy's Fortran frontend keep working (``import loopy as lp`` inside a
``!$loopy begin`` block resolves to this package's namespace).
"""

from f2loopy.codegen import GeneratedKernel, generate_code
from f2loopy.diagnostics import (
    CodegenError, F2LoopyError, FortranError, RaceError, SandboxViolation, ScriptError,
    SourceSpan, TransformError, UnsupportedFeatureError)
from f2loopy.frontend import parse_fortran
from f2loopy.ir.kernel import (
    AddressSpace, ArrayArg, Assignment, Kernel, ScalarArg, Temporary, TranslationUnit)
from f2loopy.transform import *  # noqa: F401,F403
from f2loopy.transform import __all__ as _transform_names
from f2loopy.version import __version__

__all__ = [
    "AddressSpace", "ArrayArg", "Assignment", "CodegenError", "F2LoopyError", "FortranError",
    "GeneratedKernel", "Kernel", "RaceError", "SandboxViolation", "ScalarArg", "ScriptError",
    "SourceSpan", "Temporary", "TransformError", "TranslationUnit", "UnsupportedFeatureError",
    "__version__", "generate_code", "parse_fortran", *_transform_names,
]
