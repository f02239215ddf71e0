"""The rest of round 3 (issue 29, item 12): concurrent ``tune`` runs, a
tuning record whose name cannot exist, ``tune --plot`` and mathtext, a chain
of modules each using the next, a read-only cache under ``f2loopyfc``, and a
UTF-8 byte order mark.
"""

from __future__ import annotations

import multiprocessing
import tempfile
from pathlib import Path

import pytest

from security_util import SAXPY, run_cli


# {{{ modules that use one another

def _chain(n: int) -> str:
    mods = []
    for k in range(n):
        use = f"  use m{k + 1}\n" if k + 1 < n else ""
        mods.append(f"module m{k}\n{use}  implicit none\n  real, parameter :: c{k} = {k}.0\n"
                    f"end module m{k}\n")
    return "\n".join(reversed(mods))


USER = ("subroutine s(n, a)\n  use m0\n  implicit none\n  integer n\n  real a(n)\n"
        "  a(1) = c0 + c{last}\nend subroutine\n")


def test_a_chain_of_200_modules_each_using_the_next_translates(tmp_path):
    from f2loopy.pipeline import translate_file
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "chain.f90").write_text(_chain(200))
    (tmp_path / "s.f90").write_text(USER.format(last=199))
    result = translate_file(tmp_path / "s.f90", include_dirs=[tmp_path / "mods"])
    assert "199.0f" in result.outputs[tmp_path / "s.cl"]


def test_a_chain_deeper_than_the_limit_is_a_located_error(tmp_path):
    from f2loopy.diagnostics import FortranError
    from f2loopy.frontend.units import MAX_USE_DEPTH
    from f2loopy.pipeline import translate_text
    n = MAX_USE_DEPTH + 20
    with pytest.raises(FortranError) as info:
        translate_text(_chain(n) + "\n" + USER.format(last=n - 1), tmp_path / "s.f90")
    assert f"more than {MAX_USE_DEPTH} levels deep" in info.value.message
    assert info.value.span is not None and info.value.span.line > 1

# }}}


def test_a_utf8_byte_order_mark_is_skipped(tmp_path):
    """gfortran skips it; the file, and a module on -I, translate."""
    from f2loopy.pipeline import translate_file
    (tmp_path / "k.f90").write_bytes(b"\xef\xbb\xbf" + SAXPY.encode())
    result = translate_file(tmp_path / "k.f90")
    assert "__kernel" in result.outputs[tmp_path / "k.cl"]
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "m.f90").write_bytes(
        b"\xef\xbb\xbfmodule bm\n  real, parameter :: c = 2.0\nend module\n")
    (tmp_path / "u.f90").write_text("subroutine u(n, a)\n  use bm\n  integer n\n  real a(n)\n"
                                    "  a(1) = c\nend subroutine\n")
    result = translate_file(tmp_path / "u.f90", include_dirs=[tmp_path / "inc"])
    assert "2.0f" in result.outputs[tmp_path / "u.cl"]


# {{{ tuning records

def _store_many(args):
    source, which, count = args
    from f2loopy.tuning_record import store_entry
    for k in range(count):
        store_entry(source, "text", defines=None, transform=None, device=f"dev{which}",
                    sizes={"n": 1000 * which + k}, values={"tile": 8}, measurements={})


@pytest.mark.usefixtures("python_process")
def test_concurrent_stores_keep_every_entry(tmp_path):
    """Two ``tune`` runs store at once (two devices, one checkout): each
    read-merge-replace must see the other's entries."""
    from f2loopy.tuning_record import read_record, record_path
    source = tmp_path / "k.f90"
    count = 15
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        pool.map(_store_many, [(source, 1, count), (source, 2, count)])
    entries = read_record(record_path(source))
    assert sorted(e.sizes["n"] for e in entries) == \
        sorted([1000 + k for k in range(count)] + [2000 + k for k in range(count)])


@pytest.mark.usefixtures("python_process")
def test_a_record_name_too_long_fails_before_tuning(tmp_path):
    """A source name of 245 characters and more: its record (the name and
    '.tune.json') cannot exist past 255 bytes; tune says so at once instead
    of after the whole run."""
    name = "k" * 245 + ".f90"
    (tmp_path / name).write_text(SAXPY + "!$loopy begin\n! knl, = parse_fortran(SOURCE, "
                                 "FILENAME)\n! t = tunable('tile', [4, 8])\n"
                                 "! RESULT = [knl]\n!$loopy end\n")
    proc = run_cli(["tune", "--size", "n=64", name], tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "longer than the 255 bytes the file system allows" in proc.stderr, proc.stderr
    assert "tune: [1/" not in proc.stderr          # nothing was tuned
    assert "Traceback" not in proc.stderr


def test_tune_plot_draws_a_file_name_as_plain_text(tmp_path):
    pytest.importorskip("matplotlib")
    from f2loopy.tune.command import TuneReport, Variant, plot_tune
    variants = [Variant({"tile": 4}, "ok", 1.0), Variant({"tile": 8}, "failed")]
    report = TuneReport(str(tmp_path / "bad$\\frac{1}{$x.f90"), "dev $\\alpha", {}, {},
                        {"tile": (4, 8)}, "exhaustive", variants)
    report.best = variants[0]
    plot_tune(report, tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 0

# }}}


@pytest.mark.usefixtures("gfortran", "gcc")     # the wrapper builds its runtime
def test_the_wrapper_builds_its_runtime_when_the_cache_cannot_be_written(tmp_path, monkeypatch):
    """A cache folder the user owns but cannot write (read-only file system,
    mode 0500: root ignores modes, so the refusal is injected): the runtime
    is built for this process, as translate works without the cache."""
    from f2loopy import wrapper
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("F2LOOPY_CACHE_DIR", str(cache))
    real_mkdtemp = tempfile.mkdtemp

    def read_only(*args, dir=None, **kwargs):
        if dir is not None and Path(dir) == cache:
            raise PermissionError(13, "Permission denied", str(dir))
        return real_mkdtemp(*args, dir=dir, **kwargs)
    monkeypatch.setattr(wrapper.tempfile, "mkdtemp", read_only)
    target = wrapper.runtime_build(["gfortran"])
    assert (target / "libf2loopy_runtime.a").is_file()
    assert not [p for p in cache.iterdir() if p.name.startswith(".runtime.")]
