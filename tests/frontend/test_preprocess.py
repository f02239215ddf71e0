"""The C preprocessor (issue 17): .F90/.F files and files with # lines are
preprocessed as a compiler does (gfortran -E -cpp), -D/-U/-I reach it, the -D
values stay visible to the script (which the preprocessor does not touch), and
errors point at the original file and line."""

import shutil
from pathlib import Path

import pytest
from cli_util import f2loopy     # the command in this process

from f2loopy import FortranError
from f2loopy.cli_tools import literal_value
from f2loopy.diagnostics import F2LoopyError
from f2loopy.pipeline import translate_file, translate_text
from f2loopy.preprocessor import PreprocessorError, needs_preprocessing

pytestmark = pytest.mark.usefixtures("preprocessor")

SCALE = """subroutine s(n, x)
  integer n, i
  real x(n)
#ifdef TWICE
  do i = 1, n
    x(i) = 2 * x(i)
  end do
#else
  do i = 1, n
    x(i) = SCALE * x(i)
  end do
#endif
end subroutine
"""
SCRIPT = """!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! RESULT = split_iname(k, "i", tile, outer_tag="g.0", inner_tag="l.0")
!$loopy end
"""


def cl(result):
    return next(t for p, t in result.outputs.items() if str(p).endswith(".cl"))


def test_which_files_are_preprocessed():
    assert needs_preprocessing("x = 1\n", "a.F90") and needs_preprocessing("", "a.F")
    assert needs_preprocessing("#ifdef X\n#endif\n", "a.f90")
    assert needs_preprocessing("  # include 'x.h'\n", "a.f90")
    assert not needs_preprocessing("x = 1  ! #ifdef in a comment\n", "a.f90")
    assert not needs_preprocessing("subroutine s\nend\n", "a.f90")


def test_macros_choose_and_rewrite_the_fortran(tmp_path):
    r = translate_text(SCALE, tmp_path / "s.F90", defines={"SCALE": 3})
    assert "3 * x[" in cl(r)
    r = translate_text(SCALE, tmp_path / "s.F90", defines={"SCALE": 3, "TWICE": 1})
    assert "2 * x[" in cl(r)
    r = translate_text(SCALE, tmp_path / "s.F90", defines={"SCALE": 3, "TWICE": 1},
                       undefines=["TWICE"])
    assert "3 * x[" in cl(r)


def test_the_script_is_not_preprocessed_and_sees_the_values(tmp_path):
    r = translate_text(SCALE + SCRIPT, tmp_path / "s.F90", defines={"SCALE": 3, "tile": 8})
    code = cl(r)
    assert "get_local_id(0)" in code and "8 * i_outer" in code.replace("(int) ", "")
    # a script under #ifdef exists only with the macro
    gated = SCALE + "#ifdef GPU\n" + SCRIPT + "#endif\n"
    assert "get_local_id" not in cl(translate_text(gated, tmp_path / "g.F90",
                                                   defines={"SCALE": 3, "tile": 8}))
    assert "get_local_id" in cl(translate_text(gated, tmp_path / "g.F90",
                                               defines={"SCALE": 3, "tile": 8, "GPU": 1}))


def test_errors_point_at_the_original_lines(tmp_path):
    (tmp_path / "decls.h").write_text("  real :: t\n  integer :: k\n")
    src = SCALE.replace("  real x(n)\n", "  real x(n)\n#include \"decls.h\"\n")
    src = src.replace("  end do\n#endif", "  end do\n  read *, k\n#endif")
    with pytest.raises(FortranError) as err:
        translate_text(src, tmp_path / "s.F90", defines={"SCALE": 3})
    assert err.value.format().splitlines()[:3] == [
        f"{tmp_path / 's.F90'}:13:3: error: 'read' statements are not supported (kernels "
        "cannot do I/O)",
        "      read *, k", "      ^~~~"]
    # an error inside the included file points there
    (tmp_path / "decls.h").write_text("  real :: t\n  print '(z8.3)', t\n")
    with pytest.raises(FortranError) as err:
        translate_text(src, tmp_path / "s.F90", defines={"SCALE": 3})
    assert f"{tmp_path / 'decls.h'}:2:3: error: edit descriptor 'z8.3' in 'print '(z8.3)', t' cannot be translated" in \
        err.value.format()


def test_line_markers_are_honoured(tmp_path):
    src = ("subroutine s(x)\n  real x\n#line 100 \"orig.f90\"\n  read *, x\n"
           "end\n")
    with pytest.raises(FortranError) as err:
        translate_text(src, tmp_path / "l.f90")
    assert str(err.value.span) == "orig.f90:100:3"


@pytest.mark.parametrize("source, where, message", [
    ("subroutine s\n#error no way\nend\n", 2, "#error no way"),
    ("#if 1\nsubroutine s\nend\n", 1, "unterminated #if"),
    ('subroutine s\n#include "missing.h"\nend\n', 2, "missing.h: No such file or directory"),
])
def test_preprocessor_errors_are_located(tmp_path, source, where, message):
    with pytest.raises(PreprocessorError) as err:
        translate_text(source, tmp_path / "e.F90")
    assert err.value.span.filename == str(tmp_path / "e.F90")
    assert err.value.span.line == where and err.value.message == message


