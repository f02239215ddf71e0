"""Attacks on the transformation sandbox (issue 14, classes 2, 3, 4 and 7):
reading secrets in-process, native memory through numpy, unbounded work in
the parent, and system calls past the seccomp filter.

Every attack runs ``f2loopy translate`` in this process (the sandbox forks
from it) with a secret in the environment, and must end with exit status 1
and a located error naming what was refused, with no sentinel file, no output
written, the secret nowhere in what was printed, no process left behind and
the parent unchanged.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import time

import pytest
from click.testing import CliRunner

from f2loopy.cli import main
from f2loopy.diagnostics import SandboxViolation
from f2loopy.directives import Limits, run_transformations, seccomp
from f2loopy.directives.recipes import available_recipes
from f2loopy.directives.runner import _AnswerReader
from f2loopy.frontend import read_source, translate_source
from f2loopy.ir.serialize import encode_kernel

SECRET = "f2l-secret-7f3a91c4-do-not-leak"
FORTRAN = """\
subroutine saxpy(n, a, x, y)
  implicit none
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a*x(i) + y(i)
  end do
end subroutine
"""
BEGIN = len(FORTRAN.splitlines()) + 1
PARSE = "from loopy import *\nk, = parse_fortran(SOURCE, FILENAME)\n"
#: the same without an import (the layer tests run without the script's importer)
BARE_PARSE = "k, = parse_fortran(SOURCE, FILENAME)\n"
needs_seccomp = pytest.mark.skipif(not seccomp.supported(), reason="seccomp filter is x86-64 only")


def fortran_with(script: str) -> str:
    return (FORTRAN + "!$loopy begin\n" + "".join(f"! {s}\n" for s in script.splitlines())
            + "!$loopy end\n")


def _children() -> set:
    """Processes whose parent is this one (zombies included)."""
    me, out = str(os.getpid()), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                out.add(entry)
    return out


def _state():
    return {"cwd": os.getcwd(), "env": dict(os.environ),
            "limits": [resource.getrlimit(r) for r in (
                resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_NOFILE,
                resource.RLIMIT_FSIZE)],
            "handlers": [signal.getsignal(s) for s in (signal.SIGALRM, signal.SIGXCPU)]}


def attack(script, tmp_path, monkeypatch, *, line=None, expect=None, args=()):
    """Translate a file with *script*; check that it failed cleanly and return
    the printed text."""
    monkeypatch.setenv("F2LOOPY_TEST_SECRET", SECRET)
    monkeypatch.setenv("F2LOOPY_SCRIPT_CPU_LIMIT", "10")
    monkeypatch.setenv("F2LOOPY_SCRIPT_WALL_LIMIT", "20")
    monkeypatch.setenv("F2LOOPY_SCRIPT_MEMORY_LIMIT", "512")
    work = tmp_path / "work"
    work.mkdir()
    src = work / "t.f90"
    src.write_text(fortran_with(script))
    target = tmp_path / "sentinel.txt"
    before, kids = _state(), _children()
    result = CliRunner().invoke(main, ["translate", *args, "-D", f"TARGET={target}",
                                       str(src)])
    text = result.output
    assert result.exit_code == 1, text
    assert SECRET not in text
    if line is not None:
        assert f"t.f90:{BEGIN + line}:" in text, text
    if expect is not None:
        assert f"error: {expect}" in text, text
    assert "Traceback" not in text
    assert not target.exists()
    assert sorted(p.name for p in work.iterdir()) == ["t.f90"]       # nothing written
    assert _children() <= kids                                         # nobody left
    assert _state() == before
    return text


REFUSE = "the transformation script may not "

# {{{ class 2: secrets read in-process (attribute names in every spelling)

SECRET_ATTACKS = {
    "match_keyword_format": (
        "match '{0.__globals__}':\n    case str(format=f):\n        print(f(parse_fortran))",
        2, REFUSE + "match attributes by keyword in a class pattern ('format=')"),
    "match_keyword_format_map": (
        "match 'x':\n    case str(format_map=f):\n        pass",
        2, REFUSE + "match attributes by keyword in a class pattern ('format_map=')"),
    "getattr_format": (
        "f = getattr('{0.__globals__}', 'format')\nprint(f(parse_fortran))",
        1, REFUSE + "call '.format' here"),
    "getattr_format_map_default": (
        "f = getattr('{x.__globals__}', 'format_map', None)",
        1, REFUSE + "call '.format_map' here"),
    "computed_name": (
        "n = '_' + '_glob' + 'als__'\nprint(getattr(parse_fortran, n))",
        2, REFUSE + "access '__globals__'"),
    "reduce_getattr": (
        "import functools\nf = functools.reduce(getattr, ['format'], '{0.x}')",
        2, REFUSE + "call '.format' here"),
    "map_getattr": (
        "print(list(map(getattr, ['{0}'], ['format_map'])))",
        1, REFUSE + "call '.format_map' here"),
    "hasattr_probe": ("print(hasattr(parse_fortran, '__wrapped__'))", 1,
                      REFUSE + "access '__wrapped__'"),
    "str_format_unbound": ("f = str.format\nprint(f('{0.__globals__}', parse_fortran))", 1,
                           REFUSE + "call '.format' here"),
    "attrgetter": ("import operator\ng = operator.attrgetter('__globals__')", 2,
                   "AttributeError: module 'operator' has no attribute 'attrgetter'"),
    "methodcaller": ("import operator\ng = operator.methodcaller('format')", 2,
                     "AttributeError: module 'operator' has no attribute 'methodcaller'"),
    "format_spec_fields": ("print(format(parse_fortran, '{0.__globals__}'))", 1,
                           "TypeError: unsupported format string passed to"),
    "vars_of_function": ("print(vars(parse_fortran))", 1, REFUSE + "use 'vars'"),
    "type_dict": ("print(type(parse_fortran))", 1, REFUSE + "use 'type'"),
    "traceback_frame": (
        "try:\n    1/0\nexcept Exception as e:\n    t = getattr(e, 'with_traceback')",
        4, REFUSE + "access 'with_traceback' of a ZeroDivisionError object"),
    "generator_frame": ("g = (x for x in [1])\nfr = getattr(g, 'gi' + '_frame')", 2,
                        REFUSE + "access 'gi_frame'"),
    "generator_code": ("g = (x for x in [1])\nprint(g.gi_code)", 2, REFUSE + "access 'gi_code'"),
    "function_attribute": ("f = lambda: 0\nprint(getattr(f, 'func_globals'))", 2,
                           REFUSE + "access 'func_globals'"),
    "numpy_function_internals": ("import numpy as np\nprint(np.sum.func)", 2,
                                 REFUSE + "access 'func' of a"),
    "isl_dump": (PARSE + "k.domains[0].dump()", 3, REFUSE + "access 'dump'"),
    "module_of_api_object": (PARSE + "print(getattr(k, 'copy').func_globals)", 3,
                             REFUSE + "access 'func_globals'"),
    "decorator_getattr": (
        "import functools\n@functools.partial(getattr, parse_fortran)\ndef f(): pass",
        2, "TypeError: attribute name must be a string"),
    "environ_through_match_pos": (
        "match parse_fortran:\n    case object(__globals__=g):\n        pass",
        2, REFUSE + "access '__globals__'"),
}


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("name", sorted(SECRET_ATTACKS))
def test_secret_reading_attacks(name, tmp_path, monkeypatch):
    script, line, expect = SECRET_ATTACKS[name]
    attack(script, tmp_path, monkeypatch, line=line, expect=expect)

# }}}


# {{{ class 3: native memory through numpy

MEMORY_ATTACKS = {
    "ndarray_negative_offset": (
        "import numpy as np\nb = np.zeros(4)\n"
        "a = np.ndarray((8,), np.uint8, buffer=b, offset=-32)",
        3, "TypeError: np.ndarray(...) is not available in transformation scripts"),
    "frombuffer": ("import numpy as np\na = np.frombuffer(b'abcd', np.uint8)", 2,
                   "AttributeError: module 'numpy' has no attribute 'frombuffer'"),
    "as_strided": ("import numpy as np\nf = np.lib.stride_tricks.as_strided", 2,
                   "AttributeError: module 'numpy' has no attribute 'lib'"),
    "ctypes_attribute": ("import numpy as np\np = np.zeros(3).ctypes", 2,
                         REFUSE + "access 'ctypes'"),
    "data_attribute": ("import numpy as np\nm = np.zeros(3).data", 2,
                       REFUSE + "access 'data' of a ndarray object"),
    "array_interface": ("import numpy as np\nm = np.zeros(3).__array_interface__", 2,
                        REFUSE + "access '__array_interface__'"),
    "ctypeslib": ("import numpy as np\nc = np.ctypeslib", 2,
                  "AttributeError: module 'numpy' has no attribute 'ctypeslib'"),
    "memmap": ("import numpy as np\nm = np.memmap(TARGET, mode='w+', shape=(4,))", 2,
               REFUSE + "access 'memmap'"),
    "fromfile": ("import numpy as np\nm = np.fromfile('/etc/passwd')", 2,
                 REFUSE + "access 'fromfile'"),
    "load": ("import numpy as np\nm = np.load(TARGET)", 2,
             "AttributeError: module 'numpy' has no attribute 'load'"),
    "tofile": ("import numpy as np\nnp.zeros(3).tofile(TARGET)", 2, REFUSE + "access 'tofile'"),
    "view_reinterpret": ("import numpy as np\nv = np.zeros(3).view(np.int64)", 2,
                         REFUSE + "access 'view' of a ndarray object"),
    "base_attribute": ("import numpy as np\nb = np.zeros(3)[1:].base", 2,
                       REFUSE + "access 'base' of a ndarray object"),
    "structured_dtype": ("import numpy as np\nd = np.dtype([('a', 'f4', (2,))])", 2,
                         "TypeError: np.dtype(list): transformation scripts may only use plain "
                         "numeric dtypes"),
    "void_dtype_text": ("import numpy as np\nd = np.dtype('V16')", 2,
                        "TypeError: np.dtype('V16'): transformation scripts may only use "
                        "plain numeric dtypes"),
    "object_scalar": ("import numpy as np\no = np.object_", 2,
                      "AttributeError: module 'numpy' has no attribute 'object_'"),
    "setflags": ("import numpy as np\nnp.zeros(3).setflags(write=True)", 2,
                 REFUSE + "access 'setflags' of a ndarray object"),
}


@pytest.mark.usefixtures("sandbox_process")
@pytest.mark.parametrize("name", sorted(MEMORY_ATTACKS))
def test_native_memory_attacks(name, tmp_path, monkeypatch):
    script, line, expect = MEMORY_ATTACKS[name]
    attack(script, tmp_path, monkeypatch, line=line, expect=expect)


@pytest.mark.usefixtures("sandbox_process")
def test_numpy_arithmetic_stays_available(tmp_path):
    out = run_script(
        "import numpy as np\na = np.arange(6.0).reshape(2, 3)\n"
        "print(a.sum(), a.T.shape, a.astype(np.float32).dtype, isinstance(a, np.ndarray))\n"
        "print(np.dtype('float32'), np.dtype(np.int64).itemsize, np.empty(3).tolist())\n"
        "print(np.linalg.norm(np.ones(4)), np.float32(1.5).item(), np.add.reduce([1, 2]))\n"
        + PARSE + "RESULT = k", tmp_path)
    assert out.output == ("15.0 (3, 2) float32 True\nfloat32 8 [0.0, 0.0, 0.0]\n"
                          "2.0 1.5 3\n")

# }}}


# {{{ class 7: system calls past the filter

def run_script(script, tmp_path, layers=None, limits=None, **defines):
    text = fortran_with(script)
    src = read_source(text, "t.f90")
    return run_transformations(src, list(translate_source(src)),
                               {"TARGET": str(tmp_path / "sentinel.txt"), **defines}, None,
                               limits=limits or Limits(cpu_s=10, wall_s=20, memory_mb=512),
                               layers=layers)


SECCOMP_ONLY = {"checks": False, "builtins": False, "audit": False}
SYSCALL_PROBE = """\
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return 'ok' if r >= 0 else os.strerror(ctypes.get_errno())
"""

#: x86-64 system call numbers with arguments, each of which the filter must refuse
SYSCALLS = {
    "stat": "call(4, ctypes.cast(ctypes.c_char_p(b'/etc/passwd'), ctypes.c_void_p).value, "
            "ctypes.addressof(ctypes.create_string_buffer(256)))",
    "newfstatat": "call(262, -100, ctypes.cast(ctypes.c_char_p(b'/'), ctypes.c_void_p).value, "
                  "ctypes.addressof(ctypes.create_string_buffer(256)), 0)",
    "rt_sigqueueinfo": "call(129, VICTIM, 9, ctypes.addressof(ctypes.create_string_buffer(128)))",
    "kill_other": "call(62, VICTIM, 9)",
    "kill_group": "call(62, 0, 15)",
    "tkill_other": "call(200, VICTIM, 9)",
    "tgkill_other": "call(234, VICTIM, VICTIM, 9)",
    "shmget": "call(29, 0, 4096, 0o1600)",
    "msgget": "call(68, 0, 0o1600)",
    "semget": "call(64, 0, 1, 0o1600)",
    "mmap_exec": "call(9, 0, 4096, 7, 0x22, -1, 0)",
    "prlimit_raise": "call(302, 0, 7, ctypes.addressof(ctypes.create_string_buffer(16)), 0)",
    "ptrace": "call(101, 16, VICTIM, 0, 0)",
    "socket": "call(41, 2, 1, 0)",
    "openat": "call(257, -100, ctypes.cast(ctypes.c_char_p(b'/etc/hostname'), "
              "ctypes.c_void_p).value, 0)",
    "fork": "call(57)",
    "uname": "call(63, ctypes.addressof(ctypes.create_string_buffer(512)))",
    "fcntl_setown": "call(72, 3, 8, VICTIM)",
    "fcntl_setsig": "call(72, 3, 10, 9)",
    "fcntl_setfl_async": "call(72, 3, 4, 0o20000)",
    "fcntl_dupfd": "call(72, 3, 0, 10)",
    "getcwd": "call(79, ctypes.addressof(ctypes.create_string_buffer(512)), 512)",
}


FILTERS = ["bpf", pytest.param("libseccomp", marks=pytest.mark.skipif(
    seccomp.load_library() is None, reason="no libseccomp"))]


@pytest.fixture(params=FILTERS)
def filter_kind(request, monkeypatch):
    """The hand-assembled x86-64 filter, and the same allow-list compiled by
    libseccomp (what other architectures use)."""
    if request.param == "bpf" and not seccomp.supported():
        pytest.skip("seccomp filter is x86-64 only")
    monkeypatch.setattr(seccomp, "FORCE_LIBSECCOMP", request.param == "libseccomp")
    return request.param


@pytest.mark.usefixtures("sandbox_process")
def test_filter_refuses_system_calls(tmp_path, filter_kind):
    victim = subprocess.Popen(["sleep", "60"])       # a process the script must not kill
    try:
        probes = "".join(f"print({name!r}, {call})\n" for name, call in SYSCALLS.items())
        out = run_script(SYSCALL_PROBE.replace("VICTIM", str(victim.pid)) +
                         probes.replace("VICTIM", str(victim.pid)) + BARE_PARSE + "RESULT = k",
                         tmp_path, SECCOMP_ONLY)
        assert out.layers["seccomp"] is True
        results = dict(line.split(" ", 1) for line in out.output.splitlines())
        assert results == {name: "Operation not permitted" for name in SYSCALLS}
        assert victim.poll() is None                   # still alive
    finally:
        victim.kill()
        victim.wait()
    assert not (tmp_path / "sentinel.txt").exists()


@pytest.mark.usefixtures("sandbox_process")
def test_filter_lets_the_child_compute(tmp_path, filter_kind):
    # what the child needs: memory, threads, its own signals, clocks, randomness
    out = run_script(SYSCALL_PROBE + "import numpy as np, threading, random\n"
                     "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
                     "print(call(39) , call(318, ctypes.addressof("
                     "ctypes.create_string_buffer(8)), 8, 0), call(62, os.getpid(), 0), "
                     "call(72, 3, 1))\n"
                     "print(float(np.linalg.inv(np.eye(300) * 2).trace()))\n"
                     + BARE_PARSE + "RESULT = k", tmp_path, SECCOMP_ONLY)
    assert out.output == "ok ok ok ok\n150.0\n"


@pytest.mark.usefixtures("sandbox_process")
def test_environment_is_scrubbed_in_the_child(tmp_path, monkeypatch):
    monkeypatch.setenv("F2LOOPY_TEST_SECRET", SECRET)
    out = run_script(SYSCALL_PROBE + "libc.getenv.restype = ctypes.c_char_p\n"
                     "print(os.environ.get('F2LOOPY_TEST_SECRET'), "
                     "libc.getenv(b'F2LOOPY_TEST_SECRET'))\n" + BARE_PARSE + "RESULT = k",
                     tmp_path, SECCOMP_ONLY)
    assert out.output == "None None\n"


def test_scripts_are_refused_without_a_filter(tmp_path, monkeypatch):
    monkeypatch.setattr(seccomp, "supported", lambda: False)
    with pytest.raises(SandboxViolation) as info:
        run_script(PARSE + "RESULT = k", tmp_path)
    assert info.value.message.startswith("the transformation sandbox needs a seccomp filter, "
                                         "which f2loopy has for Linux on x86-64 and, with "
                                         "libseccomp (libseccomp.so.2), on other Linux")
    assert "--trust-scripts" in info.value.message
    assert info.value.span.line == BEGIN


@pytest.mark.usefixtures("sandbox_process")
def test_trust_scripts_runs_without_the_sandbox(tmp_path, monkeypatch):
    monkeypatch.delenv("F2LOOPY_TRUST_SCRIPTS", raising=False)
    src = tmp_path / "t.f90"
    src.write_text(fortran_with(PARSE + "import os\nprint(os.getpid() > 0)\nRESULT = k"))
    result = CliRunner().invoke(main, ["translate", "--trust-scripts", str(src)])
    assert result.exit_code == 0, result.output
    assert "warning: --trust-scripts: transformation scripts run WITHOUT the sandbox" \
        in result.output
    assert "True" in result.output
    assert (tmp_path / "t.cl").exists()
    os.environ.pop("F2LOOPY_TRUST_SCRIPTS", None)

# }}}


# {{{ class 4: work in the parent is bounded

@pytest.mark.usefixtures("sandbox_process")
def test_too_many_checkpoints(tmp_path, monkeypatch):
    attack(PARSE + "for i in range(150):\n    checkpoint(f'c{i}', k)\nRESULT = k", tmp_path,
           monkeypatch, line=4,
           expect="ValueError: checkpoint: at most 100 checkpoints per file")


def _reader():
    src = read_source(fortran_with(PARSE + "RESULT = k"), "t.f90")
    return _AnswerReader(src, available_recipes(), False), encode_kernel(
        translate_source(src)[0])


def _answer(**fields):
    base = {"format": "f2loopy-sandbox", "version": 1, "ok": True, "table": [],
            "result": [0], "checkpoints": [], "recipes": [], "output": ""}
    base.update(fields)
    return json.dumps(base)


def _ors(n):
    return "[n] -> { [i] : 1 <= i <= n and (" + " or ".join(
        f"i mod {p} = 0" for p in range(2, n + 2)) + ") }"


@pytest.mark.parametrize("name,change,expect", [
    ("table", lambda k: {"table": [k] * 1000},
     "1000 distinct kernels (results and checkpoints; at most 200)"),
    ("checkpoints", lambda k: {"table": [k], "checkpoints": [
        {"label": f"c{i}", "kernels": [0]} for i in range(20_000)]},
     "20000 checkpoints (at most 100)"),
    ("instructions", lambda k: {"table": [dict(k, instructions=k["instructions"] * 20_000)]},
     "kernel 'saxpy' with 20000 instructions (at most 10000)"),
    ("disjunctions", lambda k: {"table": [dict(k, domains=[_ors(100)])]},
     "kernel 'saxpy' with a domain of 99 disjunctions (at most 64)"),
    ("assumptions", lambda k: {"table": [dict(k, assumptions="[n] -> { : " + " and ".join(
        f"n mod {p} = 0" for p in range(2, 100)) + " }")]},
     "kernel 'saxpy' with a set of assumptions of 98 mod/floor/exists terms (at most 64)"),
    ("long_name", lambda k: {"table": [dict(k, name="k" * 5000)]},
     "a kernel name of 5000 characters (at most 128)"),
    ("constant_table", lambda k: {"table": [dict(k, temporaries=[{
        "name": "t", "initializer": {"data": [["pyint", "0"]] * 990_000}}])]},
     "kernel 'saxpy' with constant tables of 990000 entries (at most 100000)"),
])
def test_answer_caps(name, change, expect):
    reader, k = _reader()
    start = time.process_time()     # CPU of this process: a busy machine does not count
    with pytest.raises(SandboxViolation) as info:
        reader.read(_answer(**change(k)))
    assert info.value.message == "the transformation script returned " + expect
    assert info.value.span.line == BEGIN
    assert time.process_time() - start < 10


@pytest.mark.usefixtures("sandbox_process")
def test_hard_isl_set_ends_within_the_limits(tmp_path, monkeypatch):
    monkeypatch.setenv("F2LOOPY_SCRIPT_CPU_LIMIT", "3")
    monkeypatch.setenv("F2LOOPY_SCRIPT_WALL_LIMIT", "4")
    script = (PARSE + "ps = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53]\n"
              "c = ' or '.join(f'(n mod {p} = 1 and n mod {q} = 2)' for p in ps for q in ps[:4])\n"
              "RESULT = assume(k, c)")
    src = read_source(fortran_with(script), "t.f90")
    start = time.monotonic()
    with pytest.raises(SandboxViolation) as info:
        run_transformations(src, list(translate_source(src)), {}, None)
    elapsed = time.monotonic() - start
    assert elapsed < 4 + 1.5, elapsed
    assert info.value.span.line == BEGIN
    assert "and were stopped" in info.value.message or "ran longer" in info.value.message


@pytest.mark.usefixtures("sandbox_process")
def test_code_of_script_kernels_comes_from_the_limited_child(tmp_path, monkeypatch):
    import f2loopy.codegen as codegen
    from f2loopy.directives.sandbox import preload
    from f2loopy.pipeline import translate_text
    preload()
    parent, calls, real = os.getpid(), [], codegen._generate_code

    def counting(k):
        if os.getpid() == parent:
            calls.append(k.name)
        return real(k)

    monkeypatch.setattr(codegen, "_generate_code", counting)
    result = translate_text(fortran_with(PARSE + "checkpoint('one', k)\n"
                                         "RESULT = split_iname(k, 'i', 4)"),
                            tmp_path / "t.f90")
    assert calls == [] and len(result.generated) == 1
    assert codegen.generate_code(result.checkpoints[0][1][0]).name == "saxpy"
    assert calls == []
    assert "saxpy" in result.outputs[tmp_path / "t.cl"]

# }}}


def test_isl_work_in_the_parent_has_an_operation_limit():
    import islpy as isl

    from f2loopy.directives.isl_quota import IslQuotaExceeded, isl_operation_limit
    ps = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53]
    hard = isl.Set("[n] -> { : " + " or ".join(
        f"(n mod {p} = 1 and n mod {q} = 2)" for p in ps for q in ps[:4]) + " }")
    start = time.process_time()     # CPU of this process: a busy machine does not count
    with pytest.raises(IslQuotaExceeded), isl_operation_limit(10_000):
        hard.complement().coalesce().complement().coalesce()
    assert time.process_time() - start < 10
    assert isl.DEFAULT_CONTEXT.get_max_operations() == 0       # restored
    assert str(isl.Set("{ [i] : 0 <= i < 4 }").complement()) == "{ [i] : i < 0 or i >= 4 }"
    with isl_operation_limit(10_000):                         # easy work passes
        assert not isl.Set("{ [i] : 0 <= i < 4 }").is_empty()


@pytest.mark.usefixtures("sandbox_process")
def test_ordinary_scripts_stay_allowed(tmp_path):
    script = """\
