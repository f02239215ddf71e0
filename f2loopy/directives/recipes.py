"""Transformation recipes: reusable scripts in the top-level ``transforms/``.

A recipe is a documented Python file that defines

* ``transform(kernel, **options)``: returns the transformed kernel, and
* ``OPTIONS``: a dict of the options it accepts with their defaults (used to
  check ``apply_recipe`` calls and to pick ``-D`` values on the command line).

It runs in the same sandbox, with the same namespace, as an in-file script.
Use one from a ``!$loopy begin`` block with ``apply_recipe("gpu_tiling", knl,
tile=16)``, or on every kernel of a file with ``f2loopy translate --transform
gpu_tiling FILE`` (``-D tile=32`` sets an option), where a path to any
recipe file may stand instead of the name.

The parent reads the recipe files (the child cannot read files) and hands
their text to the child; a script can only name recipes, never paths.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from f2loopy.diagnostics import F2LoopyError
from f2loopy.resources import transforms_dir

#: the project's own recipes (``transforms/`` of a checkout, or the wheel's copy)
RECIPE_DIR = transforms_dir()

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")      # used with fullmatch


@dataclass(frozen=True)
class Recipe:
    name: str
    path: Path
    text: str

    @property
    def display_path(self) -> str:
        """The path as printed in diagnostics (relative to the working
        directory when inside it)."""
        try:
            rel = os.path.relpath(self.path)
        except ValueError:
            return str(self.path)
        return rel if not rel.startswith("..") else str(self.path)


def _read(path: Path) -> str:
    from f2loopy.regular_files import read_regular
    try:        # not a FIFO or /dev/zero: regular files, bounded
        return read_regular(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise F2LoopyError(f"cannot read transformation recipe {path}: "
                           f"{getattr(exc, 'strerror', None) or exc}") from None


def builtin_recipe_names(directory: Path = RECIPE_DIR) -> list[str]:
    if not directory.is_dir():
        return []
    return sorted(p.stem for p in directory.glob("*.py")
                  if _NAME_RE.fullmatch(p.stem) and not p.stem.startswith("_"))


def resolve_recipe(spec: str, directory: Path = RECIPE_DIR) -> Recipe:
    """The recipe a ``--transform`` argument names: a recipe name, or a file."""
    spec = str(spec)
    looks_like_path = spec.endswith(".py") or os.sep in spec or "/" in spec
    if looks_like_path or (not _NAME_RE.fullmatch(spec) and Path(spec).is_file()):
        path = Path(spec)
        if not path.is_file():
            raise F2LoopyError(f"transformation recipe file {spec} does not exist")
        name = re.sub(r"\W", "_", path.stem)
        if not _NAME_RE.fullmatch(name):
            name = f"recipe_{name}"
        return Recipe(name, path, _read(path))
    path = directory / f"{spec}.py"
    if not _NAME_RE.fullmatch(spec) or not path.is_file():
        names = builtin_recipe_names(directory)
        have = ", ".join(names) or "none"
        import difflib
        close = difflib.get_close_matches(spec, names, n=1) if _NAME_RE.fullmatch(spec) else []
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise F2LoopyError(f"unknown transformation recipe '{spec}' ({hint}recipes in "
                           f"{directory}: {have}; or give the path of a recipe file)")
    return Recipe(spec, path, _read(path))


def is_builtin(recipe: Recipe, directory: Path = RECIPE_DIR) -> bool:
    """Whether *recipe* is one of f2loopy's own (a file of *directory*, the
    project's ``transforms/``), as opposed to a file the user named: its code
    is f2loopy's, not a script's."""
    try:
        return (_NAME_RE.fullmatch(recipe.name) is not None
                and recipe.path.resolve() == (directory / f"{recipe.name}.py").resolve()
                and recipe.name in builtin_recipe_names(directory))
    except OSError:
        return False


def available_recipes(extra: Recipe | None = None, directory: Path = RECIPE_DIR) -> dict:
    """name -> :class:`Recipe` for every recipe in *directory*, plus *extra*."""
    out = {name: Recipe(name, directory / f"{name}.py", _read(directory / f"{name}.py"))
           for name in builtin_recipe_names(directory)}
    if extra is not None:
        out[extra.name] = extra
    return out


def declared_options(recipe: Recipe) -> dict | None:
    """The recipe's ``OPTIONS`` (name -> default) as its text declares them
    (a literal dict assigned at the top level), without running it; None when
    it declares none that way."""
    import ast
    try:
        tree = ast.parse(recipe.text)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "OPTIONS"):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, RecursionError):
                return None
            return value if isinstance(value, dict) else None
    return None


def option_warnings(recipe: Recipe, defines: dict, other_names) -> list[str]:
    """A warning per ``-D`` name that is not an option of *recipe* but close
    to one (``-D tiles=8`` for ``tile``), unless *other_names* (the words of
    the Fortran file and its script) use it: a typo otherwise passes
    silently, the recipe running with its default."""
    import difflib
    known = declared_options(recipe)
    if not known:
        return []
    out = []
    for name in defines:
        if name in known or name.lower() in other_names:
            continue
        close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
        if close:
            out.append(f"warning: -D {name} is not an option of recipe '{recipe.name}' "
                       f"(did you mean '{close[0]}'? options: {', '.join(sorted(known))})")
    return out