def test_included_files_are_inputs_and_invalidate_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("F2LOOPY_CACHE_DIR", str(tmp_path / "cache"))
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "factor.h").write_text("#define FACTOR 5\n")
    src = tmp_path / "s.F90"
    src.write_text('#include "factor.h"\n' + SCALE.replace("SCALE", "FACTOR"))
    r = translate_file(src, cache=True, include_dirs=[str(inc)])
    assert Path(inc / "factor.h") in [Path(p) for p in r.inputs] and "5 * x[" in cl(r)
    assert translate_file(src, cache=True, include_dirs=[str(inc)]).kernels == []   # a hit
    (inc / "factor.h").write_text("#define FACTOR 7\n")
    again = translate_file(src, cache=True, include_dirs=[str(inc)])
    assert again.kernels and "7 * x[" in cl(again)
    # the file's own folder is searched first, as by a compiler
    (tmp_path / "factor.h").write_text("#define FACTOR 9\n")
    assert "9 * x[" in cl(translate_file(src, include_dirs=[str(inc)]))


def test_fixed_form_files_are_preprocessed_as_fixed_form(tmp_path):
    src = ("      subroutine s(n, x)\n      integer n, i\n      real x(n)\n"
           "#ifdef NEG\n      do 10 i = 1, n\n         x(i) = -x(i)\n   10 continue\n#endif\n"
           "      end\n")
    assert "-x[" in cl(translate_text(src, tmp_path / "f.F", defines={"NEG": 1}))


def test_define_values_are_literals():
    assert literal_value("8") == 8 and literal_value("1e-3") == 1e-3
    assert literal_value("(8,4)") == (8, 4) and literal_value("[1, 2]") == [1, 2]
    assert literal_value("'x'") == "x" and literal_value("fast") == "fast"
    assert literal_value("True") is True and literal_value("false") is False
    assert literal_value("(" * 100000) == "(" * 100000


def test_command_line_defines_undefines_and_unused_names(tmp_path):
    src = tmp_path / "s.F90"
    src.write_text(SCALE + SCRIPT)
    proc = f2loopy("translate", "-D", "SCALE=3", "-D", "tile=(8)", "-D", "TWICE", "-U",
                   "TWICE", "-D", "tiel=4", str(src))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == (f"{src}: warning: -D tiel is not used: no preprocessor "
                                   "line, script or recipe of this translation reads 'tiel'")
    assert "3 * x[" in (tmp_path / "s.cl").read_text()
    # options a recipe reads are used
    plain = tmp_path / "p.f90"
    plain.write_text(SCALE.replace("#ifdef TWICE\n", "").split("#else")[0] + "end subroutine\n")
    proc = f2loopy("translate", "--transform", "gpu_tiling", "-D", "tile=8", str(plain))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    for bad in (["-D", "=1"], ["-D", "a b=1"], ["-U", "x-y"]):
        proc = f2loopy("translate", *bad, str(src))
        assert proc.returncode == 2 and "Invalid value for" in proc.stderr, (bad, proc.stderr)


def test_a_file_without_preprocessor_lines_is_read_as_it_is(tmp_path):
    # '#' in a string or a comment is not a preprocessor line
    src = "subroutine s(x)\n  real x  ! #define nothing\n  x = 1\nend subroutine\n"
    r = translate_text(src, tmp_path / "s.f90")
    assert r.inputs == [tmp_path / "s.f90"]
    with pytest.raises(F2LoopyError):
        translate_text("subroutine s(x)\n  real x\n#define A\n  x = A\nend\n",
                       tmp_path / "t.f90", defines={"A": "("})


def test_check_builds_the_original_with_the_same_macros(tmp_path):
    pytest.importorskip("pyopencl")
    src = tmp_path / "s.F90"
    src.write_text(SCALE)
    proc = f2loopy("check", "-D", "SCALE=3", "--size", "n=50", str(src))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok" in proc.stdout


@pytest.mark.skipif(shutil.which("cpp") is None, reason="needs GCC's cpp")
def test_without_gfortran_gccs_cpp_preprocesses_the_same(tmp_path, monkeypatch):
    import f2loopy.preprocessor as pre
    real_which = shutil.which
    monkeypatch.setattr(pre.shutil, "which",
                        lambda name: None if name == "gfortran" else real_which(name))
    assert pre.preprocessor_command("s.F90")[1:3] == ["-E", "-traditional-cpp"]
    r = translate_text(SCALE + SCRIPT, tmp_path / "s.F90", defines={"SCALE": 3, "tile": 8})
    assert "3 * x[" in cl(r) and "get_local_id(0)" in cl(r)
    # Fortran's // and apostrophes survive; no C predefinitions (linux, unix)
    text = "  c = 'a' // \"b\"  ! don't\n  y = linux + unix\n"
    assert pre.preprocess(text, tmp_path / "c.F90").text == text
    with pytest.raises(PreprocessorError) as err:
        translate_text("subroutine s\n#error stop here\nend\n", tmp_path / "e.F90")
    assert (err.value.span.line, err.value.message) == (2, "#error stop here")
    monkeypatch.setattr(pre.shutil, "which", lambda name: None)
    with pytest.raises(PreprocessorError, match="needs the C preprocessor: install gfortran"):
        translate_text(SCALE, tmp_path / "s.F90")
