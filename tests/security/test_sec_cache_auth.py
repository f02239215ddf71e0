"""Issue 29, items 3 and 4: what the cache holds decides nothing unless this
user wrote it.

* Item 4: an entry written by another job of the same account (one CI image
  for every branch, a cache folder restored from another branch's run) was
  served as is, and its ``_cl.py`` runs on import.  Entries now carry an
  HMAC under the user's secret, which lives outside the cache folder.
* Item 3: ``f2loopyfc`` linked ``runtime-<hash>/libf2loopy_runtime.a`` from
  the cache folder without a look (the hash is predictable); a library or a
  ``.mod`` planted there is now never used.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from f2loopy import cache as tcache
from f2loopy.pipeline import output_paths, translate_file

SAXPY = """\
subroutine saxpy(n, a, x, y)
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a * x(i) + y(i)
  end do
end subroutine
"""
PAYLOAD = "import os; os.system('touch PWNED')  # from a colleague's branch"


def _forget_secret() -> None:
    getattr(tcache, "_secret", {}).clear()      # (read once per process)


@pytest.fixture
def shared_cache(tmp_path, monkeypatch):
    """A cache folder two jobs share, and the victim's own secret."""
    d = tmp_path / "cache"
    monkeypatch.setenv("F2LOOPY_CACHE_DIR", str(d))
    monkeypatch.setenv("F2LOOPY_CACHE_KEY", str(tmp_path / "victim" / "cache-key"))
    monkeypatch.delenv("F2LOOPY_NO_CACHE", raising=False)
    _forget_secret()
    yield d
    _forget_secret()


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "saxpy.f90"
    p.write_text(SAXPY)
    return p


def _poison(entry_path: Path, key: str, secret: bytes | None) -> None:
    """Put the payload into an entry's Python glue, re-signed with *secret*
    (the attacker's own) when given."""
    import json
    data = entry_path.read_bytes()
    mac, sep, body = data.partition(b"\n")
    if not sep:                 # an entry without a MAC (f2loopy before issue 29)
        mac, body = b"", data
    entry = json.loads(body)
    entry["outputs"]["_cl.py"] = PAYLOAD + "\n" + entry["outputs"]["_cl.py"]
    if not mac:
        entry_path.write_bytes(json.dumps(entry).encode())
    elif secret is None:        # edited in place, the MAC left as it was
        entry_path.write_bytes(mac + b"\n" + json.dumps(entry).encode())
    else:
        entry_path.write_bytes(tcache.encode_entry(key, entry, secret))


def _entry(cache: Path) -> Path:
    (entry,) = [p for p in cache.iterdir() if p.suffix == ".json"]
    return entry


def test_an_entry_of_another_job_is_not_served(shared_cache, src, tmp_path, monkeypatch):
    # the attacker's job: same account and cache folder, its own secret
    monkeypatch.setenv("F2LOOPY_CACHE_KEY", str(tmp_path / "attacker" / "cache-key"))
    _forget_secret()
    translate_file(src, cache=True)
    entry = _entry(shared_cache)
    secret = tcache.secret_key() if hasattr(tcache, "secret_key") else None
    _poison(entry, entry.name[:-5], secret)
    # the victim's job
    monkeypatch.setenv("F2LOOPY_CACHE_KEY", str(tmp_path / "victim" / "cache-key"))
    _forget_secret()
    result = translate_file(src, cache=True)
    assert result.kernels, "the planted entry was served"
    assert PAYLOAD not in result.outputs[output_paths(src)["_cl.py"]]


def test_an_edited_entry_of_ours_is_not_served(shared_cache, src):
    translate_file(src, cache=True)
    assert not translate_file(src, cache=True).kernels          # a hit
    entry = _entry(shared_cache)
    _poison(entry, entry.name[:-5], None)
    result = translate_file(src, cache=True)
    assert result.kernels
    assert PAYLOAD not in result.outputs[output_paths(src)["_cl.py"]]


