"""What keeps translation fast (issue 19): the caches and shortcuts of the
translator keep their meaning (exact results, the same sets, the same limits)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import f2loopy
from f2loopy.ir.frozen import identity_memo


class _Expr:
    """Hashable, equal by value; counts the equality tests it is asked for."""

    eq_calls = 0

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        return hash(("expr", self.value))

    def __eq__(self, other):
        _Expr.eq_calls += 1
        return isinstance(other, _Expr) and other.value == self.value


def test_identity_memo_hits_the_identical_object_only_and_never_tests_equality():
    calls = []

    @identity_memo(maxsize=4)
    def size(e):
        calls.append(e)
        return [e.value]            # a fresh object per computation

    a, b = _Expr(1), _Expr(1)       # equal, distinct
    _Expr.eq_calls = 0
    first = size(a)
    assert size(a) is first and calls == [a]
    # an equal but distinct object is computed afresh, without a deep equality test
    assert size(b) == [1] and size(b) is not first and calls == [a, b]
    assert size(a) is not first and calls == [a, b, a]      # b had replaced a's entry
    assert _Expr.eq_calls == 0


def test_identity_memo_computes_unhashable_values_each_time():
    calls = []

    @identity_memo(maxsize=4)
    def length(x):
        calls.append(1)
        return len(x)

    key = [1, 2, 3]
    assert length(key) == 3 and length(key) == 3 and len(calls) == 2


def test_identity_memo_is_emptied_when_full():
    calls = []

    @identity_memo(maxsize=2)
    def ident(x):
        calls.append(x)
        return x

    for v in (1, 2, 3, 1):
        ident(v)
    # 3 emptied the table (two entries): 1 is computed again
    assert calls == [1, 2, 3, 1]


def test_file_may_stop_is_a_whole_word_search_of_the_file():
    from f2loopy.frontend.errors import file_may_stop
    assert file_may_stop("subroutine s\n  STOP 1\nend\n")
    assert file_may_stop("call xerbla('S', 1)\n")
    assert not file_may_stop("integer stops, nxerbla\n! backstop\n")


def _lazy_imports_by_regex(package_dir: Path) -> set:
    """The definition: every indented import statement, found by one
    multi-line regex over each file."""
    from f2loopy.directives.sandbox import _LAZY_IMPORT_RE, _SKIP
    names = set()
    for path in package_dir.rglob("*.py"):
        if path.relative_to(package_dir).parts[0].removesuffix(".py") in _SKIP:
            continue
        for m in _LAZY_IMPORT_RE.finditer(path.read_text(encoding="utf-8")):
            if m.group(1):
                names.add(m.group(1))
            else:
                names.update(n.strip() for n in m.group(2).split(","))
    return names


def test_sandbox_preload_finds_every_lazy_import(tmp_path):
    from f2loopy.directives.sandbox import _lazy_imports
    package = Path(f2loopy.__file__).parent
    assert _lazy_imports(package) == _lazy_imports_by_regex(package)
    (tmp_path / "m.py").write_text(
        "import os\n"                               # top level: not lazy
        "def f():\n"
        "    import json, re as _r\n"
        "    from a.b import c\n"
        "    x = 'import y'\n"
        "\timport zlib\n"
        "    # import commented\n"
        "    from importlib import util")           # no newline at the end
    found = _lazy_imports(tmp_path)
    assert found == _lazy_imports_by_regex(tmp_path)
    assert found == {"json", "re", "a.b", "zlib", "importlib"}


def test_libseccomp_is_loaded_by_name_without_running_ldconfig(monkeypatch):
    import ctypes.util

    from f2loopy.directives import seccomp
    try:
        import ctypes
        ctypes.CDLL("libseccomp.so.2")
    except OSError:
        pytest.skip("libseccomp.so.2 is not installed")

    def refuse(name):
        raise AssertionError("find_library runs /sbin/ldconfig -p")

    monkeypatch.setattr(ctypes.util, "find_library", refuse)
    monkeypatch.setattr(seccomp, "_LIB", None)
    assert seccomp.load_library() is not None


def test_parse_budget_still_gives_up(monkeypatch):
    """The leaner counting wrapper counts every node fparser builds, as before."""
    from f2loopy.diagnostics import FortranError
    from f2loopy.frontend import reader
    from f2loopy.frontend.source import SourceFile
    text = "subroutine s(a)\n  real a\n  a = 1.0\nend subroutine\n"
    assert reader.parse_tree(SourceFile("t.f90", text)) is not None
    monkeypatch.setattr(reader, "PARSE_BUDGET_MIN", 10)
    monkeypatch.setattr(reader, "PARSE_BUDGET_PER_CHAR", 0)
    with pytest.raises(FortranError):
        reader.parse_tree(SourceFile("t.f90", text))
    # and the parser is whole again afterwards
    monkeypatch.undo()
    tree = reader.parse_tree(SourceFile("t.f90", text))
    assert re.search(r"a\s*=\s*1\.0", str(tree))


def test_frozen_map_lookups_are_the_mappings():
    from f2loopy.ir.frozen import FrozenMap
    m = FrozenMap({"a": 1, "n": None})
    assert "a" in m and "n" in m and "b" not in m and [] not in [k for k in m]
    assert m.get("a") == 1 and m.get("n", 5) is None and m.get("b") is None
    assert m.get("b", 7) == 7
    with pytest.raises(TypeError):
        [] in m                     # unhashable, as for a dict  # noqa: B015


def test_rule_rewriting_renames_calls_of_rewritten_rules():
    """RuleAwareRewriter's call renaming (a module-level mapper now)."""
    import pymbolic.primitives as p

    from f2loopy.ir.kernel import SubstitutionRule
    from f2loopy.transform.rules import RuleAwareRewriter
    x, i = p.Variable("x"), p.Variable("i")
    rules = {"r": SubstitutionRule("r", ("i",), p.Subscript(x, i), None)}

    def leaf(e, bound):
        from f2loopy.ir.expressions import substitute
        return substitute(e, {"x": p.Variable("y")})

    rw = RuleAwareRewriter(rules, leaf)
    out = rw(p.Call(p.Variable("r"), (p.Variable("j"),)) + x)
    assert out == p.Call(p.Variable("r_0"), (p.Variable("j"),)) + p.Variable("y")
    assert rw.rules["r_0"].expression == p.Subscript(p.Variable("y"), i)
    unchanged = p.Call(p.Variable("f"), (i,))
    assert rw(unchanged) is unchanged


