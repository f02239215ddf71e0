"""Commands of ``f2loopy`` about the installation rather than a Fortran file:
``f2loopy recipes`` (the transformation recipes and their options),
``f2loopy samples DIR`` (a copy of the example programs) and
``f2loopy --cmake-dir`` (where CMake finds f2loopy's package configuration).

Recipes are described from their syntax tree (docstring, ``OPTIONS``
literal): nothing of a recipe runs in this process.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import click

from f2loopy.escape import terminal

_MACRO_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def literal_value(text: str):
    """A ``-D`` value: a Python literal (``8``, ``1e-3``, ``(8, 4)``, ``'x'``),
    ``true``/``false`` in any case, or else the text itself (``-D mode=fast``)."""
    if len(text) <= 10_000:
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
        else:
            if isinstance(value, (bool, int, float, complex, str, tuple, list, dict, set)) \
                    or value is None:
                return value
    if text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    return text.strip()


def check_macro_names(values):
    """``-U NAME`` values: macro names, or a usage error."""
    for v in values:
        if not _MACRO_RE.fullmatch(v):
            raise click.BadParameter(f"{ascii(v)} is not a macro name", param_hint="-U")
    return tuple(values)


@dataclass
class RecipeInfo:
    name: str
    path: str
    summary: str
    doc: str
    options: dict | None      # None: OPTIONS is missing or not a literal


def describe_recipe(name: str, path, text: str) -> RecipeInfo:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return RecipeInfo(name, str(path), "(cannot be parsed)", "", None)
    doc = ast.get_docstring(tree) or ""
    options = None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "OPTIONS"):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                value = None
            options = value if isinstance(value, dict) else None
    summary = doc.strip().splitlines()[0] if doc.strip() else ""
    return RecipeInfo(name, str(path), summary, doc, options)


def builtin_recipes() -> list[RecipeInfo]:
    from f2loopy.directives.recipes import RECIPE_DIR, builtin_recipe_names
    out = []
    for name in builtin_recipe_names(RECIPE_DIR):
        path = RECIPE_DIR / f"{name}.py"
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.append(describe_recipe(name, path, text))
    return out


def format_options(options: dict | None) -> str:
    if options is None:
        return "(not declared)"
    if not options:
        return "(none)"
    return ", ".join(f"{k}={v!r}" for k, v in options.items())


@click.command()
@click.argument("name", required=False)
def recipes(name):
    """List the transformation recipes (transforms/) and their options, or
    describe recipe NAME in full.

    Use one with `f2loopy translate --transform NAME -D OPTION=VALUE FILE`, or
    `apply_recipe("NAME", knl, OPTION=VALUE)` in a script.
    """
    found = builtin_recipes()
    if name is not None:
        match = [r for r in found if r.name == name]
        if not match:
            have = ", ".join(r.name for r in found) or "none"
            _echo(f"f2loopy: error: no recipe named {ascii(name)} "
                       f"(recipes: {have})", err=True)
            raise SystemExit(1)
        r = match[0]
        _echo(f"{r.name}  ({r.path})")
        _echo(f"options: {format_options(r.options)}\n")
        _echo(r.doc)
        return
    if not found:
        _echo("f2loopy: no recipes installed", err=True)
        raise SystemExit(1)
    width = max(len(r.name) for r in found)
    for r in found:
        _echo(f"{r.name.ljust(width)}  {r.summary}")
        _echo(f"{'':{width}}  options: {format_options(r.options)}")


def _echo(text="", **kwargs) -> None:
    """click.echo of *text* made safe for a terminal (names, paths and
    docstrings of recipe files are shown, never acted on)."""
    click.echo(terminal(text), **kwargs)


def show_cmake_dir(ctx, _param, value):
    """``f2loopy --cmake-dir``: the folder of f2loopyConfig.cmake and F2Loopy.cmake."""
    if not value or ctx.resilient_parsing:
        return
    from f2loopy.resources import cmake_dir
    click.echo(str(cmake_dir()))
    ctx.exit(0)


cmake_dir_option = click.option(
    "--cmake-dir", is_flag=True, expose_value=False, is_eager=True, callback=show_cmake_dir,
    help="Print the folder of f2loopy's CMake package configuration "
         "(cmake -Df2loopy_DIR=\"$(f2loopy --cmake-dir)\") and exit.")


@click.command()
@click.argument("directory", type=click.Path(file_okay=False))
def samples(directory):
    """Copy the example programs (samples/ of the source tree: saxpy, the heat
    application built with CMake, Make and the compiler wrapper, the Loo.py
    paper's kernel, PolyBench, MPI...) into DIRECTORY, which must not exist
    or be empty, with the documentation's tutorial application
    (DIRECTORY/tutorial) and cookbook files (DIRECTORY/cookbook).

    Then for instance: cd DIRECTORY && f2loopy translate saxpy.f90 && python3 saxpy_demo.py
    """
    import shutil
    from pathlib import Path

    from f2loopy.resources import DOC_EXAMPLES, doc_examples_dir, samples_dir
    source = samples_dir()
    if not source.is_dir():
        click.echo("f2loopy: error: this installation has no samples", err=True)
        raise SystemExit(1)
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise click.BadParameter(f"{ascii(str(target))} exists and is not an empty folder "
                                 "(nothing is overwritten)", param_hint="DIRECTORY")
    generated = ("*.cl", "*_cl.py", "*_cl.f90", "*_cl.c", "*.d", "*.o", "*.mod",
                 "__pycache__", "build")
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(*generated),
                    symlinks=False, dirs_exist_ok=True)
    for name in DOC_EXAMPLES:
        folder = doc_examples_dir(name)
        if folder.is_dir() and not (target / name).exists():
            shutil.copytree(folder, target / name, ignore=shutil.ignore_patterns(*generated),
                            symlinks=False)
    names = sorted(p.name for p in target.iterdir())
    click.echo(f"f2loopy: copied the samples into {ascii(str(target))[1:-1]}: "
               f"{', '.join(names)}")
    click.echo(f"next: cd {ascii(str(target))[1:-1]} && f2loopy translate saxpy.f90 && "
               "python3 saxpy_demo.py")
