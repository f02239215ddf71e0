"""Which attributes a transformation script may read: an allow-list.

Every attribute read in a script (``x.name``) is compiled into a call of
:meth:`AttributeGuard.get` (the rewrite of :func:`guard_attribute_reads`, done
after the static checks), and the script's ``getattr``/``hasattr`` use the same
guard.  An attribute is readable only if the object is one the guard knows
and the name is on its list:

* a module of the script's namespace (the proxies of
  :mod:`~f2loopy.directives.namespace`): its members;
* values of Python's plain types (``str``, ``int``, ``list``, ``dict`` ...):
  their public methods, less ``str.format``/``format_map`` (which read
  attributes named in the format string);
* numpy arrays, scalars, dtypes, ufuncs: a curated list of what arithmetic
  needs (never ``ctypes``, ``data``, ``base``, ``view``, ``tofile`` ...);
* objects of f2loopy's IR and API, isl and pymbolic: their public attributes;
* exceptions: ``args`` and their public data; generators: ``send``, ``throw``,
  ``close``.

Anything else (functions, classes' internals, frames, code, tracebacks, other
modules) is refused with the attribute and type named.  A value that an
allowed attribute returns is checked too: a module that is not a script
proxy, a frame, code object or traceback is refused.
"""

from __future__ import annotations

import ast
import collections
import functools
import re
import types

import numpy as np

from f2loopy.directives import policy

#: the name the rewritten code calls (a builtin of the script; a script
#: cannot name it, names starting with ``__`` are refused)
GUARD_NAME = "__f2loopy_getattr__"


def _public(cls, without=()) -> frozenset:
    return frozenset(n for n in dir(cls) if not n.startswith("_")) - frozenset(without)


_NDARRAY = frozenset("""
T all any argmax argmin argsort astype clip conj conjugate copy cumprod cumsum diagonal dot
dtype fill flatten imag item itemsize max mean min nbytes ndim nonzero prod ptp ravel real
repeat reshape round searchsorted shape size sort squeeze std sum swapaxes take tolist
trace transpose var
""".split())
_GENERIC = frozenset("""
T all any astype conj conjugate dtype imag item itemsize max mean min ndim prod real round
shape size std sum tolist var is_integer as_integer_ratio
""".split())
_DTYPE = frozenset("name kind char itemsize type str num".split())
_UFUNC = frozenset("reduce accumulate outer at reduceat nin nout nargs identity types ntypes "
                   "signature".split())
_INFO = frozenset("bits eps epsneg max min resolution precision tiny smallest_normal dtype "
                  "machep negep maxexp minexp iexp nmant".split())

#: class -> attribute names its instances (and the class itself) may use
_BY_CLASS: dict = {
    str: _public(str, policy.FORMAT_METHODS),
    bytes: _public(bytes),
    int: _public(int), float: _public(float), complex: _public(complex), bool: _public(bool),
    list: _public(list), tuple: _public(tuple), dict: _public(dict), set: _public(set),
    frozenset: _public(frozenset), range: _public(range), slice: _public(slice),
    collections.deque: _public(collections.deque),
    collections.ChainMap: _public(collections.ChainMap),
    collections.Counter: _public(collections.Counter),
    collections.OrderedDict: _public(collections.OrderedDict),
    collections.defaultdict: _public(collections.defaultdict),
    re.Pattern: _public(re.Pattern), re.Match: _public(re.Match),
    functools.partial: frozenset({"func", "args", "keywords"}),
    types.GeneratorType: frozenset({"send", "throw", "close"}),
    BaseException: frozenset({"args", "name", "obj", "value", "message", "span", "notes",
                              "errno", "strerror", "filename", "lineno", "msg"}),
    np.ndarray: _NDARRAY, np.generic: _GENERIC, np.dtype: _DTYPE, np.ufunc: _UFUNC,
    np.finfo: _INFO, np.iinfo: _INFO,
}

