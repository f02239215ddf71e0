"""Tunable choices of a transformation script: ``tunable(name, choices)``.

A script (or a recipe) declares a choice it leaves to measurement::

    tile = tunable("tile", [8, 16, 32])
    use_alias = tunable("alias", [True, False])

``f2loopy translate`` takes the value recorded by ``f2loopy tune`` for this
file (``FILE.tune.json``), else the first choice; ``f2loopy tune`` runs the
script once per combination it explores, passing the values in.

Names and values travel from the script to the parent, into tuning records
(files that may come from anywhere) and from there back into scripts, the
translation cache and the terminal; so both are checked here, on every side:
names are identifiers, values are literals only (int, float, bool, a string
that is an identifier, or a tuple of those), never anything that could carry
code or markup.
"""

from __future__ import annotations

import math
import re

MAX_NAME = 64
MAX_CHOICES = 256
MAX_TUNABLES = 32
MAX_STRING = 64
MAX_TUPLE = 16

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class TunableError(ValueError):
    """A tunable name, value or choice list that is not allowed."""


def check_name(name) -> str:
    if not isinstance(name, str) or len(name) > MAX_NAME or not _NAME_RE.fullmatch(name):
        raise TunableError(f"a tunable's name must be an identifier of at most {MAX_NAME} "
                           f"characters, not {_show(name)}")
    return name


def check_value(value, *, depth: int = 0):
    """*value* if it is an allowed literal (lists become tuples), else
    :class:`TunableError`."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) > 2 ** 53:
            raise TunableError(f"tunable value {_show(value)} is too large")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TunableError(f"tunable value {_show(value)} is not a finite number")
        return value
    if isinstance(value, str):
        if len(value) > MAX_STRING or not _NAME_RE.fullmatch(value):
            raise TunableError(f"a tunable string value must be an identifier of at most "
                               f"{MAX_STRING} characters, not {_show(value)}")
        return value
    if isinstance(value, (tuple, list)) and depth == 0:
        if len(value) > MAX_TUPLE:
            raise TunableError(f"a tunable tuple value has at most {MAX_TUPLE} items")
        return tuple(check_value(v, depth=1) for v in value)
    raise TunableError("tunable values are int, float, bool, identifier strings or tuples of "
                       f"those, not {_show(value)}")


def check_choices(choices) -> tuple:
    if not isinstance(choices, (list, tuple)) or not choices:
        raise TunableError("the choices of a tunable are a non-empty list")
    if len(choices) > MAX_CHOICES:
        raise TunableError(f"a tunable has at most {MAX_CHOICES} choices")
    out: list = []
    for c in choices:
        v = check_value(c)
        if any(_same(v, o) for o in out):
            raise TunableError(f"tunable choice {_show(v)} is given twice")
        out.append(v)
    return tuple(out)


def _same(a, b) -> bool:
    """Equal and of the same type (1, 1.0 and True are different choices)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def index_of(value, choices) -> int | None:
    for k, c in enumerate(choices):
        if _same(value, c):
            return k
    return None


def check_space(space) -> dict:
    """name -> choices, from the sandbox's answer or a record (both untrusted)."""
    if not isinstance(space, dict) or len(space) > MAX_TUNABLES:
        raise TunableError("malformed tunable declarations")
    return {check_name(n): check_choices(c) for n, c in space.items()}


def check_assignment(values, space: dict | None = None) -> dict:
    """name -> value; with *space*, every value must be one of its choices."""
    if not isinstance(values, dict) or len(values) > MAX_TUNABLES:
        raise TunableError("malformed tunable values")
    out = {}
    for n, v in values.items():
        n = check_name(n)
        v = check_value(v)
        if space is not None:
            if n not in space:
                raise TunableError(f"no tunable named '{n}'")
            if index_of(v, space[n]) is None:
                raise TunableError(f"{format_value(v)} is not a choice of tunable '{n}'")
        out[n] = v
    return out


def format_value(v) -> str:
    """Python-literal text of a checked value (safe to print: literals only)."""
    if isinstance(v, tuple):
        inner = ", ".join(format_value(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, str):
        return repr(v)
    return repr(v)


def format_assignment(values: dict) -> str:
    return ", ".join(f"{n}={format_value(v)}" for n, v in values.items())


def to_json(v):
    return [to_json(x) for x in v] if isinstance(v, tuple) else v


def _show(value) -> str:
    text = repr(value) if isinstance(value, (int, float, str, bool)) else type(value).__name__
    text = text[:40] + ("..." if len(text) > 40 else "")
    return re.sub(r"[^\x20-\x7e]", "?", text)


class TunableRegistry:
    """The script side: declarations made so far and the values to hand out."""

    def __init__(self, values: dict | None = None):
        self.values = dict(values or {})
        self.declared: dict[str, tuple] = {}

    def tunable(self, name, choices, default=None):
        """``tunable(name, choices, default=None)``: the value of the tunable
        choice *name* for this translation (the tuned value if
        ``f2loopy tune`` recorded one, else *default*, else the first
        choice)."""
        name = check_name(name)
        choices = check_choices(choices)
        if name in self.declared and self.declared[name] != choices:
            raise TunableError(f"tunable '{name}' is declared twice with different choices")
        if len(self.declared) >= MAX_TUNABLES and name not in self.declared:
            raise TunableError(f"a script declares at most {MAX_TUNABLES} tunables")
        self.declared[name] = choices
        if name in self.values:
            value = self.values[name]
            if index_of(value, choices) is None:
                raise TunableError(f"the value {format_value(value)} given for tunable "
                                   f"'{name}' is not one of its choices")
            return value
        if default is not None:
            default = check_value(default)
            if index_of(default, choices) is None:
                raise TunableError(f"the default of tunable '{name}' is not one of its "
                                   "choices")
            return default
        return choices[0]

    def declarations(self) -> dict:
        return {n: [to_json(c) for c in cs] for n, cs in self.declared.items()}
