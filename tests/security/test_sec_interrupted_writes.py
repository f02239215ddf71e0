"""Issue 29, item 11: the outputs of one translation appear all or none, and
temporaries never stay.

A real ``f2loopy translate`` process is interrupted between the renames of
its outputs (``SIGKILL``, ``SIGINT`` as Ctrl-C sends it), or runs out of
space (a file-size limit: ``EFBIG``, as a full disk gives ``ENOSPC``).  The
C glue embeds the program, so a new ``NAME_cl.f90`` beside an old
``NAME_cl.c`` would disagree.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from security_util import SAXPY

from f2loopy.pipeline import translate_file, write_outputs

#: every test starts the command as a process of its own and kills or interrupts it
pytestmark = pytest.mark.usefixtures("python_process")

#: f2loopy.outputs' names (spelt out: the test runs against older versions too)
STAGE_PREFIX, NEW_PREFIX = ".f2loopy-commit.", ".f2loopy-new."

ROOT = Path(__file__).resolve().parents[2]
OUTPUTS = ("k.cl", "k_cl.py", "k_cl.f90", "k_cl.c")

#: runs the command line in this process, with os.replace wrapped: after the
#: rename onto k_cl.f90 (the third of four outputs) the process signals itself
HARNESS = """
import os, resource, signal, sys
sig = int(sys.argv[1])
# as in a terminal: a process started in the background by a shell without job
# control inherits SIGINT ignored, and an ignored Ctrl-C rightly changes nothing
signal.signal(signal.SIGINT, signal.default_int_handler)
real = os.replace
def replace(src, dst, **kw):
    real(src, dst, **kw)
    if str(dst).endswith("k_cl.f90") and sig:
        os.kill(os.getpid(), sig)
os.replace = replace
limit = int(sys.argv[2])
if limit:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from f2loopy.cli import main
main(sys.argv[3:], prog_name="f2loopy")
"""


def _env() -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED="0",
               PYTHONDONTWRITEBYTECODE="1", F2LOOPY_NO_CACHE="1")
    return env


def _translate(cwd: Path, *files, sig=0, limit=0):
    return subprocess.run([sys.executable, "-c", HARNESS, str(sig), str(limit), "translate",
                           *files], cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=300)


def _version(cwd: Path) -> dict:
    """output -> which version of the source it was translated from (the
    references lie in cwd/../v1 and cwd/../v2)"""
    out = {}
    for name in OUTPUTS:
        data = (cwd / name).read_bytes()
        out[name] = next((v for v in ("v1", "v2") if (cwd.parent / v / name).read_bytes()
                          == data), "neither")
    return out


def _litter(cwd: Path) -> list[str]:
    return sorted(n for n in os.listdir(cwd) if n.startswith("."))


def _translate_here(cwd: Path, name: str) -> None:
    """What ``f2loopy translate NAME`` writes in *cwd*, in this process."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        write_outputs(translate_file(name).outputs)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    versions = {"v1": SAXPY.replace("saxpy", "k"),
                "v2": SAXPY.replace("saxpy", "k").replace("a*x(i)", "7.5*a*x(i)")}
    for v, text in versions.items():          # the references (in this process)
        (tmp_path / v).mkdir()
        (tmp_path / v / "k.f90").write_text(text)
        _translate_here(tmp_path / v, "k.f90")
    (proj / "k.f90").write_text(versions["v1"])
    _translate_here(proj, "k.f90")
    assert set(_version(proj).values()) == {"v1"}
    (proj / "k.f90").write_text(versions["v2"])
    (proj / "other.f90").write_text(SAXPY.replace("saxpy", "other"))
    return proj


def test_sigkill_between_renames_is_rolled_forward_by_the_next_run(project):
    proc = _translate(project, "k.f90", sig=signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    # killed mid-way: what is left is its manifest and the staged k_cl.c
    litter = _litter(project)
    assert len(litter) == 2 and all(n.startswith(STAGE_PREFIX) for n in litter), litter
    # the next translation into the folder (of another file) finishes the commit
    assert _translate(project, "other.f90").returncode == 0
    assert set(_version(project).values()) == {"v2"}
    assert _litter(project) == []


def test_ctrl_c_between_renames_lands_after_the_last_one(project):
    proc = _translate(project, "k.f90", sig=signal.SIGINT)
    assert proc.returncode != 0
    assert set(_version(project).values()) == {"v2"}            # all four
    assert _litter(project) == []


def test_a_full_disk_writes_nothing_and_leaves_nothing(project):
    before = {n: (project / n).read_bytes() for n in OUTPUTS}
    proc = _translate(project, "k.f90", limit=2000)       # the outputs need more
    assert proc.returncode == 1, proc.stderr
    assert re.search(r"cannot write k(_cl)?\.\w+: File too large", proc.stderr), proc.stderr
    assert {n: (project / n).read_bytes() for n in OUTPUTS} == before
    assert _litter(project) == []


def test_a_running_commit_is_left_alone_and_hostile_stages_move_nothing(tmp_path):
    """The recovery of a next run skips a commit in progress (its manifest is
    locked), and moves nothing from one a project shipped unless it is
    f2loopy's output onto a free name or an output."""
    import fcntl

    from f2loopy.outputs import NEW_PREFIX as new_prefix
    from f2loopy.outputs import STAGE_PREFIX as stage_prefix
    from f2loopy.outputs import recover
    assert (stage_prefix, new_prefix) == (STAGE_PREFIX, NEW_PREFIX)
    busy = tmp_path / (STAGE_PREFIX + "0" * 16)
    busy.write_text('[["0", "k.cl"]]')
    (tmp_path / f"{busy.name}.0").write_text("/* Generated by f2loopy x */\n")
    shipped = tmp_path / (STAGE_PREFIX + "1" * 16)
    shipped.write_text(
        '[["0", "main.f90"], ["1", "free.cl"], ["0", "../up.cl"], ["0", ".hidden"]]')
    (tmp_path / f"{shipped.name}.0").write_text("/* Generated by f2loopy x */ evil\n")
    (tmp_path / f"{shipped.name}.1").write_text("not marked\n")
    (tmp_path / "main.f90").write_text("program main\nend\n")
    young = tmp_path / (NEW_PREFIX + "2" * 16)
    young.write_text("")
    fd = os.open(busy, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        dfd = os.open(tmp_path, os.O_RDONLY)
        try:
            recover(dfd)
        finally:
            os.close(dfd)
    finally:
        os.close(fd)
    assert busy.exists() and (tmp_path / f"{busy.name}.0").exists()   # in use
    assert young.exists()                                             # perhaps being made
    assert not shipped.exists() and not list(tmp_path.glob(f"{shipped.name}.*"))
    assert (tmp_path / "main.f90").read_text() == "program main\nend\n"
    assert not (tmp_path / "free.cl").exists() and not (tmp_path.parent / "up.cl").exists()
    assert not (tmp_path / ".hidden").exists() and not (tmp_path / "k.cl").exists()
