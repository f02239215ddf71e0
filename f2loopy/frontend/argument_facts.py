"""Facts about a procedure's arguments that the kernel records or checks:
the binding label of a ``bind(c)`` procedure, F77's ``dimension a(1)``
dummies (assumed size for the glue), and bounds that depend on module
variables the kernel assigns."""

from __future__ import annotations

from fparser.two import Fortran2003 as F
from fparser.two.utils import walk

from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.kernel import ArrayArg
from f2loopy.ir.roles import Stored


def bind_name(proc) -> str | None:
    """The binding label of a ``bind(c)`` procedure (its name in lower case
    without ``name=``), or None."""
    spec = next(iter(walk(proc.node.children[0], F.Language_Binding_Spec)), None)
    if spec is None:
        return None
    label = spec.items[0]
    name = str(label)[1:-1].strip() if label is not None else proc.name.lower()
    from f2loopy.escape import is_identifier
    return name if is_identifier(name, 63) else None


def check_bounds_unchanged(kernel) -> None:
    """A module variable in the bounds of an array argument (``xs(nmat)``)
    must keep its value in the kernel: a procedure the kernel inlines may
    assign it, which the declarations could not see."""
    written = kernel.written_variables()
    for a in kernel.args:
        if not isinstance(a, ArrayArg):
            continue
        for e in (*a.shape, *a.lower_bounds):
            for n in sorted(variables_read(e) if e is not None else ()):
                if n in written and kernel.arg_dict.get(n) is not None and \
                        isinstance(kernel.arg_dict[n].role, Stored):
                    raise UnsupportedFeatureError(
                        f"the bounds of '{a.name}' depend on module variable '{n}', which the "
                        "subroutine or a procedure it calls assigns: not supported (give "
                        f"'{a.name}' bounds the subroutine leaves unchanged)", a.span)
    # the same of local and work arrays of run-time size (Fortran sizes them
    # on entry; the kernel would index them with the changed value)
    for t in kernel.temporaries.values():
        for e in (*t.shape, *t.lower_bounds):
            for n in sorted(variables_read(e) if e is not None else ()):
                if n in written and kernel.arg_dict.get(n) is not None and \
                        isinstance(kernel.arg_dict[n].role, Stored):
                    raise UnsupportedFeatureError(
                        f"the bounds of local array '{t.name}' depend on module variable "
                        f"'{n}', which the subroutine or a procedure it calls assigns: not "
                        "supported (Fortran sizes the array on entry; size it with values the "
                        "subroutine leaves unchanged)", t.span)


def last_extent_one(sym) -> bool:
    """Whether the last axis of dummy *sym* is declared ``(1)`` (``a(1)``,
    ``b(n, 1)``, no lower bound)."""
    lo, hi = sym.dims[-1]
    return lo is None and isinstance(hi, F.Int_Literal_Constant) and str(hi) == "1"
