"""The corpus of hostile transformation scripts in ``tests/hostile/``: every
one is blocked, with a clear message at the right line, exit code 1, nothing
written or changed, and the parent process unharmed.

Each corpus file is the script of a ``!$loopy begin`` block; its first lines
say what must happen::

    # expect: the transformation script may not import 'os'
    # line: 1          (the script line of the error; 'begin': the block's first line)

The script sees ``TARGET`` (a file it must not create) and ``EXISTING`` (a
file it must not change) as ``-D`` values.  The command line runs in this
process (click's test runner), so the sandbox forks from the test process
itself and "the parent is unharmed" is checked on the test process.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from f2loopy.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "hostile"

FORTRAN = """\
subroutine saxpy(n, a, x, y)
  implicit none
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a*x(i) + y(i)
  end do
end subroutine
"""
BEGIN_LINE = len(FORTRAN.splitlines()) + 1


def load_case(path: Path):
    expect = line = None
    body = []
    for text in path.read_text().splitlines():
        if text.startswith("# expect: ") and expect is None:
            expect = text[len("# expect: "):]
        elif text.startswith("# line: ") and line is None:
            line = text[len("# line: "):].strip()
        else:
            body.append(text)
    assert expect and line, f"{path.name}: needs '# expect:' and '# line:' headers"
    return expect, line, body


def fortran_with(script_lines) -> str:
    return (FORTRAN + "!$loopy begin\n" + "".join(f"! {s}\n" for s in script_lines)
            + "!$loopy end\n")


def _parent_state():
    return {
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "limits": {r: resource.getrlimit(r) for r in (
            resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_NOFILE,
            resource.RLIMIT_FSIZE, resource.RLIMIT_NPROC, resource.RLIMIT_CORE)},
        "handlers": {s: signal.getsignal(s) for s in (signal.SIGALRM, signal.SIGXCPU,
                                                      signal.SIGINT)},
        "fds": sorted(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else [],
        "sys_path": list(sys.path),
    }


CASES = sorted(CORPUS.glob("*.py"))


def test_corpus_is_large_enough():
    assert len(CASES) >= 30


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_hostile_script_is_blocked(path, tmp_path, monkeypatch):
    expect, line, body = load_case(path)
    monkeypatch.setenv("F2LOOPY_SCRIPT_CPU_LIMIT", "1")
    monkeypatch.setenv("F2LOOPY_SCRIPT_WALL_LIMIT", "30")
    monkeypatch.setenv("F2LOOPY_SCRIPT_MEMORY_LIMIT", "256")
    work = tmp_path / "work"
    work.mkdir()
    src = work / "t.f90"
    src.write_text(fortran_with(body))
    existing = work / "existing.txt"
    existing.write_text("precious\n")
    stamp = existing.stat().st_mtime_ns
    target = work / "target.txt"
    before = _parent_state()

    result = CliRunner().invoke(main, ["translate", "-D", f"TARGET={target}",
                                       "-D", f"EXISTING={existing}", str(src)])

    assert result.exit_code == 1, result.output
    where = BEGIN_LINE if line == "begin" else BEGIN_LINE + int(line)
    assert f"t.f90:{where}:" in result.output, result.output
    assert f"error: {expect}" in result.output, result.output
    assert "Traceback" not in result.output
    # nothing written, nothing changed
    assert sorted(p.name for p in work.iterdir()) == ["existing.txt", "t.f90"]
    assert existing.read_text() == "precious\n" and existing.stat().st_mtime_ns == stamp
    # the parent is unharmed: same state, and it can still write files
    assert _parent_state() == before
    probe = tmp_path / "parent_can_write.txt"
    probe.write_text("ok")
    assert probe.read_text() == "ok"
