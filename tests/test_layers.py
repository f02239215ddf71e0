"""The package's layering (docs/design.md, "Where things are"): every import, also one
inside a function, points down the stages, and modules do not import each other
in a cycle (except inside ``ir/``, whose modules describe one data structure)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "f2loopy"

#: module or package (dotted, below ``f2loopy``) -> layer; the longest prefix wins
LAYERS = {
    "diagnostics": 0, "version": 0, "escape": 0, "resources": 0, "cpp_guard": 0, "reexec": 0,
    "regular_files": 0, "kernel_runner": 0, "kind_flags": 0,
    "ir": 1,
    "analysis": 2,
    "frontend": 3, "schedule": 3, "preprocessor": 3,
    "transform": 4, "query": 4,
    "codegen": 5,
    "glue": 6,
    "api": 7,
    "directives": 8,
    "cache": 9, "pipeline": 9, "outputs": 9,
    "verify": 10, "loopy_compat": 10, "bench": 10, "fuzz": 10, "build": 10, "tune": 10,
    "tuning_record": 9,
    "cli": 11, "cli_tools": 11, "cli_kinds": 11, "wrapper": 11, "wrapper_options": 11, "__main__": 11,
    "manpage": 11,
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = path
    return out


def _layer(module: str) -> int | None:
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        layer = LAYERS.get(".".join(parts[:k]))
        if layer is not None:
            return layer
    return None


#: a module named in a string: ``importlib.import_module("f2loopy.glue.call")``,
#: ``__import__(...)``, ``find_spec(...)``, a table of lazy imports
#: on the line of such a string that names a module without importing it
#: (the command line run as a program): said where it is, never implied
NOT_AN_IMPORT = "# layers: not an import"
_MODULE_NAME = re.compile(r"f2loopy(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _named_module(name: str, known: dict) -> str | None:
    """The known module that the dotted *name* (a module, or a name inside
    one) lies in: its longest prefix that is a module."""
    parts = name.removeprefix("f2loopy.").split(".")
    for k in range(len(parts), 0, -1):
        if ".".join(parts[:k]) in known:
            return ".".join(parts[:k])
    return None


def _imports(module: str, path: Path, known: dict) -> set[str]:
    """The f2loopy modules that *module* imports (``from pkg import sub``
    counts as an import of ``pkg.sub`` only), also by name: every string
    that is a whole dotted ``f2loopy.`` name counts as an import of the
    module it names (so ``importlib.import_module``, ``__import__`` and
    tables of module names cannot hide an upward import)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    text = path.read_text()
    lines = text.splitlines()
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").startswith("f2loopy"):
                target = node.module.removeprefix("f2loopy").lstrip(".")
            else:
                continue
            subs = {f"{target}.{a.name}".lstrip(".") for a in node.names}
            hits = subs & known.keys()
            found |= hits
            if len(hits) < len(subs):
                found.add(target)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("f2loopy."):
                    found.add(a.name.removeprefix("f2loopy."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and _MODULE_NAME.fullmatch(node.value) \
                and NOT_AN_IMPORT not in lines[node.lineno - 1]:
            named = _named_module(node.value, known)
            if named is not None:
                found.add(named)
    found.discard(module)
    found.discard("")          # the package's own facade (f2loopy/__init__.py)
    return {m for m in found if m in known}


@functools.cache
def _graph() -> dict[str, set[str]]:
    """The package's import graph (read once: two tests walk it)."""
    known = _modules()
    return {m: _imports(m, p, known) for m, p in known.items()}


def test_every_module_has_a_layer():
    missing = sorted(m for m in _modules() if m and _layer(m) is None)
    assert not missing, f"add these modules to LAYERS (and the table of docs/design.md): {missing}"


def test_imports_point_down():
    upward = [f"{a} ({_layer(a)}) imports {b} ({_layer(b)})"
              for a, targets in sorted(_graph().items()) if a
              for b in sorted(targets) if _layer(b) > _layer(a)]
    assert not upward, "\n".join(upward)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles_outside_ir():
    cycles = [c for c in _cycles(_graph()) if not all(m.startswith("ir.") for m in c)]
    assert not cycles, cycles


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
])
def test_cycle_finder(graph, expected):
    assert _cycles(graph) == expected


@pytest.mark.parametrize("code", [
    "import importlib\nrun = importlib.import_module('f2loopy.glue.call').call_kernel\n",
    "run = __import__('f2loopy.glue.call', fromlist=['call_kernel'])\n",
    "import importlib.util\nspec = importlib.util.find_spec('f2loopy.glue.call')\n",
    "LAZY = {'call_kernel': 'f2loopy.glue.call.call_kernel'}\n",
])
def test_imports_by_name_are_seen(tmp_path, code):
    """An import by name is an import: the layer rule cannot be bypassed."""
    path = tmp_path / "m.py"
    path.write_text(code)
    known = {"ir.kernel": path, "glue.call": path, "glue": path}
    assert _imports("ir.kernel", path, known) == {"glue.call"}
    assert _layer("glue.call") > _layer("ir.kernel")


def test_a_name_said_to_be_no_import_is_none(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('cmd = ["python", "-m", "f2loopy.glue.call"]  # layers: not an import\n')
    assert _imports("ir.kernel", path, {"glue.call": path}) == set()


def test_docstrings_naming_modules_are_no_imports(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('"""See f2loopy.glue.call for how kernels run."""\n'
                    'NOTE = "the glue (f2loopy.glue.call) runs it"\n')
    assert _imports("ir.kernel", path, {"glue.call": path}) == set()
