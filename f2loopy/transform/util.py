"""Helpers shared by the transformations."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any, Concatenate, ParamSpec, Protocol, Union, overload

import islpy as isl

from f2loopy.diagnostics import F2LoopyError, TransformError
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

    # with the wrapper's own keyword (a ParamSpec cannot add one)
    @overload
    def __call__(self, kernel: Kernel, /, *args: Any, skip_missing: bool,
                 **kwargs: Any) -> Kernel: ...

    @overload
    def __call__(self, kernel: TranslationUnit, /, *args: Any, skip_missing: bool,
                 **kwargs: Any) -> TranslationUnit: ...

    def __call__(self, kernel, /, *args, **kwargs): ...

__all__ = ["KernelTransform", "MatchSpec", "Names", "NameNotFoundError", "TagSpec",
           "for_each_kernel"]


class NameNotFoundError(TransformError):
    """The kernel has no iname, variable, instruction, rule... of the name a
    transformation was given (a kernel of a translation unit that
    :func:`for_each_kernel` may skip when asked to)."""


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
    raise NameNotFoundError(f"no {what} named '{name}'{extra}")


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

    The transformation is applied to every kernel of the unit, or the unit
    is refused: an error in one kernel is raised (naming the kernel), never
    a unit half transformed.  Only with the keyword-only option
    ``skip_missing=True`` are kernels that lack the name it was given (a
    :class:`NameNotFoundError`: no such iname, variable, instruction...)
    left as they are; it is still an error if no kernel has it, and any
    other refusal (an iname already tagged...) is raised.  Substitution
    rules that the transformation rewrote at every use keep their names
    (:func:`~f2loopy.transform.rules.keep_rule_names`).
    """
    import functools

    def one(kernel, *args, **kwargs):
        from f2loopy.transform.rules import keep_rule_names
        out = func(kernel, *args, **kwargs)
        return keep_rule_names(kernel, out) if isinstance(out, Kernel) else out

    @functools.wraps(func)
    def wrapper(kernel, *args, skip_missing: bool = False, **kwargs):
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
            except NameNotFoundError as exc:
                if not skip_missing:
                    raise _in_kernel(exc, k, len(kernel), hint=True) from None
                first_error = first_error or exc
                out.append(k)
            except TransformError as exc:
                raise _in_kernel(exc, k, len(kernel)) from None
        if not applied and first_error is not None:
            raise first_error
        return TranslationUnit(out, kernel.filename, kernel.source)

    # what the signature shows: a kernel or a unit in, the same kind out
    import inspect
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    params[0] = params[0].replace(annotation="Kernel | TranslationUnit")
    skip = inspect.Parameter("skip_missing", inspect.Parameter.KEYWORD_ONLY, default=False,
                             annotation="bool")
    at = next((k for k, q in enumerate(params) if q.kind == inspect.Parameter.VAR_KEYWORD),
              len(params))
    params.insert(at, skip)
    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=params, return_annotation="Kernel | TranslationUnit")
    return wrapper  # type: ignore[return-value]


def _in_kernel(exc: TransformError, kernel: Kernel, count: int, *, hint: bool = False):
    """*exc* (raised for *kernel* of a unit of *count* kernels) naming it."""
    if count == 1:
        return exc
    extra = " (pass skip_missing=True to leave the kernels without it unchanged)" \
        if hint else ""
    out = type(exc).__new__(type(exc))
    F2LoopyError.__init__(out, f"in kernel '{kernel.name}' of the unit: {exc.message}{extra}",
                          exc.span, exc.notes)
    out.__dict__.update({k: v for k, v in exc.__dict__.items()
                         if k not in ("message", "span", "notes")})
    return out