def test_the_secret_is_private_and_outside_the_cache(shared_cache, src, tmp_path):
    translate_file(src, cache=True)
    key = tmp_path / "victim" / "cache-key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.stat().st_size == tcache.KEY_BYTES
    assert shared_cache not in key.parents


@pytest.mark.parametrize("spoil", ["readable", "link", "short"])
def test_a_secret_others_could_know_turns_the_cache_off(shared_cache, src, tmp_path, spoil,
                                                        capfd):
    key = tmp_path / "victim" / "cache-key"
    key.parent.mkdir()
    if spoil == "readable":
        key.write_bytes(os.urandom(tcache.KEY_BYTES))
        os.chmod(key, 0o644)
    elif spoil == "link":
        (tmp_path / "known").write_bytes(b"k" * tcache.KEY_BYTES)
        os.chmod(tmp_path / "known", 0o600)
        key.symlink_to(tmp_path / "known")
    else:
        key.write_bytes(b"x")
        os.chmod(key, 0o600)
    assert translate_file(src, cache=True).kernels
    assert translate_file(src, cache=True).kernels              # never a hit
    assert not shared_cache.exists() or not list(shared_cache.glob("*.json"))


# {{{ the wrapper's runtime library

needs_compilers = pytest.mark.usefixtures("gfortran", "gcc")


def _planted_library(folder: Path) -> bytes:
    """An archive with one object that is not f2loopy's runtime."""
    c = folder / "evil.c"
    c.write_text("int f2l_planted_marker(void) { return 42; }\n")
    subprocess.run(["cc", "-c", str(c), "-o", str(folder / "evil.o")], check=True)
    lib = folder / "evil.a"
    subprocess.run(["ar", "rcs", str(lib), str(folder / "evil.o")], check=True)
    return lib.read_bytes()


@pytest.mark.gfortran
@needs_compilers
def test_a_planted_runtime_is_never_used(shared_cache, tmp_path):
    from f2loopy import wrapper
    target = wrapper.runtime_build(["gfortran"])
    assert target.parent == shared_cache                        # built once, cached
    assert wrapper.runtime_build(["gfortran"]) == target        # and used again
    planted = _planted_library(tmp_path)
    for attack in ("replaced", "extra_mod", "open_folder", "link"):
        lib = target / "libf2loopy_runtime.a"
        if attack == "replaced":             # same account: owner checks do not help
            lib.write_bytes(planted)
        elif attack == "extra_mod":          # found through the runtime's -I
            (target / "mpi.mod").write_bytes(b"planted")
        elif attack == "open_folder":
            os.chmod(target, 0o777)
        else:
            elsewhere = tmp_path / "elsewhere"
            shutil.copytree(target, elsewhere)
            (elsewhere / "libf2loopy_runtime.a").write_bytes(planted)
            shutil.rmtree(target)
            target.symlink_to(elsewhere)
        assert not wrapper.runtime_ok(target, tcache.secret_key()), attack
        used = wrapper.runtime_build(["gfortran"])
        assert wrapper.runtime_ok(used, tcache.secret_key()), attack
        assert sorted(os.listdir(used)) == ["MAC", "f2loopy_runtime.mod",
                                            "libf2loopy_runtime.a"], attack
        assert b"f2l_planted_marker" not in (used / "libf2loopy_runtime.a").read_bytes()
        assert used == target, attack                           # rebuilt in its place


@pytest.mark.gfortran
@needs_compilers
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give files to another user")
def test_a_runtime_of_another_user_is_not_used(shared_cache, tmp_path):
    from f2loopy import wrapper
    target = wrapper.runtime_build(["gfortran"])
    os.chown(target / "libf2loopy_runtime.a", 12345, 12345)
    assert not wrapper.runtime_ok(target, tcache.secret_key())
    used = wrapper.runtime_build(["gfortran"])
    assert (used / "libf2loopy_runtime.a").stat().st_uid == os.geteuid()

# }}}
