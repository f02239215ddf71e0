"""Work arrays of inlined procedures: local arrays whose bounds are not
constant (``real(8) :: tmp(is:ie, n)`` with ``is``, ``ie``, ``n`` dummy
arguments or module variables: Fortran's automatic arrays).

An inlined procedure's local array becomes a temporary of the kernel, one
per call site.  When its bounds, evaluated with the caller's actual
arguments, are constant, the temporary has that constant shape (a
parallel loop around the call may give each work-item its own copy,
:mod:`f2loopy.analysis.private`).  Otherwise the temporary lives in global
memory that the host glue (Python, C and Fortran alike) allocates for each
launch, sized from the kernel's scalar arguments (a scratch buffer,
:class:`f2loopy.codegen.ScratchBuffer`), as the kernel's own automatic
arrays do:

* a lower bound must be one the kernel leaves unchanged (a scalar argument
  it does not assign, a module variable, a constant);
* an extent that depends on values the kernel computes (``solve_tridiag(...,
  nz - ks + 1)`` inside ``if (ks > 0)``) is sized by its largest value:
  isl maximises it over the conditions the call is under and the loops
  around it, the computed values taken as unknown; the buffer then holds
  that many elements along the axis and the array's elements keep their
  Fortran bounds inside it.  Where no such bound exists the array is a
  located error.

The buffer is shared by every iteration of the loops around the call: the
privatisation analysis gives no work-item its own copy of a global
temporary, so those loops stay sequential unless nothing else in them
conflicts (correct, but slower than a work array of constant size, which
a work-item can hold).

A bound that the procedure assigns before using the array (``n = n + 1``
with ``tmp(n)``) is refused: Fortran sizes the array on entry.
"""

from __future__ import annotations

import islpy as isl
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F
from fparser.two.utils import walk

from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.folding import NotConstant, normalize_integer
from f2loopy.ir.isl_tools import (
    NonAffineError, align_params, expr_from_pwaff, make_space, pwaff_from_expr,
    set_from_condition, set_to_params)
from f2loopy.ir.kernel import AddressSpace


def local_array_dims(lowering, sym) -> tuple[tuple, tuple, AddressSpace | None]:
    """``(shape, lower bounds, address space)`` of the temporary that local
    array *sym* of the procedure being inlined by *lowering* becomes (see
    the module docstring).  Raises a located error where it cannot be."""
    constant = _constant_dims(lowering, sym)
    if constant is not None:
        return constant[0], constant[1], None
    for lo_node, hi_node in sym.array_dims:
        if hi_node in ("*", ":"):
            raise lowering.error(f"local array '{sym.name}' has a size that is not constant "
                                 f"('{hi_node}' is for dummy arguments): give it explicit "
                                 "bounds", sym.name, UnsupportedFeatureError)
    _check_bounds_not_assigned(lowering, sym)
    lbs, ubs = lowering.bounds_of(sym)
    shape = []
    for k, (lb, ub) in enumerate(zip(lbs, ubs, strict=True)):
        bad = [n for n in sorted(variables_read(lb)) if not _invariant(lowering, n)]
        if bad:
            raise lowering.error(
                f"the lower bound of work array '{sym.name}' (axis {k + 1}) depends on "
                f"'{bad[0]}', which the kernel computes (a work array of run-time size is "
                "device memory the host allocates for each launch: give it lower bounds the "
                "kernel takes as arguments, or pass the work array as an argument)",
                sym.name, UnsupportedFeatureError)
        extent = normalize_integer(p.Sum((ub, p.Product((-1, lb)), 1)))
        if not all(_invariant(lowering, n) for n in variables_read(extent)):
            extent = _largest_extent(lowering, sym, k, extent)
        shape.append(extent)
    return tuple(shape), tuple(lbs), AddressSpace.GLOBAL


def _constant_dims(lowering, sym):
    """``(shape, lower bounds)`` of *sym* if its bounds are constants (as
    written, whatever the call), else None."""
    shape, lbs = [], []
    for lo_node, hi_node in sym.array_dims:
        if hi_node in ("*", ":"):
            return None
        try:
            lo = 1 if lo_node is None else int(lowering.constant(lo_node))
            hi = int(lowering.constant(hi_node))
        except (FortranError, NotConstant):
            return None
        shape.append(max(0, hi - lo + 1))
        lbs.append(lo)
    return tuple(shape), tuple(lbs)


def assigned_name(lowering, nodes) -> str | None:
    """The first name in the bound expressions *nodes* (fparser nodes, None
    for an absent bound) that the procedure being lowered assigns, or None."""
    for node in nodes:
        if node is None:
            continue
        for name in [node] if isinstance(node, F.Name) else walk(node, F.Name):
            if str(name).lower() in lowering.written:
                return str(name)
    return None


