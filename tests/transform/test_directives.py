"""In-file transformation scripts: namespace, results, checkpoints, recipes,
and errors located at the line of the ``.f90`` file (exact messages)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.diagnostics import F2LoopyError, SandboxViolation, ScriptError
from f2loopy.directives import parse_transformed_fortran
from f2loopy.pipeline import translate_text

ROOT = Path(__file__).resolve().parents[2]

SAXPY = """\
subroutine saxpy(n, a, x, y)
  implicit none
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a*x(i) + y(i)
  end do
end subroutine
"""
FIRST = len(SAXPY.splitlines()) + 2      # .f90 line of the first script line

TWO = SAXPY + """\
subroutine scale(n, x)
  implicit none
  integer n, j
  real x(n)
  do j = 1, n
    x(j) = 2*x(j)
  end do
end subroutine
"""


def with_script(script: str, fortran: str = SAXPY) -> str:
    return (fortran + "!$loopy begin\n" + "".join(f"! {s}\n" for s in script.splitlines())
            + "!$loopy end\n")


def run(script, tmp_path, *, fortran=SAXPY, name="t.f90", **kw):
    text = with_script(script, fortran)
    return translate_text(text, Path(tmp_path) / name, **kw)


def fail(script, tmp_path, *, cls=ScriptError, **kw) -> F2LoopyError:
    with pytest.raises(cls) as info:
        run(script, tmp_path, **kw)
    return info.value


def where(exc):
    s = exc.span
    return (Path(s.filename).name, s.line, s.column)


# {{{ the namespace

@pytest.mark.usefixtures("sandbox_process")
def test_loopy_style_names(tmp_path):
    r = run("""\
import loopy as lp
import loopy.match as m
from loopy import *
from f2loopy.transform import split_iname as split
import f2loopy.transform.match as fm
k, = lp.parse_fortran(SOURCE, FILENAME)
k = split(k, "i", 16, within=m.Writes("y") & fm.Iname("i"))
k = tag_inames(k, {"i_outer": "g.0", "i_inner": "l.0"})
RESULT = [k]""", tmp_path)
    (k,) = r.kernels
    assert {n: str(t) for n, t in k.iname_tags.items()} == {"i_outer": "g.0", "i_inner": "l.0"}


@pytest.mark.usefixtures("sandbox_process")
def test_instructions_answer_loopys_questions(tmp_path):
    r = run("""\
k, = parse_fortran(SOURCE, FILENAME)
for insn in find_instructions(k, "writes:y"):
    print(insn.id, insn.assignee_name, insn.assignee_var_names(), sorted(insn.within_inames))
    print(sorted(insn.read_dependency_names()), sorted(insn.write_dependency_names()),
          sorted(insn.dependency_names()))
RESULT = k""", tmp_path)
    assert r.script_output == ("y y ('y',) ['i']\n['a', 'i', 'x', 'y'] ['y'] "
                               "['a', 'i', 'x', 'y']\n")


@pytest.mark.usefixtures("sandbox_process")
def test_expressions_with_reductions_print(tmp_path):
    r = run("""\
k, = parse_fortran(SOURCE, FILENAME)
k = accumulation_to_reduction(k, "writes:sum")
for insn in k.instructions:
    print(insn.expression + 1)
RESULT = k""", tmp_path, fortran="""\
subroutine total(n, x, s)
  implicit none
  integer n
  real x(n), s
  s = 2*sum(x)
end subroutine
""")
    assert r.script_output == "sum(sum_i1, x[sum_i1]) + 1\n2*sum + 1\n"


@pytest.mark.usefixtures("sandbox_process")
def test_source_filename_defines_numpy_math(tmp_path):
    r = run("""\
print(FILENAME.endswith("t.f90"), "subroutine saxpy" in SOURCE, "!$loopy begin" in SOURCE)
print(Nq * 2, np.float32(0.5) + 1, math.pi > 3, int(np.prod(np.arange(1, 5))))
tu = parse_fortran(SOURCE, FILENAME)
RESULT = split_iname(tu, "i", Nq)""", tmp_path, defines={"Nq": 8})
    assert r.script_output == "True True True\n16 1.5 True 24\n"
    assert r.kernels[0].all_inames() == ("i_outer", "i_inner")


@pytest.mark.usefixtures("sandbox_process")
def test_parse_fortran_unpacks_and_indexes(tmp_path):
    r = run("""\
