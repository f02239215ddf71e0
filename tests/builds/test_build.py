"""Build integration of `f2loopy translate`: depfiles, deterministic outputs,
parallel jobs with a progress bar, errors of several files."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
# translations in many processes, with the hash seed varied: minutes
pytestmark = pytest.mark.slow
RECIPES = Path(__file__).resolve().parents[2] / "transforms"


def f2loopy(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "f2loopy.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=300)


def copy_samples(dest: Path, names) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        shutil.copy(SAMPLES / name, dest / name)
        out.append(dest / name)
    return out


def test_depfile_lists_outputs_and_inputs(tmp_path):
    (src,) = copy_samples(tmp_path, ["saxpy.f90"])
    recipe = tmp_path / "my recipe.py"      # a blank in a path is escaped
    recipe.write_text("def transform(knl):\n    return knl\n")
    proc = f2loopy("translate", "--depfile", tmp_path / "saxpy.d", "--transform",
                   RECIPES / "gpu_tiling.py", src)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "saxpy.d").read_text()
    outputs = " ".join(str(tmp_path / n) for n in ["saxpy.cl", "saxpy_cl.py", "saxpy_cl.f90",
                                                   "saxpy_cl.c"])
    # gpu_tiling declares a tunable: the tuning record is an input too (issue 28)
    record = f"{src}.tune.json"
    assert text == (f"{outputs}: {src} \\\n  {RECIPES / 'gpu_tiling.py'} \\\n  {record}\n\n"
                    f"{src}:\n{RECIPES / 'gpu_tiling.py'}:\n{record}:\n")


def test_depfile_escapes_make_characters():
    from f2loopy.build import FileOutcome, depfile_text
    o = FileOutcome("a b.f90", outputs=["out/a b.cl"], inputs=["a b.f90", "x y.py"])
    assert depfile_text([o]) == ("out/a\\ b.cl: a\\ b.f90 \\\n  x\\ y.py\n\n"
                                 "a\\ b.f90:\nx\\ y.py:\n")


def test_no_depfile_when_a_file_fails(tmp_path):
    (good,) = copy_samples(tmp_path, ["saxpy.f90"])
    bad = tmp_path / "bad.f90"
    bad.write_text("subroutine b(x)\n  real x\n  print '(z8.3)', x\nend\n")
    proc = f2loopy("translate", "--depfile", tmp_path / "all.d", good, bad)
    assert proc.returncode == 1
    assert not (tmp_path / "all.d").exists()
    assert (tmp_path / "saxpy_cl.f90").exists()


def _outputs(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())
            if p.is_file() and (p.suffix != ".f90" or p.name.endswith("_cl.f90"))}


def test_outputs_are_deterministic_across_processes_and_hash_seeds(tmp_path):
    names = ["saxpy.f90", "jacobi2d.f90", "matmul.f90", "norms.f90", "euler_flux.f90"]
    runs = []
    files = copy_samples(tmp_path / "src", names)
    for seed, jobs in (("1", "1"), ("4242", "3")):
        out = tmp_path / f"seed{seed}"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = f2loopy("translate", "-j", jobs, "-o", out, *files, env=env)
        assert proc.returncode == 0, proc.stderr
        proc = f2loopy("translate", "--transform", "gpu_tiling", "-o", out / "tiled",
                       files[2], env=env)
        assert proc.returncode == 0, proc.stderr
        runs.append({**_outputs(out), **{"tiled/" + k: v
                                         for k, v in _outputs(out / "tiled").items()}})
    assert sorted(runs[0]) == sorted(runs[1])
    assert len(runs[0]) == 4 * len(names) + 4
    for name in runs[0]:
        assert runs[0][name] == runs[1][name], f"{name} differs between the two runs"


def test_parallel_jobs_report_every_error_in_input_order(tmp_path):
    good = copy_samples(tmp_path, ["saxpy.f90", "matmul.f90", "norms.f90"])
    bad1 = tmp_path / "bad1.f90"
    bad1.write_text("subroutine b(x)\n  real x\n  print '(z8.3)', x\nend\n")
    bad2 = tmp_path / "bad2.f90"
    bad2.write_text("subroutine w(x)\n  real x\n  rewind(10)\nend\n")
    proc = f2loopy("translate", "-j", "3", bad2, *good, bad1)
    assert proc.returncode == 1
    first = proc.stderr.index("bad2.f90:3:3: error: 'rewind' is not supported")
    second = proc.stderr.index("bad1.f90:3:3: error: edit descriptor 'z8.3' in 'print '(z8.3)', x' cannot be translated")
    assert first < second
    for g in good:
        assert (tmp_path / (g.stem + "_cl.f90")).exists()
    assert not (tmp_path / "bad1_cl.f90").exists()


def test_progress_bar_when_asked(tmp_path):
    files = copy_samples(tmp_path, ["saxpy.f90", "matmul.f90"])
    proc = subprocess.run([sys.executable, "-m", "f2loopy.cli", "translate", "-j", "2",
                           "--progress", *map(str, files)], capture_output=True, timeout=300)
    stderr = proc.stderr.decode()
    assert proc.returncode == 0, stderr
    assert stderr.startswith("\rf2loopy [############------------] 1/2 ")
    assert "\rf2loopy [########################] 2/2 " in stderr and stderr.endswith("\n")
    quiet = f2loopy("translate", "-j", "2", *files)      # stderr is not a terminal
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_unchanged_outputs_keep_their_timestamps_with_jobs(tmp_path):
    files = copy_samples(tmp_path, ["saxpy.f90", "norms.f90"])
    assert f2loopy("translate", "-j", "2", *files).returncode == 0
    old = 1_000_000_000
    glue = [tmp_path / "saxpy_cl.f90", tmp_path / "norms_cl.c"]
    for g in glue:
        os.utime(g, (old, old))
    assert f2loopy("translate", "-j", "2", *files).returncode == 0
    assert all(g.stat().st_mtime == old for g in glue)


def test_generated_glue_given_as_input_is_skipped(tmp_path):
    (src,) = copy_samples(tmp_path, ["saxpy.f90"])
    assert f2loopy("translate", src).returncode == 0
    proc = f2loopy("translate", src, tmp_path / "saxpy_cl.f90")
    assert proc.returncode == 0, proc.stderr
    assert "note: skipping" in proc.stderr and "it was generated by f2loopy" in proc.stderr
    assert not (tmp_path / "saxpy_cl_cl.f90").exists()
