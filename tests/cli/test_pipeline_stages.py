"""The pipeline's stages, their artifacts, the options object and the stage
timings (issue 24, item 4); the sandbox promise that the parent never
generates the code of a script's kernels."""

from __future__ import annotations

import dataclasses
import gc
import mmap
import os
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

import f2loopy.codegen as codegen
from f2loopy.diagnostics import FortranError
from f2loopy.cli import main
from f2loopy.codegen import generate_code
from f2loopy.codegen.elsewhere import ChildCode, remember_code, remembered
from f2loopy.directives.answer_limits import MAX_KERNELS
from f2loopy.frontend import parse_fortran
from f2loopy.pipeline import (
    StageTimes, TranslateOptions, translate_file, translate_parsed, translate_text)

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

SCRIPT = """\
!$loopy begin
! k = parse_fortran(SOURCE, FILENAME)[0]
! k = split_iname(k, "i", tunable("width", [4, 8]))
! checkpoint("split")
! RESULT = tag_inames(k, "i_inner:l.0, i_outer:g.0")
!$loopy end
"""


def test_options_are_frozen_and_copied():
    defines = {"n": 4}
    dirs = ["a"]
    o = TranslateOptions(defines=defines, include_dirs=dirs, kernels=["saxpy"])
    defines["n"] = 5
    dirs.append("b")
    assert dict(o.defines) == {"n": 4} and o.include_dirs == ("a",)
    assert o.kernels == ("saxpy",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.debug = True          # type: ignore[misc]
    with pytest.raises(TypeError):
        o.defines["n"] = 6      # type: ignore[index]
    assert o.replace(debug=True).debug and not o.debug
    # one path is one folder, not its characters
    assert TranslateOptions(include_dirs="inc").include_dirs == ("inc",)


@pytest.mark.usefixtures("python_process")
def test_options_travel_to_worker_processes(tmp_path):
    """-j N pickles the options for its workers."""
    import pickle
    o = TranslateOptions(defines={"n": 4}, tunables={"w": 8}, include_dirs=[str(tmp_path)])
    assert pickle.loads(pickle.dumps(o)) == o
    from f2loopy.build import translate_files
    for name in ("a", "b"):
        (tmp_path / f"{name}.f90").write_text(SAXPY.replace("saxpy", f"saxpy_{name}"))
    outcomes = translate_files([str(tmp_path / "a.f90"), str(tmp_path / "b.f90")], jobs=2,
                               options=o)
    assert [x.error for x in outcomes] == [None, None]
    assert all(x.timings and x.outputs for x in outcomes)


def test_keywords_and_options_give_the_same_translation(tmp_path):
    path = tmp_path / "s.f90"
    by_keywords = translate_text(SAXPY, path, defines={"n": 4}, checkpoints=False)
    by_options = translate_text(SAXPY, path, TranslateOptions(defines={"n": 4},
                                                              checkpoints=False))
    assert by_keywords.outputs == by_options.outputs
    # a keyword replaces the field of the options given
    out = translate_text(SAXPY, path, TranslateOptions(output_dir=tmp_path / "a"),
                         output_dir=tmp_path / "b")
    assert {p.parent for p in out.outputs} == {tmp_path / "b"}


@pytest.mark.parametrize("function", [translate_text, translate_file])
def test_an_unknown_keyword_is_refused_as_python_does(function, tmp_path):
    path = tmp_path / "s.f90"
    path.write_text(SAXPY)
    args = (SAXPY, path) if function is translate_text else (path,)
    with pytest.raises(TypeError, match=rf"{function.__name__}\(\) got an unexpected keyword "
                                        r"argument 'defnies'"):
        function(*args, defnies={"n": 4})


@pytest.mark.usefixtures("sandbox_process")
def test_the_artifacts_of_a_translation(tmp_path):
    path = tmp_path / "s.f90"
    r = translate_text(SAXPY + SCRIPT, path)
    assert [k.name for k in r.parsed.kernels] == ["saxpy"]
    assert not r.parsed.kernels[0].iname_tag("i").hardware     # before the script
    assert r.transformed.kernels == tuple(r.kernels)
    assert r.transformed.generated == tuple(r.generated)
    assert [label for label, _ in r.checkpoints] == ["split"]
    (checkpointed,) = r.checkpoints[0][1]
    assert checkpointed in r.transformed.code           # the child made its code too
    assert r.transformed.code_of(checkpointed) is generate_code(checkpointed)
    assert set(r.outputs) == {tmp_path / f"s{kind}" for kind in
                              (".cl", "_cl.py", "_cl.f90", "_cl.c")}
    assert r.tunables == {"width": (4, 8)}


@pytest.mark.usefixtures("sandbox_process")
def test_a_variant_is_translated_from_the_same_parse(tmp_path, monkeypatch):
    """tune's way: one parse, the script run again per choice."""
    first = translate_text(SAXPY + SCRIPT, tmp_path / "s.f90", checkpoints=False)
    import f2loopy.frontend as frontend

    def parse_again(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(frontend, "translate_source", parse_again)
    other = translate_parsed(first.parsed, checkpoints=False, tunables={"width": 8})
    assert other.parsed is first.parsed
    assert "i_inner" in other.outputs[tmp_path / "s.cl"]
    assert other.outputs != first.outputs


@pytest.mark.usefixtures("sandbox_process")
def test_the_parent_never_generates_a_scripts_code(tmp_path, monkeypatch):
    """Every kernel of the script's result and checkpoints comes with the
    limited child's code: in the parent, generating code for them fails the
    test (the child, a forked process, generates as usual)."""
    parent = os.getpid()
    real = codegen._generate_code

    def only_in_a_child(kernel, *args, **kwargs):
        if os.getpid() == parent:
            raise AssertionError(f"the parent generated the code of '{kernel.name}'")
        return real(kernel, *args, **kwargs)

    monkeypatch.setattr(codegen, "_generate_code", only_in_a_child)
    monkeypatch.setattr(codegen, "_RECENT", {})
    r = translate_text(SAXPY + SCRIPT, tmp_path / "s.f90")
    for kernels in [r.kernels] + [ks for _, ks in r.checkpoints]:
        for k in kernels:
            assert "__kernel" in generate_code(k).device_code     # check's and bench's way
            assert "__kernel" in r.transformed.code_of(k).device_code


def test_the_child_code_of_every_kernel_a_script_may_return_stays(tmp_path):
    """The registry keeps an entry as long as its kernel lives, whatever the
    number of kernels (it held 1024 by count: the promise rested on that
    being more than the sandbox's kernel limit); it forgets dead kernels."""
    (base,) = parse_fortran(SAXPY, "s.f90")
    gk = generate_code(base)
    count = 5 * MAX_KERNELS + 7
    kernels = [base.copy(name=f"k{n}") for n in range(count)]
    for k in kernels:
        remember_code(k, gk)
    assert all(remembered(k) is gk for k in kernels)
    before = len(codegen.elsewhere._REGISTRY)
    del kernels, k
    gc.collect()
    assert len(codegen.elsewhere._REGISTRY) <= before - count


def test_a_kernel_the_child_was_not_asked_for_is_an_error_not_code():
    (k,) = parse_fortran(SAXPY, "s.f90")
    with pytest.raises(LookupError, match="the parent never generates a script's code"):
        ChildCode().code(k)


@pytest.mark.usefixtures("sandbox_process")
def test_stage_times_add_up_and_survive_a_failure(tmp_path):
    times = StageTimes()
    with pytest.raises(FortranError):
        translate_text("subroutine s(\n", tmp_path / "bad.f90", times=times)
    assert [name for name, _ in times.rows()] == ["preprocess", "parse"]
    r = translate_text(SAXPY + SCRIPT, tmp_path / "s.f90")
    names = [name for name, _ in r.timings.rows()]
    assert names == ["preprocess", "parse", "script", "child codegen", "glue"]
    # the CPU seconds of each stage, the sandbox's children counted where they ran
    cpu = dict(r.timings.cpu_rows())
    assert list(cpu) == names and cpu["child codegen"] > 0 and cpu["script"] > 0
    r = translate_text(SAXPY, tmp_path / "s.f90")
    assert [name for name, _ in r.timings.rows()] == ["preprocess", "parse", "codegen", "glue"]
    assert all(s >= 0 for _, s in r.timings.rows())


def test_translate_timings_prints_a_table_on_stderr(tmp_path):
    path = tmp_path / "s.f90"
    path.write_text(SAXPY)
    res = CliRunner().invoke(main, ["translate", str(path), "--timings"])
    assert res.exit_code == 0, res.output
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert lines[0] == f"f2loopy: timings of {path} (seconds):"
    stages = [line.split()[0] for line in lines[1:] if line.startswith("  ")]
    for stage in ("read", "parse", "codegen", "glue", "write", "translate", "total"):
        assert stage in stages
    assert lines[-1].split()[0] == "total" and float(lines[-1].split()[1]) > 0
    # CPU seconds beside the wall-clock seconds: every stage of the file, and the command's
    for line in lines[1:]:
        fields = line.split()
        if line.startswith("  ") and fields[0] not in ("other", "total"):
            assert fields[-1] == "cpu" and float(fields[-2]) >= 0, line
    assert lines[-1].split()[-1] == "cpu" and float(lines[-1].split()[-2]) > 0
    # without the flag: nothing on stderr
    res = CliRunner().invoke(main, ["translate", str(path)])
    assert res.exit_code == 0 and res.stderr == ""


def test_the_sample_files_keep_their_path_names(tmp_path):
    """translate_file reads the file itself: the artifacts name it."""
    path = tmp_path / "s.f90"
    path.write_text(SAXPY)
    r = translate_file(path, cache=False)
    assert r.parsed.path == Path(path) and r.parsed.inputs[0] == Path(path)


def _shared_call_counter(monkeypatch) -> mmap.mmap:
    """Count calls of the code generator in this process and in every child
    forked after this (a shared page: the sandbox's children can write no
    file or pipe of ours)."""
    counter = mmap.mmap(-1, 8)
    real = codegen._generate_code

    def counting(kernel, *args, **kwargs):
        struct.pack_into("q", counter, 0, struct.unpack_from("q", counter, 0)[0] + 1)
        return real(kernel, *args, **kwargs)

    monkeypatch.setattr(codegen, "_generate_code", counting)
    monkeypatch.setattr(codegen, "_RECENT", {})
    return counter


@pytest.mark.usefixtures("sandbox_process")
def test_a_builtin_recipe_alone_generates_the_code_once(tmp_path, monkeypatch):
    """--transform auto with no script: the recipe's check generates the
    code in the sandbox's child, where no script code runs, and that code
    comes back with the kernels: no second child, one code generation (it
    was two: the check's and the second child's); never in the parent."""
    import f2loopy.directives.runner as runner
    counter = _shared_call_counter(monkeypatch)
    parent = os.getpid()
    real = codegen._generate_code

    def not_in_the_parent(kernel, *args, **kwargs):
        assert os.getpid() != parent, "the parent generated a script's code"
        return real(kernel, *args, **kwargs)

    monkeypatch.setattr(codegen, "_generate_code", not_in_the_parent)
    second = []
    monkeypatch.setattr(runner, "lower_script_kernels",
                        lambda *a, **k: second.append(a) or ChildCode())
    r = translate_text(SAXPY, tmp_path / "s.f90", transform="auto")
    assert struct.unpack_from("q", counter, 0)[0] == 1 and second == []
    (k,) = r.kernels
    assert "get_group_id(0)" in r.transformed.code_of(k).device_code
    assert [name for name, _ in r.timings.rows()] == ["preprocess", "parse", "script", "glue"]
    # the same code as the second child makes from the decoded kernel
    monkeypatch.undo()
    from f2loopy.directives.child_codegen import lower_script_kernels
    from f2loopy.directives.lockdown import Limits
    again = lower_script_kernels([k], Limits.from_environment())
    assert again.code(k).device_code == r.transformed.code_of(k).device_code


@pytest.mark.usefixtures("sandbox_process")
def test_a_recipe_file_of_the_user_gets_the_second_child(tmp_path, monkeypatch):
    """A recipe named by its path is a script: its child's code is never
    taken, a clean child generates it (also for a copy of a built-in one)."""
    import f2loopy.directives.runner as runner
    from f2loopy.directives.recipes import RECIPE_DIR
    recipe = tmp_path / "auto.py"
    recipe.write_text((RECIPE_DIR / "auto.py").read_text())
    from f2loopy.directives import child_codegen
    monkeypatch.setattr(child_codegen, "side_by_side", lambda: True)
    counter = _shared_call_counter(monkeypatch)
    calls = []
    real = runner.lower_script_kernels
    monkeypatch.setattr(runner, "lower_script_kernels",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    r = translate_text(SAXPY, tmp_path / "s.f90", transform=str(recipe))
    # the recipe's check in the script's child, then the clean children's
    # (two side by side: the code, and the value-flow check up to its place)
    assert len(calls) == 1 and struct.unpack_from("q", counter, 0)[0] == 3
    assert "get_group_id(0)" in r.outputs[tmp_path / "s.cl"]
    # and a script in the file with a built-in recipe: the same
    calls.clear()
    translate_text(SAXPY + SCRIPT, tmp_path / "s.f90", transform="auto")
    assert len(calls) == 1


@pytest.mark.parametrize("items", [None, [], [{"code": {}}], ["code"], [{"error": {}}],
                                   [{"code": {"name": "saxpy"}}]])
def test_code_sent_with_the_kernels_is_checked(items):
    from f2loopy.directives.child_codegen import LoweringFailed, code_from_answer
    (k,) = parse_fortran(SAXPY, "s.f90")
    with pytest.raises(LoweringFailed, match="invalid answer"):
        code_from_answer([k], items)
