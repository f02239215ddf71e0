"""Helpers shared by the transformations."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Concatenate, ParamSpec, Protocol, Union, overload

import islpy as isl

from f2loopy.diagnostics import TransformError
from f2loopy.ir.kernel import Assignment, Kernel, TranslationUnit
from f2loopy.ir.tags import InameTag
from f2loopy.transform.match import MatchSpec

#: one name, several separated by commas (``"i, j"``), or a sequence of names
Names = Union[str, Sequence[str]]
#: a loop tag: ``"l.0"``, ``"g.1"``, ``"l.auto"``, ``"for"``, ``"unr"``,
#: ``"ilp"``, ``"vec"``, ... or an :class:`~f2loopy.ir.tags.InameTag`; None
#: for none
TagSpec = Union[str, InameTag, None]

_P = ParamSpec("_P")


class KernelTransform(Protocol[_P]):
    """A transformation as :func:`for_each_kernel` makes it: a kernel gives a
    kernel, a translation unit a translation unit."""

    @overload
    def __call__(self, kernel: Kernel, /, *args: _P.args, **kwargs: _P.kwargs) -> Kernel: ...

    @overload
    def __call__(self, kernel: TranslationUnit, /, *args: _P.args,
                 **kwargs: _P.kwargs) -> TranslationUnit: ...

    def __call__(self, kernel, /, *args, **kwargs): ...

__all__ = ["KernelTransform", "MatchSpec", "Names", "TagSpec", "for_each_kernel"]


def _resolve(name: str, known, what: str) -> str:
    known = list(known)
    if name in known:
        return name
    folded = [k for k in known if k.lower() == str(name).lower()]
    if len(folded) == 1:
        return folded[0]
    hint = difflib.get_close_matches(str(name), known, n=3)
    extra = f" (did you mean {', '.join(repr(h) for h in hint)}?)" if hint else \
        (f" (the kernel has: {', '.join(known[:12])}{', ...' if len(known) > 12 else ''})"
         if known else "")
    raise TransformError(f"no {what} named '{name}'{extra}")


def resolve_iname(kernel: Kernel, name: str) -> str:
    """*name* as the kernel spells it (Fortran names are case-insensitive)."""
    return _resolve(name, kernel.all_inames(), "iname")


def resolve_variable(kernel: Kernel, name: str) -> str:
    names = [a.name for a in kernel.args] + list(kernel.temporaries)
    return _resolve(name, names, "variable")


def parse_iname_list(spec: Names) -> list[str]:
    if isinstance(spec, str):
        return [s.strip() for s in spec.split(",") if s.strip()]
    return [str(s) for s in spec]


def unique_name(kernel: Kernel, base: str, extra_taken=()) -> str:
    taken = {n.lower() for n in kernel.all_variable_names()} | {n.lower() for n in extra_taken}
    taken |= {i.id.lower() for i in kernel.instructions}
    name, k = base, 0
    while name.lower() in taken:
        k += 1
        name = f"{base}_{k}"
    return name


def check_new_iname(kernel: Kernel, name: str) -> None:
    if name in kernel.all_variable_names():
        raise TransformError(f"the name '{name}' is already used in kernel '{kernel.name}'")


def map_expressions(insn, func):
    """Apply *func* to every expression of *insn* (assignee, value, predicates)."""
    preds = tuple(func(p) for p in insn.predicates)
    if isinstance(insn, Assignment):
        return insn.copy(assignee=func(insn.assignee), expression=func(insn.expression),
                         predicates=preds)
    return insn.copy(predicates=preds)


def rename_in_set(s: isl.Set, old: str, new: str) -> isl.Set:
    for dt in (isl.dim_type.set, isl.dim_type.param):
        idx = s.find_dim_by_name(dt, old)
        if idx >= 0:
            s = s.set_dim_name(dt, idx, new)
    return s


def for_each_kernel(func: Callable[Concatenate[Kernel, _P], Kernel]) -> KernelTransform[_P]:
    """Let transformation *func* also take a TranslationUnit (as loopy's do).

    The transformation is applied to every kernel of the unit; kernels it does
    not apply to (e.g. the iname does not exist there) are left as they are,
    but if it applies to none, its error is raised.  Substitution rules that
    the transformation rewrote at every use keep their names
    (:func:`~f2loopy.transform.rules.keep_rule_names`).
    """
    import functools

    def one(kernel, *args, **kwargs):
        from f2loopy.transform.rules import keep_rule_names
        out = func(kernel, *args, **kwargs)
        return keep_rule_names(kernel, out) if isinstance(out, Kernel) else out

    @functools.wraps(func)
    def wrapper(kernel, *args, **kwargs):
        if not isinstance(kernel, TranslationUnit):
            if not isinstance(kernel, Kernel):
                raise TransformError(f"{func.__name__}: expected a kernel, got "
                                     f"{type(kernel).__name__}")
            return one(kernel, *args, **kwargs)
        out, first_error, applied = [], None, 0
        for k in kernel:
            try:
                out.append(one(k, *args, **kwargs))
                applied += 1
            except TransformError as exc:
                if first_error is None:
                    first_error = exc
                out.append(k)
        if not applied and first_error is not None:
            raise first_error
        return TranslationUnit(out, kernel.filename, kernel.source)

    # what the signature shows: a kernel or a unit in, the same kind out
    import inspect
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    params[0] = params[0].replace(annotation="Kernel | TranslationUnit")
    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=params, return_annotation="Kernel | TranslationUnit")
    return wrapper  # type: ignore[return-value]
