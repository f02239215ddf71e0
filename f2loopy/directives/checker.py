"""Static checks of a transformation script: the sandbox's first layer.

Before anything runs, the script's syntax tree is checked for the ways out of
a restricted namespace that Python offers: names and attributes starting with
an underscore (``__class__``, ``__subclasses__``, ``__globals__``,
``__builtins__``, ``_getframe`` ...), frame and code attributes
(``gi_frame``, ``f_back``, ``tb_frame``), ``str.format`` with attribute
fields (``"{0.__class__}".format(x)``), attribute assignment, class
definitions (which would let a script define dunder methods) and imports of
anything outside :data:`~f2loopy.directives.policy.ALLOWED_MODULES`.

The later layers (restricted builtins and importer, the audit hook, seccomp,
resource limits) do not rely on this one; it exists to refuse early, with the
exact line and column.
"""

from __future__ import annotations

import ast
import string
from dataclasses import dataclass

from f2loopy.directives import policy


@dataclass(frozen=True)
class Refusal:
    """A construct the script may not use, at 1-based *line* and 0-based
    *col* (UTF-8 byte offset, as in Python's syntax tree) of the script."""

    message: str
    line: int
    col: int
    end_col: int | None = None
    note: str | None = None


def check_script(tree: ast.AST) -> list[Refusal]:
    """Every refused construct of *tree*, in source order."""
    checker = _Checker()
    checker.visit(tree)
    # innermost first where nodes start at the same place (``a.__class__.__base__``
    # reports ``__class__``, the first one reading from the left)
    return sorted(checker.refusals, key=lambda r: (r.line, r.col, r.end_col or 0))


def safe_format_string(text: str, depth: int = 0) -> bool:
    """True if ``text.format(...)`` can only look up plain names or positions."""
    if depth > 2:
        return False
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:
        return False
    for _literal, field, spec, _conversion in parsed:
        if field is None:
            continue
        if field and not (field.isdigit() or field.isidentifier()):
            return False
        if spec and not safe_format_string(spec, depth + 1):
            return False
    return True


def _dunder_like(name: str) -> bool:
    return name.startswith("__")


class _Checker(ast.NodeVisitor):
    def __init__(self):
        self.refusals: list[Refusal] = []

    def refuse(self, node, message, note=None):
        end = getattr(node, "end_col_offset", None) \
            if getattr(node, "end_lineno", None) == getattr(node, "lineno", None) else None
        self.refusals.append(Refusal(message, getattr(node, "lineno", 1),
                                     getattr(node, "col_offset", 0), end, note))

    # names

    def visit_Name(self, node: ast.Name):
        if _dunder_like(node.id):
            self.refuse(node, policy.refuse_name(node.id))

    def _check_identifier(self, node, name):
        if name is not None and _dunder_like(name):
            self.refuse(node, policy.refuse_name(name))

    def visit_FunctionDef(self, node):
        self._check_identifier(node, node.name)
        self.generic_visit(node)

    def visit_Lambda(self, node):
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg):
        self._check_identifier(node, node.arg)
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword):
        self._check_identifier(node, node.arg)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler):
        self._check_identifier(node, node.name)
        self.generic_visit(node)

    def visit_Global(self, node):
        for n in node.names:
            self._check_identifier(node, n)

    visit_Nonlocal = visit_Global

    def visit_MatchAs(self, node):
        self._check_identifier(node, node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        self._check_identifier(node, node.name)

    def visit_MatchMapping(self, node):
        self._check_identifier(node, node.rest)
        self.generic_visit(node)

    def visit_MatchClass(self, node):
        # ``case C(attr=...)`` reads attributes past the attribute guard (which
        # only sees ``x.attr``): refused, whatever the name
        for attr in node.kwd_attrs:
            if attr.startswith("_") or attr in policy.REFUSED_ATTRIBUTES:
                self.refuse(node, policy.refuse_attribute(attr))
            else:
                self.refuse(node, policy.refuse_class_pattern_attribute(attr))
        self.generic_visit(node)

    # attributes

    def visit_Attribute(self, node: ast.Attribute):
        attr = node.attr
        if attr.startswith("_") or attr in policy.REFUSED_ATTRIBUTES:
            self.refuse(node, policy.refuse_attribute(attr))
        elif attr in policy.FORMAT_METHODS:
            v = node.value
            if not (isinstance(v, ast.Constant) and isinstance(v.value, str)
                    and safe_format_string(v.value)):
                self.refuse(node, policy.refuse_attribute(attr))
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.refuse(node, f"{policy.PREFIX} assign or delete attributes "
                              f"('.{attr}'); kernels are immutable: use knl.copy({attr}=...)")
        self.generic_visit(node)

    # statements

    def visit_ClassDef(self, node):
        self.refuse(node, f"{policy.PREFIX} define classes")

    def _refuse_async(self, node):
        self.refuse(node, f"{policy.PREFIX} use async code")

    visit_AsyncFunctionDef = visit_Await = visit_AsyncFor = visit_AsyncWith = _refuse_async

    def visit_Import(self, node: ast.Import):
        for alias in node.names:
            if alias.name not in policy.ALLOWED_MODULES:
                self.refuse(node, policy.refuse_import(alias.name), policy.import_note())
            self._check_identifier(node, alias.asname)

    def visit_ImportFrom(self, node: ast.ImportFrom):
        module = node.module or ""
        if node.level:
            self.refuse(node, policy.refuse_import("." * node.level + module),
                        policy.import_note())
            return
        if module not in policy.ALLOWED_MODULES:
            self.refuse(node, policy.refuse_import(module), policy.import_note())
            return
        for alias in node.names:
            if alias.name != "*" and (alias.name.startswith("_")
                                      or alias.name in policy.REFUSED_ATTRIBUTES):
                self.refuse(node, policy.refuse_attribute(alias.name))
            self._check_identifier(node, alias.asname)