SCRIPTED = """\
subroutine twice(n, x)
  implicit none
  integer n, i
  real x(n)
  do i = 1, n
    x(i) = 2*x(i)
  end do
end subroutine
!$loopy begin
! (k,) = parse_fortran(SOURCE, FILENAME)
! for j in range(1500):
!     print("line", j, "of what the script printed")
! RESULT = [k]
!$loopy end
"""


def _command(*args, cwd):
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env["F2LOOPY_NO_CACHE"] = "1"
    return subprocess.run([sys.executable, "-c", "from f2loopy.cli import entry; entry()",
                           *args], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.mark.usefixtures("python_process")
def test_translate_ends_without_teardown_but_with_everything_written(tmp_path):
    """The console script skips the interpreter's teardown after translate:
    all output arrives (flushed), the outputs are written, the status is kept."""
    (tmp_path / "t.f90").write_text(SCRIPTED)
    proc = _command("translate", "t.f90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1500 and lines[-1] == "line 1499 of what the script printed"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "t.cl", "t.f90", "t_cl.c", "t_cl.f90", "t_cl.py"]
    (tmp_path / "bad.f90").write_text("subroutine s(x)\n  real x\n  x = = 1\nend subroutine\n")
    proc = _command("translate", "bad.f90", cwd=tmp_path)
    assert proc.returncode == 1 and "bad.f90:3:" in proc.stderr
    proc = _command("translate", "--no-such-option", cwd=tmp_path)
    assert proc.returncode == 2 and "No such option" in proc.stderr


def test_translate_in_process_leaves_garbage_collection_on(tmp_path):
    """Only the console script's own process stops collecting (it ends right
    after); translate called in process (tests, tools) leaves it as it was."""
    import gc

    from click.testing import CliRunner

    from f2loopy.cli import main
    (tmp_path / "t.f90").write_text(SCRIPTED.split("!$loopy begin")[0])
    result = CliRunner().invoke(main, ["translate", str(tmp_path / "t.f90")])
    assert result.exit_code == 0, result.output
    assert gc.isenabled()


@pytest.mark.usefixtures("python_process")
def test_translate_skips_the_interpreter_teardown(tmp_path):
    """Exit handlers do not run after translate (os._exit after flushing);
    after other commands they do."""
    import os
    import subprocess
    import sys
    (tmp_path / "t.f90").write_text(SCRIPTED.split("!$loopy begin")[0])
    code = ("import atexit; atexit.register(lambda: print('torn down', flush=True)); "
            "from f2loopy.cli import entry; entry()")
    env = dict(os.environ, PYTHONHASHSEED="0", F2LOOPY_NO_CACHE="1")   # no re-execution
    run = [sys.executable, "-c", code]
    proc = subprocess.run(run + ["translate", "t.f90"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "torn down" not in proc.stdout, proc.stderr
    proc = subprocess.run(run + ["show", "t.f90"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.endswith("torn down\n"), proc.stderr
