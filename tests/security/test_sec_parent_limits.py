"""The translating process's own work on a downloaded file (issue 29, item 7).

A file without a script is read, ordered and compiled to OpenCL in the
process that runs ``f2loopy``: no sandbox limit covers that work.  Small
files made to explode it (a loop nest whose ``/`` bounds triple isl's
integer divisions per level, ``3**2147483647`` folded with Python integers,
a long subroutine whose program-order dependences were quadratic, a FIFO
reached through ``#include`` on a cache hit) must end with a located error,
nothing written.  The time limits below are generous (the machine may be
slow and shared); what is tested is how the command ends, and for the
dependences a count of the work, not a time.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from security_util import files_in, run_cli, terminal_is_clean


def _division_nest(depth: int) -> str:
    """A loop nest whose bounds divide the outer index: each level's bounds
    need three times the integer divisions of the level above."""
    names = [f"i{k}" for k in range(depth)]
    lines = ["subroutine nest(n, a)", "  implicit none", "  integer n, " + ", ".join(names),
             "  real a(n)"]
    for k, name in enumerate(names):
        lo, hi = ("1", "n") if k == 0 else (f"({names[k-1]}+1)/2", f"({names[k-1]}+n)/3")
        lines.append(f"  do {name} = {lo}, {hi}")
    lines.append("    a(i0) = a(i0) + 1.0")
    lines += ["  end do"] * depth
    lines.append("end subroutine")
    return "\n".join(lines) + "\n"


def _assert_located_refusal(proc, work: Path, name: str, before: list, message: str):
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{name}:" in proc.stderr and "error:" in proc.stderr, proc.stderr
    assert message in proc.stderr, proc.stderr
    assert terminal_is_clean(proc.stderr)
    assert files_in(work) == before, "an output was written"


@pytest.mark.usefixtures("python_process")
def test_a_nest_of_division_bounds_ends_with_a_located_error(tmp_path):
    src = tmp_path / "nest.f90"
    src.write_text(_division_nest(8))
    before = files_in(tmp_path)
    proc = run_cli(["translate", "nest.f90"], tmp_path, timeout=600,
                   env={"F2LOOPY_NO_CACHE": "1"})
    _assert_located_refusal(proc, tmp_path, "nest.f90", before, "too complex")
    # at the statement inside the loop that was refused
    assert "nest.f90:13:" in proc.stderr, proc.stderr


def test_shallow_division_nests_still_translate(tmp_path):
    from f2loopy.pipeline import translate_text
    result = translate_text(_division_nest(3), tmp_path / "nest.f90")
    assert "for (int i2 = " in result.outputs[tmp_path / "nest.cl"]


def test_a_huge_integer_power_is_an_overflow_error_at_once():
    from f2loopy.diagnostics import FortranError
    from f2loopy.pipeline import translate_text
    text = ("subroutine p(n, a)\n  implicit none\n  integer n\n  real a(n)\n"
            "  a(1) = 3**2147483647\nend subroutine\n")
    with pytest.raises(FortranError) as info:
        translate_text(text, Path("p.f90"))
    assert "overflow" in info.value.message
    assert (info.value.span.line, info.value.span.column) == (5, 3)


@pytest.mark.parametrize("base, exponent, value", [
    (2, 30, 2**30), (-2, 31, -2**31), (-1, 2147483647, -1), (-1, 2147483646, 1),
    (1, 2147483647, 1), (0, 2147483647, 0), (7, 0, 1), (0, 0, 1)])
def test_integer_powers_that_fit_fold_exactly(base, exponent, value):
    import numpy as np
    import pymbolic.primitives as p

    from f2loopy.ir.folding import fold_constants
    folded = fold_constants(p.Power(np.int32(base), np.int32(exponent)))
    assert int(folded) == value and folded.dtype == np.int32


@pytest.mark.parametrize("base, exponent", [(2, 31), (3, 2147483647), (-3, 64)])
def test_integer_powers_that_overflow_raise(base, exponent):
    import numpy as np
    import pymbolic.primitives as p

    from f2loopy.ir.folding import fold_constants
    with pytest.raises(OverflowError):
        fold_constants(p.Power(np.int32(base), np.int32(exponent)))


# {{{ program-order dependences

def _long_subroutine(n: int) -> str:
    """*n* statements that all update one scalar and one array element, and
    read another array: every pair of updates conflicts."""
    body = "".join(f"  s = s + x({k % 7 + 1})\n  y(1) = y(1) + s\n" for k in range(n))
    return ("subroutine long(x, y, s)\n  implicit none\n  real x(7), y(3), s\n" + body +
            "end subroutine\n")


def _count_conflict_tests(monkeypatch):
    from f2loopy.analysis.accesses import AccessAnalysis
    calls = [0]
    original = AccessAnalysis.may_conflict

    def counting(self, a, b):
        calls[0] += 1
        return original(self, a, b)
    monkeypatch.setattr(AccessAnalysis, "may_conflict", counting)
    return calls


def test_program_order_dependences_are_near_linear(monkeypatch):
    from f2loopy.frontend import parse_fortran
    calls = _count_conflict_tests(monkeypatch)
    n = 300
    kernel = parse_fortran(_long_subroutine(n), "long.f90").kernels[0]
    statements = 2 * n
    # every pair used to be tested (and depended on): about statements**2/2
    assert calls[0] <= 10 * statements, calls[0]
    assert sum(len(i.depends_on) for i in kernel.instructions) <= 4 * statements


def _closure(kernel) -> dict:
    deps = {i.id: set(i.depends_on) for i in kernel.instructions}
    out: dict = {}
    for insn in kernel.instructions:          # program order: deps point back
        reach = set()
        for d in deps[insn.id]:
            reach |= {d} | out[d]
        out[insn.id] = reach
    return out


def _all_pairs(kernel) -> dict:
    """Every conflicting earlier instruction, pair by pair (the definition)."""
    from f2loopy.analysis.accesses import AccessAnalysis, instruction_accesses
    analysis = AccessAnalysis(kernel)
    accs = [(pos, a) for pos, i in enumerate(kernel.instructions)
            for a in instruction_accesses(kernel, i)]
    out: dict = {i.id: set() for i in kernel.instructions}
    for pb, b in accs:
        for pa, a in accs:
            if pa < pb and a.name == b.name and (a.is_write or b.is_write) and \
                    analysis.may_conflict(a, b):
                out[b.insn_id].add(a.insn_id)
    return out


ORDERING = """\
subroutine mix(n, a, b, s, t)
  implicit none
  integer n, i, j
  real a(n), b(n), s, t
  s = 0
  do i = 1, n
    a(i) = b(i) + s
    s = s + a(i)
    if (a(i) > 0) a(i) = a(i) - t
  end do
  t = s
  do i = 2, n
    b(i) = a(i-1) * t
    a(i) = a(i) + 1
  end do
  a(1) = b(2)
  a(1) = a(1) + s
  do j = 1, n
    b(j) = a(j)
    a(j) = 2*a(j)
    a(j) = a(j) + b(j)
  end do
  s = a(n) + b(1)
