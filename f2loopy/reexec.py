"""Re-executing the command with a fixed hash seed, importing nothing from
the current folder.

Translations must be byte-identical from run to run, and a transformation
script may iterate over a set of names, whose order Python randomises per
process: so ``f2loopy`` and ``f2loopyfc`` re-execute themselves once with
``PYTHONHASHSEED=0``.  ``python -m MODULE`` (and ``python -c``) would put the
current folder first on ``sys.path``, and a ``click.py``, ``numpy.py`` or
``shlex.py`` shipped in a downloaded project would run with the user's
rights.  The new process therefore runs ``python -c BOOTSTRAP``, whose first
statement removes that entry before anything else is imported (``sys`` is
built in); on Python 3.11 and later ``-P`` keeps the entry out in the first
place and is inherited by the workers ``multiprocessing`` spawns.  Python's
start-up (``site`` and its ``.pth`` files) runs before the entry is added, so
nothing from the folder runs at any point; every process f2loopy forks later
(sandbox children, ``check``'s runners, ``-j`` workers) inherits the clean
path.

Only a script needs the fixed seed (f2loopy's own translation does not
depend on it): :func:`may_hold_script` tells the files whose translation
certainly runs none, which ``f2loopy translate`` then handles without
re-executing (``f2loopy.cli._runs_no_script``).
"""

from __future__ import annotations

import os
import re
import sys

from f2loopy.regular_files import MAX_SOURCE_BYTES, read_regular

#: set in the re-executed process's environment
SEED_VARIABLE = "PYTHONHASHSEED"

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")

# ``-c`` inserts '' (the current folder) as sys.path[0] right before the
# command runs; with -P (3.11+) nothing is inserted and the path is left alone
_BOOTSTRAP = ("import sys\n"
              "if sys.path[:1] == ['']:\n"
              "    del sys.path[0]\n"
              "from {module} import {function} as _main\n"
              "_main()\n")


def bootstrap_command(module: str, function: str) -> list[str]:
    """The interpreter's arguments (after the executable) that run
    ``module.function()`` without the current folder on ``sys.path``."""
    if not (_NAME_RE.fullmatch(module) and _NAME_RE.fullmatch(function)):
        raise ValueError(f"not a module and function name: {module!r}, {function!r}")
    safe = ["-P"] if sys.version_info >= (3, 11) else []
    return [*safe, "-c", _BOOTSTRAP.format(module=module, function=function)]


def reexecute(module: str, function: str) -> None:
    """Replace this process with ``module.function()`` run with a fixed hash
    seed, unless the environment already sets one (then return at once).
    The new process's ``sys.argv[1:]`` are this one's.  Returns only when the
    interpreter cannot be executed (the command then runs as it is: only the
    reproducibility suffers)."""
    if os.environ.get(SEED_VARIABLE) is not None or not sys.executable:
        return
    env = dict(os.environ)
    env[SEED_VARIABLE] = "0"
    try:
        os.execve(sys.executable,
                  [sys.executable, *bootstrap_command(module, function), *sys.argv[1:]], env)
    except OSError:
        pass


#: bytes of an input that :func:`may_hold_script` reads (a larger file is
#: assumed to hold a script; translate refuses one anyway)
MAX_SCANNED = MAX_SOURCE_BYTES
#: what every script block, and every line that brings in other text, contains
_SCRIPT_MARKS = (b"$loopy", b"include")


def may_hold_script(path: str) -> bool:
    """Whether translating the file *path* may run a transformation script
    (Python whose set iteration order depends on the hash seed): True unless
    *path* is a regular file of at most :data:`MAX_SCANNED` bytes whose text
    has neither ``$loopy`` (a script block) nor ``include`` (an ``include``
    or ``#include`` line could bring one in), in any case.

    Conservative by construction: a comment that mentions either word, a
    file that cannot be read, a folder, a FIFO or a device (never opened:
    :func:`f2loopy.regular_files.read_regular`) all count as "may"."""
    try:
        text = read_regular(path, MAX_SCANNED).lower()
    except (OSError, ValueError):
        return True
    return any(mark in text for mark in _SCRIPT_MARKS)
