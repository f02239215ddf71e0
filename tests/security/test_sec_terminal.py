"""Terminal and CSV injection (issue 14, class 5).

File names, source lines, what a script prints, its error messages and
checkpoint labels are printed by ``translate``, ``show``, ``check`` and
``bench``.  A terminal acts on escape sequences (clear the screen, set the
window title, write the clipboard with OSC 52, hide text), and bidirectional
overrides reorder what the reader sees; every such character must reach the
terminal as a visible escape (``\\x1b``), and a CSV table must stay a table.
"""

from __future__ import annotations

import csv
import io

import pytest

from f2loopy.escape import terminal
from security_util import (
    SAXPY, SCRIPT_LINE, assert_safe, files_in, invoke, terminal_is_clean, with_script)

NASTY = {
    "csi_clear": "\x1b[2J\x1b[H",
    "osc_title": "\x1b]0;owned\x07",
    "osc52_clipboard": "\x1b]52;c;ZWNobyBvd25lZA==\x07",
    "c1_csi": "\x9b31m",
    "carriage_return": "safe\rEVIL",
    "backspace": "abc\x08\x08\x08xyz",
    "bidi_override": "\u202eexe.txt",
    "bidi_isolate": "\u2066hidden\u2069",
    "zero_width": "a\u200bb\ufeff",
    "line_separator": "a\u2028b\u2029c",
}
NASTY_IDS = list(NASTY)


