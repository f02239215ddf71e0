"""Speed paths of the frontend (issue 3): splitting long files into pieces
parsed in parallel, and the translation cache."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import f2loopy.frontend.reader as reader
from f2loopy import FortranError
from f2loopy.frontend import parse_fortran, read_source, translate_source
from f2loopy.frontend.prescan import scan_units
from f2loopy.pipeline import translate_file

MODULE = """module m{k}
  implicit none
  integer, parameter :: wp = kind(1.0d0)
  real(wp), parameter :: c = {k}.5_wp
contains
  pure real(wp) function twice(x)
    real(wp), intent(in) :: x
    twice = 2 * x + c
  end function twice

  subroutine first{k}(n, a)
    integer n, i
    real(wp) a(n)
    do i = n, 1, -1
      a(i) = twice(a(i))
    end do
  end subroutine first{k}

  subroutine second{k}(n, a, s)
    integer n
    real(wp) a(n), s
    call first{k}(n, a)
    s = sum(a(1:n:2))
  end subroutine second{k}
end module m{k}

subroutine outside{k}(n, a, s)
  use m{k}, only: second{k}, wp
  implicit none
  integer n
  real(wp) a(n), s
  call second{k}(n, a, s)
  a(2:n) = a(1:n-1) * c{k}()
contains_nothing: block
end block contains_nothing
end subroutine outside{k}
"""


def _source(count):
    text = ""
    for k in range(count):
        block = MODULE.format(k=k)
        # keep it simple: no block construct, and a function of the file for c<k>()
        block = block.replace("contains_nothing: block\nend block contains_nothing\n", "")
        block += f"\nreal*8 function c{k}()\n  c{k} = {k + 1}.0d0\nend function\n\n"
        text += block
    return text


@pytest.fixture
def split_small_files(monkeypatch):
    monkeypatch.setattr(reader, "PARALLEL_MIN_LINES", 10)


@pytest.mark.usefixtures("python_process")
@pytest.mark.parametrize("blocks, kernels", [(6, 18), (1, 3)])
def test_pieces_parse_to_the_same_kernels(split_small_files, blocks, kernels):
    src = read_source(_source(blocks), "long.f90")
    pieces = reader._parse_parallel(src, 3)
    assert pieces is not None
    if blocks == 1:
        # the module's procedures are spread over the pieces: it appears in each
        assert [type(u).__name__ for u in pieces].count("Module") > 1
    serial = translate_source(src, jobs=1)
    split = translate_source(src, jobs=3)
    assert serial.keys() == split.keys()
    assert len(serial.kernels) == kernels
    for a, b in zip(serial, split, strict=True):
        assert str(a) == str(b)


@pytest.mark.usefixtures("python_process")
def test_pieces_report_syntax_errors_at_their_line(split_small_files):
    text = _source(6)
    lines = text.splitlines()
    bad = max(k for k, line in enumerate(lines) if "s = sum(a(1:n:2))" in line)
    lines[bad] = "    s = sum(a(1:n:2)"
    src = read_source("\n".join(lines) + "\n", "long.f90")
    for jobs in (1, 3):
        with pytest.raises(FortranError) as info:
            translate_source(src, jobs=jobs)
        assert str(info.value).splitlines()[0] == (
            f"long.f90:{bad + 1}:12: error: syntax error: missing ')' (the '(' here is not "
            "closed)")


def test_prescan_finds_units_free_and_fixed():
    units = scan_units(_source(1).splitlines(), False)
    assert [(u.kind, u.name) for u in units] == [("module", "m0"), ("procedure", "outside0"),
                                                  ("procedure", "c0")]
    assert [(p.name, p.start, p.end) for p in units[0].children] == [
        ("twice", 6, 9), ("first0", 11, 17), ("second0", 19, 24)]
    fixed = ("C comment\n      SUBROUTINE A(N)\n      DO 10 I = 1, N\n   10 CONTINUE\n"
             "      END\n      REAL*8 FUNCTION\n     &  B(X)\n      B = X\n      END\n")
    units = scan_units(fixed.splitlines(), True)
    assert [(u.name.lower(), u.start, u.end) for u in units] == [("a", 2, 5), ("b", 6, 9)]


def test_prescan_gives_up_on_what_it_does_not_know():
    assert scan_units(["x = 1", "end"], False) is None          # program without header
    assert scan_units(["subroutine s", "x = 1"], False) is None  # never ended


@pytest.mark.usefixtures("python_process")
def test_programs_are_drivers_and_files_the_scan_cannot_split_parse_whole(
        split_small_files, monkeypatch):
    text = "program drive\n  x = 1\n  print *, x\nend program\n" + _source(2)
    src = read_source(text, "p.f90")
    assert len(translate_source(src, jobs=2).kernels) == 6
    monkeypatch.setattr("f2loopy.frontend.prescan.scan_units", lambda lines, fixed: None)
    assert len(translate_source(src, jobs=2).kernels) == 6


# {{{ cache

@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("F2LOOPY_CACHE_DIR", str(d))
    monkeypatch.delenv("F2LOOPY_NO_CACHE", raising=False)
    return d


SAXPY = """subroutine saxpy(n, a, x, y)
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a * x(i) + y(i)
  end do
