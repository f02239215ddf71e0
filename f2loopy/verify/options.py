"""The options of ``f2loopy check``: :class:`CheckOptions`, what
:func:`~f2loopy.verify.check.check_source`, :func:`~f2loopy.verify.check.check_file`
and the rounds of :func:`~f2loopy.verify.coverage.check_covering` pass along,
and the values of ``--size``, ``--range`` and the per-dtype tolerances parsed
from the command line's text (a ValueError says what is wrong with one)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from f2loopy.pipeline.options import TranslateOptions

_EMPTY: Mapping[str, Any] = MappingProxyType({})
#: fields of :class:`TranslateOptions` the check does not follow (a value
#: other than the default is refused, not silently dropped)
_NOT_FOLLOWED = ("output_dir", "undefines", "search_files", "kernels")


@dataclass(frozen=True, kw_only=True)
class CheckOptions:
    """How ``f2loopy check`` checks one file; frozen, like its :attr:`translation`.

    :attr translation: how the file is translated, and read for the
        original (:class:`~f2loopy.pipeline.options.TranslateOptions`): the
        check follows its *defines*, *transform*, *include_dirs*,
        *checkpoints* (each checkpoint's kernels are checked too),
        *fixed_form*, *cpp*, *debug*, *collect_errors*, *tuning* (the file's tuning
        record gives the ``tunable(...)`` choices, as for ``f2loopy
        translate``) and *tunables* (used where no record entry is); a value
        of *output_dir*, *undefines*, *search_files* or *kernels* is refused
        (:attr:`kernel` chooses what is checked).
    :attr kernel: only this kernel, or the kernels that run this subroutine
        (``--kernel``; a file without a script is also translated for it only).
    :attr sizes: ``--size``: name -> a number (an argument or a fixed
        parameter), or a string (a CHARACTER argument, the same every round).
    :attr ranges: ``--range``: name -> ``(lo, hi)`` of the values drawn.
    :attr seed: the seed of the drawn inputs (round *k* of the coverage
        rounds draws with ``seed + k``).
    :attr tolerances: dtype name -> ``{"rtol", "atol", "ulps"}``
        (:func:`parse_tolerances`); None: the defaults.
    :attr fortran_flags: gfortran's flags for the original.
    :attr isolate: run the original in a forked child each call (a crash
        or a timeout is reported; ``-fcheck=bounds``; saved variables are
        also checked on a second call).
    :attr timeout: seconds one run of the original may take (isolated).
    :attr coverage: say which statements of the checked subroutines never
        ran (needs gcov and *isolate*); :func:`~f2loopy.verify.check.check_file`
        then runs rounds of inputs until each ran.
    :attr char_round: which combination of the values of CHARACTER arguments
        this round takes (the coverage rounds count it up).
    :attr char_exclude: name -> values of a CHARACTER argument the
        original's own argument check refused (not drawn again).
    :attr value_style: how the data values that neither the plan nor
        :attr:`ranges` bound are drawn (one of
        :data:`~f2loopy.verify.input_plan.VALUE_STYLES`; the coverage rounds
        try ``signed`` and ``wide`` after the default ones).
    :attr assumed_size_fallback: an assumed-size array whose subscripts
        cannot be bounded gets a fixed number of elements, with a note
        (else the inputs cannot be planned; the coverage rounds allow it).
    """

    translation: TranslateOptions = field(default_factory=TranslateOptions)
    kernel: str | None = None
    sizes: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    ranges: Mapping[str, tuple] = field(default_factory=lambda: _EMPTY)
    seed: int = 0
    tolerances: Mapping[str, Mapping[str, float]] | None = None
    fortran_flags: tuple = ("-O0",)
    isolate: bool = True
    timeout: float = 120.0
    coverage: bool = False
    char_round: int = 0
    char_exclude: Mapping[str, frozenset] = field(default_factory=lambda: _EMPTY)
    assumed_size_fallback: bool = False
    value_style: str = "default"

    def __post_init__(self) -> None:
        # frozen all the way down: copies, as tuples and read-only mappings
        if not isinstance(self.translation, TranslateOptions):
            raise TypeError("CheckOptions: translation must be a TranslateOptions, not "
                            f"{type(self.translation).__name__}")
        default = TranslateOptions()
        for name in _NOT_FOLLOWED:
            if getattr(self.translation, name) != getattr(default, name):
                raise TypeError(f"CheckOptions: the check does not follow the translation's "
                                f"{name} (give the kernel to check as CheckOptions.kernel)"
                                if name == "kernels" else
                                f"CheckOptions: the check does not follow the translation's "
                                f"{name}")
        from f2loopy.verify.input_plan import VALUE_STYLES
        if self.value_style not in VALUE_STYLES:
            raise TypeError(f"CheckOptions: value_style must be one of {', '.join(VALUE_STYLES)}, "
                            f"not {self.value_style!r}")
        fix = object.__setattr__
        fix(self, "sizes", MappingProxyType(dict(self.sizes or {})))
        fix(self, "ranges", MappingProxyType({n: tuple(r) for n, r in
                                              (self.ranges or {}).items()}))
        if self.tolerances is not None:
            fix(self, "tolerances", MappingProxyType(
                {d: MappingProxyType(dict(t)) for d, t in self.tolerances.items()}))
        fix(self, "fortran_flags", tuple(self.fortran_flags))
        fix(self, "char_exclude", MappingProxyType(
            {n: frozenset(v) for n, v in (self.char_exclude or {}).items()}))

    def replace(self, **changes: Any) -> CheckOptions:
        """A copy with *changes*."""
        return dataclasses.replace(self, **changes)

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
