"""What a transformation script sees: its globals, builtins and importable modules.

Built in the sandbox child, after the script has been checked and before it
runs.  Every module a script can reach is a *proxy*: a fresh module object that
holds only the public functions, classes and constants listed for it, never
another module (``f2loopy.transform.match`` imports ``fnmatch``, which imports
``os``: the proxy of the first has neither).

Besides the API, the namespace offers:

* ``checkpoint(label, kernels=None)``: record the kernels as they are now
  (issue 7 benchmarks every checkpoint).  Without *kernels*, the kernels the
  script is working on are recorded: every API call that returns kernels
  replaces the kernels it was given (by name), so after ``f = fuse_kernels([f_r,
  f_s])`` the fused kernel alone is current.
* ``apply_recipe(name, kernels, **options)``: run a recipe from ``transforms/``.
* ``print``: collected and shown by ``f2loopy translate``.
"""

from __future__ import annotations

import builtins as _builtins
import cmath
import collections
import fnmatch
import functools
import io
import itertools
import math
import operator
import re
import sys
import types


from f2loopy.diagnostics import F2LoopyError, TransformError
from f2loopy.directives import policy
from f2loopy.directives.answer_limits import MAX_CHECKPOINTS
from f2loopy.directives.attributes import GUARD_NAME, AttributeGuard
from f2loopy.directives.numpy_surface import numpy_members
from f2loopy.directives.recipe_options import check_option_types
from f2loopy.directives.tunables import TunableRegistry
from f2loopy.ir.kernel import Kernel, TranslationUnit

MAX_OUTPUT = 64 * 1024

# {{{ module proxies

_STDLIB_NAMES = {
    "functools": "reduce partial cmp_to_key lru_cache cache".split(),
    "operator": ("add sub mul truediv floordiv mod pow neg pos abs eq ne lt le gt ge and_ "
                 "or_ xor not_ truth itemgetter concat contains countOf indexOf getitem "
                 "index inv invert lshift rshift matmul").split(),
    "collections": "OrderedDict defaultdict Counter deque ChainMap".split(),
    "re": ("compile escape findall finditer fullmatch match search split sub subn "
           "IGNORECASE I MULTILINE M DOTALL S VERBOSE X ASCII A error").split(),
    "fnmatch": "fnmatch fnmatchcase filter translate".split(),
}


def module_proxy(name: str, members: dict) -> types.ModuleType:
    """A fresh module called *name* holding exactly *members* (no submodules
    unless given as members themselves)."""
    mod = types.ModuleType(name)
    for key, value in members.items():
        setattr(mod, key, value)
    setattr(mod, "__all__",         # (ModuleType declares no __all__)
            sorted(k for k in members if not isinstance(members[k], types.ModuleType)))
    return mod


def _public(module, names=None) -> dict:
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    out = {}
    for n in names:
        v = getattr(module, n, None)
        if v is None and n != "newaxis" or isinstance(v, types.ModuleType):
            continue
        out[n] = v
    return out


def _defined_in(module) -> dict:
    """Public functions and classes that *module* itself defines."""
    return {n: v for n, v in vars(module).items()
            if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__
            and callable(v)}

# }}}


# {{{ kernels in values

def kernels_in(value, what="value") -> list:
    """The kernels of a kernel, a translation unit, a list/tuple of those, or a
    dict name -> kernel (each renamed to its key)."""
    if isinstance(value, Kernel):
        return [value]
    if isinstance(value, TranslationUnit):
        return list(value)
    if isinstance(value, dict):
        out = []
        for key, v in value.items():
            if not isinstance(key, str) or not key.isidentifier():
                raise TypeError(f"{what}: dict keys must be kernel names, got {key!r}")
            if not isinstance(v, Kernel):
                raise TypeError(f"{what}: the value for {key!r} is a {type(v).__name__}, "
                                "not a kernel")
            out.append(v if v.name == key else v.copy(name=key))
        return out
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            if isinstance(item, Kernel):
                out.append(item)
            elif isinstance(item, TranslationUnit):
                out.extend(item)
            else:
                raise TypeError(f"{what} must hold kernels, but holds a {type(item).__name__}")
        return out
    raise TypeError(f"{what} must be a kernel, a list of kernels or a dict of kernels, "
                    f"not {type(value).__name__}")


