"""The command lines and examples of the reference pages (docs/guide/*.md,
docs/fortran.md, docs/troubleshooting.md, docs/migration.md; issue 28: every
example in the docs runs in CI).

Every ``f2loopy`` command line shown in a fenced block of any page parses
with the CLI as it is (options renamed or removed since the page was written
fail here); the console examples whose inputs ship in samples/ run and print
the lines the page shows; the Python API example runs."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)

_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.S | re.M)


def fenced_blocks(page: Path) -> list[tuple[str, str]]:
    """(info string, text) of each fenced block of *page*."""
    return [(m.group(1).strip(), m.group(2)) for m in _FENCE.finditer(page.read_text())]


def command_lines(info: str, text: str) -> list[str]:
    """The ``f2loopy ...`` commands of a block: the ``$ `` lines of a console block
    (no info string or ``console``), every line of a ``sh`` or ``make`` block (``&&``
    chains split, ``# comments`` removed)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if info in ("", "console"):
            if not line.startswith("$ "):
                continue
            line = line[2:]
        elif info not in ("sh", "make"):
            continue
        for part in line.split("&&"):
            part = part.split("  #")[0].split("    #")[0].strip()
            if part.startswith("f2loopy ") and "$(" not in part and "$<" not in part:
                out.append(part)
    return out


SHOWN = [(page, command) for page in PAGES for info, text in fenced_blocks(page)
         for command in command_lines(info, text)]


def test_the_pages_show_commands():
    assert len(SHOWN) >= 12, SHOWN
    assert {p.name for p, _ in SHOWN} >= {"usage.md", "building.md", "performance.md"}


@pytest.mark.parametrize("page, command", SHOWN,
                         ids=[f"{p.relative_to(DOCS)}:{c[:40]}" for p, c in SHOWN])
def test_every_shown_command_line_parses(page, command):
    from f2loopy.cli import main
    words = shlex.split(command)[1:]
    if words and words[0].startswith("-"):        # f2loopy --cmake-dir, --version
        assert words[0] in {o for p in main.params for o in p.opts}, command
        return
    sub = main.get_command(click.Context(main), words[0])
    assert sub is not None, f"{page.name}: no command '{words[0]}' in: {command}"
    try:
        sub.make_context(words[0], words[1:], resilient_parsing=False)
    except click.exceptions.BadParameter as exc:
        # a file of the example that does not exist here (ops.f90, a.f90): the option
        # names and their arity are what the page must keep right
        assert "does not exist" in str(exc), (page.name, command, str(exc))
    except click.UsageError as exc:
        pytest.fail(f"{page.name}: {command}: {exc}")


def _env(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "f2loopy"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -m f2loopy.cli \"$@\"\n")
    script.chmod(0o755)
    return {**os.environ, "PYTHONPATH": str(ROOT),
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def console_examples():
    """(page, command, shown output lines) of console blocks (no info string or
    ``console``) whose command reads only files of samples/."""
    out = []
    for page in PAGES:
        for info, text in fenced_blocks(page):
            if info not in ("", "console"):
                continue
            lines = text.splitlines()
            if not lines or not lines[0].startswith("$ f2loopy "):
                continue
            command, shown = lines[0][2:], []
            for line in lines[1:]:
                if line.startswith("$ "):
                    break
                shown.append(line)
            files = [w for w in shlex.split(command) if w.endswith((".f90", ".F90"))]
            if files and all(f.startswith("samples/") for f in files):
                out.append((page, command, shown))
    return out


CONSOLE = console_examples()


def test_some_console_examples_run_on_the_samples():
    assert {p.name for p, _, _ in CONSOLE} >= {"usage.md", "performance.md"}


@pytest.mark.opencl
@pytest.mark.parametrize("page, command, shown", CONSOLE,
                         ids=[f"{p.relative_to(DOCS)}:{c[:40]}" for p, c, _ in CONSOLE])
def test_console_example_prints_what_the_page_shows(page, command, shown, tmp_path):
    """Run from a copy of the samples (nothing is written into the checkout); each line
    the page shows is a line of the output, numbers included (they are deterministic:
    the check's inputs come from a fixed seed)."""
    pytest.importorskip("pyopencl")
    shutil.copytree(ROOT / "samples", tmp_path / "samples",
                    ignore=shutil.ignore_patterns("*_cl.py", "*.cl", "*_cl.f90", "*_cl.c"))
    proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True,
                          text=True, env=_env(tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    printed = (proc.stdout + proc.stderr).splitlines()
    for line in shown:
        assert line in printed, f"{page.name}: '{line}' not printed by {command}:\n" + \
            "\n".join(printed)


def test_python_api_example_runs(tmp_path, monkeypatch):
    """docs/guide/usage.md's example of the Python API, run from the checkout's root as
    the page says, prints the generated OpenCL."""
    (block,) = [text for info, text in fenced_blocks(DOCS / "guide" / "usage.md")
                if info == "python" and "parse_fortran" in text]
    monkeypatch.chdir(ROOT)
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(block, "docs/guide/usage.md", "exec"), {})
    assert "__kernel void" in buf.getvalue() and "get_group_id(0)" in buf.getvalue()
