"""Specialising a kernel for parameter values, and stating assumptions."""

from __future__ import annotations

import re

import islpy as isl
import numpy as np

from f2loopy.ir.types import is_integer, is_logical
from f2loopy.diagnostics import TransformError
from f2loopy.ir.expressions import substitute
from f2loopy.ir.folding import cast_value, fold_constants
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import align_params, dim_type
from f2loopy.ir.kernel import ArrayArg, Kernel, ScalarArg, SubstitutionRule
from f2loopy.ir.roles import Dummy
from f2loopy.transform.util import for_each_kernel, map_expressions

_ISL_WORDS = {"and", "or", "not", "mod", "floor", "ceil", "min", "max", "exists", "true",
              "false", "infty"}


def _convert_value(arg: ScalarArg, value):
    dt = np.dtype(arg.dtype)
    if isinstance(value, (np.ndarray, list, tuple, dict, str)) or value is None:
        raise TransformError(f"fix_parameters: value for '{arg.name}' must be a number, got "
                             f"{type(value).__name__}")
    if is_logical(dt):
        if not isinstance(value, (bool, np.bool_)):
            raise TransformError(f"fix_parameters: '{arg.name}' is logical; give True or False")
        return np.bool_(value)
    if is_integer(dt):
        if isinstance(value, (bool, np.bool_)) or not float(value).is_integer():
            raise TransformError(f"fix_parameters: '{arg.name}' is an integer; got {value!r}")
        info = np.iinfo(dt)
        if not info.min <= int(value) <= info.max:
            raise TransformError(f"fix_parameters: {value} does not fit in '{arg.name}' "
                                 f"({dt.name})")
        return dt.type(int(value))
    if isinstance(value, (bool, np.bool_)):
        raise TransformError(f"fix_parameters: '{arg.name}' is numeric; got {value!r}")
    # keep the kernel's precision: p_Gamma=1.4 in a single-precision kernel is 1.4f
    return cast_value(value, dt)


@for_each_kernel
def fix_parameters(kernel: Kernel, **values: int | float | bool | np.generic) -> Kernel:
    """Specialise *kernel* for fixed values of scalar arguments.

    ``fix_parameters(knl, Nq=8, p_Gamma=1.4)``: every use of the arguments is
    replaced by the value, converted to the argument's declared type (so a
    single-precision kernel stays single precision), loop bounds and array
    sizes become constants, and the generated kernel no longer takes the
    arguments.  The host glue still accepts them, in the Fortran order, and
    checks that callers pass exactly the fixed values.  Names are matched
    case-insensitively, as in Fortran.
    """
    if not values:
        return kernel
    by_lower = {a.name.lower(): a for a in kernel.args}
    written = kernel.written_variables()
    fixed = {}
    for name, value in values.items():
        arg = by_lower.get(name.lower())
        if arg is None:
            raise TransformError(f"fix_parameters: '{name}' is not an argument of kernel "
                                 f"'{kernel.name}' (arguments: "
                                 f"{', '.join(a.name for a in kernel.args)})")
        if not isinstance(arg, ScalarArg):
            raise TransformError(f"fix_parameters: '{arg.name}' is an array, not a scalar")
        if arg.name in written:
            raise TransformError(f"fix_parameters: '{arg.name}' is written by the kernel and "
                                 "cannot be fixed")
        v = _convert_value(arg, value)
        if arg.fixed_value is not None and arg.fixed_value != v:
            raise TransformError(f"fix_parameters: '{arg.name}' is already fixed to "
                                 f"{arg.fixed_value}")
        fixed[arg.name] = v
    return _apply_fixed(kernel, fixed)


_FIX_ITEM = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([+-]?[0-9]{1,18})\s*")


def parse_fixed_values(text: str, *, who: str = "fix") -> dict[str, int]:
    """The integer values of ``"KLEV=137, NCLV=5"`` (a recipe's ``fix``
    option, given as ``-D fix=KLEV=137``) as a dict for
    :func:`fix_parameters`; *who* starts the messages (``"auto: fix"``).

    :raises TransformError: the text is not ``NAME=INTEGER`` items separated
        by commas, or names one parameter twice."""
    if not isinstance(text, str):
        raise TransformError(f"{who}: give NAME=INTEGER items separated by commas "
                             f"(-D fix=KLEV=137), not {text!r}")
    out: dict[str, int] = {}
    for item in text.split(","):
        m = _FIX_ITEM.fullmatch(item)
        if m is None:
            raise TransformError(f"{who}: {item.strip()!r} is not NAME=INTEGER "
                                 "(-D fix=KLEV=137 or -D fix=\"KLEV=137, NCLV=5\")")
        if m.group(1).lower() in (n.lower() for n in out):
            raise TransformError(f"{who}: '{m.group(1)}' is given twice")
        out[m.group(1)] = int(m.group(2))
    return out


