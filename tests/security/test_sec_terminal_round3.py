"""Terminal controls, round 3 (issue 29, item 9): what ``tune`` reports and
prints as it goes, the "note: skipping" lines of ``translate``, and what the
compiler wrapper ``f2loopyfc`` prints (its messages, a translation's errors
and notes, what a file's script printed).  Every string there comes from a
downloaded file, its name or its script: escapes, bidirectional overrides
and carriage returns must reach the terminal as visible escapes.

The commands run in fresh processes with their output in pipes: click
strips CSI sequences from a pipe but not OSC, carriage returns or bidi
overrides, which is what these attacks use.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from security_util import (
    CANARY, ROOT, SAXPY, assert_safe, opencl_available, run_cli, terminal_is_clean)

OSC_TITLE = "\x1b]0;owned\x07"
BIDI = "\u202e"
NASTY = OSC_TITLE + BIDI + "\rX"


@pytest.mark.usefixtures("python_process")
def test_the_note_for_one_skipped_generated_file_is_escaped(tmp_path):
    from f2loopy.build import GENERATED_MARK
    name = f"gen{BIDI}{OSC_TITLE}_cl.f90"
    (tmp_path / name).write_text(f"{GENERATED_MARK} from x.f90\n")
    proc = run_cli(["translate", name], tmp_path)
    assert "note: skipping" in proc.stderr, proc.stderr
    assert "\\u202e" in proc.stderr and "\\x1b]0;owned\\x07" in proc.stderr
    assert_safe(tmp_path, proc.stdout, proc.stderr)


@pytest.mark.usefixtures("python_process")
def test_the_note_for_several_skipped_generated_files_is_escaped(tmp_path):
    from f2loopy.build import GENERATED_MARK
    for k in range(2):
        (tmp_path / f"g{k}{BIDI}\r_cl.f90").write_text(f"{GENERATED_MARK} from x.f90\n")
    proc = run_cli(["translate", *sorted(p.name for p in tmp_path.iterdir())], tmp_path)
    assert "note: skipping 2 files f2loopy generated" in proc.stderr, proc.stderr
    assert_safe(tmp_path, proc.stdout, proc.stderr)


TUNABLE = """\
subroutine scale(n, a, x)
  implicit none
  integer n, i
  real a, x(n)
  do i = 1, n
    x(i) = a * x(i) + 1.0
  end do
end subroutine

!$loopy begin
! knl, = parse_fortran(SOURCE, FILENAME)
! knl = fix_parameters(knl, n=64)
! t = tunable("tile", [4, 8])
! print("script says \\x1b]0;title\\x07 and \\u202e")
! knl = split_iname(knl, "i", t, outer_tag="g.0", inner_tag="l.0")
! RESULT = [knl]
!$loopy end
"""


@pytest.mark.gfortran
@pytest.mark.skipif(not opencl_available(), reason="tune runs kernels on an OpenCL device")
def test_tune_progress_and_report_are_escaped(tmp_path):
    """The file's name reaches every progress line's context and the
    report ('recorded in NAME.tune.json')."""
    name = f"sc{BIDI}ale{OSC_TITLE}.f90"
    (tmp_path / name).write_text(TUNABLE)
    proc = run_cli(["tune", "--min-time", "0.01", name], tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tune: [1/2]" in proc.stderr and "recorded in" in proc.stdout
    assert "\\u202e" in proc.stdout
    assert terminal_is_clean(proc.stdout) and terminal_is_clean(proc.stderr)


# {{{ the compiler wrapper

def _wrapper(args, cwd: Path, env: dict | None = None):
    environ = dict(os.environ, F2LOOPY_TEST_CANARY=CANARY, PYTHONPATH=str(ROOT),
                   PYTHONHASHSEED="0", F2LOOPY_CACHE_DIR=str(cwd / ".cache"), **(env or {}))
    return subprocess.run([sys.executable, "-m", "f2loopy.wrapper", *map(str, args)], cwd=cwd,
                          env=environ, capture_output=True, text=True, errors="replace",
                          timeout=600, stdin=subprocess.DEVNULL)


@pytest.mark.usefixtures("python_process")
def test_the_wrapper_escapes_a_translation_error_in_a_hostile_name(tmp_path):
    name = f"k{BIDI}{OSC_TITLE}.f90"
    (tmp_path / name).write_text(SAXPY + "!$loopy begin\n! RESULT = [undefined_name]\n"
                                 "!$loopy end\n")
    proc = _wrapper(["gfortran", "-c", name], tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "error" in proc.stderr and "\\u202e" in proc.stderr, proc.stderr
    assert terminal_is_clean(proc.stdout) and terminal_is_clean(proc.stderr)
    assert CANARY not in proc.stdout + proc.stderr


@pytest.mark.usefixtures("python_process")
def test_the_wrapper_escapes_its_own_messages(tmp_path):
    (tmp_path / "k.f90").write_text(SAXPY + "!$loopy begin\n! RESULT = [parse_fortran("
                                    "SOURCE, FILENAME)[0]]\n!$loopy end\n")
    proc = _wrapper(["gfortran", "-c", "k.f90"], tmp_path,
                    env={"F2LOOPYFC_OPTIONS": f"--evil{NASTY}"})
    assert proc.returncode == 1
    assert "F2LOOPYFC_OPTIONS: unknown option" in proc.stderr, proc.stderr
    assert terminal_is_clean(proc.stderr), ascii(proc.stderr)


@pytest.mark.usefixtures("gfortran", "gcc")     # the wrapper compiles
def test_the_wrapper_escapes_what_a_script_prints(tmp_path):
    (tmp_path / "k.f90").write_text(
        SAXPY + "!$loopy begin\n! print('hello \\x1b]0;title\\x07 \\u202e \\r over')\n"
        "! RESULT = [parse_fortran(SOURCE, FILENAME)[0]]\n!$loopy end\n")
    proc = _wrapper(["gfortran", "-c", "k.f90", "-o", "k.o"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hello " in proc.stdout and " over" in proc.stdout, ascii(proc.stdout)
    assert terminal_is_clean(proc.stdout) and terminal_is_clean(proc.stderr)
    assert (tmp_path / "k.o").is_file()

# }}}