@pytest.mark.parametrize("key", NASTY_IDS)
def test_file_name_in_a_diagnostic(key, tmp_path):
    name = f"bad{NASTY[key]}.f90"
    (tmp_path / name).write_text(SAXPY.replace("do i = 1, n", "read *, n\n  do i = 1, n"))
    result = invoke(["translate", name], tmp_path)
    assert result.exit_code == 1
    shown = terminal(name)
    assert f"{shown}:5:3: error: 'read' statements are not supported" in result.stderr, \
        ascii(result.stderr)
    assert files_in(tmp_path) == [name]
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.parametrize("key", ["csi_clear", "osc52_clipboard", "bidi_override"])
def test_source_line_in_a_diagnostic(key, tmp_path):
    """The caret line quotes the source; the caret stays under the statement (a
    print with a 'z' edit descriptor, which kernels do not print)."""
    src = SAXPY.replace("  do i = 1, n", f"  print '(a, z8)', '{NASTY[key]}', n\n  do i = 1, n")
    (tmp_path / "t.f90").write_text(src)
    result = invoke(["translate", "t.f90"], tmp_path)
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    k = next(i for i, line in enumerate(lines) if "cannot be translated: a kernel prints" in line)
    assert lines[k + 1] == f"      print '(a, z8)', '{terminal(NASTY[key])}', n", \
        ascii(lines[k + 1])
    assert lines[k + 2] == "      ^~~~~"
    assert lines[k].startswith("t.f90:5:3: error:")
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.parametrize("key", ["csi_clear", "osc52_clipboard", "bidi_override"])
def test_printed_text_is_escaped_in_the_generated_code(key, tmp_path):
    """A list-directed print of hostile text becomes printf: the text reaches the
    OpenCL source only as C escapes (no raw control or bidi character in any file)."""
    src = SAXPY.replace("  do i = 1, n", f"  print *, '{NASTY[key]}'\n  do i = 1, n")
    (tmp_path / "t.f90").write_text(src)
    result = invoke(["translate", "t.f90"], tmp_path)
    assert result.exit_code == 0, ascii(result.output)
    assert "printf(" in (tmp_path / "t.cl").read_text()
    for name in ("t.cl", "t_cl.py", "t_cl.f90", "t_cl.c"):
        assert terminal_is_clean((tmp_path / name).read_text()), name
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("key", NASTY_IDS)
def test_what_a_script_prints(key, tmp_path):
    (tmp_path / "t.f90").write_text(with_script([
        "k, = parse_fortran(SOURCE, FILENAME)", f"print({NASTY[key]!r})", "RESULT = k"]))
    result = invoke(["translate", "t.f90"], tmp_path)
    assert result.exit_code == 0, ascii(result.output)
    assert result.stdout.strip("\n") != ""
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("key", ["csi_clear", "osc_title", "bidi_override"])
def test_a_script_error_message(key, tmp_path):
    (tmp_path / "t.f90").write_text(with_script([
        f"raise ValueError({NASTY[key]!r})"]))
    result = invoke(["translate", "t.f90"], tmp_path)
    assert result.exit_code == 1
    assert f"t.f90:{SCRIPT_LINE}:" in result.stderr and "ValueError" in result.stderr
    assert files_in(tmp_path) == ["t.f90"]
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.usefixtures("sandbox_process")
def test_a_script_error_with_debug_traceback(tmp_path):
    (tmp_path / "t.f90").write_text(with_script([
        f"raise ValueError({NASTY['osc52_clipboard']!r})"]))
    result = invoke(["translate", "--debug", "t.f90"], tmp_path)
    assert result.exit_code == 1
    assert "Python traceback of the script" in result.stderr
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.usefixtures("sandbox_process")
def test_span_a_script_names_in_its_error(tmp_path):
    """An error about a kernel the script parsed under a name of its own."""
    (tmp_path / "t.f90").write_text(with_script([
        f"k, = parse_fortran(SOURCE, {NASTY['csi_clear'] + 'x.f90'!r})",
        "RESULT = split_iname(k, 'nope', 4)"]))
    result = invoke(["translate", "t.f90"], tmp_path)
    assert result.exit_code == 1
    assert "nope" in result.stderr
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.usefixtures("sandbox_process")
def test_source_text_of_a_span_from_the_script(tmp_path):
    """The child sends spans with their source line; an error the parent
    finds later (a race, at code generation) quotes that line."""
    own = ("subroutine r(n, a)\n  integer n, i\n  real a(n)\n  do i = 2, n\n"
           f"    a(i) = a(i-1) ! {NASTY['osc52_clipboard']}{NASTY['bidi_override']}\n"
           "  end do\nend subroutine\n")
    (tmp_path / "t.f90").write_text(with_script([
        f"k, = parse_fortran({own!r}, {'own' + NASTY['csi_clear'] + '.f90'!r})",
        "RESULT = tag_inames(k, 'i:g.0')"]))
    result = invoke(["translate", "t.f90"], tmp_path)
    assert result.exit_code == 1, ascii(result.output)
    assert "own\\x1b[2J\\x1b[H.f90:5:" in result.stderr, ascii(result.stderr)
    assert "a(i) = a(i-1) ! \\x1b]52;c;" in result.stderr
    assert files_in(tmp_path) == ["t.f90"]
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.parametrize("key", ["csi_clear", "osc52_clipboard", "bidi_override"])
def test_show_of_a_hostile_file_name(key, tmp_path):
    """``show`` prints the generated program, whose header names the file."""
    name = f"s{NASTY[key]}.f90"
    (tmp_path / name).write_text(SAXPY)
    result = invoke(["show", name], tmp_path)
    assert result.exit_code == 0, ascii(result.output)
    assert "__kernel void" in result.stdout
    assert files_in(tmp_path) == [name]
    assert_safe(tmp_path, result.stdout, result.stderr)


def test_missing_file_and_skipped_file(tmp_path):
    ghost = f"ghost{NASTY['osc_title']}.f90"
    generated = f"gen{NASTY['csi_clear']}_cl.f90"
    (tmp_path / generated).write_text("! Generated by f2loopy 0.1.0 from x.f90\n")
    result = invoke(["translate", ghost, generated], tmp_path)
    assert result.exit_code == 1
    assert "cannot read" in result.stderr and "note: skipping" in result.stderr
    assert_safe(tmp_path, result.stdout, result.stderr)


