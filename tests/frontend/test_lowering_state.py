"""The lowering object's state is explicit (issue 24, item 1).

Unit tier: reads the source of the lowering's classes (no compiler).  Every
field of :class:`~f2loopy.frontend.lowering.UnitLowering` is declared once in
:class:`~f2loopy.frontend.lowering_host.LoweringHost`; fields are assigned in
``UnitLowering.__init__`` only, except the scoped ones, which only the context
managers of :mod:`f2loopy.frontend.scopes` change; no two of its classes define
the same method, so the order of the base classes means nothing; and the
context managers restore what they change, also when lowering fails.
"""

from __future__ import annotations

import ast
import functools
import inspect

import pytest

from f2loopy.frontend import lowering_host, scopes
from f2loopy.frontend.lowering import UnitLowering
from f2loopy.frontend.lowering_state import LoweringState, NameTable
from f2loopy.frontend.source import SourceFile
from f2loopy.frontend.symbols import SymbolTable

#: the fields only ScopesMixin's context managers assign (besides __init__)
SCOPED = {"lines", "elemental", "where_assigning"}
#: fields assigned as the unit is lowered, and where: the statement a block is
#: at; the lines of a body's first statement where the unit has none yet; the
#: labelled format statements of the body, read before its statements
ACCUMULATED = {"block_rest": {"lower_block"}, "lines": {"lower_body"},
               "formats": {"lower_body"}}

_CLASSES = [c for c in UnitLowering.__mro__ if c is not object]


@functools.cache
def _module_tree(module) -> ast.Module:
    """The parsed source of *module* (read once: five tests walk its classes,
    the modules hold several of them; the tests only read the trees)."""
    return ast.parse(inspect.getsource(module))


@functools.cache
def _class_node(cls) -> ast.ClassDef:
    tree = _module_tree(inspect.getmodule(cls))
    return next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls.__name__)


def _self_assignments():
    """(class, method, field) of every ``self.field = ...`` in the lowering."""
    for cls in _CLASSES:
        for item in _class_node(cls).body:
            if not isinstance(item, ast.FunctionDef):
                continue
            for node in ast.walk(item):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
                for target in targets:
                    for t in (target.elts if isinstance(target, ast.Tuple) else [target]):
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) \
                                and t.value.id == "self":
                            yield cls.__name__, item.name, t.attr


def _declared() -> set[str]:
    return set(lowering_host.LoweringHost.__annotations__)


def test_every_field_is_declared_in_the_host():
    assigned = {f for _, _, f in _self_assignments()}
    assert assigned, "the walk found no assignments"
    assert assigned <= _declared(), sorted(assigned - _declared())


def test_fields_are_assigned_where_their_kind_says():
    wrong = []
    for cls, method, field in _self_assignments():
        if method == "__init__" and cls == "UnitLowering":
            continue
        if field in SCOPED and cls == "ScopesMixin":
            continue
        if method in ACCUMULATED.get(field, ()):
            continue
        wrong.append(f"{cls}.{method} assigns self.{field}")
    assert not wrong, wrong


def test_init_assigns_every_declared_field():
    init = {f for c, m, f in _self_assignments() if (c, m) == ("UnitLowering", "__init__")}
    assert init == _declared(), sorted(_declared() ^ init)


def test_no_field_is_read_with_getattr():
    for cls in _CLASSES:
        for node in ast.walk(_class_node(cls)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" \
                    and isinstance(node.args[0], ast.Name) and node.args[0].id == "self" \
                    and isinstance(node.args[1], ast.Constant):
                pytest.fail(f"{cls.__name__} reads self.{node.args[1].value} with getattr")


def test_no_two_classes_define_the_same_method():
    seen: dict[str, str] = {}
    clashes = []
    for cls in _CLASSES:
        for name, value in vars(cls).items():
            if callable(value) or isinstance(value, (property, staticmethod, classmethod)):
                if name.startswith("__") and name != "__init__":
                    continue
                if name in seen:
                    clashes.append(f"{name}: {seen[name]} and {cls.__name__}")
                seen.setdefault(name, cls.__name__)
    assert not clashes, clashes


def _own_nodes(node):
    """The nodes of *node* outside the classes nested in it."""
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.ClassDef):
            yield child
            yield from _own_nodes(child)


def test_no_super_chains():
    for cls in _CLASSES:
        for node in _own_nodes(_class_node(cls)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "super":
                pytest.fail(f"{cls.__name__} calls super(): use an explicit hook")


def test_name_table_innermost_scope_wins_and_is_left_on_errors():
    names = NameTable()
    assert names.lookup("k") == (False, None)
    with names.scope({"k": 1, "j": 0}):
        with names.scope({"k": 2}):
            assert names.lookup("K") == (True, 2)
            assert names.lookup("j") == (True, 0)      # a falsy value is a value
        assert names.lookup("k") == (True, 1)
        with pytest.raises(ValueError), names.scope({"k": 3}):
            raise ValueError
        assert names.lookup("k") == (True, 1)
    assert names.lookup("k") == (False, None)


def _lowering() -> UnitLowering:
    src = SourceFile("t.f90", "subroutine s\nend subroutine\n")
    return UnitLowering(src, SymbolTable(), [], set(), set(), state=LoweringState())


def test_scopes_restore_what_they_change_when_lowering_fails():
    lw = _lowering()
    with pytest.raises(RuntimeError):
        with lw.at((3, 4)), lw.guarded("c1", "c2"), lw.loop_nest(), \
                lw.array_expression(None), lw.inlining("f"), lw.where_assignment():
            lw.st.loops.append("scope")            # what an open_*_loop does
            lw.predicates.append("inner guard")    # (a scope inside that did not close)
            assert lw.lines == (3, 4) and lw.where_assigning
            assert lw.st.call_stack == ["f"]
            raise RuntimeError
    assert lw.lines == (0, 0)
    assert lw.predicates == [] and lw.st.loops == [] and lw.st.call_stack == []
    assert not lw.where_assigning and lw.elemental is None


def test_scopes_module_names_each_context_manager():
    """The module docstring (the design's list) names every scope there is."""
    doc = scopes.__doc__ or ""
    for name in ("at", "guarded", "loop_nest", "region", "array_expression", "inlining",
                 "where_branches", "where_assignment", "block_guards"):
        assert callable(getattr(scopes.ScopesMixin, name))
        assert f"ScopesMixin.{name}`" in doc, name
