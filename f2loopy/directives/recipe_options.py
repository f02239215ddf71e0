"""The types of a recipe's options, checked before the recipe runs.

A recipe may declare, next to ``OPTIONS``, a literal dict ``OPTION_TYPES``
(option name -> what it accepts).  An accepted form is one of the words
below or a quoted choice (``"split"``); a tuple lists alternatives::

    OPTION_TYPES = {"tile": ("positive integer", "positive integers"),
                    "launches": ("split", "one"), "assume": "text"}

``None`` (the option left at "unset") is always accepted.  A value that
matches no form is refused before the recipe runs, with a message that
names the option, what it accepts and, for ``--transform``, the ``-D``
spelling, instead of failing somewhere inside the recipe's code.
"""

from __future__ import annotations

import re

from f2loopy.diagnostics import TransformError

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")        # used with fullmatch


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _names(value) -> bool:
    items = value.split(",") if isinstance(value, str) else value
    return (isinstance(items, (list, tuple)) and len(items) > 0
            and all(isinstance(n, str) and _NAME_RE.fullmatch(n.strip()) for n in items))


#: the words of OPTION_TYPES: a test per word, and how a message spells it
FORMS = {
    "positive integer": (_positive_int, "a positive integer (-D {name}=16)"),
    "positive integers": (lambda v: isinstance(v, (tuple, list)) and len(v) > 0
                          and all(_positive_int(x) for x in v),
                          "a tuple of positive integers (-D {name}=(16,8))"),
    "integer": (lambda v: isinstance(v, int) and not isinstance(v, bool),
                "an integer (-D {name}=1)"),
    "boolean": (lambda v: isinstance(v, bool), "true or false (-D {name}=false)"),
    "name": (lambda v: isinstance(v, str) and _NAME_RE.fullmatch(v) is not None,
             "a name (-D {name}=i)"),
    "names": (_names, "names separated by commas (-D {name}=i,j)"),
    "text": (lambda v: isinstance(v, str), "text (-D {name}=\"...\")"),
}


def _accepts(form: str, value) -> bool:
    if form in FORMS:
        return bool(FORMS[form][0](value))
    return isinstance(value, str) and value == form        # a choice


def _describe(form: str, name: str) -> str:
    if form in FORMS:
        return FORMS[form][1].format(name=name)
    return f"'{form}'"


def check_option_types(recipe: str, types, options: dict, *, from_command_line: bool) -> None:
    """Raise :class:`TransformError` for the first value in *options* that
    the recipe's ``OPTION_TYPES`` (*types*; anything but a dict: nothing
    is checked) does not accept.  *from_command_line*: the values came from
    ``-D`` with ``--transform`` (the message says so)."""
    if not isinstance(types, dict):
        return
    for name, value in options.items():
        forms = types.get(name)
        if forms is None or value is None:
            continue
        forms = forms if isinstance(forms, tuple) else (forms,)
        if any(_accepts(f, value) for f in forms if isinstance(f, str)):
            continue
        wanted = " or ".join(_describe(f, name) for f in forms if isinstance(f, str))
        given = " (given with -D)" if from_command_line else ""
        raise TransformError(f"recipe '{recipe}': option '{name}' is {wanted}, "
                             f"not {value!r}{given}")