end subroutine
"""


def test_fewer_dependences_impose_the_same_order():
    """The dependences kept order the statements exactly as every
    conflicting pair does (the same transitive closure)."""
    from f2loopy.frontend import parse_fortran
    kernel = parse_fortran(ORDERING, "mix.f90").kernels[0]
    kept = _closure(kernel)
    stripped = kernel.copy(instructions=tuple(i.copy(depends_on=frozenset())
                                              for i in kernel.instructions))
    full = _all_pairs(stripped)
    every = _closure(stripped.copy(instructions=tuple(
        i.copy(depends_on=frozenset(full[i.id])) for i in stripped.instructions)))
    assert kept == every
    assert sum(map(len, full.values())) > sum(len(i.depends_on) for i in kernel.instructions)


def test_too_many_overlapping_accesses_is_a_located_error(monkeypatch):
    from f2loopy.analysis import dependences
    from f2loopy.diagnostics import FortranError
    from f2loopy.frontend import parse_fortran
    monkeypatch.setattr(dependences, "MAX_PAIR_TESTS", 50)
    # even elements written, odd ones read: no two statements conflict, so
    # no dependence found implies another and every pair is tested
    body = "".join(f"  a({2 * k + 2}) = a({2 * k + 3}) + i\n" for k in range(40))
    text = ("subroutine s(n, i, a)\n  implicit none\n  integer n, i\n  real a(n)\n" + body +
            "end subroutine\n")
    with pytest.raises(FortranError) as info:
        parse_fortran(text, "s.f90")
    assert "too many possibly overlapping accesses to 'a'" in info.value.message
    assert info.value.span is not None and info.value.span.line > 5

# }}}


# {{{ FIFOs and devices

@pytest.mark.usefixtures("preprocessor")
def test_a_header_swapped_for_a_fifo_does_not_block_a_cache_hit(tmp_path):
    """The cache checks the included files of an entry: a header that became
    a FIFO (another branch, a downloaded update) must not be opened."""
    (tmp_path / "h.h").write_text("  a(2) = 2.0\n")
    (tmp_path / "s.F90").write_text("subroutine s(n, a)\n  integer n\n  real a(n)\n"
                                    "  a(1) = 1.0\n#include \"h.h\"\nend subroutine\n")
    cache = tmp_path / "cache"
    env = {"F2LOOPY_CACHE_DIR": str(cache)}
    out = tmp_path / "out"
    first = run_cli(["translate", "-o", out, "s.F90"], tmp_path, timeout=300, env=env)
    assert first.returncode == 0, first.stderr
    (tmp_path / "h.h").unlink()
    os.mkfifo(tmp_path / "h.h")
    shutil.rmtree(out)
    proc = run_cli(["translate", "-o", out, "s.F90"], tmp_path, timeout=300, env=env)
    assert proc.returncode == 1, proc.stderr
    assert "s.F90:5:1: error:" in proc.stderr and "not a regular file" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
@pytest.mark.usefixtures("python_process")
def test_a_source_that_is_a_fifo_or_a_device_is_refused_before_it_is_opened(tmp_path, kind):
    if kind == "fifo":
        os.mkfifo(tmp_path / "k.f90")
    else:
        (tmp_path / "k.f90").symlink_to("/dev/zero")
    before = files_in(tmp_path)
    for command in (["translate", "k.f90"], ["show", "k.f90"]):
        proc = run_cli(command, tmp_path, timeout=300)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "cannot read k.f90: not a regular file" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    assert files_in(tmp_path) == before

# }}}


@pytest.mark.usefixtures("python_process")
def test_a_source_linked_to_proc_environ_does_not_print_the_environment(tmp_path):
    """/proc/self/environ is a 'regular' file of size 0 that holds the
    environment: a syntax error would show its first line (secrets in a CI
    log)."""
    from security_util import CANARY
    if not Path("/proc/self/environ").exists():
        pytest.skip("no /proc")
    (tmp_path / "env.f90").symlink_to("/proc/self/environ")
    proc = run_cli(["translate", "env.f90"], tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "cannot read env.f90: not a regular file" in proc.stderr, proc.stderr
    assert CANARY not in proc.stdout + proc.stderr