def _kernels_among(values) -> list:
    out = []
    for v in values:
        if isinstance(v, Kernel):
            out.append(v)
        elif isinstance(v, TranslationUnit):
            out.extend(v)
        elif isinstance(v, (list, tuple)):
            out.extend(k for k in v if isinstance(k, Kernel))
    return out


class Tracker:
    """The kernels the script is working on: the latest version of each, by name."""

    def __init__(self):
        self.current: dict[str, Kernel] = {}

    def update(self, inputs, result):
        produced = _kernels_among([result])
        if not produced:
            return
        names = {k.name for k in produced}
        for k in _kernels_among(inputs):
            if k.name not in names:
                self.current.pop(k.name, None)
        for k in produced:
            self.current[k.name] = k

    def snapshot(self) -> list:
        return list(self.current.values())

# }}}


class ScriptContext:
    """State of one sandboxed run: the namespace, checkpoints, recipes, output.

    :arg guard: the :class:`~f2loopy.directives.lockdown.Guard` that records
        and raises refusals.
    :arg recipes: name -> :class:`~f2loopy.directives.child.CompiledCode` of
        every recipe a script may apply.
    :arg base_unit: the file's kernels as the frontend made them (returned by
        ``parse_fortran(SOURCE, FILENAME)`` without parsing again).
    :arg default_real_kind: what they were read with (8: ``-fdefault-real-8``),
        the default of the script's ``parse_fortran``.
    """

    def __init__(self, guard, *, source: str, filename: str, defines: dict, recipes: dict,
                 base_unit: TranslationUnit, run_code, tunables: dict | None = None,
                 default_real_kind: int = 4):
        self.guard = guard
        self.source = source
        self.filename = filename
        self.defines = dict(defines)
        self.recipes = recipes
        self.base_unit = base_unit
        self.default_real_kind = default_real_kind
        self.run_code = run_code          # (compiled code, globals) -> None, in the child
        self.tracker = Tracker()
        self.checkpoints: list[tuple[str, list]] = []
        self.used_recipes: list[str] = []
        self._recipe_namespaces: dict[str, dict] = {}
        self._output = io.StringIO()
        self.output_truncated = False
        self.tunables = TunableRegistry(tunables)     # tunable(...) declarations, values
        self.modules = self._make_modules()

    # {{{ output

    def write_output(self, text: str):
        room = MAX_OUTPUT - self._output.tell()
        if room <= 0:
            self.output_truncated = True
            return
        if len(text) > room:
            self.output_truncated = True
        self._output.write(text[:room])

    @property
    def output(self) -> str:
        out = self._output.getvalue()
        return out + ("\n[output truncated]\n" if self.output_truncated else "")

    # }}}

    # {{{ the API, wrapped

    def _track(self, func):
        tracker = self.tracker

        @functools.wraps(func)
        def api_call(*args, **kwargs):
            result = func(*args, **kwargs)
            tracker.update(list(args) + list(kwargs.values()), result)
            return result
        return api_call

    def _parse_fortran(self, source, filename="<string>", *args, free_form=None,
                       fixed_form=None, **kwargs):
        """Like :func:`f2loopy.parse_fortran`; loopy's ``free_form`` is understood."""
        from f2loopy.frontend import parse_fortran, read_source
        if fixed_form is None and free_form is not None:
            fixed_form = not free_form
        if args:
            raise TypeError("parse_fortran takes the source and the file name as positional "
                            "arguments; give the others by keyword")
        if source == self.source and filename == self.filename and not kwargs and (
                fixed_form is None
                or fixed_form == read_source("", self.filename).fixed_form):
            return TranslationUnit(list(self.base_unit), self.filename, self.source)
        kwargs.setdefault("default_real_kind", self.default_real_kind)
        return parse_fortran(source, filename, fixed_form=fixed_form, **kwargs)

    def _api(self) -> dict:
        from f2loopy import api
        members = {}
        for name in api.API_NAMES:
            obj = getattr(api, name)
            if isinstance(obj, types.ModuleType):
                continue
            members[name] = self._track(obj) if isinstance(obj, types.FunctionType) else obj
        members["parse_fortran"] = self._track(self._parse_fortran)
        members["parse_transformed_fortran"] = members["parse_fortran"]
        members["apply_recipe"] = self._track(self.apply_recipe)
        members["checkpoint"] = self.checkpoint
        members["tunable"] = self.tunables.tunable
        members["TransformError"] = TransformError
        members["LoopyError"] = F2LoopyError
        return members

    def _make_modules(self) -> dict:
        from f2loopy import query, transform
        from f2loopy.transform import match
        api = self._api()
        match_proxy = module_proxy("loopy.match", _defined_in(match))
        lp = module_proxy("loopy", {**api, "match": match_proxy})
        # (the queries left f2loopy.transform for f2loopy.query: scripts that
        # import them from f2loopy.transform still find them there)
        transform_names = {n: api[n] for n in (*transform.__all__, *query.__all__) if n in api}
        transform_proxy = module_proxy("f2loopy.transform", {**transform_names,
                                                             "match": match_proxy})
        f2 = module_proxy("f2loopy", {**api, "match": match_proxy, "transform": transform_proxy})
        numpy_proxy = module_proxy("numpy", numpy_members(module_proxy))
        mods = {
            "loopy": lp, "loopy.match": match_proxy, "f2loopy": f2,
            "f2loopy.transform": transform_proxy, "f2loopy.transform.match": match_proxy,
            "numpy": numpy_proxy, "numpy.linalg": numpy_proxy.linalg,
            "math": module_proxy("math", _public(math)),
            "cmath": module_proxy("cmath", _public(cmath)),
            "itertools": module_proxy("itertools", _public(itertools)),
        }
        for name, real in (("functools", functools), ("operator", operator),
                           ("collections", collections), ("re", re), ("fnmatch", fnmatch)):
            mods[name] = module_proxy(name, _public(real, _STDLIB_NAMES[name]))
        assert set(mods) == set(policy.ALLOWED_MODULES)
        proxies = list(mods.values()) + [lp.match, transform_proxy]
        self.attributes = AttributeGuard(self.guard.refuse, proxies)
        return mods

    # }}}

    # {{{ builtins

    def _import(self, name, globals=None, locals=None, fromlist=(), level=0):
        if isinstance(fromlist, list) and level == 0 and isinstance(name, str):
            # PyImport_Import: C code (numpy's lazy imports) importing while a
            # script frame is current.  It ignores what __import__ returns and
            # takes the module from sys.modules itself; bytecode never passes
            # a list.  So: nothing is returned, and nothing new is loaded.
            if name in sys.modules:
                return None
            self.guard.refuse(policy.refuse_import(name))
        if level != 0 or not isinstance(name, str) or name not in self.modules:
            self.guard.refuse(policy.refuse_import(str(name)), policy.import_note())
        if fromlist:
            return self.modules[name]
        return self.modules[name.split(".")[0]]

    def _builtins(self) -> dict:
        b = {n: getattr(_builtins, n) for n in policy.SAFE_BUILTINS}
        guard = self.guard

        def refused(name):
            def refused_builtin(*args, **kwargs):
                guard.refuse(policy.refuse_builtin(name))
            refused_builtin.__name__ = name
            return refused_builtin

        for n in policy.REFUSED_BUILTINS:
            b[n] = refused(n)

        def safe_getattr(obj, name, *default):
            return self.attributes.get(obj, name, *default)

        def safe_hasattr(obj, name):
            return self.attributes.has(obj, name)

        def script_print(*args, sep=" ", end="\n", file=None, flush=False):
            if file is not None:
                raise TypeError("print(file=...) is not available in transformation scripts")
            if not isinstance(sep, str) or not isinstance(end, str):
                raise TypeError("sep and end must be strings")
            self.write_output(sep.join(str(a) for a in args) + end)

        safe_getattr.__name__, safe_hasattr.__name__ = "getattr", "hasattr"
        script_print.__name__ = "print"
        b.update(getattr=safe_getattr, hasattr=safe_hasattr, print=script_print,
                 __import__=self._import)
        b[GUARD_NAME] = self.attributes.get
        return b

    def make_globals(self, *, for_recipe: bool = False) -> dict:
        """Fresh globals for a script block (or a recipe module)."""
        g = {"__builtins__": self._builtins(), "__name__": "__transform__"}
        lp = self.modules["loopy"]
        g.update({n: getattr(lp, n) for n in lp.__all__})
        g.update(lp=lp, np=self.modules["numpy"], math=self.modules["math"])
        if not for_recipe:
            g.update(SOURCE=self.source, FILENAME=self.filename)
            # -D names with a leading underscore are macros of the preprocessor only
            # (a script variable cannot shadow __builtins__, __name__, ...)
            g.update({k: v for k, v in self.defines.items() if not k.startswith("_")})
        return g

    # }}}

    # {{{ checkpoints and recipes

    def checkpoint(self, label, kernels=None):
        """Record *kernels* (default: the kernels the script is working on)
        under *label*, e.g. ``checkpoint("level 3")``."""
        if not isinstance(label, str) or not label.strip() or len(label) > 200:
            raise TypeError("checkpoint: the label must be a non-empty string (at most 200 "
                            "characters)")
        if len(self.checkpoints) >= MAX_CHECKPOINTS:
            raise ValueError(f"checkpoint: at most {MAX_CHECKPOINTS} checkpoints per file")
        if any(lab == label for lab, _ in self.checkpoints):
            raise ValueError(f"checkpoint {label!r} was already recorded")
        ks = kernels_in(kernels, "checkpoint") if kernels is not None \
            else self.tracker.snapshot()
        if not ks:
            raise ValueError("checkpoint: there are no kernels yet (call parse_fortran first, "
                             "or pass them: checkpoint(label, knl))")
        names = [k.name for k in ks]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"checkpoint {label!r}: two kernels are named '{dup[0]}'")
        self.checkpoints.append((label, ks))

    def recipe_namespace(self, name: str) -> dict:
        if name not in self._recipe_namespaces:
            code = self.recipes[name]
            g = self.make_globals(for_recipe=True)
            self.run_code(code, g)
            self._recipe_namespaces[name] = g
        return self._recipe_namespaces[name]

    def apply_recipe(self, name, kernels, **options):
        """Apply recipe *name* (a file ``transforms/NAME.py``) to *kernels* (a
        kernel, translation unit, list or dict), e.g.
        ``apply_recipe("gpu_tiling", knl, tile=16)``."""
        if not isinstance(name, str) or name not in self.recipes:
            have = ", ".join(sorted(self.recipes)) or "none"
            raise TransformError(f"apply_recipe: no recipe named {name!r} (available: {have})")
        ns = self.recipe_namespace(name)
        func = ns.get("transform")
        if not callable(func):
            raise TransformError(f"recipe '{name}' does not define a function "
                                 "'transform(kernel, **options)'")
        known = ns.get("OPTIONS")
        if isinstance(known, dict):
            unknown = sorted(set(options) - set(known))
            if unknown:
                raise TransformError(f"apply_recipe: recipe '{name}' has no option "
                                     f"'{unknown[0]}' (options: {', '.join(sorted(known)) or 'none'})")
        check_option_types(name, ns.get("OPTION_TYPES"), options, from_command_line=False)
        if name not in self.used_recipes:
            self.used_recipes.append(name)

        def one(k):
            out = func(k, **options)
            if not isinstance(out, (Kernel, TranslationUnit)):
                raise TransformError(f"recipe '{name}' returned a {type(out).__name__}, not a "
                                     "kernel")
            return out

        if isinstance(kernels, Kernel):
            return one(kernels)
        if isinstance(kernels, TranslationUnit):
            return TranslationUnit([k2 for k in kernels for k2 in kernels_in(one(k))],
                                   kernels.filename, kernels.source)
        if isinstance(kernels, dict):
            return {key: one(k) for key, k in zip(kernels, kernels_in(kernels, "apply_recipe"), strict=True)}
        if isinstance(kernels, (list, tuple)):
            return [one(k) for k in kernels_in(list(kernels), "apply_recipe")]
        raise TypeError(f"apply_recipe: expected kernels, got {type(kernels).__name__}")

    def recipe_options(self, name: str, defines: dict) -> dict:
        """The ``-D`` values that recipe *name* declares in its ``OPTIONS``."""
        ns = self.recipe_namespace(name)
        known = ns.get("OPTIONS")
        if not isinstance(known, dict):
            return {}
        options = {k: v for k, v in defines.items() if k in known}
        check_option_types(name, ns.get("OPTION_TYPES"), options, from_command_line=True)
        return options

    # }}}