from loopy import *
import itertools, functools, math, operator, collections, re
import loopy as lp
import numpy as np
k, = parse_fortran(SOURCE, FILENAME)
sizes = [2 ** e for e in range(1, 4)]
best = functools.reduce(operator.mul, itertools.islice(itertools.cycle(sizes), 2))
names = sorted(insn.id for insn in k.instructions)
match k:
    case Kernel():
        kind = 'kernel'
match lp.AddressSpace.LOCAL:
    case lp.AddressSpace.GLOBAL:
        kind = 'wrong'
match [k]:
    case [lp.Kernel()]:
        pass
    case {lp.AddressSpace.LOCAL: 1}:
        kind = 'wrong'
    case _:
        kind = 'wrong'
print(f"{best!r} {math.gcd(12, 18)} {kind} {len(names)} {'-'.join(['a', 'b']).upper()}")
print(collections.Counter('aab').most_common(1), re.fullmatch(r'i', 'i') is not None)
print('{} {}'.format(k.name, np.float32(2) * np.arange(2).sum()), hasattr(k, 'name'))
k = lp.split_iname(k, 'i', best, outer_tag='g.0', inner_tag='l.0')
checkpoint('split')
RESULT = [k]
"""
    src = tmp_path / "t.f90"
    src.write_text(fortran_with(script))
    result = CliRunner().invoke(main, ["translate", str(src)])
    assert result.exit_code == 0, result.output
    assert result.output == "8 6 kernel 1 A-B\n[('a', 2)] True\nsaxpy 2.0 True\n"
    assert "get_local_id(0)" in (tmp_path / "t.cl").read_text()


@pytest.mark.usefixtures("sandbox_process")
def test_code_generation_errors_come_back_located(tmp_path):
    from f2loopy.diagnostics import CodegenError
    from f2loopy.pipeline import translate_text
    with pytest.raises(CodegenError) as info:
        translate_text(fortran_with(PARSE + "print('shown')\nRESULT = tag_inames(k, 'i:unr')"),
                       tmp_path / "t.f90")
    assert info.value.message.startswith("cannot unroll loop 'i': its length is not a constant")
    assert (info.value.span.line, info.value.span.text) == (1, "subroutine saxpy(n, a, x, y)")
    assert info.value.script_output == "shown\n"
