"""Build options, -D names and depfiles (issue 14, class 8, and what a
file name can do to a Make rule).

A kernel's OpenCL build options reach the compiler of the user's program
after the sandbox: a script that adds ``-Dget_global_id=get_local_id`` makes
the code that ``show`` and ``check`` saw differ from the code that runs.
Options are on an allow-list, checked where the script sets them (a
located error at its line), again in the parent when the answer comes back,
and at code generation for kernels from anywhere else.
"""

from __future__ import annotations

import json

import pytest

from security_util import (
    SAXPY, SCRIPT_LINE, TOUCH, assert_safe, files_in, invoke, with_script)

FORBIDDEN = {
    "define_builtin": ["-Dget_global_id=get_local_id"],
    "define_split": ["-D", "get_global_id=get_local_id"],
    "undefine": ["-U__OPENCL_VERSION__"],
    "include_dir": ["-I/etc"],
    "include_file": ["-include", "/etc/passwd"],
    "clang_plugin": ["-Xclang", "-load", "-Xclang", "/tmp/evil.so"],
    "output_file": ["-o", "/tmp/evil"],
    "language": ["-x", "c"],
    "after_an_allowed_one": ["-cl-fast-relaxed-math", "-DX=1"],
    "newline_inside": ["-cl-mad-enable\n-DX=1"],
    "prefix_of_allowed": ["-cl-mad-enable-and-more"],
    "unknown_cl_option": ["-cl-evil"],
    "std_unknown": ["-cl-std=CL9.9"],
}


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("options", FORBIDDEN.values(), ids=FORBIDDEN.keys())
def test_script_cannot_set_a_build_option_off_the_list(options, tmp_path):
    (tmp_path / "t.f90").write_text(with_script([
        "k, = parse_fortran(SOURCE, FILENAME)",
        f"RESULT = set_options(k, build_options={options!r})"]))
    result = invoke(["translate", "t.f90"], tmp_path)
    assert result.exit_code == 1, result.output
    bad = next(o for o in options if o not in (
        "-cl-fast-relaxed-math",))
    shown = bad.replace("\n", "\\n")
    assert (f"t.f90:{SCRIPT_LINE + 1}:" in result.stderr and
            f"error: set_options: the OpenCL build option '{shown}' is not allowed (allowed: "
            in result.stderr), result.stderr
    assert files_in(tmp_path) == ["t.f90"]
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.usefixtures("sandbox_process")
def test_build_options_as_one_string_are_checked_word_by_word(tmp_path):
    (tmp_path / "t.f90").write_text(with_script([
        "k, = parse_fortran(SOURCE, FILENAME)",
        "RESULT = set_options(k, build_options='-cl-mad-enable -Dget_global_id=get_local_id')"]))
    result = invoke(["translate", "t.f90"], tmp_path)
    assert result.exit_code == 1
    assert "the OpenCL build option '-Dget_global_id=get_local_id' is not allowed" in \
        result.stderr
    assert files_in(tmp_path) == ["t.f90"]


@pytest.mark.usefixtures("sandbox_process")
def test_allowed_build_options_reach_both_glues(tmp_path):
    (tmp_path / "t.f90").write_text(with_script([
        "k, = parse_fortran(SOURCE, FILENAME)",
        "RESULT = set_options(k, build_options=['-cl-fast-relaxed-math', '-cl-std=CL1.2', "
        "'-w'])"]))
    result = invoke(["translate", "t.f90"], tmp_path)
    assert result.exit_code == 0, result.output
    py = (tmp_path / "t_cl.py").read_text()
    assert "('-cl-fast-relaxed-math', '-cl-std=CL1.2', '-w')" in py
    assert 'f2l_program(), "-cl-fast-relaxed-math -cl-std=CL1.2 &' in \
        (tmp_path / "t_cl.f90").read_text()


def _answer(option: str) -> str:
    """A child's answer whose one kernel carries *option*."""
    from f2loopy.directives.child import FORMAT, VERSION
    from f2loopy.frontend import parse_fortran
    from f2loopy.ir.serialize import encode_kernel
    (k,) = parse_fortran(SAXPY, "t.f90")
    d = encode_kernel(k)
    d["options"]["build_options"] = [option]
    return json.dumps({"format": FORMAT, "version": VERSION, "ok": True, "table": [d],
                       "result": [0], "checkpoints": []})


