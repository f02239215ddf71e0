"""The ``f2loopy`` command run inside the test's process (click's runner).

A child process (``python -m f2loopy.cli``) costs a Python start-up and the
imports of the whole translator, about 0.4 s of CPU each time; most command
tests check what the command writes and says and how it exits, not how a
process starts or ends.  :func:`f2loopy` runs the same command group in this
process and answers like :func:`subprocess.run` with ``capture_output=True,
text=True``.  Tests of what only a process shows (the re-execution with a fixed
hash seed, the exit without teardown, signals, ``-j`` workers, the import
path, a umask) start a child instead.

What the command changes in the process is put back afterwards: the current
folder, the environment (``--trust-scripts`` sets a variable for its workers),
the garbage collector's thresholds.  An exception other than ``SystemExit``
propagates: where a child would have printed a traceback and exited 1, the
test fails with the traceback.
"""

from __future__ import annotations

import gc
import inspect
import os
import subprocess
from contextlib import contextmanager

from click.testing import CliRunner


@contextmanager
def _process_state(cwd):
    old_cwd, old_env, old_gc = os.getcwd(), dict(os.environ), gc.get_threshold()
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)
        gc.set_threshold(*old_gc)


def _RUNNER() -> CliRunner:
    # click before 8.2 mixes standard error into the output unless told not to
    if "mix_stderr" in inspect.signature(CliRunner).parameters:
        return CliRunner(mix_stderr=False)
    return CliRunner()


def f2loopy(*args, cwd=None, env=None, input=None) -> subprocess.CompletedProcess:
    """Run ``f2loopy ARGS`` in this process, in folder *cwd* (default: the
    current one), with the variables of *env* added to the environment (a
    value None removes one); return its exit code, standard output and
    standard error."""
    from f2loopy.cli import main

    argv = [os.fspath(a) for a in args]
    with _process_state(cwd):
        result = _RUNNER().invoke(main, argv, input=input, env=env, prog_name="f2loopy",
                                    catch_exceptions=False)
    return subprocess.CompletedProcess(["f2loopy", *argv], result.exit_code,
                                       result.stdout, result.stderr)
