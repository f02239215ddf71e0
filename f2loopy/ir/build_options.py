"""The OpenCL build options a kernel may carry: an allow-list.

A kernel's build options reach the OpenCL compiler in the user's program,
long after the transformation script ran in its sandbox.  Options that
change the meaning of the code (``-Dget_global_id=get_local_id``,
``-include``, ``-I``, ``-U``, ``-x``) or load something (``-Xclang -load``)
would make the code that ``f2loopy show`` and ``f2loopy check`` saw differ
from the code that runs, so only options that tune floating point, choose
the OpenCL C version or control warnings and debug information are allowed.
"""

from __future__ import annotations

from f2loopy.escape import visible

ALLOWED_BUILD_OPTIONS = frozenset((
    "-cl-fast-relaxed-math", "-cl-mad-enable", "-cl-no-signed-zeros",
    "-cl-unsafe-math-optimizations", "-cl-finite-math-only", "-cl-denorms-are-zero",
    "-cl-single-precision-constant", "-cl-fp32-correctly-rounded-divide-sqrt",
    "-cl-opt-disable", "-cl-strict-aliasing", "-cl-uniform-work-group-size",
    "-cl-no-subgroup-ifp", "-cl-kernel-arg-info",
    "-cl-std=CL1.1", "-cl-std=CL1.2", "-cl-std=CL2.0", "-cl-std=CL3.0",
    "-w", "-Werror", "-g",
))


class BuildOptionError(ValueError):
    """A build option that is not on the allow-list."""


def build_option_message(option) -> str:
    """Why *option* is refused, with what is allowed."""
    shown = visible(option)[:80]
    return (f"the OpenCL build option '{shown}' is not allowed (allowed: "
            + ", ".join(sorted(ALLOWED_BUILD_OPTIONS)) + ")")


def check_build_options(options) -> tuple:
    """*options* as a tuple of strings if every one is allowed; else raise
    :class:`BuildOptionError` naming the first that is not."""
    options = tuple(options)
    for option in options:
        if not isinstance(option, str) or option not in ALLOWED_BUILD_OPTIONS:
            raise BuildOptionError(build_option_message(option))
    return options
