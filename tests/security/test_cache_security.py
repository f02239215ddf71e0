"""The translation cache is not trusted (issue 14, class 6) and touches nothing
but itself (issue 17): an entry can only produce the outputs the translation
writes, the folder is private to the user, a corrupt entry is a miss."""

import json
import os
import stat
from pathlib import Path

import pytest
from cli_util import f2loopy

from f2loopy import cache as tcache
from f2loopy.pipeline import OUTPUT_KINDS, output_paths, translate_file

SAXPY = """subroutine saxpy(n, a, x, y)
  integer n, i
  real a, x(n), y(n)
  do i = 1, n
    y(i) = a * x(i) + y(i)
  end do
end subroutine
"""

RECIPE = '''"""A recipe that tiles the first loop."""
OPTIONS = {"tile": 16}

def transform(knl, tile=16):
    return split_iname(knl, "i", tile, outer_tag="g.0", inner_tag="l.0")
'''


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("F2LOOPY_CACHE_DIR", str(d))
    monkeypatch.delenv("F2LOOPY_NO_CACHE", raising=False)
    return d


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "saxpy.f90"
    p.write_text(SAXPY)
    return p


def entries(d):
    return [p for p in d.iterdir() if p.suffix == ".json"]


def key_of(path, **options):
    return tcache.translation_key(path, Path(path).read_text(), **options)


@pytest.mark.usefixtures("sandbox_process")
def test_a_hit_touches_the_entry_not_the_recipe(tmp_path, cache_dir, src):
    recipe = tmp_path / "tiles.py"
    recipe.write_text(RECIPE)
    assert translate_file(src, cache=True, transform=str(recipe)).kernels
    old = 1_000_000_000
    os.utime(recipe, (old, old))
    os.utime(src, (old, old))
    (entry,) = entries(cache_dir)
    os.utime(entry, (old, old))
    hit = translate_file(src, cache=True, transform=str(recipe))
    assert hit.kernels == [] and recipe in hit.inputs
    assert recipe.stat().st_mtime == old and src.stat().st_mtime == old
    assert entry.stat().st_mtime > old


def test_the_folder_is_created_private(cache_dir, src):
    translate_file(src, cache=True)
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
    (entry,) = entries(cache_dir)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


def test_an_open_folder_of_ours_is_made_private(cache_dir, src):
    cache_dir.mkdir(mode=0o777)
    os.chmod(cache_dir, 0o777)
    translate_file(src, cache=True)
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
    assert not translate_file(src, cache=True).kernels       # used


def plant(cache_dir, key, entry):
    """An entry signed with the user's own secret (what passes
    authentication: tests/security/test_sec_cache_auth.py) whose content is
    still checked."""
    cache_dir.mkdir(mode=0o700, exist_ok=True)
    path = cache_dir / f"{key}.json"
    body = (entry if isinstance(entry, str) else json.dumps(entry)).encode("utf-8",
                                                                            "surrogatepass")
    tag = tcache.mac(tcache.secret_key(), "entry", key.encode(), body).encode()
    path.write_bytes(tag + b"\n" + body)
    os.chmod(path, 0o600)
    return path


def read_entry(path):
    return json.loads(path.read_bytes().partition(b"\n")[2])


def good_entry(src, **texts):
    outputs = {kind: f"text of {kind}" for kind in OUTPUT_KINDS}
    outputs.update(texts)
    return {"format": tcache._FORMAT, "inputs": [[str(src), tcache.sha256_text(SAXPY)]],
            "absent": [],
            "outputs": outputs, "script_output": ""}


def test_a_planted_entry_only_ever_produces_this_translations_outputs(tmp_path, cache_dir,
                                                                      src):
    # a well-formed entry gives texts for the four outputs, at the paths computed here
    plant(cache_dir, key_of(src), good_entry(src))
    hit = translate_file(src, cache=True)
    assert set(hit.outputs) == set(output_paths(src).values())
    # an entry naming other files (absolute, relative, outside the folder) is a miss
    evil = tmp_path / "elsewhere" / "evil.py"
    for outputs in ({str(evil): "x"},
                    dict(good_entry(src)["outputs"], **{"/../../elsewhere/evil.py": "x"}),
                    [[str(evil), "x"]],
                    {kind: "x" for kind in OUTPUT_KINDS[:3]}):
        entry = good_entry(src)
        entry["outputs"] = outputs
        plant(cache_dir, key_of(src), entry)
        result = translate_file(src, cache=True)
        assert result.kernels, outputs                  # translated, not served
        assert set(result.outputs) == set(output_paths(src).values())
        assert not evil.parent.exists()