@pytest.mark.parametrize("option", ["-Dget_global_id=get_local_id", "-I/etc", "-cl-evil"])
def test_the_parent_checks_the_answer_again(option):
    """A child that got past set_options (it is untrusted) is refused by the
    parent, at the script block."""
    from f2loopy.diagnostics import SandboxViolation
    from f2loopy.directives.runner import _AnswerReader
    from f2loopy.frontend import read_source
    src = read_source(with_script(["RESULT = parse_fortran(SOURCE, FILENAME)"]), "t.f90")
    with pytest.raises(SandboxViolation) as info:
        _AnswerReader(src, {}, False).read(_answer(option))
    assert info.value.span.line == SCRIPT_LINE - 1
    assert f"the OpenCL build option '{option}' is not allowed" in info.value.message
    _AnswerReader(src, {}, False).read(_answer("-cl-mad-enable"))      # allowed: accepted


def test_code_generation_is_the_last_gate():
    """A kernel built through the Python API with options off the list."""
    from f2loopy.codegen import generate_code
    from f2loopy.diagnostics import CodegenError, TransformError
    from f2loopy.frontend import parse_fortran
    from f2loopy.transform.instructions import set_options
    (k,) = parse_fortran(SAXPY, "t.f90")
    with pytest.raises(TransformError, match="'-DX' is not allowed"):
        set_options(k, build_options=["-DX"])
    bad = k.copy(options=k.options.copy(build_options=("-Dget_global_id=get_local_id",)))
    with pytest.raises(CodegenError) as info:
        generate_code(bad)
    assert str(info.value).startswith("t.f90:1:12: error: the OpenCL build option "
                                      "'-Dget_global_id=get_local_id' is not allowed")


# {{{ -D NAME=VALUE on the command line

@pytest.mark.parametrize("define", [
    "a\n=1", "a\r=1", "ｆｏｏ=1", "for=1", "1a=1", "a-b=1", "a.b=1", "a b=1", "=1"])
def test_define_names_must_be_plain(define, tmp_path):
    (tmp_path / "t.f90").write_text(SAXPY)
    result = invoke(["translate", "-D", define, "t.f90"], tmp_path)
    assert result.exit_code == 2, result.output
    assert "Error: Invalid value for -D: " in result.stderr
    assert "is not a plain name (a letter or underscores, then letters, digits and " \
        "underscores)" in result.stderr
    assert files_in(tmp_path) == ["t.f90"]
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.usefixtures("sandbox_process")
def test_plain_define_names_still_work(tmp_path):
    (tmp_path / "t.f90").write_text(with_script([
        "k, = parse_fortran(SOURCE, FILENAME)", "print(Nq, tile_2)", "RESULT = k"]))
    result = invoke(["translate", "-D", "Nq=8", "-D", "tile_2=16", "t.f90"], tmp_path)
    assert result.exit_code == 0, result.output
    assert result.stdout == "8 16\n"

# }}}


# {{{ depfiles

@pytest.mark.parametrize("name", [
    f"a\n\t{TOUCH}\n.f90",              # a recipe line for make
    f"b\r\nall:\n\t{TOUCH}\n.f90",
    "c\x1b[2J.f90"])
def test_depfile_refuses_a_file_name_it_cannot_hold(name, tmp_path):
    (tmp_path / name).write_text(SAXPY)
    result = invoke(["translate", "--depfile", "deps.d", name], tmp_path)
    assert result.exit_code == 2, result.output
    assert "which a depfile cannot hold" in result.stderr
    assert files_in(tmp_path) == [name]               # nothing written, not even outputs
    assert_safe(tmp_path, result.stdout, result.stderr)


def test_depfile_refuses_what_make_would_read(tmp_path):
    """Spaces are escaped; '#', '$' and backslashes in file names are
    refused (tests/security/test_sec_depfiles.py builds with make and cmake)."""
    name = "we ird#$(shell touch SENTINEL)\\ x.f90"
    (tmp_path / name).write_text(SAXPY)
    result = invoke(["translate", "--depfile", "deps.d", name], tmp_path)
    assert result.exit_code == 2, result.output
    assert "which a depfile cannot hold" in result.stderr
    assert files_in(tmp_path) == [name]
    assert_safe(tmp_path, result.stdout, result.stderr)

# }}}
