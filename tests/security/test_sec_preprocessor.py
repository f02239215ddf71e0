"""The C preprocessor step (issue 14, round 2): what a downloaded ``.F90``
file can make the preprocessor read, how long it can make it run, and what
reaches the outputs and the terminal.

Each attack runs the real command line in a fresh process (so that
``/proc/self/environ`` holds the canary) in a project folder ``proj`` beside
a "home" folder with a secret file; it asserts a located refusal or a clean
error, nothing written, no secret in any output or message, and no
preprocessor process left behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from security_util import CANARY, ROOT, SENTINEL, assert_safe, files_in, terminal_is_clean

pytestmark = pytest.mark.usefixtures("preprocessor")

HEAD = "subroutine s(n, x)\n  integer n, i\n  real x(n)\n"
BODY = "  do i = 1, n\n    x(i) = 2*x(i)\n  end do\nend subroutine\n"
SECRET_FILE_TEXT = f"TOKEN = {CANARY.replace('-', '_')}\n"


@pytest.fixture
def place(tmp_path):
    """(project folder, secret file outside it)."""
    home = tmp_path / "home"
    home.mkdir()
    secret = home / "secret.f90"
    # a secret that happens to be valid Fortran: it would be translated
    secret.write_text(SECRET_FILE_TEXT)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(CANARY + "\n")
    proj = tmp_path / "proj"
    proj.mkdir()
    return proj, secret


def cli(args, cwd: Path, timeout=120):
    env = dict(os.environ, F2LOOPY_TEST_CANARY=CANARY, PYTHONPATH=str(ROOT),
               HOME=str(cwd.parent / "home"), F2LOOPY_CACHE_DIR=str(cwd.parent / "cache"))
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "f2loopy.cli", *map(str, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, errors="replace",
                          timeout=timeout, stdin=subprocess.DEVNULL)
    proc.seconds = time.monotonic() - start
    return proc


def secret_free(proj: Path, proc) -> None:
    assert_safe(proj, proc.stdout, proc.stderr)
    for text in (proc.stdout, proc.stderr):
        assert CANARY.replace("-", "_") not in text and "TOKEN" not in text


def refused(proj: Path, name: str, line: int, words: str, proc) -> None:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{name}:{line}:1: error:" in proc.stderr and words in proc.stderr, proc.stderr
    assert files_in(proj) == sorted(p.name for p in proj.iterdir()
                                    if not p.name.endswith((".cl", "_cl.py", "_cl.f90",
                                                            "_cl.c")))
    secret_free(proj, proc)


def write(proj: Path, lines: str, name="a.F90") -> str:
    (proj / name).write_text(HEAD + lines + BODY)
    return name


OUTSIDE = "outside the source's folder and the -I folders"


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink", "symlinked_folder"])
def test_include_of_a_file_outside_the_tree(place, how):
    """Before: the secret (valid Fortran) was translated into a.cl and the glue."""
    proj, secret = place
    if how == "absolute":
        target = str(secret)
    elif how == "dotdot":
        target = "../home/secret.f90"
    elif how == "symlink":
        (proj / "defs.h").symlink_to(secret)
        target = "defs.h"
    else:
        (proj / "inc").symlink_to(secret.parent)
        target = "inc/secret.f90"
    name = write(proj, f'#include "{target}"\n')
    proc = cli(["translate", name], proj)
    refused(proj, name, 4, OUTSIDE, proc)


def test_include_of_the_environment(place):
    """/proc/self/environ holds the canary of this process."""
    proj, _ = place
    name = write(proj, '#include "/proc/self/environ"\n')
    proc = cli(["translate", name], proj)
    refused(proj, name, 4, OUTSIDE, proc)


@pytest.mark.parametrize("target", ["/proc/self/environ", "SECRET"])
def test_line_marker_naming_a_secret_file(place, target):
    """Before: '#line 1 "/proc/self/environ"' then an error printed the
    environment as the caret line of the diagnostic."""
    proj, secret = place
    target = str(secret) if target == "SECRET" else target
    name = write(proj, f'#line 1 "{target}"\n    x(1) = = 1\n')
    proc = cli(["translate", name], proj)
    assert proc.returncode == 1
    assert f"{target}:1:" in proc.stderr and "x(1) = = 1" in proc.stderr
    assert files_in(proj) == [name]
    secret_free(proj, proc)


def test_line_marker_with_escape_sequences(place):
    proj, _ = place
    name = write(proj, '#line 1 "\\033]0;owned\\007\\033[2J"\n    x(1) = = 1\n')
    proc = cli(["translate", name], proj)
    assert proc.returncode == 1 and "\\x1b]0;owned\\x07" in proc.stderr
    assert terminal_is_clean(proc.stderr)
    secret_free(proj, proc)


@pytest.mark.parametrize("kind", ["dev_zero", "dev_stdin", "dev_zero_link", "fifo",
                                  "folder", "link_loop", "dev_urandom_link"])
def test_include_of_special_files_is_refused_at_once(place, kind):
    """Before: a FIFO or a link to /dev/zero hung the preprocessor (its memory
    growing) until the 120 s timeout."""
    proj, _ = place
    target = {"dev_zero": "/dev/zero", "dev_stdin": "/dev/stdin"}.get(kind, "x.h")
    if kind == "dev_zero_link":
        (proj / "x.h").symlink_to("/dev/zero")
    elif kind == "dev_urandom_link":
        (proj / "x.h").symlink_to("/dev/urandom")
    elif kind == "fifo":
        os.mkfifo(proj / "x.h")
    elif kind == "folder":
        (proj / "x.h").mkdir()
    elif kind == "link_loop":
        (proj / "x.h").symlink_to("y.h")
        (proj / "y.h").symlink_to("x.h")
    name = write(proj, f'#include "{target}"\n')
    proc = cli(["translate", name], proj, timeout=60)
    assert proc.returncode == 1 and f"{name}:4:1: error:" in proc.stderr, proc.stderr
    assert proc.seconds < 30
    assert not list(proj.glob("*.cl"))
    secret_free(proj, proc)


@pytest.mark.parametrize("directive", [
    '#define H "/proc/self/environ"\n#include H\n',             # computed include
    '#if 0\n#include "/proc/self/environ"\n#endif\n',          # in a branch not taken
    '#/* c */include "/proc/self/environ"\n',                   # a comment inside
    '#  include \\\n  "/proc/self/environ"\n',                  # a continued line
    '#include_next "/proc/self/environ"\n',
    '#import "/proc/self/environ"\n',
    '%:include "/proc/self/environ"\n',
    '\ufeff#include "/proc/self/environ"\n',                  # after a byte order mark
])
def test_hidden_includes(place, directive):
    proj, _ = place
    name = write(proj, directive)
    proc = cli(["translate", name], proj)
    assert proc.returncode == 1, proc.stderr
    assert not list(proj.glob("*.cl"))
    secret_free(proj, proc)


@pytest.mark.parametrize("include", ["#include NC_INC", "#  include \\\n  NC_INC",
                                     "%:include NC_INC"])
def test_macro_named_include_in_a_branch_not_taken(place, include):
    """A project's optional library (``#ifdef USE_NC`` / ``#include NC_INC``):
    where the branch is not taken the file translates (the include was
    refused at once before, though the preprocessor never reads it); where it
    is taken, the located refusal, whatever the macro names, nothing read."""
    proj, secret = place
    name = write(proj, f"#ifdef USE_NC\n{include}\n#endif\n")
    proc = cli(["translate", name], proj)
    assert proc.returncode == 0, proc.stderr
    assert (proj / "a.cl").exists()
    secret_free(proj, proc)
    for p in proj.glob("a*.*"):
        if p.name != name:
            p.unlink()
    proc = cli(["translate", name, "-D", "USE_NC", "-D", f'NC_INC="{secret}"'], proj)
    refused(proj, name, 5, "with a macro for the file name is not supported", proc)


@pytest.mark.parametrize("probe", [
    '#if __has_include("HOME/.ssh/id_rsa")\n',
    '#define CAT(a,b) a/**/b\n#if CAT(__has_,include)("HOME/.ssh/id_rsa")\n',
])
def test_existence_probes(place, probe):
    """Before: __has_include (also pasted together) told whether any path
    exists, and the translation (the kernel) depended on it."""
    proj, secret = place
    probe = probe.replace("HOME", str(secret.parent))
    name = write(proj, probe + "    x(1) = 7\n#endif\n")
    proc = cli(["translate", name], proj)
    assert proc.returncode == 1, proc.stderr
    assert not list(proj.glob("*.cl"))
    secret_free(proj, proc)


def test_byte_order_mark_before_the_first_include(place):
    """Before the scanner knew it, the check after the preprocessor caught it
    (unlocated); now it is refused at the line."""
    proj, _ = place
    (proj / "a.F90").write_text('\ufeff#include "/proc/self/environ"\n' + HEAD + BODY)
    proc = cli(["translate", "a.F90"], proj)
    refused(proj, "a.F90", 1, OUTSIDE, proc)


def test_recursive_include(place):
    proj, _ = place
    (proj / "self.h").write_text('#include "self.h"\n')
    name = write(proj, '#include "self.h"\n')
    proc = cli(["translate", name], proj)
    assert proc.returncode == 1 and "#include nested" in proc.stderr
    assert files_in(proj) == [name, "self.h"]
    secret_free(proj, proc)


def test_macro_expanding_to_huge_text(place):
    """Before: the whole output was buffered in the parent (and a 2^39-fold
    macro used all memory for two minutes)."""
    proj, _ = place
    defs = "#define X0 " + "a" * 72 + "\n" + "".join(
        f"#define X{k} X{k - 1} X{k - 1}\n" for k in range(1, 17))
    name = write(proj, defs + "X16\n" * 20)
    proc = cli(["translate", name], proj)
    assert proc.returncode == 1 and "larger than 67108864 bytes" in proc.stderr
    assert files_in(proj) == [name]
    secret_free(proj, proc)


def test_a_timeout_leaves_no_preprocessor_behind(place, monkeypatch):
    """gfortran runs cc1/f951 as a child: a timeout must end both."""
    from f2loopy import preprocessor
    from f2loopy.preprocessor import PreprocessorError, preprocess
    proj, _ = place
    monkeypatch.setattr(preprocessor, "TIMEOUT", 2)
    defs = "#define X0 " + "a" * 72 + "\n" + "".join(
        f"#define X{k} X{k - 1} X{k - 1}\n" for k in range(1, 40))
    marker = "zz_unique_name_for_ps.F90"
    text = HEAD + defs + "X39\n" + BODY
    start = time.monotonic()
    with pytest.raises(PreprocessorError, match="longer than 2 s"):
        preprocess(text, proj / marker)
    assert time.monotonic() - start < 15
    time.sleep(0.5)
    survivors = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and marker.encode() in (p / "cmdline").read_bytes():
                survivors.append(p.name)
        except OSError:
            pass
    assert survivors == []


def test_define_values_do_not_reach_the_command_line_as_options(place):
    """-D values with spaces, quotes and option-like words stay one argument."""
    proj, _ = place
    name = write(proj, "    x(1) = VAL\n")
    proc = cli(["translate", name, "-D", f"VAL=1 -o {SENTINEL} '\"$(touch {SENTINEL})\"'"],
               proj)
    assert not (proj / SENTINEL).exists()
    assert proc.returncode == 1
    # a line break cannot start a directive (a Python literal's comment is
    # dropped: VAL is 1; a text value with a line break is refused)
    for value in ("1\n#include \"/proc/self/environ\"", "a\n#include \"/proc/self/environ\""):
        proc = cli(["translate", name, "-D", "VAL=" + value], proj)
        secret_free(proj, proc)
        if proc.returncode == 0:
            assert "x[0] = 1.0f;" in (proj / "a.cl").read_text()
        else:
            assert "may not hold a line break" in proc.stderr, proc.stderr


def test_includes_inside_the_tree_and_relative_include_folders_still_work(place):
    proj, _ = place
    (proj / "inc" / "sub").mkdir(parents=True)
    (proj / "inc" / "factor.h").write_text('#include "sub/two.h"\n')
    (proj / "inc" / "sub" / "two.h").write_text("#define FACTOR 5\n")
    (proj / "local.h").write_text("#define OFFSET 1\n")
    (proj / "a.F90").write_text('#include "factor.h"\n#include "local.h"\n' + HEAD + BODY
                                .replace("2*x(i)", "FACTOR*x(i) + OFFSET"))
    proc = cli(["translate", "a.F90", "-I", "inc"], proj)
    assert proc.returncode == 0, proc.stderr
    assert "5 * x[" in (proj / "a.cl").read_text()
    secret_free(proj, proc)


def test_included_file_names_with_control_characters(place):
    """Before: the outputs were written, then the depfile could not name the
    header (exit 1 with the outputs left behind)."""
    proj, _ = place
    (proj / "e\x1b[2Jx.h").write_text("#define F 3\n")
    (proj / "a.F90").write_text('#include "e\x1b[2Jx.h"\n' + HEAD + BODY)
    proc = cli(["translate", "a.F90", "--depfile", "a.d"], proj)
    assert proc.returncode == 1
    assert "a.F90:1:1: error:" in proc.stderr and "control characters" in proc.stderr
    assert sorted(p.name for p in proj.iterdir()) == ["a.F90", "e\x1b[2Jx.h"]
    assert terminal_is_clean(proc.stderr)


def _header_project(proj: Path) -> str:
    """A kernel that includes ``inc/defs.h``, whose own ``#include`` of a
    file named by a macro sits in a branch taken only with ``-D USE_NC``
    (martinclaus/swm's ``calc_lib.h``); ``defs.h`` includes ``sub/more.h``,
    which includes ``deep.h`` from its own folder."""
    inc = proj / "inc"
    (inc / "sub").mkdir(parents=True)
    (inc / "defs.h").write_text('#ifndef DEFS_SEEN\n#define DEFS_SEEN\n#ifdef USE_NC\n'
                                '#include NC_INC /* from the Makefile */\n#endif\n'
                                '#include "sub/more.h"\n#endif\n')
    (inc / "sub" / "more.h").write_text('#include "deep.h"\n#ifdef USE_NC\n#  include \\\n'
                                        '   NC_MORE\n#endif\n')
    (inc / "sub" / "deep.h").write_text("#define SCALE 3\n")
    (proj / "a.F90").write_text('#include "defs.h"\n' + HEAD +
                                "  do i = 1, n\n    x(i) = SCALE*x(i)\n  end do\nend subroutine\n")
    return "a.F90"


def test_macro_named_include_of_a_header_in_a_branch_not_taken(place):
    """Before: refused at the header's line although the branch is never
    taken (only the main file's such lines were left to the preprocessor).
    The preprocessor now reads checked copies of the headers; the depfile and
    the markers name the headers themselves."""
    proj, secret = place
    name = _header_project(proj)
    proc = cli(["translate", name, "-I", "inc", "--depfile", "a.d"], proj)
    assert proc.returncode == 0, proc.stderr
    assert "3.0f * x[" in (proj / "a.cl").read_text() or "3 * x[" in (proj / "a.cl").read_text()
    deps = (proj / "a.d").read_text()
    for header in ("inc/defs.h", "inc/sub/more.h", "inc/sub/deep.h"):
        assert str(proj / header) in deps or header in deps, deps
    assert "f2loopy-cpp-" not in deps
    secret_free(proj, proc)
    for p in proj.glob("a*.*"):
        if p.name != name:
            p.unlink()
    (proj / "a.d").unlink(missing_ok=True)
    proc = cli(["translate", name, "-I", "inc", "-D", "USE_NC", "-D", f'NC_INC="{secret}"'], proj)
    assert proc.returncode == 1, proc.stderr
    assert "inc/defs.h:4:1: error: #include with a macro for the file name is not supported" \
        in proc.stderr, proc.stderr
    assert "f2loopy-cpp-" not in proc.stderr
    assert not list(proj.glob("*.cl"))
    secret_free(proj, proc)


def test_errors_in_copied_headers_name_the_header(place):
    proj, _ = place
    name = _header_project(proj)
    (proj / "inc" / "sub" / "deep.h").write_text("#define SCALE 3\n#ifdef BOOM\n#error boom\n"
                                                 "#endif\n")
    proc = cli(["translate", name, "-I", "inc", "-D", "BOOM"], proj)
    assert proc.returncode == 1, proc.stderr
    assert "deep.h:3:" in proc.stderr and "boom" in proc.stderr, proc.stderr
    assert "f2loopy-cpp-" not in proc.stderr
    assert not list(proj.glob("*.cl"))


def test_header_copies_keep_the_refusals(place):
    """A header reached through '..' cannot be copied in its place: refused,
    located, where a header has a macro-named #include; a header outside the
    folders is refused as before."""
    proj, secret = place
    name = _header_project(proj)
    (proj / "inc" / "sub" / "deep.h").write_text('#include "../common.h"\n#define SCALE 3\n')
    (proj / "inc" / "common.h").write_text("#define COMMON 1\n")
    proc = cli(["translate", name, "-I", "inc"], proj)
    refused(proj, "inc/sub/deep.h", 1, "goes through '..' in a project whose headers "
            "#include a file named by a macro", proc)
    (proj / "inc" / "sub" / "deep.h").write_text(f'#include "{secret}"\n')
    proc = cli(["translate", name, "-I", "inc"], proj)
    assert proc.returncode == 1 and OUTSIDE in proc.stderr, proc.stderr
    secret_free(proj, proc)