#: modules whose classes' public attributes a script may read
_TRUSTED_PACKAGES = ("f2loopy.", "islpy", "pymbolic.")

_FORBIDDEN_VALUES = (types.FrameType, types.CodeType, types.TracebackType, types.CellType)


def _allowed_names(obj) -> frozenset | None:
    """The names allowed on *obj* by the tables (None: not a known kind)."""
    cls = obj if isinstance(obj, type) else type(obj)
    found = None
    for base in cls.__mro__:
        names = _BY_CLASS.get(base)
        if names is not None:
            found = names if found is None else found | names
    return found


def _trusted_class(obj) -> bool:
    cls = obj if isinstance(obj, type) else type(obj)
    module = getattr(cls, "__module__", None) or ""
    return isinstance(module, str) and (module + ".").startswith(_TRUSTED_PACKAGES)


class AttributeGuard:
    """Reads attributes for script code, refusing what is not on the lists.

    :arg refuse: called with a message (and raises).
    :arg modules: the script's module proxies (their members are allowed).
    """

    def __init__(self, refuse, modules):
        self.refuse = refuse
        self.module_ids = frozenset(id(m) for m in modules)
        self._modules = tuple(modules)      # keep them alive while their ids are used

    def allowed(self, obj, name) -> bool:
        if name.startswith("_") or name in policy.REFUSED_ATTRIBUTES \
                or name in policy.FORMAT_METHODS:
            return False
        if isinstance(obj, types.ModuleType):
            return id(obj) in self.module_ids
        names = _allowed_names(obj)
        if names is not None and name in names:
            return True
        return _trusted_class(obj)

    def check_name(self, obj, name):
        if not isinstance(name, str):
            raise TypeError("attribute name must be a string")
        if not self.allowed(obj, name):
            self.refuse(policy.refuse_attribute_of(name, obj))

    def check_value(self, name, value):
        if isinstance(value, types.ModuleType) and id(value) not in self.module_ids \
                or isinstance(value, _FORBIDDEN_VALUES):
            self.refuse(policy.refuse_attribute(name))
        return value

    def get(self, obj, name, *default):
        """``getattr(obj, name[, default])`` for script code."""
        self.check_name(obj, name)
        return self.check_value(name, getattr(obj, name, *default))

    def has(self, obj, name) -> bool:
        self.check_name(obj, name)
        return hasattr(obj, name)


class _Rewriter(ast.NodeTransformer):
    def visit_MatchValue(self, node: ast.MatchValue):
        # ``case lp.AddressSpace.LOCAL:`` must stay a dotted name (Python
        # allows nothing else there); the value is only compared, never bound
        return node

    def visit_MatchClass(self, node: ast.MatchClass):
        # ``case lp.Kernel(...)``: the class, too, must stay a dotted name
        node.patterns = [self.visit(p) for p in node.patterns]
        node.kwd_patterns = [self.visit(p) for p in node.kwd_patterns]
        return node

    def visit_MatchMapping(self, node: ast.MatchMapping):
        # keys are literals or dotted names, as in value patterns
        node.patterns = [self.visit(p) for p in node.patterns]
        return node

    def visit_Attribute(self, node: ast.Attribute):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node             # the static checks refuse assignments
        v = node.value
        if node.attr in policy.FORMAT_METHODS and isinstance(v, ast.Constant) \
                and isinstance(v.value, str):
            return node             # a literal the static checks found safe
        call = ast.Call(func=ast.Name(id=GUARD_NAME, ctx=ast.Load()),
                        args=[v, ast.Constant(value=node.attr)], keywords=[])
        ast.copy_location(call, node)
        ast.fix_missing_locations(call)
        for sub in (call.func, call.args[1]):
            ast.copy_location(sub, node)
        return call


def guard_attribute_reads(tree: ast.Module) -> ast.Module:
    """*tree* with every attribute read turned into a call of the guard."""
    return ast.fix_missing_locations(_Rewriter().visit(tree))