def test_progress_bar_names_files_safely():
    from f2loopy.build import FileOutcome, Progress
    stream = io.StringIO()
    progress = Progress(2, True, stream)
    progress.update(FileOutcome(f"dir/a{NASTY['csi_clear']}.f90"))
    progress.update(FileOutcome(f"dir/b{NASTY['bidi_override']}.f90"))
    progress.close()
    text = stream.getvalue()
    assert "2/2" in text and "\\x1b[2J" in text
    # the bar redraws with carriage returns of its own; nothing else controls the terminal
    assert terminal_is_clean(text.replace("\r", ""))


# {{{ check and bench

@pytest.mark.gfortran
def test_checkpoint_labels_in_check_output(tmp_path):
    label = f"level {NASTY['osc52_clipboard']}{NASTY['bidi_override']}"
    (tmp_path / "t.f90").write_text(with_script([
        "k, = parse_fortran(SOURCE, FILENAME)", f"checkpoint({label!r}, k)", "RESULT = k"]))
    result = invoke(["check", "t.f90"], tmp_path)
    assert result.exit_code == 0, ascii(result.output)
    assert "[checkpoint 'level " in result.stdout and "\\u202eexe.txt" in result.stdout
    assert_safe(tmp_path, result.stdout, result.stderr)


def _report(labels):
    from f2loopy.bench.run import BenchReport, BenchRow
    rows = [BenchRow(label, 1.5, 1.0, 2.0, 3.0, 10**9, 2 * 10**9, True, 1e-7)
            for label in labels]
    return BenchReport("t.f90", "cpu", {"n": 10}, {}, "gfortran", rows, fortran_ms=2.0,
                       fortran_flags="-O3")


HOSTILE_LABELS = [
    'comma, "quoted" label', "two\nlines", "=HYPERLINK(\"http://evil\",\"x\")",
    "+1+cmd|' /C calc'!A0",
    "-2+3", "@SUM(A1:A2)", f"esc{NASTY['csi_clear']}", f"bidi{NASTY['bidi_override']}"]


def test_bench_csv_is_one_row_per_level():
    text = _report(HOSTILE_LABELS).to_csv()
    assert terminal_is_clean(text)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "level" and len(rows) == len(HOSTILE_LABELS) + 2
    assert all(len(r) == 9 for r in rows)
    labels = [r[0] for r in rows[1:-1]]
    assert labels[:2] == ['comma, "quoted" label', "two\nlines"]
    # what a spreadsheet would read as a formula starts with a quote
    assert all(label.startswith("'") for label in labels[2:6])
    assert labels[6] == "esc\\x1b[2J\\x1b[H" and labels[7] == "bidi\\u202eexe.txt"
    assert rows[-1][:2] == ["gfortran -O3", "2"]


@pytest.mark.gfortran
@pytest.mark.opencl
@pytest.mark.parametrize("fmt", ["--csv", "--json", "table"])
def test_bench_output_of_hostile_labels(fmt, tmp_path):
    pytest.importorskip("pyopencl")
    label = '=HYPERLINK("http://evil"),' + NASTY["csi_clear"] + NASTY["bidi_override"] + '"q'
    (tmp_path / "t.f90").write_text(with_script([
        "k, = parse_fortran(SOURCE, FILENAME)", f"checkpoint({label!r}, k)",
        "checkpoint('plain', k)", "RESULT = k"]))
    args = ["bench", "t.f90", "--size", "n=1000", "--min-time", "0.01"]
    result = invoke(args + ([fmt] if fmt != "table" else []), tmp_path)
    assert result.exit_code == 0, ascii(result.output)
    assert_safe(tmp_path, result.stdout, result.stderr)
    if fmt == "--csv":
        rows = list(csv.reader(io.StringIO(result.stdout)))
        assert [len(r) for r in rows] == [9, 9, 9, 9]
        assert rows[1][0].startswith("'=HYPERLINK(\"http://evil\"),") and rows[2][0] == "plain"
        assert rows[1][0].endswith('\\u202eexe.txt"q')

# }}}
