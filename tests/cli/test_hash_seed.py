"""Issue 24, item 4: ``f2loopy translate`` of a file without a script skips
the re-execution with a fixed hash seed.

Only a transformation script (Python that may iterate over a set of names)
needs the fixed seed; f2loopy's own translation does not depend on it, which
the process tests show by translating files under two different seeds and
comparing every output byte.  Which command lines may skip it
(``f2loopy.cli._runs_no_script``, ``f2loopy.reexec.may_hold_script``) is
tested without processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from f2loopy.cli import _runs_no_script
from f2loopy.reexec import may_hold_script

ROOT = Path(__file__).resolve().parents[2]

PLAIN = """\
subroutine scale(n, a, x)
  implicit none
  integer, intent(in) :: n
  real, intent(in) :: a
  real, intent(inout) :: x(n)
  integer :: i
  do i = 1, n
    x(i) = a * x(i)
  end do
end subroutine scale
"""

SCRIPTED = PLAIN + """\
!$loopy begin
! knl, = parse_fortran(SOURCE, FILENAME)
! RESULT = [split_iname(knl, "i", 4, outer_tag="g.0", inner_tag="l.0")]
!$loopy end
"""


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain.f90").write_text(PLAIN)
    (tmp_path / "other.f90").write_text(PLAIN.replace("scale", "scale2"))
    (tmp_path / "scripted.f90").write_text(SCRIPTED)
    (tmp_path / "upper.f90").write_text(PLAIN + "!$LOOPY BEGIN\n!$LOOPY END\n")
    (tmp_path / "inc.f90").write_text("include 'x.h'\n" + PLAIN)
    (tmp_path / "cpp.F90").write_text('#INCLUDE "x.h"\n' + PLAIN)
    (tmp_path / "folder.f90").mkdir()
    return tmp_path


@pytest.mark.parametrize("name, holds", [
    ("plain.f90", False),
    ("scripted.f90", True),
    ("upper.f90", True),           # any case
    ("inc.f90", True),             # an included file may hold one
    ("cpp.F90", True),
    ("folder.f90", True),          # not a regular file
    ("missing.f90", True),
    ("/dev/null", True),
])
def test_may_hold_script(files, name, holds):
    assert may_hold_script(name) is holds


def test_may_hold_script_reads_at_most_the_cap(files, monkeypatch):
    import f2loopy.reexec as reexec
    monkeypatch.setattr(reexec, "MAX_SCANNED", 16)
    assert may_hold_script("plain.f90") is True


@pytest.mark.parametrize("args, skip", [
    (["translate", "plain.f90"], True),
    (["translate", "plain.f90", "other.f90"], True),
    (["translate", "-o", "out", "-j", "2", "-D", "n=4", "--kernel", "scale", "plain.f90"], True),
    (["translate", "--trust-scripts", "plain.f90"], True),
    (["translate", "--", "plain.f90"], True),
    (["translate", "scripted.f90"], False),
    (["translate", "plain.f90", "scripted.f90"], False),
    (["translate", "--transform", "auto", "plain.f90"], False),
    (["translate", "--transform=auto", "plain.f90"], False),
    (["translate", "inc.f90"], False),
    (["translate", "folder.f90"], False),
    (["translate", "--no-such-option", "plain.f90"], False),
    (["translate", "--help"], False),
    (["translate"], False),
    (["show", "plain.f90"], False),
    (["check", "plain.f90"], False),
    (["--version"], False),
    ([], False),
])
def test_runs_no_script(files, args, skip):
    assert _runs_no_script(args) is skip


def test_runs_no_script_has_no_side_effects(files, monkeypatch, capsys):
    """The early look at the command line runs no option callback (the real
    parse does): --trust-scripts warns once and sets its variable there."""
    from f2loopy.directives.runner import TRUST_ENV
    monkeypatch.delenv(TRUST_ENV, raising=False)
    assert _runs_no_script(["translate", "--trust-scripts", "plain.f90"])
    assert TRUST_ENV not in os.environ
    assert capsys.readouterr() == ("", "")


# {{{ processes

def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env.update(PYTHONPATH=str(ROOT), F2LOOPY_NO_CACHE="1", **extra)
    return env


#: the console script, with the re-execution made visible
PROBE = ("import sys, f2loopy.reexec as r\n"
         "def refuse(*a):\n"
         "    raise SystemExit('re-executed')\n"
         "r.reexecute = refuse\n"
         "from f2loopy.cli import entry\n"
         "sys.argv[0] = 'f2loopy'\n"
         "entry()\n")


@pytest.mark.usefixtures("python_process")
def test_console_script_reexecutes_only_for_scripts(files):
    plain = subprocess.run([sys.executable, "-c", PROBE, "translate", "plain.f90"],
                           env=_env(), capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stderr
    assert (files / "plain.cl").is_file()
    scripted = subprocess.run([sys.executable, "-c", PROBE, "translate", "scripted.f90"],
                              env=_env(), capture_output=True, text=True, timeout=300)
    assert scripted.returncode == 1 and "re-executed" in scripted.stderr
    assert not (files / "scripted.cl").exists()


#: samples without a script, of different kinds: reductions, fixed form,
#: derived-type-free stencils, several kernels per file
SAMPLES = ["samples/norms.f90", "samples/legacy_tridiag.f", "samples/shallow_water.f90",
           "samples/hydro2d/hydro_kernels.f90", "samples/polybench/covariance.f90"]


@pytest.mark.usefixtures("python_process")
def test_translation_without_script_does_not_depend_on_the_hash_seed(tmp_path):
    outputs = {}
    for seed in ("1", "4242"):
        out = tmp_path / seed
        out.mkdir()
        assert not any(may_hold_script(str(ROOT / s)) for s in SAMPLES)
        proc = subprocess.run([sys.executable, "-m", "f2loopy.cli", "translate", "-o", str(out),
                               *(str(ROOT / s) for s in SAMPLES)], env=_env(PYTHONHASHSEED=seed),
                              capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        outputs[seed] = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    assert len(outputs["1"]) == 4 * len(SAMPLES)
    assert outputs["1"] == outputs["4242"]

# }}}