end subroutine
"""


def test_cache_hit_returns_the_same_outputs(tmp_path, cache_dir):
    src = tmp_path / "saxpy.f90"
    src.write_text(SAXPY)
    first = translate_file(src, cache=True)
    assert first.kernels                      # translated
    second = translate_file(src, cache=True)
    assert second.kernels == []               # served from the cache
    assert second.outputs == first.outputs
    assert second.inputs == first.inputs
    entries = os.listdir(cache_dir)
    assert len(entries) == 1 and entries[0].endswith(".json")   # no temporary left


def test_cache_key_covers_content_options_and_inputs(tmp_path, cache_dir):
    src = tmp_path / "saxpy.f90"
    src.write_text(SAXPY)
    translate_file(src, cache=True)
    src.write_text(SAXPY.replace("a * x(i)", "2 * a * x(i)"))
    changed = translate_file(src, cache=True)
    assert changed.kernels and "2 * a" in next(iter(changed.outputs.values()))
    assert translate_file(src, cache=True, output_dir=tmp_path / "out").kernels
    assert translate_file(src, cache=True, defines={"N": 4}).kernels
    assert not translate_file(src, cache=True, defines={"N": 4}).kernels
    # an extra input recorded with the entry (a recipe a script read) is re-hashed
    recipe = tmp_path / "recipe.py"
    recipe.write_text("x = 1\n")
    key = next(p for p in cache_dir.iterdir() if p.suffix == ".json")
    from f2loopy import cache as tcache
    secret = tcache.secret_key()
    for entry_path in cache_dir.iterdir():
        name = entry_path.name[:-len(".json")]
        entry = tcache.decode_entry(name, entry_path.read_bytes(), secret)
        entry["inputs"].append([str(recipe), "0" * 64])
        entry_path.write_bytes(tcache.encode_entry(name, entry, secret))  # still signed
    assert key.exists()
    assert translate_file(src, cache=True).kernels      # stale: translated again


def test_cache_keeps_relative_paths_right(tmp_path, cache_dir, monkeypatch):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "saxpy.f90").write_text(SAXPY)
    monkeypatch.chdir(tmp_path)
    first = translate_file(Path("sub/saxpy.f90"), cache=True)
    assert Path("sub/saxpy.cl") in first.outputs
    monkeypatch.chdir(sub)
    again = translate_file(Path("saxpy.f90"), cache=True)
    assert Path("saxpy.cl") in again.outputs


def test_cache_can_be_turned_off(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("F2LOOPY_NO_CACHE", "1")
    src = tmp_path / "saxpy.f90"
    src.write_text(SAXPY)
    translate_file(src, cache=True)
    assert translate_file(src, cache=True).kernels
    assert not cache_dir.exists()


def test_errors_are_not_cached(tmp_path, cache_dir):
    src = tmp_path / "bad.f90"
    src.write_text(SAXPY.replace("    y(i) =", "    print *, y\n    y(i) ="))
    for _ in range(2):
        with pytest.raises(FortranError):
            translate_file(src, cache=True)
    assert not cache_dir.exists() or not list(cache_dir.iterdir())


@pytest.mark.usefixtures("python_process")
def test_cache_hit_does_not_load_the_compiler():
    code = ("import sys, f2loopy, f2loopy.cli, f2loopy.build, f2loopy.pipeline, f2loopy.cache\n"
            "heavy = [m for m in ('f2loopy.codegen', 'f2loopy.frontend', 'islpy', 'pymbolic',"
            " 'fparser') if m in sys.modules]\n"
            "print(heavy)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).parent)
    assert out.stdout.strip() == "[]", out.stderr


def test_lazy_package_namespace():
    import f2loopy
    assert callable(f2loopy.split_iname) and callable(f2loopy.parse_fortran)
    assert "split_iname" in f2loopy.__all__ and "parse_fortran" in dir(f2loopy)
    with pytest.raises(AttributeError):
        f2loopy.no_such_name

# }}}


# {{{ many lines without code before the first statement (issue 27: a seismic
# code's main program, includes expanded, before a 20-line kernel)

def test_long_header_keeps_lines_and_no_extra_unit():
    """fparser's scan of the lines before the first statement no longer runs
    on every failed match: the empty subroutine put on line 1 for it is
    gone from the tree, and the statements keep their lines."""
    from f2loopy.frontend import reader
    from f2loopy.frontend.source import SourceFile
    header = "! licence text\n" * reader.LEAD_LINES_MIN + "\n" * 5
    text = header + "subroutine s(a)\n  real a\n  a = 1.0\nend subroutine\n"
    tree = reader.parse_tree(SourceFile("t.f90", text))
    units = [u for u in tree.children if u is not None]
    assert len(units) == 1
    assert units[0].children[0].item.span == (26, 26)
    fixed = ("c     header\n" * 30 + "      subroutine s(a)\n      real a\n      a = 1.0\n"
             "      end\n")
    tree = reader.parse_tree(SourceFile("t.f", fixed, fixed_form=True))
    assert [u.children[0].item.span for u in tree.children if u is not None] == [(31, 31)]


def test_long_header_errors_keep_their_lines():
    header = "!\n" * 40
    with pytest.raises(FortranError) as info:
        parse_fortran(header + "subroutine s(a)\n  real a\n  a = = 1.0\nend subroutine\n",
                      "t.f90")
    assert info.value.format().splitlines()[0].startswith("t.f90:43:")


def test_main_program_without_program_statement_before_a_kernel():
    """The program's lines are blanked for the second parse: the kernel after
    them translates, at its lines."""
    prog = "".join(f"x{k} = {k}\n" for k in range(30)) + "call s(x1)\nend\n"
    text = "      " + prog.replace("\n", "\n      ").rstrip() + "\n" + (
        "      subroutine s(a)\n      real a\n      a = 2.0 * a\n      end\n")
    kernel = parse_fortran(text, "t.f")["s"]
    assert kernel.instructions[0].span.line == 35

# }}}