f_r, f_s = parse_fortran(SOURCE, FILENAME, auto_dependencies=False, free_form=True)
tu = parse_fortran(SOURCE, FILENAME)
print(f_r.name, f_s.name, tu["SCALE"].name, tu[0].name, len(tu), list(tu.keys()))
other, = parse_fortran("subroutine z(x)\\n real x\\n x = 1\\nend\\n", "z.f90")
RESULT = [f_r, tu["scale"], other]""", tmp_path, fortran=TWO)
    assert r.script_output == "saxpy scale scale saxpy 2 ['saxpy', 'scale']\n"
    assert [k.name for k in r.kernels] == ["saxpy", "scale", "z"]


@pytest.mark.usefixtures("sandbox_process")
def test_parse_fortran_of_a_long_source_in_the_script(tmp_path):
    # long files are parsed in forked workers outside the sandbox, serially in it
    body = "".join(f"subroutine s{n}(x)\n  real x\n" + "  x = x + 1\n" * 40 + "end\n"
                   for n in range(24))
    r = run("src = OTHER\nks = parse_fortran(src, 'long.f90')\nprint(len(ks))\n"
            "RESULT = parse_fortran(SOURCE, FILENAME)", tmp_path, defines={"OTHER": body})
    assert r.script_output == "24\n"


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("result, names", [
    ("k", ["saxpy"]),
    ("[k]", ["saxpy"]),
    ("(k, s)", ["saxpy", "scale"]),
    ("tu", ["saxpy", "scale"]),
    ("[tu]", ["saxpy", "scale"]),
    ('{"first": s, "second": k}', ["first", "second"]),
])
def test_result_forms(result, names, tmp_path):
    r = run(f"tu = parse_fortran(SOURCE, FILENAME)\nk, s = tu\nRESULT = {result}",
            tmp_path, fortran=TWO)
    assert [k.name for k in r.kernels] == names


@pytest.mark.usefixtures("sandbox_process")
def test_blocks_share_one_namespace(tmp_path):
    text = (SAXPY + "!$loopy begin\n! k, = parse_fortran(SOURCE, FILENAME)\n!$loopy end\n"
            + "!$loopy begin\n! RESULT = split_iname(k, 'i', 4)\n!$loopy end\n")
    r = translate_text(text, tmp_path / "t.f90")
    assert r.kernels[0].all_inames() == ("i_outer", "i_inner")


@pytest.mark.usefixtures("sandbox_process")
def test_old_style_transform_block_prebinds_kernels(tmp_path):
    text = (SAXPY + "!$loopy begin transform\n! saxpy = split_iname(saxpy, 'i', 4)\n"
            "!$loopy end transform\n")
    r = translate_text(text, tmp_path / "t.f90")
    assert r.kernels[0].all_inames() == ("i_outer", "i_inner")
    text = text.replace("! saxpy = split_iname(saxpy, 'i', 4)\n",
                        "! saxpy = split_iname(saxpy, 'i', 4)\n! saxpy = 3\n")
    with pytest.raises(ScriptError) as info:
        translate_text(text, tmp_path / "t.f90")
    assert info.value.message == "RESULT must hold kernels, but holds a int"
    assert where(info.value) == ("t.f90", FIRST - 1, 2)


@pytest.mark.usefixtures("sandbox_process")
def test_print_is_captured_and_capped(tmp_path):
    r = run("for q in range(100000):\n    print('x' * 10)\nRESULT = parse_fortran(SOURCE, FILENAME)",
            tmp_path)
    assert r.script_output.endswith("[output truncated]\n")
    assert len(r.script_output) < 70_000


@pytest.mark.usefixtures("sandbox_process")
def test_write_code_option_shows_the_generated_code(tmp_path):
    # loopy's lp.set_options(knl, "write_cl") prints the kernel's code
    r = run("import loopy as lp\nk = lp.parse_fortran(SOURCE, FILENAME)\n"
            "k = lp.set_options(k, 'write_cl')\nRESULT = k", tmp_path)
    assert r.script_output.count("__kernel void") == 1
    assert "y[i - 1] = a * x[i - 1] + y[i - 1];" in r.script_output


@pytest.mark.usefixtures("sandbox_process")
def test_generate_code_v2_gives_the_device_code(tmp_path):
    r = run("import loopy as lp\nk, = lp.parse_fortran(SOURCE, FILENAME)\n"
            "print(lp.generate_code_v2(k).device_code())\nRESULT = k", tmp_path)
    assert "__kernel void" in r.script_output


@pytest.mark.usefixtures("sandbox_process")
def test_what_the_script_printed_survives_a_code_generation_error(tmp_path):
    # print(knl) is how a user finds out why the kernel cannot be generated
    exc = fail("k, = parse_fortran(SOURCE, FILENAME)\nprint('before the race')\n"
               "RESULT = [tag_inames(split_iname(k, 'i', 4), 'i_outer:g.0, i_inner:g.0')]",
               tmp_path, cls=F2LoopyError)
    assert exc.script_output == "before the race\n"


@pytest.mark.usefixtures("sandbox_process")
def test_numerical_libraries_work_in_the_child(tmp_path):
    # BLAS starts threads in the child (the process limit leaves room for them)
    r = run("a = np.ones((300, 300))\nprint((a @ a)[0, 0], np.linalg.norm(np.eye(4)))\n"
            "RESULT = parse_fortran(SOURCE, FILENAME)", tmp_path)
    assert r.script_output == "300.0 2.0\n"


@pytest.mark.usefixtures("sandbox_process")
def test_warnings_go_to_the_output(tmp_path):
    r = run("x = np.arcsin(np.array([2.0]))\nRESULT = parse_fortran(SOURCE, FILENAME)", tmp_path)
    assert r.script_output == (f"{tmp_path / 't.f90'}:{FIRST}: RuntimeWarning: invalid value "
                               "encountered in arcsin\n")


def test_without_a_script_nothing_changes(tmp_path):
    r = translate_text(SAXPY, tmp_path / "t.f90")
    assert r.checkpoints == [] and r.script_output == "" and r.inputs == [tmp_path / "t.f90"]


@pytest.mark.usefixtures("sandbox_process")
def test_parse_transformed_fortran():
    tu = parse_transformed_fortran(with_script(
        "k, = parse_fortran(SOURCE, FILENAME)\nRESULT = [split_iname(k, 'i', n)]"),
        transform_code_context={"n": 8}, filename="t.f90")
    assert [k.name for k in tu] == ["saxpy"] and "i_inner" in tu["saxpy"].all_inames()
    # loopy's pre_transform_code runs first, in the script's namespace
    tu2 = parse_transformed_fortran(with_script(
        "k, = parse_fortran(SOURCE, FILENAME)\nRESULT = [split_iname(k, 'i', n)]"),
        pre_transform_code="n = 8", filename="t.f90")
    assert tu2 == tu
    with pytest.raises(F2LoopyError, match="name 'n' is not defined"):
        parse_transformed_fortran(with_script(
            "k, = parse_fortran(SOURCE, FILENAME)\nRESULT = [split_iname(k, 'i', n)]"),
            pre_transform_code="m = 8", filename="t.f90")


@pytest.mark.usefixtures("sandbox_process")
def test_a_script_run_is_fast(tmp_path):
    import resource

    def cpu() -> float:
        """CPU seconds of this process and of its children that ended (the sandbox's):
        a busy machine stretches the wall clock, not these."""
        own, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                           resource.RUSAGE_CHILDREN))
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    run("RESULT = parse_fortran(SOURCE, FILENAME)", tmp_path)      # warm
    start = cpu()
    run("RESULT = split_iname(parse_fortran(SOURCE, FILENAME), 'i', 4)", tmp_path)
    assert cpu() - start < 2.0

# }}}


# {{{ checkpoints

@pytest.mark.usefixtures("sandbox_process")
def test_checkpoints_follow_the_kernels_worked_on(tmp_path):
    r = run("""\
a, b = parse_fortran(SOURCE, FILENAME)
checkpoint("parsed")
a = split_iname(a, "i", 4, outer_tag="g.0", inner_tag="l.0")
checkpoint("level 1")
b = tag_inames(b, "j:g.0")
checkpoint("only b", b)
RESULT = [a, b]""", tmp_path, fortran=TWO)
    labels = [(lab, [k.name for k in ks]) for lab, ks in r.checkpoints]
    assert labels == [("parsed", ["saxpy", "scale"]), ("level 1", ["saxpy", "scale"]),
                      ("only b", ["scale"])]
    level1 = dict(r.checkpoints)["level 1"]
    assert level1[0].all_inames() == ("i_outer", "i_inner") and level1[1].iname_tags == {}
    for _, kernels in r.checkpoints:        # each checkpoint generates code on its own
        for k in kernels:
            assert "__kernel" in generate_code(k).device_code


@pytest.mark.usefixtures("sandbox_process")
def test_translate_drops_checkpoints_and_lowers_only_the_result(tmp_path, monkeypatch):
    """translate writes the result only: the checkpoints are dropped before the
    limited child generates code, so their code is neither generated nor
    generable in the parent; check and bench keep them.  Without them the
    script's child does not even send their kernels (the answer's table)."""
    import f2loopy.directives.runner as runner
    seen, sent = [], []
    real = runner.lower_script_kernels
    monkeypatch.setattr(runner, "lower_script_kernels",
                        lambda kernels, *a, **k: (seen.append(len(kernels)),
                                                  real(kernels, *a, **k))[1])
    decode = runner.kernels_from_data
    monkeypatch.setattr(runner, "kernels_from_data",
                        lambda table: (sent.append(len(table)), decode(table))[1])
    script = """\
