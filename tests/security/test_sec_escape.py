"""The escaping helpers of :mod:`f2loopy.escape`, one per target, on exact
cases and on random text (Python literals read back by Python, C strings by
gcc, Fortran literals by gfortran: the text that comes back is the text that
went in)."""

from __future__ import annotations

import ast
import random
import subprocess

import pytest

from f2loopy.escape import (
    UnrepresentablePath, c_comment, c_string, csv_cell, fortran_comment, fortran_string,
    is_identifier, is_plain_name, make_path, py_docstring, py_literal, terminal, visible)


def _random_texts(count=200, seed=14):
    rng = random.Random(seed)
    alphabet = ('"\'\\/*!&?#$%{}\n\r\t\x00\x1b\x7f\x85\x9b\u2028\u202e\u200b\ufeff'
                'abcXYZ 019_.,;:()[]=+-\u00e9\u4e2d\U0001f600\udcff')
    return [''.join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            for _ in range(count)]


TEXTS = _random_texts() + ['"""', "'''", '*/', '/*', '*/*', '/*/', '??/', '\\', '"', '', "a\n"]


# {{{ exact cases

@pytest.mark.parametrize("text, shown", [
    ("plain.f90", "plain.f90"),
    ("a\nb", "a\\nb"),
    ("back\\slash", "back\\\\slash"),
    ("\x1b[2J", "\\x1b[2J"),
    ("\u00e9", "\\xe9"),
    ("\u202e", "\\u202e"),
    ("\U0001f600", "\\U0001f600"),
    ("\udcff", "\\udcff"),
])
def test_visible(text, shown):
    assert visible(text) == shown


def test_comment_and_literal_helpers_exactly():
    assert c_comment("a*/b/*c") == "a*\\/b/\\*c"
    assert c_comment("*/*") == "*\\/\\*"
    assert fortran_comment("x\n  end module") == "x\\n  end module"
    assert fortran_string('say "hi"\n\\\u00e9') == '"say ""hi""<U+000A><U+005C><U+00E9>"'
    assert c_string('q"\\?\n\x1b\u00e9') == 'q\\"\\\\\\?\\n\\033\\303\\251'
    assert py_docstring('"""') == '\\"\\"\\"'
    assert py_literal("a'\"\n\u00e9") == "'a\\'\"\\n\\xe9'"


def test_terminal_keeps_text_and_shows_controls():
    kept = "caf\u00e9 \u4e2d\u6587 \U0001f600\tok\n"
    assert terminal(kept) == kept
    assert terminal("a\x1b[31mb\rc\x08\u202ed\u2028") == "a\\x1b[31mb\\rc\\x08\\u202ed\\u2028"
    for t in TEXTS:
        assert terminal(terminal(t)) == terminal(t)


def test_csv_cell():
    assert csv_cell("=1+1") == "'=1+1" and csv_cell("@x") == "'@x"
    assert csv_cell("+x") == "'+x" and csv_cell("-x") == "'-x"
    assert csv_cell("level 1") == "level 1" and csv_cell("a\x1bb") == "a\\x1bb"


@pytest.mark.parametrize("name, ok", [
    ("x", True), ("_x", True), ("x1_y", True), ("x\n", False), ("x\r", False), ("", False),
    ("1x", False), ("x-y", False), ("\u00e9", False), ("\uff58", False), ("x" * 201, False),
    (None, False)])
def test_is_identifier(name, ok):
    assert is_identifier(name) is ok


@pytest.mark.parametrize("name, ok", [
    ("Nq", True), ("tile_2", True), ("_x", False), ("__import__", False), ("x\n", False),
    ("x" * 64, False), ("x" * 63, True)])
def test_is_plain_name(name, ok):
    assert is_plain_name(name) is ok


def test_make_path():
    assert make_path("a b.f90") == "a\\ b.f90"
    # '#', '$' and backslashes: CMake's Ninja conversion writes them back
    # unescaped, so they are refused (tests/security/test_sec_depfiles.py)
    for bad in ("a\nb", "a\rb", "a\tb", "a\x1bb", "a\u2028b", "a#b", "a$b", "x\\ y"):
        with pytest.raises(UnrepresentablePath, match="which a depfile cannot hold"):
            make_path(bad)

# }}}


# {{{ read back by the language itself

@pytest.mark.parametrize("text", TEXTS[:60])
def test_python_literal_and_docstring_read_back(text):
    assert ast.literal_eval(py_literal(text)) == text
    assert py_literal(text).isascii()
    doc = py_docstring(text)
    assert "\n" not in doc and doc.isascii()
    assert ast.literal_eval('"""' + doc + '"""') == text


@pytest.mark.parametrize("text", TEXTS)
def test_comments_cannot_end_early(text):
    c = c_comment(text)
    assert "*/" not in c and "/*" not in c and c.isascii() and c.isprintable()
    f = fortran_comment(text)
    assert "\n" not in f and f.isascii() and f.isprintable()


@pytest.mark.usefixtures("gcc")
def test_c_strings_and_comments_read_back_by_gcc(tmp_path):
    texts = [t for t in TEXTS if "\udcff" not in t]
    body = ["#include <stdio.h>", "#include <string.h>"]
    body += [f"/* {c_comment(t)} */" for t in texts]
    body += ["static const char *texts[] = {"] + [f'    "{c_string(t)}",' for t in texts] + ["};"]
    body += ["static const size_t lengths[] = {"]
    body += [f"    {len(t.encode())}," for t in texts] + ["};"]
    body += ["int main(void) {", f"  for (int i = 0; i < {len(texts)}; i++) {{",
             "    fwrite(texts[i], 1, lengths[i], stdout); fputc(0xff, stdout);", "  }",
             "  return 0;", "}"]
    (tmp_path / "t.c").write_text("\n".join(body) + "\n")
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wcomment",
                    "-trigraphs", "t.c", "-o", "t"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=120)
    out = subprocess.run([str(tmp_path / "t")], capture_output=True, check=True).stdout
    assert out.split(b"\xff")[:-1] == [t.encode() for t in texts]


@pytest.mark.usefixtures("gfortran")
@pytest.mark.parametrize("backslash", [False, True])
def test_fortran_literals_and_comments_survive_gfortran(tmp_path, backslash):
    """gfortran reads every literal to its end (also with -fbackslash) and the
    program prints the text with every other character as ``<U+XXXX>``."""
    lines = ["program p", "  implicit none"]
    for t in TEXTS:
        lines.append(f"  ! {fortran_comment(t)}")
        lines.append(f"  print '(a)', {fortran_string(t)} // '|'")
    lines.append("end program")
    (tmp_path / "p.f90").write_text("\n".join(lines) + "\n")
    flags = ["-fbackslash"] if backslash else []
    subprocess.run(["gfortran", "-std=f2018", "-Werror", "-ffree-line-length-none", *flags,
                    "p.f90", "-o", "p"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=120)
    out = subprocess.run([str(tmp_path / "p")], capture_output=True, check=True).stdout
    printed = out.split(b"\n")[:-1]
    assert [line.decode("ascii").strip() for line in printed] == \
        [(_fortran_shown(t) + "|").strip() for t in TEXTS]


def _fortran_shown(text):
    return "".join(ch if " " <= ch <= "~" and ch != "\\" else f"<U+{ord(ch):04X}>"
                   for ch in text)

# }}}
