"""Shared parts of the security tests: a victim file, running the command
line on it, and the checks every attack ends with.

Every attack runs in a fresh directory with a canary secret in the
environment (``F2LOOPY_TEST_CANARY``) and a sentinel file that a successful
injection would create (``SENTINEL``, relative to the directory, since a file
name cannot hold a ``/``).  :func:`assert_safe` checks what must hold after
any attack: no sentinel, no canary in any output or file, no raw escape or
control sequence on the terminal.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

from click.testing import CliRunner

from f2loopy.cli import main

ROOT = Path(__file__).resolve().parents[2]
CANARY = "f2l-canary-7d41c0"
SENTINEL = "SENTINEL"
#: a command a payload runs if it gets the chance: creates the sentinel
TOUCH = f"touch {SENTINEL}"

SAXPY = """\
subroutine saxpy(n, a, x, y)
  implicit none
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a*x(i) + y(i)
  end do
end subroutine
"""
SCRIPT_LINE = len(SAXPY.splitlines()) + 2    # the first line of a script's code


#: a kernel that includes a header (``defs.h`` defines SCALE): the header's
#: folder is what the include, cache and depfile attacks vary
INCLUDING_KERNEL = """\
subroutine k(n, x)
  implicit none
#include "defs.h"
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = x(i) * SCALE
  end do
end subroutine
"""
#: a kernel that uses the module of :data:`SCALES_MODULE` (a module file on the path)
MODULE_USER = """\
subroutine u(n, x)
  use scales
  implicit none
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = x(i) * factor
  end do
end subroutine
"""
SCALES_MODULE = "module scales\n  real, parameter :: factor = 2.0\nend module\n"


def child_env() -> dict:
    """The environment of a command run as a child process: this checkout's
    f2loopy, and no ``F2LOOPYFC_OPTIONS`` of the user's."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("F2LOOPYFC_OPTIONS", None)
    return env


def run_module(module: str, *args, cwd: Path, timeout: float = 600):
    """``python -m MODULE ARGS`` in *cwd* (:func:`child_env`), output captured."""
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=cwd,
                          env=child_env(), capture_output=True, text=True, timeout=timeout)


def with_script(lines) -> str:
    """SAXPY with a ``!$loopy begin`` block holding *lines*."""
    return SAXPY + "!$loopy begin\n" + "".join(f"! {s}\n" for s in lines) + "!$loopy end\n"


def invoke(args, cwd: Path, env: dict | None = None):
    """Run ``f2loopy ARGS`` in this process (click's runner) in *cwd*, with the
    canary in the environment; returns the result (stdout and stderr apart)."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        environ = {"F2LOOPY_TEST_CANARY": CANARY, **(env or {})}
        return CliRunner().invoke(main, [str(a) for a in args], env=environ)
    finally:
        os.chdir(old)


def terminal_is_clean(text: str) -> bool:
    """No character a terminal would act on (or that reorders text) besides
    newlines and tabs."""
    return not any(ch not in "\n\t" and unicodedata.category(ch) in
                   ("Cc", "Cf", "Zl", "Zp", "Cs", "Co") for ch in text)


def assert_safe(work: Path, *texts: str) -> None:
    """After an attack in *work*: nothing ran, nothing leaked, and every text
    that reached the terminal is clean."""
    assert not (work / SENTINEL).exists(), "an injected command ran"
    for text in texts:
        assert CANARY not in text, "the canary secret leaked"
        assert terminal_is_clean(text), ascii(text)
    for path in work.rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), f"the canary leaked into {path}"


def files_in(work: Path) -> list[str]:
    return sorted(p.name for p in work.iterdir())


# {{{ using the generated glue

def have_tool(name: str) -> bool:
    return shutil.which(name) is not None


def opencl_available() -> bool:
    try:
        import pyopencl as cl
        return bool(cl.get_platforms())
    except Exception:  # noqa: BLE001 - no ICD, no platform: no OpenCL here
        return False


IMPORT_AND_RUN = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("glue_under_test", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
print("doc:", ascii(mod.__doc__[:60]))
if sys.argv[2] == "run":
    import numpy as np
    x = np.arange(10, dtype=np.float32)
    y = np.ones(10, dtype=np.float32)
    mod.saxpy(10, 2.0, x, y)
    assert np.array_equal(y, 2 * np.arange(10, dtype=np.float32) + 1), y
    print("ran: ok")
"""


def import_python_glue(work: Path, glue: Path, run_kernel: bool) -> str:
    """Import *glue* in a fresh interpreter in *work* (and call ``saxpy``
    with *run_kernel*); returns its output (the import must succeed)."""
    env = dict(os.environ, F2LOOPY_TEST_CANARY=CANARY, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", IMPORT_AND_RUN, str(glue),
                           "run" if run_kernel else "import"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if run_kernel:
        assert "ran: ok" in proc.stdout
    return proc.stdout + proc.stderr

# }}}


def run_cli(args, cwd: Path, timeout=120, env: dict | None = None):
    """Run ``f2loopy ARGS`` in a fresh process in *cwd* (its
    ``/proc/self/environ`` holds the canary); returns the CompletedProcess."""
    environ = dict(os.environ, F2LOOPY_TEST_CANARY=CANARY, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-m", "f2loopy.cli", *map(str, args)], cwd=cwd,
                          env=environ, capture_output=True, text=True, errors="replace",
                          timeout=timeout, stdin=subprocess.DEVNULL)
