"""``OPTIONAL`` dummy arguments and ``present()``.

A kernel's optional dummy argument comes with a presence flag, a
argument of role :class:`~f2loopy.ir.roles.Presence`
(``x_present``: 1 or 0) that the host glue sets: the Python glue's argument
defaults to None (absent), the Fortran glue passes on what ``present()``
says.  An absent argument's value is not read (Fortran forbids it): the
kernel gets a zero scalar or an empty buffer in its place.  ``present(x)`` in
the kernel tests the flag.

In a procedure inlined into the kernel, an optional dummy the call leaves
out is absent (``present()`` is false there, a constant), one bound to an
optional dummy of the caller is present as that one is, any other is
present.
"""

from __future__ import annotations

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.ir.kernel import ScalarArg
from f2loopy.ir.roles import Presence


def optional_attribute(reader, names) -> None:
    """Record that the dummy arguments *names* (of the unit *reader* reads)
    are optional."""
    for name in names:
        if name.lower() not in reader.dummy_names:
            raise reader.error(f"'{name}' is declared optional but is not a dummy argument",
                               name)
        reader.declare(name).attributes.add("optional")


def is_optional(sym) -> bool:
    return sym is not None and sym.is_dummy and "optional" in sym.attributes


def optional_dummies(symtab, dummies) -> list[str]:
    """Those of the dummy arguments *dummies* (names) that are optional."""
    return [d for d in dummies if "optional" in symtab.get(d).attributes]


def presence_flag(lowering, dummy: str) -> str:
    """Name of the kernel argument telling whether the kernel's optional
    dummy argument *dummy* is present (made once)."""
    st = lowering.root.st
    name = st.presence_flags.get(dummy.lower())
    if name is None:
        name = st.presence_flags[dummy.lower()] = lowering.root.fresh_name(f"{dummy}_present")
        st.dope_names.add(name)
    return name


def present_value(lowering, arg_nodes):
    """The value of ``present(a)`` in *lowering*'s unit."""
    conv = lowering.converter()
    positional, kw = conv._split_args("present", arg_nodes, {"a"})
    args = list(positional) + ([kw["a"]] if "a" in kw else [])
    if len(args) != 1:
        raise lowering.error("intrinsic 'present' takes 1 argument", "present")
    if not isinstance(args[0], F.Name) or not is_optional(lowering.symtab.get(str(args[0]))):
        raise lowering.error(f"the argument of 'present' must be an optional dummy argument "
                             f"of '{lowering.unit_name}'", "present")
    return _presence(lowering, str(args[0]))


def _presence(lowering, name: str):
    if lowering.parent is None:
        return p.Comparison(p.Variable(presence_flag(lowering, name)), "!=", np.int32(0))
    actual = lowering.optional_actuals.get(name.lower(), _ABSENT)
    if actual is None:
        return np.bool_(False)
    if actual is not _ABSENT and isinstance(actual, F.Name):
        outer = lowering.parent
        if is_optional(outer.symtab.get(str(actual))):
            return _presence(outer, str(actual))
    return np.bool_(True)


_ABSENT = object()


def optional_actuals(callee, dummies, actuals) -> dict:
    """What a call of the inlined *callee* passes for each of its optional
    dummies (lower-case name -> actual node; None: left out), for
    ``present()`` in its body."""
    return {d.lower(): a for d, a in zip(dummies, actuals, strict=True)
            if is_optional(callee.symtab.get(d))}


def presence_arguments(lowering, symtab, dummies) -> list:
    """The presence flags of the kernel's optional dummy arguments, after its
    other arguments."""
    out = []
    for d in optional_dummies(symtab, dummies):
        sym = symtab.get(d)
        if sym.derived is not None or sym.path is not None:
            raise UnsupportedFeatureError(f"optional derived-type argument '{d}' of a kernel is "
                                          "not supported", sym.span)
        from f2loopy.frontend.characters import is_character
        if is_character(sym.dtype):
            raise UnsupportedFeatureError(f"optional character argument '{d}' of a kernel is "
                                          "not supported", sym.span)
        out.append(ScalarArg(name=presence_flag(lowering, d), dtype=np.dtype(np.int32),
                             intent="in", span=sym.span, role=Presence(dummy=sym.name)))
    return out
