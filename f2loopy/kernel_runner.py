"""How a kernel object runs when called (``knl(queue, a=...)``, as in loopy).

The IR (:mod:`f2loopy.ir.kernel`) does not know how to run code; the host
glue does (:func:`f2loopy.glue.call.call_kernel`), and the glue is a later
stage that the IR must not import.  So the call goes through this hook:
the package's facade (``f2loopy/__init__.py``, above every layer) installs
the glue's runner when the package is imported, which happens before any
kernel can exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_runner: Callable[..., tuple[Any, tuple]] | None = None


def install(runner: Callable[..., tuple[Any, tuple]]) -> None:
    """Make *runner* ``(kernel or unit, queue, *args, **kwargs) -> (event,
    outputs)`` what calling a kernel runs."""
    global _runner
    _runner = runner


def run(what: Any, queue: Any, *args: Any, **kwargs: Any) -> tuple[Any, tuple]:
    """Run *what* (a kernel or translation unit) on *queue* with the
    installed runner."""
    if _runner is None:
        raise RuntimeError("no kernel runner is installed (the f2loopy package installs "
                           "the host glue's when it is imported)")
    return _runner(what, queue, *args, **kwargs)
