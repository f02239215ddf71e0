"""The values of ``f2loopy check``'s options: ``--size``, ``--range`` and the
per-dtype tolerances, parsed from the command line's text (a ValueError
says what is wrong with one)."""

from __future__ import annotations

_DTYPE_ALIASES = {
    "real": "float32", "single": "float32", "float32": "float32", "real4": "float32",
    "double": "float64", "float64": "float64", "real8": "float64",
    "complex": "complex64", "complex64": "complex64",
    "complex128": "complex128", "double_complex": "complex128",
}
_FLOAT_DTYPES = ("float32", "float64", "complex64", "complex128")


def parse_assignments(items, what: str, convert) -> dict:
    """``["n=100", ...]`` -> ``{"n": 100}`` (ValueError on bad syntax)."""
    out = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"{what}: expected NAME=VALUE, got {item!r}")
        name, value = (x.strip() for x in item.split("=", 1))
        if not name.isidentifier():
            raise ValueError(f"{what}: {name!r} is not a valid name")
        try:
            out[name] = convert(value)
        except ValueError:
            raise ValueError(f"{what}: bad value {value!r} for {name}") from None
    return out


def parse_number(text: str):
    text = text.strip()
    low = text.lower()
    if low in (".true.", "true"):
        return True
    if low in (".false.", "false"):
        return False
    try:
        return int(text)
    except ValueError:
        return float(low.replace("d", "e"))


def parse_size(text: str):
    """A ``--size`` value: a number, or the string for a CHARACTER argument
    (``trans=T``, ``uplo='L'``: printable ASCII, quotes optional)."""
    try:
        return parse_number(text)
    except ValueError:
        pass
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    from f2loopy.verify.fortran import CHAR_MAX
    if len(text) > CHAR_MAX or not all(" " <= c <= "~" for c in text):
        raise ValueError(text)
    return text


def parse_range(text: str):
    """``LO:HI`` -> ``(lo, hi)``."""
    if ":" not in text:
        raise ValueError(text)
    lo, hi = text.split(":", 1)
    lo, hi = parse_number(lo), parse_number(hi)
    if lo > hi:
        raise ValueError(text)
    return lo, hi


def parse_tolerances(rtol=(), atol=(), ulps=()) -> dict:
    """Per-dtype tolerance overrides: ``--rtol 1e-4`` (every floating dtype)
    or ``--rtol float32=1e-4``.  Returns dtype name -> {rtol, atol, ulps}."""
    out: dict = {d: {} for d in _FLOAT_DTYPES}
    for key, items, conv in (("rtol", rtol, float), ("atol", atol, float), ("ulps", ulps, int)):
        for item in items:
            if "=" in item:
                dt, value = (x.strip() for x in item.split("=", 1))
                name = _DTYPE_ALIASES.get(dt.lower())
                if name is None:
                    raise ValueError(f"--{key}: unknown type {dt!r} (use one of "
                                     f"{', '.join(sorted(_DTYPE_ALIASES))})")
                targets = [name]
            else:
                value, targets = item, list(_FLOAT_DTYPES)
            try:
                v = conv(value)
            except ValueError:
                raise ValueError(f"--{key}: bad value {value!r}") from None
            if v < 0:
                raise ValueError(f"--{key}: must not be negative")
            for t in targets:
                out[t][key] = v
    return out


# }}}