k = parse_fortran(SOURCE, FILENAME)[0]
checkpoint("parsed")
k = split_iname(k, "i", 4)
checkpoint("split")
RESULT = tag_inames(k, "i_inner:l.0, i_outer:g.0")"""
    r = run(script, tmp_path, checkpoints=False)
    assert r.checkpoints == [] and seen == [1] and sent == [1]
    r = run(script, tmp_path)
    assert [lab for lab, _ in r.checkpoints] == ["parsed", "split"] and seen == [1, 3]
    assert sent == [1, 3]


@pytest.mark.usefixtures("sandbox_process")
def test_checkpoint_after_fusion_holds_the_fused_kernel(tmp_path):
    r = run("""\
f_r, f_s = parse_fortran(SOURCE, FILENAME)
f = fuse_kernels([f_r, f_s])
checkpoint("fused")
RESULT = f""", tmp_path, fortran=TWO.replace("integer n, j", "integer n, i")
                      .replace("do j", "do i").replace("x(j) = 2*x(j)", "x(i) = 2*x(i)"))
    ((label, kernels),) = r.checkpoints
    assert label == "fused" and [k.name for k in kernels] == [r.kernels[0].name]


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("script, message, line", [
    ('k, = parse_fortran(SOURCE, FILENAME)\ncheckpoint("a")\ncheckpoint("a")',
     "ValueError: checkpoint 'a' was already recorded", 3),
    ('checkpoint("early")',
     "ValueError: checkpoint: there are no kernels yet (call parse_fortran first, or pass "
     "them: checkpoint(label, knl))", 1),
    ('checkpoint("x", 3)',
     "TypeError: checkpoint must be a kernel, a list of kernels or a dict of kernels, not int",
     1),
])
def test_checkpoint_errors(script, message, line, tmp_path):
    exc = fail(script, tmp_path)
    assert exc.message == message and exc.span.line == FIRST + line - 1

# }}}


# {{{ errors at the right line

@pytest.mark.usefixtures("sandbox_process")
def test_name_error_with_suggestion(tmp_path):
    exc = fail("k, = parse_fortran(SOURCE, FILENAME)\nRESULT = spilt_iname(k, 'i', 4)",
               tmp_path)
    assert where(exc) == ("t.f90", FIRST + 1, 12)
    assert exc.message.startswith("name 'spilt_iname' is not defined (did you mean "
                                  "'split_iname'")
    assert exc.format().splitlines()[1:] == ["    ! RESULT = spilt_iname(k, 'i', 4)",
                                             "               ^~~~~~~~~~~"]


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("call, message", [
    ("lp.split_iname(k, 'i', 4, outer_tags='g.0')",
     "TypeError: split_iname() got an unexpected keyword argument 'outer_tags' (did you mean "
     "'outer_tag'?)"),
    ("lp.add_prefetch(k, 'x', 'i', default_tags='l.auto')",
     "TypeError: add_prefetch() got an unexpected keyword argument 'default_tags' (did you "
     "mean 'default_tag'?)"),
    ("lp.tag_inames(k, 'i:g.0', zap=1)",
     "TypeError: tag_inames() got an unexpected keyword argument 'zap' (its keyword "
     "arguments: iname_to_tag, force, ignore_nonexistent, skip_missing)"),
    ("lp.split_inames(k, 'i', 4)",
     "AttributeError: module 'loopy' has no attribute 'split_inames' (did you mean "
     "'split_iname'?)"),
    ("lp.to_batched(k, 'nbatches', [])",
     "AttributeError: module 'loopy' has no attribute 'to_batched' (f2loopy "
     "does not provide it; docs/guide/usage.md lists the transformations it has)"),
])
def test_loopy_spelling_mistakes_get_suggestions(call, message, tmp_path):
    exc = fail(f"import loopy as lp\nk, = parse_fortran(SOURCE, FILENAME)\nk = {call}",
               tmp_path)
    assert exc.message == message
    assert where(exc) == ("t.f90", FIRST + 2, 7)


@pytest.mark.usefixtures("sandbox_process")
def test_missing_define_hint(tmp_path):
    exc = fail("k, = parse_fortran(SOURCE, FILENAME)\nk = fix_parameters(k, n=Nqq)", tmp_path)
    assert exc.message == ("name 'Nqq' is not defined (a value from the command line? give "
                           "it with -D Nqq=VALUE)")
    assert where(exc) == ("t.f90", FIRST + 1, 27)


@pytest.mark.usefixtures("sandbox_process")
def test_transform_error_in_a_multi_line_call(tmp_path):
    exc = fail('k, = parse_fortran(SOURCE, FILENAME)\nk = split_iname(k,\n    "q", 4)',
               tmp_path)
    assert exc.message == "no iname named 'q' (the kernel has: i)"
    assert where(exc) == ("t.f90", FIRST + 1, 7)


@pytest.mark.usefixtures("sandbox_process")
def test_syntax_error(tmp_path):
    exc = fail("k, = parse_fortran(SOURCE, FILENAME)\nRESULT = [k,", tmp_path)
    assert exc.message == "SyntaxError: '[' was never closed"
    assert where(exc) == ("t.f90", FIRST + 1, 12)


@pytest.mark.usefixtures("sandbox_process")
def test_indentation_error_keeps_fortran_columns(tmp_path):
    text = SAXPY + "!$loopy begin\n!   k = 1\n!     j = 2\n!$loopy end\n"
    with pytest.raises(ScriptError) as info:
        translate_text(text, tmp_path / "t.f90")
    assert info.value.message == "IndentationError: unexpected indent"
    assert where(info.value)[:2] == ("t.f90", FIRST + 1)


@pytest.mark.usefixtures("sandbox_process")
def test_error_inside_a_script_function_and_in_the_second_block(tmp_path):
    text = (SAXPY + "!$loopy begin\n! def tile(k):\n!     return split_iname(k, 'i', -1)\n"
            "!$loopy end\n!$loopy begin\n! k, = parse_fortran(SOURCE, FILENAME)\n"
            "! RESULT = tile(k)\n!$loopy end\n")
    with pytest.raises(ScriptError) as info:
        translate_text(text, tmp_path / "t.f90")
    exc = info.value
    assert exc.message == "split_iname: inner_length must be a positive integer, got -1"
    assert where(exc) == ("t.f90", FIRST + 1, 14)


@pytest.mark.usefixtures("sandbox_process")
def test_python_exception_message(tmp_path):
    exc = fail("d = {}\nx = d['missing']", tmp_path)
    assert exc.message == "KeyError: 'missing'" and where(exc) == ("t.f90", FIRST + 1, 7)


@pytest.mark.usefixtures("sandbox_process")
def test_fortran_error_from_a_parse_in_the_script(tmp_path):
    exc = fail('k, = parse_fortran("subroutine z(x)\\n real x\\n print 1, x\\nend\\n", '
               '"z.f90")', tmp_path)
    assert exc.message.startswith("format label '1' in 'print 1, x' cannot be translated")
    assert where(exc) == ("t.f90", FIRST, 8)
    assert exc.notes[0][0] == "the statement concerned"
    assert (exc.notes[0][1].filename, exc.notes[0][1].line) == ("z.f90", 3)


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("script, message", [
    ("k, = parse_fortran(SOURCE, FILENAME)",
     "the transformation script did not set RESULT (assign the kernels to generate, e.g. "
     "RESULT = [knl])"),
    ("RESULT = 3",
     "RESULT must be a kernel, a list of kernels or a dict of kernels, not int"),
    ("RESULT = [parse_fortran(SOURCE, FILENAME)[0], 'x']",
     "RESULT must hold kernels, but holds a str"),
    ("k, = parse_fortran(SOURCE, FILENAME)\nRESULT = [k, k]",
     "RESULT holds two kernels named 'saxpy' (each output kernel needs its own name)"),
    ("RESULT = []", "RESULT holds no kernels"),
])
def test_result_errors_point_at_the_block(script, message, tmp_path):
    exc = fail(script, tmp_path)
    assert exc.message == message
    assert where(exc) == ("t.f90", FIRST - 1, 2)      # the '$loopy' of '!$loopy begin'


@pytest.mark.usefixtures("sandbox_process")
def test_no_traceback_unless_debug(tmp_path):
    exc = fail("x = 1 / 0", tmp_path)
    assert exc.message == "ZeroDivisionError: division by zero" and exc.notes == ()
    exc = fail("def f():\n    return 1 / 0\nf()", tmp_path, debug=True)
    (note, span), = exc.notes
    assert span is None and note.startswith("Python traceback of the script (--debug):")
    assert f"t.f90:{FIRST + 2}: f()" in note and f"t.f90:{FIRST + 1}: return 1 / 0" in note


@pytest.mark.usefixtures("sandbox_process")
def test_refusal_is_a_sandbox_violation(tmp_path):
    exc = fail("import os", tmp_path, cls=SandboxViolation)
    assert exc.format().splitlines()[0].endswith(
        f"t.f90:{FIRST}:3: error: the transformation script may not import 'os'")


@pytest.mark.usefixtures("sandbox_process")
def test_cli_reports_script_errors_writes_nothing(tmp_path):
    src = tmp_path / "t.f90"
    src.write_text(with_script("k, = parse_fortran(SOURCE, FILENAME)\nk = split_iname(k, 'q', 4)"))
    res = CliRunner().invoke(main, ["translate", str(src)])
    assert res.exit_code == 1
    assert f"t.f90:{FIRST + 1}:7: error: no iname named 'q' (the kernel has: i)" in res.output
    assert "Traceback" not in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.f90"]
    res = CliRunner().invoke(main, ["translate", "--debug", str(src)])
    assert res.exit_code == 1 and "Python traceback of the script (--debug)" in res.output


@pytest.mark.usefixtures("sandbox_process")
def test_cli_shows_what_the_script_prints(tmp_path):
    """print(knl) in a script, as in the loopy tutorial: translate shows it
    (also when the outputs come from the cache, and before an error), so
    does show."""
    src = tmp_path / "t.f90"
    src.write_text(with_script("k, = parse_fortran(SOURCE, FILENAME)\nprint('inames:', "
                               "k.all_inames())\nRESULT = split_iname(k, 'i', 4)"))
    for _ in range(2):              # the second translation is a cache hit
        res = CliRunner().invoke(main, ["translate", str(src)])
        assert res.exit_code == 0 and res.stdout == "inames: ('i',)\n"
    res = CliRunner().invoke(main, ["show", "--no-code", str(src)])
    assert res.exit_code == 0 and res.output.startswith("inames: ('i',)\n---")
    src.write_text(with_script("k, = parse_fortran(SOURCE, FILENAME)\nprint('inames:', "
                               "k.all_inames())\nRESULT = split_iname(k, 'q', 4)"))
    res = CliRunner().invoke(main, ["translate", str(src)])
    assert res.exit_code == 1 and res.stdout == "inames: ('i',)\n"
    assert res.stderr.startswith(f"{src}:{FIRST + 2}:")

# }}}


# {{{ recipes

@pytest.mark.usefixtures("sandbox_process")
def test_recipe_from_a_script(tmp_path):
    r = run('k, = parse_fortran(SOURCE, FILENAME)\nRESULT = apply_recipe("gpu_tiling", k, '
            'tile=32)', tmp_path)
    assert {n: str(t) for n, t in r.kernels[0].iname_tags.items()} == {
        "i_outer": "g.0", "i_inner": "l.0"}
    assert r.inputs == [tmp_path / "t.f90", ROOT / "transforms" / "gpu_tiling.py"]


@pytest.mark.usefixtures("sandbox_process")
def test_recipe_from_the_command_line_with_options(tmp_path):
    src = tmp_path / "m.f90"
    src.write_text((ROOT / "samples" / "matmul.f90").read_text())
    r = translate_text(src.read_text(), src, transform="gpu_tiling", defines={"tile": 8})
    tags = {n: str(t) for n, t in r.kernels[0].iname_tags.items()}
    assert sorted(tags.values()) == ["g.0", "g.1", "l.0", "l.1"]
    assert r.inputs == [src, ROOT / "transforms" / "gpu_tiling.py"]
    r = translate_text(SAXPY, tmp_path / "s.f90", transform="cpu_vectorize",
                       defines={"width": 4})
    assert {n: str(t) for n, t in r.kernels[0].iname_tags.items()} == {
        "i_outer": "g.0", "i_inner_inner": "unr"}


@pytest.mark.usefixtures("sandbox_process")
def test_recipe_file_given_by_path(tmp_path):
    recipe = tmp_path / "my-recipe.py"
    recipe.write_text('"""Unroll by two."""\nOPTIONS = {}\n\ndef transform(k):\n'
                      '    return split_iname(k, "i", 2, inner_tag="unr")\n')
    r = translate_text(SAXPY, tmp_path / "s.f90", transform=str(recipe))
    assert r.inputs == [tmp_path / "s.f90", recipe]
    assert "i_inner" in r.kernels[0].iname_tags


@pytest.mark.usefixtures("sandbox_process")
def test_error_in_a_recipe_points_into_the_recipe(tmp_path):
    exc = fail('k, = parse_fortran(SOURCE, FILENAME)\nRESULT = apply_recipe("gpu_tiling", '
               'k, inames="q")', tmp_path)
    assert exc.message == "no iname named 'q' (the kernel has: i)"
    assert Path(exc.span.filename).name == "gpu_tiling.py"
    assert "split_iname(kernel, name, size" in exc.span.text
    (note, span), = exc.notes
    assert note == "in recipe 'gpu_tiling', applied here"
    assert (Path(span.filename).name, span.line, span.column) == ("t.f90", FIRST + 1, 12)


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("script, message", [
    ('RESULT = apply_recipe("nope", parse_fortran(SOURCE, FILENAME))',
     "apply_recipe: no recipe named 'nope' (available: auto, cpu_vectorize, gpu_tiling, scc)"),
    ('RESULT = apply_recipe("gpu_tiling", parse_fortran(SOURCE, FILENAME), tyle=3)',
     "apply_recipe: recipe 'gpu_tiling' has no option 'tyle' (options: inames, tile)"),
])
def test_recipe_call_errors(script, message, tmp_path):
    exc = fail(script, tmp_path)
    assert exc.message == message and exc.span.line == FIRST


def test_unknown_recipe_on_the_command_line(tmp_path):
    with pytest.raises(F2LoopyError) as info:
        translate_text(SAXPY, tmp_path / "s.f90", transform="nope")
    assert info.value.message.startswith("unknown transformation recipe 'nope' (recipes in ")
    assert "auto, cpu_vectorize, gpu_tiling, scc; or give the path of a recipe file)" in info.value.message


def test_every_recipe_is_documented():
    for path in sorted((ROOT / "transforms").glob("*.py")):
        text = path.read_text()
        assert text.startswith('"""') and "Options:" in text and "OPTIONS = {" in text, path
        assert "def transform(" in text, path

# }}}
