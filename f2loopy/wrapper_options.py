"""What of a compiler's command line ``f2loopyfc`` hands to the translation.

``make FFLAGS="-O2 -DUSE_OPENCL -Iinclude"``: the original subroutines and
their kernels go into one object, so the translation must read the file as
the compiler does, or ``foo`` and ``foo_cl`` compute different things.
:func:`translation_options` takes from the compiler's arguments

* ``-D NAME[=VALUE]`` and ``-U NAME`` (joined or not, in command-line order,
  as the preprocessor applies them): macros of the preprocessor, and values
  of the transformation script as ``f2loopy translate -D`` gives them; the
  preprocessor always sees the compiler's text (a value whose text the
  script's literal would change, such as ``"abc"`` or ``(8,4)``, reaches the
  script as that text);
* ``-I DIR``: where ``#include`` looks, and where used modules are found;
* ``-ffixed-form`` / ``-ffree-form``: the source form;
* ``-fdefault-real-8`` with ``-fdefault-double-8``: default REAL is kind 8
  (:mod:`f2loopy.kind_flags`; ``-fdefault-real-8`` alone is refused, as
  gfortran then makes DOUBLE PRECISION REAL(16));

and refuses, for a file with a ``!$loopy`` block, the options that change
what the Fortran means in ways the translation cannot follow (default kinds,
line lengths, ``d`` lines, other include options), rather than build an
object whose two halves disagree.  A ``-D`` name with a leading underscore
reaches the preprocessor only, never the transformation script.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_MACRO_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: options a translation cannot follow: prefix -> what it changes
REFUSED = {
    "-fdefault-real-": "the default real kind",
    "-fdefault-double-": "the double precision kind",
    "-fdefault-integer-": "the default integer kind",
    "-freal-4-real-": "the kind of real(4)",
    "-freal-8-real-": "the kind of real(8)",
    "-finteger-4-integer-": "the kind of integer(4)",
    "-fd-lines-as-": "what 'd' lines are",
    "-ffree-line-length-": None,          # (only lengths: accepted, see below)
    "-ffixed-line-length-": "the fixed-form line length",
    "-iquote": "where #include looks",
    "-isystem": "where #include looks",
    "-idirafter": "where #include looks",
    "-include": "what is included",
    "-imacros": "what is included",
}
#: what the form options mean
_FORMS = {"-ffixed-form": True, "-ffree-form": False}


class OptionError(ValueError):
    """A compiler option the translation cannot follow."""


@dataclass
class TranslationOptions:
    """The translation's share of a compiler command line."""

    #: NAME -> the text after ``=`` (``"1"`` for ``-D NAME``), in order
    macros: dict = field(default_factory=dict)
    undefines: list = field(default_factory=list)
    include_dirs: list = field(default_factory=list)
    fixed_form: bool | None = None
    #: ``-cpp`` (True), ``-nocpp`` (False), neither (None): the last one given
    cpp: bool | None = None
    #: 8 under ``-fdefault-real-8 -fdefault-double-8``, else 4
    default_real_kind: int = 4


def translation_options(options) -> TranslationOptions:
    """The :class:`TranslationOptions` of a compiler's *options* (the command
    line without its sources and ``-o``); :class:`OptionError` for an option
    the translation cannot follow."""
    from f2loopy.kind_flags import check_kind_flags
    out = TranslationOptions()
    i = 0
    options = list(options)
    kinds = []
    while i < len(options):
        a = options[i]
        i += 1
        if a in ("-D", "-U", "-I") or (a[:2] in ("-D", "-U", "-I") and len(a) > 2):
            flag, value = a[:2], a[2:]
            if not value:
                if i >= len(options):
                    raise OptionError(f"{flag} without a value")
                value = options[i]
                i += 1
            _apply(out, flag, value)
        elif a in _FORMS:
            out.fixed_form = _FORMS[a]
        elif a in ("-cpp", "-nocpp"):
            out.cpp = a == "-cpp"
        elif a == "-ffixed-line-length-72":
            pass                                      # the translator's own
        elif a in ("-fdefault-real-8", "-fdefault-double-8"):
            kinds.append(a)
        else:
            for prefix, what in REFUSED.items():
                if a.startswith(prefix) and what is not None:
                    raise OptionError(f"{a} changes {what}, which the translation of a file "
                                      "with a !$loopy block cannot follow (the kernels would "
                                      "compute something else than the original)")
    try:
        out.default_real_kind = check_kind_flags(kinds)
    except ValueError as exc:
        raise OptionError(str(exc)) from None
    return out


def _apply(out: TranslationOptions, flag: str, value: str) -> None:
    if flag == "-I":
        out.include_dirs.append(value)
        return
    name, eq, text = value.partition("=")
    if not _MACRO_RE.fullmatch(name):
        raise OptionError(f"{flag}{value}: a function-like or malformed macro, which the "
                          "translation cannot pass on")
    if flag == "-D":
        out.macros.pop(name, None)
        out.macros[name] = text if eq else "1"
        if name in out.undefines:
            out.undefines.remove(name)
    else:
        out.macros.pop(name, None)
        if name not in out.undefines:
            out.undefines.append(name)


def script_values(macros: dict) -> dict:
    """The ``-D`` values of :meth:`TranslationOptions.macros` as the
    translation takes them: each a Python literal where the preprocessor then
    sees exactly the compiler's text, else the text itself."""
    from f2loopy.cli_tools import literal_value
    from f2loopy.escape import is_identifier
    from f2loopy.preprocessor import macro_text
    out = {}
    for name, text in macros.items():
        # a name with a leading underscore (-D_DEBUG) is a macro of the
        # preprocessor only: the script never sees it (as for 'translate -D')
        if not is_identifier(name, 63):
            raise OptionError(f"-D{name[:80]}: macro names of the translation are "
                              "identifiers of at most 63 characters")
        value = literal_value(text)
        out[name] = value if macro_text(value) == text else text
    return out
