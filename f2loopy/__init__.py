"""f2loopy: annotated Fortran to fast, verified OpenCL.

The public API mirrors loopy's names so that transformation scripts written for
loopy's Fortran frontend keep working (``import loopy as lp`` inside a
``!$loopy begin`` block resolves to this package's namespace).

Names are imported on first use (PEP 562), so that ``f2loopy translate`` on an
unchanged file (served from the translation cache) does not load the compiler.
"""

import importlib

from f2loopy.diagnostics import (
    CodegenError, F2LoopyError, FortranError, RaceError, SandboxViolation, ScriptError,
    SourceSpan, TransformError, UnsupportedFeatureError)
from f2loopy.version import __version__
from f2loopy import kernel_runner as _kernel_runner


def _run_kernel(what, queue, *args, **kwargs):
    """``knl(queue, ...)``: the host glue runs it (imported on the first call)."""
    from f2loopy.glue.call import call_kernel
    return call_kernel(what, queue, *args, **kwargs)


# the IR calls the glue through this hook (it may not import a later stage)
_kernel_runner.install(_run_kernel)

_LAZY = {
    "GeneratedKernel": "f2loopy.codegen", "generate_code": "f2loopy.codegen",
    "parse_fortran": "f2loopy.frontend",
    "generate_code_v2": "f2loopy.api", "CodeGenerationResult": "f2loopy.api",
    "parse_transformed_fortran": "f2loopy.directives",
    "auto_test_vs_ref": "f2loopy.verify.reference",
    "AutomaticTestFailure": "f2loopy.verify.reference",
    "UnsupportedArgumentError": "f2loopy.diagnostics",
    "match": "f2loopy.transform",
    "AddressSpace": "f2loopy.ir.kernel", "ArrayArg": "f2loopy.ir.kernel",
    "Assignment": "f2loopy.ir.kernel", "Kernel": "f2loopy.ir.kernel",
    "ScalarArg": "f2loopy.ir.kernel", "Temporary": "f2loopy.ir.kernel",
    "TranslationUnit": "f2loopy.ir.kernel",
}

_EAGER = [
    "CodegenError", "F2LoopyError", "FortranError", "RaceError", "SandboxViolation",
    "ScriptError", "SourceSpan", "TransformError", "UnsupportedFeatureError", "__version__",
]


def _is_submodule(name: str) -> bool:
    import os
    here = os.path.dirname(__file__)
    return os.path.exists(os.path.join(here, name + ".py")) or \
        os.path.isdir(os.path.join(here, name))


def _transform_names():
    """The transformations and queries (``f2loopy.split_iname``, ``f2loopy.plan_auto``)."""
    return [*importlib.import_module("f2loopy.transform").__all__,
            *importlib.import_module("f2loopy.query").__all__]


def __getattr__(name):
    if name == "__all__":
        value = sorted(set(_EAGER) | set(_LAZY) | set(_transform_names()))
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name.startswith("__") or _is_submodule(name):
        # ``from f2loopy import cache``: let the import system load the submodule
        raise AttributeError(f"module 'f2loopy' has no attribute {name!r}")
    elif name in _transform_names():
        query = importlib.import_module("f2loopy.query")
        value = getattr(query if name in query.__all__
                        else importlib.import_module("f2loopy.transform"), name)
    else:
        raise AttributeError(f"module 'f2loopy' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_transform_names()))
