"""Each sandbox layer holds on its own, and the parent trusts nothing the
child sends.

The hostile corpus is stopped by the first layer that sees it (usually the
static checks).  Here single layers are switched off (a test-only option of
:func:`f2loopy.directives.run_transformations`) so that the escapes reach the
next layer: the audit hook, then seccomp, then the resource limits.
"""

from __future__ import annotations

import json
import time

import pytest

from f2loopy.diagnostics import SandboxViolation, ScriptError
from f2loopy.directives import Limits, run_transformations, seccomp
from f2loopy.directives.recipes import available_recipes
from f2loopy.directives.runner import _AnswerReader
from f2loopy.frontend import read_source, translate_source
from f2loopy.ir.serialize import encode_kernel

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
FIRST = len(SAXPY.splitlines()) + 2
LIMITS = Limits(cpu_s=2, wall_s=30, memory_mb=256)
RESULT = "k, = parse_fortran(SOURCE, FILENAME)\nRESULT = k"


def source(script):
    text = SAXPY + "!$loopy begin\n" + "".join(f"! {s}\n" for s in script.splitlines()) \
        + "!$loopy end\n"
    return read_source(text, "t.f90")


def run(script, tmp_path, layers, **defines):
    src = source(script)
    defines = {"TARGET": str(tmp_path / "target.txt"), **defines}
    return run_transformations(src, list(translate_source(src)), defines, None,
                               limits=LIMITS, layers=layers)


NO_CHECKS = {"checks": False}
BARE = {"checks": False, "builtins": False}
SECCOMP_ONLY = {"checks": False, "builtins": False, "audit": False}
RLIMITS_ONLY = {"checks": False, "builtins": False, "audit": False, "seccomp": False}

needs_seccomp = pytest.mark.skipif(not seccomp.supported(), reason="seccomp filter is x86-64 only")


@pytest.mark.usefixtures("sandbox_process")
def test_all_layers_are_on_by_default(tmp_path):
    out = run(RESULT, tmp_path, None)
    assert out.layers == {"rlimits": True, "seccomp": seccomp.supported(), "audit": True,
                          "checks": True, "builtins": True}


# {{{ the audit hook alone (no static checks, real builtins)

@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("script, message", [
    # the classic escape: object's subclasses -> os._wrap_close -> os.system
    ("[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close']"
     "[0].__init__.__globals__['system']('touch ' + TARGET)",
     "the transformation script may not start processes (os.system)"),
    ("open(TARGET, 'w').write('x')",
     "the transformation script may not open files ('{target}')"),
    ("import os\nos.remove(TARGET)",
     "the transformation script may not touch the file system (os.remove: {target})"),
    ("import os\nos.kill(os.getppid(), 9)",
     "the transformation script may not send signals (os.kill)"),
    ("import sys\nf = sys._getframe()",
     "the transformation script may not inspect the interpreter (sys._getframe)"),
    ("exec('x = 1')",
     "the transformation script may not compile or run new code (compile)"),
    ("import xml.dom.minidom",
     "the transformation script may not import 'xml.dom.minidom'"),
    ("import ctypes\nctypes.CDLL('libc.so.6')",
     "the transformation script may not load native code (ctypes.dlopen: libc.so.6)"),
])
def test_audit_hook_alone(script, message, tmp_path):
    with pytest.raises(SandboxViolation) as info:
        run(script, tmp_path, BARE)
    assert info.value.message == message.format(target=tmp_path / "target.txt")
    assert info.value.span.filename == "t.f90" and info.value.span.line >= FIRST
    assert not (tmp_path / "target.txt").exists()