def _apply_fixed(kernel: Kernel, fixed: dict) -> Kernel:
    def subst(expr):
        return fold_constants(substitute(expr, lambda n: fixed.get(n)))

    def subst_shape(t):
        return tuple(None if s is None else subst(s) for s in t)

    args = []
    for a in kernel.args:
        if isinstance(a, ScalarArg) and a.name in fixed:
            a = a.copy(fixed_value=fixed[a.name])
        elif isinstance(a, ArrayArg):
            a = a.copy(shape=subst_shape(a.shape), lower_bounds=subst_shape(a.lower_bounds))
            if a.fortran_layout is not None:
                lay = a.fortran_layout
                a = a.copy(fortran_layout=lay.copy(shape=subst_shape(lay.shape),
                                                   lower_bounds=subst_shape(lay.lower_bounds)))
        args.append(a)
    temps = FrozenMap((n, t.copy(shape=subst_shape(t.shape),
                                 lower_bounds=subst_shape(t.lower_bounds)))
                      for n, t in kernel.temporaries.items())
    insns = tuple(map_expressions(i, subst) for i in kernel.instructions)
    rules = FrozenMap((n, SubstitutionRule(r.name, r.arguments, fold_constants(substitute(
        r.expression, lambda x: None if x in r.arguments else fixed.get(x))), r.span))
        for n, r in kernel.substitutions.items())
    domains = tuple(_fix_in_set(d, fixed) for d in kernel.domains)
    assumptions = _fix_in_set(kernel.assumptions, fixed)
    return kernel.copy(args=tuple(args), temporaries=temps, instructions=insns,
                       substitutions=rules, domains=domains, assumptions=assumptions)


def _fix_in_set(s: isl.Set, fixed: dict) -> isl.Set:
    for name, value in fixed.items():
        idx = s.find_dim_by_name(dim_type.param, name)
        if idx < 0:
            continue
        if not isinstance(value, (int, np.integer)) or isinstance(value, np.bool_):
            raise TransformError(f"fix_parameters: '{name}' bounds a loop but its value "
                                 f"{value!r} is not an integer")
        s = s.fix_val(dim_type.param, idx, isl.Val(str(int(value)))) \
            .project_out(dim_type.param, idx, 1)
    return s.coalesce()


@for_each_kernel
def assume(kernel: Kernel, assumptions: str | isl.Set) -> Kernel:
    """Tell the kernel facts about its integer parameters, e.g.
    ``assume(knl, "n >= 1 and n mod 16 = 0")`` (isl syntax).

    Code generation uses them to drop guards; the host glue checks them on
    every call and refuses arguments that violate them.
    """
    if isinstance(assumptions, isl.Set):
        new = assumptions if assumptions.is_params() else assumptions.params()
    else:
        text = str(assumptions).strip()
        params = {a.name.lower(): a.name for a in kernel.args
                  if isinstance(a, ScalarArg) and a.fixed_value is None
                  and is_integer(np.dtype(a.dtype)) and a.name not in kernel.written_variables()}
        if text.startswith("[") or text.startswith("{"):
            try:
                new = isl.Set(text)
            except isl.Error:
                raise TransformError(f"assume: cannot parse {text!r}") from None
        else:
            def rename(m):
                word = m.group(0)
                if word.lower() in _ISL_WORDS:
                    return word
                if word.lower() not in params:
                    raise TransformError(f"assume: '{word}' is not an integer argument of "
                                         f"kernel '{kernel.name}' that could be assumed about "
                                         f"(have: {', '.join(sorted(params.values())) or 'none'})")
                used.add(params[word.lower()])
                return params[word.lower()]
            used: set[str] = set()
            body = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", rename, text)
            try:
                new = isl.Set(f"[{', '.join(sorted(used))}] -> {{ : {body} }}")
            except isl.Error:
                raise TransformError(f"assume: cannot parse {text!r} (isl syntax, e.g. "
                                     "'n >= 1 and n mod 16 = 0')") from None
        for n in new.get_var_names(dim_type.param):
            if n not in params.values():
                raise TransformError(f"assume: '{n}' is not an integer argument of kernel "
                                     f"'{kernel.name}'")
    if new.is_empty():
        raise TransformError(f"assume: {assumptions!r} can never hold")
    old, new = align_params(kernel.assumptions, new)
    return kernel.copy(assumptions=(old & new).coalesce())


@for_each_kernel
def specialize_parameters(kernel: Kernel, *, names: tuple[str, ...] | list[str]) -> Kernel:
    """Compile *kernel* per value of the integer scalar arguments *names*
    (runtime specialisation; names match case-insensitively, as in Fortran).

    Unlike :func:`fix_parameters` the values are not known at translation
    time: the arguments stay symbolic in the kernel's analysis and the
    kernel still takes them, but the generated code reads them as
    compile-time constants (a macro per argument, defined in the build
    options), so that temporaries dimensioned by them may become private
    arrays (:func:`~f2loopy.transform.scc.demote_temporaries`) and loops over
    them have constant trip counts.  The host glue builds and caches one
    program per tuple of values, the first time it is called with it.

    :raises TransformError: a name is not an integer scalar argument that the
        kernel only reads (or is fixed already).
    """
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise TransformError(f"specialize_parameters: names is a list of argument names, "
                             f"not {names!r}")
    by_lower = {a.name.lower(): a for a in kernel.args}
    written = kernel.written_variables()
    chosen = list(kernel.options.specialized)
    for name in names:
        arg = by_lower.get(name.lower())
        if not isinstance(arg, ScalarArg) or not is_integer(np.dtype(arg.dtype)):
            raise TransformError(f"specialize_parameters: '{name}' is not an integer scalar "
                                 f"argument of kernel '{kernel.name}'")
        if arg.fixed_value is not None:
            raise TransformError(f"specialize_parameters: '{arg.name}' is fixed to "
                                 f"{arg.fixed_value} already")
        if not isinstance(arg.role, Dummy):
            raise TransformError(f"specialize_parameters: '{arg.name}' is {arg.what}, not a "
                                 "dummy argument the caller passes")
        if arg.name in written:
            raise TransformError(f"specialize_parameters: '{arg.name}' is written by the "
                                 "kernel; only arguments it reads can be compile-time constants")
        if arg.name not in chosen:
            chosen.append(arg.name)
    if tuple(chosen) == kernel.options.specialized:
        return kernel
    return kernel.copy(options=kernel.options.copy(specialized=tuple(chosen)))