def test_a_planted_entry_for_another_file_is_a_miss(tmp_path, cache_dir, src):
    entry = good_entry(src)
    entry["inputs"][0][0] = str(tmp_path / "other.f90")
    plant(cache_dir, key_of(src), entry)
    assert translate_file(src, cache=True).kernels
    # input paths with control characters (they end up in depfiles) are refused
    entry = good_entry(src)
    entry["inputs"].append([str(tmp_path / "x\n\trm -rf ~"), "0" * 64])
    plant(cache_dir, key_of(src), entry)
    assert translate_file(src, cache=True).kernels


@pytest.mark.parametrize("corrupt", [
    "", "{", "[]", "null", '"text"', "\xff\xfe", "[" * 100000,
    {"format": 4}, {"format": 4, "outputs": {}, "inputs": []},
    {"format": 4, "outputs": {".cl": 1, "_cl.py": "", "_cl.f90": "", "_cl.c": ""},
     "inputs": [["saxpy.f90", "0"]]},
    {"format": 4, "outputs": {k: "" for k in OUTPUT_KINDS}, "inputs": "saxpy.f90"},
    {"format": 4, "outputs": {k: "" for k in OUTPUT_KINDS}, "inputs": [[1, 2, 3]]},
    {"format": 4, "outputs": {k: "" for k in OUTPUT_KINDS}, "inputs": [None]},
])
def test_a_corrupt_entry_is_a_miss(cache_dir, src, corrupt):
    path = plant(cache_dir, key_of(src), corrupt)
    result = translate_file(src, cache=True)
    assert result.kernels and "__kernel" in result.outputs[output_paths(src)[".cl"]]
    assert read_entry(path)["format"] == tcache._FORMAT   # replaced


def test_the_command_survives_a_corrupt_entry(tmp_path, cache_dir, src):
    plant(cache_dir, key_of(src), "{not json")
    proc = f2loopy("translate", str(src), cwd=tmp_path,      # in this process (cli_util)
                   env={"F2LOOPY_CACHE_DIR": str(cache_dir)})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "saxpy.cl").exists()


def test_a_linked_folder_is_not_used(tmp_path, monkeypatch, src):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    monkeypatch.setenv("F2LOOPY_CACHE_DIR", str(link))
    monkeypatch.delenv("F2LOOPY_NO_CACHE", raising=False)
    assert translate_file(src, cache=True).kernels
    assert translate_file(src, cache=True).kernels
    assert list(real.iterdir()) == []


def test_a_linked_entry_is_not_read(tmp_path, cache_dir, src):
    target = plant(tmp_path / "elsewhere", key_of(src), good_entry(src))   # signed
    cache_dir.mkdir(mode=0o700)
    (cache_dir / f"{key_of(src)}.json").symlink_to(target)
    assert translate_file(src, cache=True).kernels


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give files to another user")
def test_folders_and_entries_of_other_users_are_not_used(tmp_path, cache_dir, src, capfd):
    plant(cache_dir, key_of(src), good_entry(src))
    entry = cache_dir / f"{key_of(src)}.json"
    os.chown(entry, 12345, 12345)
    assert translate_file(src, cache=True).kernels        # an entry of someone else
    os.chown(cache_dir, 12345, 12345)
    os.chmod(cache_dir, 0o777)
    before = sorted(os.listdir(cache_dir))
    assert translate_file(src, cache=True).kernels
    assert translate_file(src, cache=True).kernels        # never stored there either
    assert sorted(os.listdir(cache_dir)) == before
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o777
    assert "not a folder of this user's own" in capfd.readouterr().err


def test_a_group_writable_entry_is_not_read(cache_dir, src):
    path = plant(cache_dir, key_of(src), good_entry(src))
    os.chmod(path, 0o666)
    assert translate_file(src, cache=True).kernels