@pytest.mark.usefixtures("sandbox_process")
def test_builtins_and_import_proxies_alone(tmp_path):
    # static checks off: dunder access is possible, but what the namespace
    # offers leads nowhere (proxies hold no modules, __import__ hands out
    # nothing but the proxies, C-level imports get None)
    out = run("import loopy as lp\n"
              "names = ['os', 'sys', 'fnmatch', 're', 'builtins', 'dataclass', 'TranslationUnit']\n"
              "print([n for n in names if n in lp.match.__dict__ or n in lp.__dict__])\n"
              "print(__import__('numpy', None, None, [], 0))\n"
              "print(__import__('loopy').__name__, 'open' in __builtins__)\n" + RESULT,
              tmp_path, NO_CHECKS)
    assert out.output == "['TranslationUnit']\nNone\nloopy True\n"
    with pytest.raises(SandboxViolation) as info:
        run("open('/etc/passwd')", tmp_path, NO_CHECKS)
    assert info.value.message == "the transformation script may not use 'open' (not available in the sandbox)"

# }}}


# {{{ seccomp alone

@pytest.mark.usefixtures("sandbox_process")
@needs_seccomp
def test_seccomp_alone(tmp_path):
    existing = tmp_path / "existing.txt"
    existing.write_text("precious")
    out = run("""\
import os, socket
results = []
def attempt(name, f):
    try:
        f()
        results.append(name + ' ALLOWED')
    except OSError as e:
        results.append(name + ' ' + type(e).__name__)
attempt('write', lambda: open(TARGET, 'w'))
attempt('read', lambda: open('/etc/hostname').read())
attempt('unlink', lambda: os.unlink(EXISTING))
attempt('socket', lambda: socket.socket())
attempt('fork', lambda: os.fork())
attempt('kill parent', lambda: os.kill(os.getppid(), 0))
print(os.system('touch ' + TARGET))
print(*results, sep=chr(10))
""" + RESULT, tmp_path, SECCOMP_ONLY, EXISTING=str(existing))
    lines = out.output.splitlines()
    assert lines[0] != "0"                          # no shell could be started
    assert lines[1:] == ["write PermissionError", "read PermissionError",
                         "unlink PermissionError", "socket PermissionError",
                         "fork PermissionError", "kill parent PermissionError"]
    assert not (tmp_path / "target.txt").exists() and existing.read_text() == "precious"


def test_seccomp_filter_program_is_well_formed():
    prog = seccomp.build_filter(1234)
    assert len(prog) % 8 == 0 and 40 < len(prog) // 8 < 256

# }}}


# {{{ resource limits alone

@pytest.mark.usefixtures("sandbox_process")
def test_memory_limit_alone(tmp_path):
    with pytest.raises(SandboxViolation) as info:
        run("x = bytearray(10 ** 9)", tmp_path, RLIMITS_ONLY)
    assert info.value.message == ("the transformation script ran out of memory (the sandbox "
                                  "allows 256 MiB)")


@pytest.mark.usefixtures("sandbox_process")
def test_descriptor_limit_alone(tmp_path):
    with pytest.raises(ScriptError) as info:
        run("f = open(TARGET, 'w')", tmp_path, RLIMITS_ONLY)
    assert info.value.message.startswith("OSError: [Errno 24] Too many open files")
    assert not (tmp_path / "target.txt").exists()


@pytest.mark.usefixtures("sandbox_process")
def test_file_size_limit_alone(tmp_path):
    # Python ignores SIGXFSZ, so the write fails with EFBIG
    with pytest.raises(ScriptError) as info:
        run("import os\nos.close(0)\nf = open(TARGET, 'w')\nf.write('x' * 100000)\nf.flush()",
            tmp_path, RLIMITS_ONLY)
    assert info.value.message == "OSError: [Errno 27] File too large"
    assert info.value.span.line == FIRST + 3
    assert (tmp_path / "target.txt").stat().st_size == 0


@pytest.mark.usefixtures("sandbox_process")
def test_descendants_are_killed_with_the_child(tmp_path):
    out = run("import os, time\npid = os.fork()\nif pid == 0:\n    os.close(3)\n"
              "    time.sleep(60)\n    os._exit(0)\nprint(pid)\n" + RESULT,
              tmp_path, RLIMITS_ONLY)
    pid = int(out.output)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] in "ZX":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.01)
    else:
        pytest.fail(f"grandchild {pid} survived the sandbox")