def _check_bounds_not_assigned(lowering, sym) -> None:
    name = assigned_name(lowering, (n for dim in sym.array_dims for n in dim
                                    if isinstance(n, F.Base)))
    if name is not None:
        raise lowering.error(
            f"the bounds of work array '{sym.name}' depend on '{name}', which "
            f"'{lowering.unit_name}' assigns (Fortran sizes the array when the "
            "procedure starts): size it with a variable the procedure leaves "
            "unchanged", sym.name, UnsupportedFeatureError)


def _invariant(lowering, name: str) -> bool:
    """Whether kernel variable *name* keeps its value during a launch: a
    scalar argument the kernel does not assign (or an extent the glue
    passes), or a scalar module variable (that no procedure the kernel
    inlines assigns one is checked once the kernel is built,
    :func:`f2loopy.frontend.argument_facts.check_bounds_unchanged`)."""
    if lowering.root.is_invariant_param(name):
        return True
    sym = lowering.st.storage_by_name.get(name)
    return sym is not None and not sym.is_array


def _call_site_context(lowering, space_names):
    """The conditions the call of *lowering*'s procedure is under and the
    domains of the loops around it, as one isl set of parameters (those it
    cannot express are left out: a larger set, a safe bound)."""
    ancestors = []
    host = lowering.parent
    while host is not None:
        ancestors.append(host)
        host = host.parent
    inames = {s.iname for s in lowering.st.loops if any(s.owner is a for a in ancestors)}
    pieces = []
    for dom in lowering.domains:
        dims = list(dom.get_var_names(isl.dim_type.set))
        if dims and set(dims) <= inames:
            pieces.append(set_to_params(dom, dims).params())
    for cond in lowering.st.predicates[:lowering.entry_predicates]:
        names = sorted(variables_read(cond))
        try:
            pieces.append(set_from_condition(cond, make_space([], names).params()))
        except (NonAffineError, isl.Error, TypeError, ValueError):
            continue
    result = isl.Set.universe(make_space([], list(space_names)).params())
    for s in pieces:
        result, s = align_params(result, s)
        result = result & s
    return result


def _largest_extent(lowering, sym, axis: int, extent):
    """The largest value *extent* (of axis *axis* of work array *sym*) takes
    where the call runs, as an expression the host can compute."""
    names = sorted(variables_read(extent))
    message = (f"work array '{sym.name}' has an extent (axis {axis + 1}) that depends on "
               "values the kernel computes, and f2loopy finds no largest value for it in "
               "terms of the kernel's arguments (a work array of run-time size is device "
               "memory the host allocates for each launch): pass the work array as an "
               "argument, or size it with the kernel's arguments")
    try:
        space = make_space(["_extent"], names)
        e = isl.PwAff.var_on_domain(isl.LocalSpace.from_space(space), isl.dim_type.set, 0)
        where = e.eq_set(pwaff_from_expr(extent, space))
        context = _call_site_context(lowering, names)
        where, context = align_params(where, context)
        where = where & isl.Set.from_params(context).add_dims(isl.dim_type.set, 1) \
            .set_dim_name(isl.dim_type.set, 0, "_extent")
        for n in list(where.get_var_names(isl.dim_type.param)):
            if not _invariant(lowering, n):
                where = where.project_out(isl.dim_type.param,
                                          where.find_dim_by_name(isl.dim_type.param, n), 1)
        # (where the call never runs the value is of no matter: the buffer
        # of a negative extent is empty)
        bound = expr_from_pwaff(where.dim_max(0).coalesce())
    except (NonAffineError, isl.Error, NotImplementedError):
        raise lowering.error(message, sym.name, UnsupportedFeatureError) from None
    if not _host_computable(bound):
        raise lowering.error(message, sym.name, UnsupportedFeatureError)
    return normalize_integer(bound)


def _host_computable(expr) -> bool:
    """Whether *expr* uses only what the glues and OpenCL compute alike:
    integers, variables, +, *, floor division, min and max."""
    if isinstance(expr, (int, p.Variable)):
        return True
    if isinstance(expr, (p.Sum, p.Product)):
        return all(_host_computable(c) for c in expr.children)
    if isinstance(expr, p.FloorDiv):
        return _host_computable(expr.numerator) and _host_computable(expr.denominator)
    if isinstance(expr, p.Call) and isinstance(expr.function, p.Variable) and \
            expr.function.name in ("min", "max"):
        return all(_host_computable(a) for a in expr.parameters)
    return False