@pytest.mark.usefixtures("sandbox_process")
def test_wall_clock_kill_from_the_parent(tmp_path):
    # sleeping uses no CPU; the soft alarm is caught, so the parent must kill
    start = time.monotonic()
    with pytest.raises(SandboxViolation) as info:
        src = source("import time\nwhile True:\n    try:\n        time.sleep(100)\n"
                     "    except BaseException:\n        pass")
        run_transformations(src, list(translate_source(src)), {}, None,
                            limits=Limits(cpu_s=5, wall_s=0.5, memory_mb=256),
                            layers=RLIMITS_ONLY)
    assert info.value.message == ("the transformation script ran longer than 0.5 s (the "
                                  "sandbox limit) and was stopped")
    assert info.value.span.line == FIRST - 1
    assert time.monotonic() - start < 5

# }}}


# {{{ the parent validates the child's answer

def reader():
    src = source(RESULT)
    return _AnswerReader(src, available_recipes(), False), src


def answer(**fields):
    base = {"format": "f2loopy-sandbox", "version": 1, "ok": True, "table": [],
            "result": [], "checkpoints": [], "recipes": [], "output": ""}
    base.update(fields)
    return json.dumps(base)


def test_parent_refuses_non_json_and_pickles():
    import pickle
    r, _ = reader()
    for text in [pickle.dumps({"ok": True}).decode("latin-1"), "NaN", "[1, 2", ""]:
        with pytest.raises(ScriptError) as info:
            r.read(text)
        assert info.value.message.startswith("the transformation sandbox sent an invalid answer")


def test_parent_validates_kernels_and_references():
    r, src = reader()
    good = encode_kernel(translate_source(src)[0])
    bad = dict(good, name="x; system('id')")
    cases = [
        (answer(table=[bad], result=[0]), "invalid name"),
        (answer(table=[good], result=[1]), "bad kernel references in the result"),
        (answer(table=[good], result=[0, 0]), "duplicate kernel names"),
        (answer(table=[good], result=[]), "no kernels"),
        (answer(format="other"), "unknown format"),
        (answer(table=[good], result=[0], checkpoints=[{"label": "x", "kernels": ["0"]}]),
         "bad kernel references in a checkpoint"),
    ]
    for text, why in cases:
        with pytest.raises(ScriptError) as info:
            r.read(text)
        assert why in info.value.message
    out = r.read(answer(table=[good], result=[0], recipes=["gpu_tiling", "/etc/passwd"],
                        output="a\x1b[2Jb"))
    assert [k.name for k in out.kernels] == ["saxpy"]
    assert [p.name for p in out.inputs] == ["gpu_tiling.py"]
    assert out.output == "a?[2Jb"


def test_parent_checks_error_locations():
    r, src = reader()
    err = {"sandbox": True, "message": "no\x07bell" + "x" * 5000,
           "at": {"unit": "block", "index": 0, "line": 10 ** 6, "col": -4},
           "notes": [{"message": "n", "at": {"unit": "recipe", "name": "../../etc/passwd",
                                              "line": 1}},
                     {"message": "m", "at": {"unit": "span", "filename": "/etc/shadow",
                                              "line": 1, "col": 1, "length": 3}}]}
    with pytest.raises(SandboxViolation) as info:
        r.read(json.dumps({"format": "f2loopy-sandbox", "version": 1, "ok": False,
                           "error": err}))
    exc = info.value
    assert exc.message.startswith("no?bell") and len(exc.message) == 2000
    assert exc.span.line == FIRST - 1                  # out of range: the block's begin line
    assert exc.notes[0] == ("n", None)
    assert exc.notes[1][1].filename == "/etc/shadow" and exc.notes[1][1].text == ""

# }}}
