"""Data layout transformations: axis tags and names, splitting array axes,
address spaces, privatisation.

Changing the layout of an argument records the Fortran caller's layout on the
argument (:attr:`~f2loopy.ir.kernel.ArrayArg.fortran_layout`); the host glue
converts between the two, so callers keep passing what the Fortran took.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import TransformError, UnsupportedArgumentError
from f2loopy.ir.expressions import index_tuple, make_subscript, map_subscripts
from f2loopy.ir.folding import NotConstant, evaluate_constant, normalize_integer
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.kernel import (
    AddressSpace, ArrayArg, ArrayLayout, Kernel, Temporary, TranslationUnit)
from f2loopy.ir.tags import ArrayAxisTag, parse_axis_tags
from f2loopy.transform.rules import map_instruction_expressions
from f2loopy.transform.util import (
    Names, for_each_kernel, resolve_iname, resolve_variable, unique_name)


def _names(spec) -> list[str]:
    if isinstance(spec, str):
        return [s.strip() for s in spec.split(",") if s.strip()]
    return list(spec)


def _with_fortran_layout(var):
    if isinstance(var, ArrayArg) and var.fortran_layout is None:
        return var.copy(fortran_layout=ArrayLayout(shape=var.shape,
                                                   lower_bounds=var.lower_bounds,
                                                   axis_tags=var.axis_tags, splits=()))
    return var


def _replace_var(kernel, var):
    if isinstance(var, Temporary):
        return kernel.copy(temporaries=kernel.temporaries.set(var.name, var))
    return kernel.copy(args=tuple(var if a.name == var.name else a for a in kernel.args))


def _const_extent(var, axis):
    try:
        return int(evaluate_constant(var.shape[axis]))
    except (NotConstant, TypeError):
        return None


@for_each_kernel
def tag_array_axes(kernel: Kernel, ary_names: Names,
                   dim_tags: str | Sequence[str] | dict[str, str]) -> Kernel:
    """Set the memory layout of arrays: ``"N0,N1"`` (N0 varies fastest),
    ``"c"``/``"f"``, ``"vec"`` (an OpenCL vector lane, constant extent 2, 3,
    4, 8 or 16), ``"sep"``; or a dict from axis names to tags."""
    for name in _names(ary_names):
        var = kernel.variable(resolve_variable(kernel, name))
        if not var.shape:
            raise TransformError(f"tag_array_axes: '{var.name}' is a scalar")
        if isinstance(dim_tags, dict):
            if not var.axis_names:
                raise TransformError(f"tag_array_axes: the axes of '{var.name}' have no names "
                                     "(use set_array_axis_names, or give the tags as a string)")
            current = [str(t) for t in var.axis_tags]
            for axis_name, tag in dim_tags.items():
                if axis_name not in var.axis_names:
                    raise TransformError(f"tag_array_axes: '{var.name}' has no axis named "
                                         f"'{axis_name}' (axes: {', '.join(map(str, var.axis_names))})")
                current[list(var.axis_names).index(axis_name)] = tag
            spec: str | Sequence[str] = ",".join(current)
        else:
            spec = dim_tags
        try:
            tags = parse_axis_tags(spec, var.ndim)
        except ValueError as exc:
            raise TransformError(f"tag_array_axes: {exc}") from None
        for axis, t in enumerate(tags):
            if t.kind == "vec":
                n = _const_extent(var, axis)
                if n not in (2, 3, 4, 8, 16):
                    raise TransformError(f"tag_array_axes: axis {axis} of '{var.name}' has "
                                         f"extent {var.shape[axis]}; a 'vec' axis needs 2, 3, 4, "
                                         "8 or 16")
            if t.kind == "sep":
                raise TransformError("tag_array_axes: 'sep' axes are not supported")
        if tags == var.axis_tags:
            continue
        new = _with_fortran_layout(var).copy(axis_tags=tags)
        kernel = _replace_var(kernel, new)
    return kernel


def tag_data_axes(kernel: Kernel | TranslationUnit, ary_names: Names,
                  dim_tags: str | Sequence[str] | dict[str, str], *,
                  skip_missing: bool = False) -> Kernel | TranslationUnit:
    """Old name of :func:`tag_array_axes`."""
    return tag_array_axes(kernel, ary_names, dim_tags, skip_missing=skip_missing)


@for_each_kernel
def set_array_axis_names(kernel: Kernel, ary_names: Names, dim_names: Names) -> Kernel:
    """Name the axes of arrays (``"i,j,k,field,e"``); the names label new
    inames made by prefetches and buffers, and axes in :func:`tag_array_axes`."""
    names = _names(dim_names)
    for name in _names(ary_names):
        var = kernel.variable(resolve_variable(kernel, name))
        if len(names) != var.ndim:
            raise TransformError(f"set_array_axis_names: '{var.name}' has {var.ndim} axes, "
                                 f"{len(names)} names given")
        kernel = _replace_var(kernel, var.copy(axis_names=tuple(names)))
    return kernel


def set_array_dim_names(kernel: Kernel | TranslationUnit, ary_names: Names,
                        dim_names: Names, *, skip_missing: bool = False
                        ) -> Kernel | TranslationUnit:
    """Old name of :func:`set_array_axis_names`."""
    return set_array_axis_names(kernel, ary_names, dim_names, skip_missing=skip_missing)


@for_each_kernel
def split_array_axis(kernel: Kernel, array_names: Names | tuple,
                     axis_nr: int | None = None, count: int | None = None,
                     order: str = "C", auto_split_inames: bool = True,
                     split_kwargs: Mapping[str, Any] | None = None) -> Kernel:
    """Split axis *axis_nr* of arrays into two: ``index - lower = inner +
    count*outer`` with ``0 <= inner < count``.

    *order* ``"C"`` puts the outer axis first, ``"F"`` the inner one; the
    paper's form ``split_array_dim(knl, ("q", 3, "F"), 4)`` is accepted.  The
    memory layout does not change (the inner axis is the faster one) until the
    axes are retagged.  New axes are named ``<name>_inner``/``<name>_outer``
    after the split axis's name.

    With *auto_split_inames* (loopy's default), a loop index that is the
    whole subscript of the split axis (``q(i, f, e)`` split along ``f``) and
    starts at the axis's lower bound is split too (:func:`split_iname` by
    *count*, into ``f_outer`` and ``f_inner``), and the new subscripts are
    those loops: ``q[i, f_inner, f_outer, e]``; *split_kwargs* go to that
    :func:`split_iname` (``outer_tag``, ``inner_tag``, ``slabs``).  Other
    subscripts (and all, with ``auto_split_inames=False``) become
    ``modulo``/floor division of the old one (constants fold at translation).
    """
    if split_kwargs and not auto_split_inames:
        raise UnsupportedArgumentError(
            "split_array_axis", "split_kwargs", dict(split_kwargs),
            "with auto_split_inames=False no loop is split")
    if isinstance(array_names, tuple) and len(array_names) in (2, 3) and \
            isinstance(array_names[1], int):
        if count is None and axis_nr is not None:
            count = axis_nr
        spec = array_names
        array_names = [spec[0]]
        axis_nr = spec[1]
        if len(spec) == 3:
            order = spec[2]
    if count is None or axis_nr is None:
        raise TransformError("split_array_axis: give the axis number and the count")
    count = int(count)
    order = order.upper()
    if order not in ("C", "F"):
        raise TransformError("split_array_axis: order must be 'C' or 'F'")
    split_loops: dict = {}
    for name in _names(array_names) if not isinstance(array_names, list) else array_names:
        kernel = _split_one(kernel, resolve_variable(kernel, name), int(axis_nr), count, order,
                            split_loops if auto_split_inames else None)
    for iname, (outer, inner) in split_loops.items():
        from f2loopy.transform.iname import split_iname
        try:
            kernel = split_iname(kernel, iname, count, outer_iname=outer, inner_iname=inner,
                                 **dict(split_kwargs or {}))
        except TransformError as exc:
            raise TransformError(f"split_array_axis: splitting loop '{iname}' with the axis "
                                 f"failed ({exc.message}); pass auto_split_inames=False to "
                                 "keep the loop", exc.span) from None
    return kernel


def split_array_dim(kernel: Kernel | TranslationUnit,
                    arrays_and_axes: tuple | Sequence[tuple], count: int,
                    auto_split_inames: bool = True,
                    split_kwargs: dict | None = None, *,
                    skip_missing: bool = False) -> Kernel | TranslationUnit:
    """Old name of :func:`split_array_axis` (``(name, axis, order)`` form).

    *auto_split_inames*, *split_kwargs* and *skip_missing* are those of
    :func:`split_array_axis`.
    """
    if isinstance(arrays_and_axes, tuple) and isinstance(arrays_and_axes[1], int):
        return split_array_axis(kernel, arrays_and_axes, count=count,
                                auto_split_inames=auto_split_inames, split_kwargs=split_kwargs,
                                skip_missing=skip_missing)
    for entry in arrays_and_axes:
        kernel = split_array_axis(kernel, entry, count=count,
                                  auto_split_inames=auto_split_inames, split_kwargs=split_kwargs,
                                  skip_missing=skip_missing)
    return kernel


def _axis_loop(kernel, expr, lb):
    """The loop index *expr* is, if it starts at *lb* (then ``expr - lb`` is
    ``inner + count*outer`` once it is split), else None."""
    from f2loopy.ir.domains import iname_to_domain_index
    from f2loopy.transform.iname import _affine_lower_bound
    if not isinstance(expr, p.Variable) or expr.name not in kernel.all_inames():
        return None
    dom = kernel.domains[iname_to_domain_index(kernel)[expr.name]]
    base = _affine_lower_bound(dom, expr.name)
    return expr.name if normalize_integer(p.Sum((base, p.Product((-1, lb))))) == 0 else None


def _split_one(kernel, name, axis, count, order, split_loops=None):
    var = kernel.variable(name)
    if not 0 <= axis < var.ndim:
        raise TransformError(f"split_array_axis: '{name}' has no axis {axis}")
    extent = _const_extent(var, axis)
    if extent is None:
        raise TransformError(f"split_array_axis: axis {axis} of '{name}' must have a constant "
                             "extent (fix_parameters first)")
    if count <= 0 or extent % count:
        raise TransformError(f"split_array_axis: extent {extent} of axis {axis} of '{name}' is "
                             f"not a multiple of {count}")
    lb = var.lower_bounds[axis]
    inner_pos, outer_pos = (axis, axis + 1) if order == "F" else (axis + 1, axis)
    shape = list(var.shape)
    lbs = list(var.lower_bounds)
    shape[axis:axis + 1] = [None, None]
    lbs[axis:axis + 1] = [0, 0]
    shape[inner_pos], shape[outer_pos] = count, extent // count
    # nesting orders: the inner axis takes the split axis's order, the outer
    # one the next; slower axes move up by one (memory layout unchanged)
    old_tags = list(var.axis_tags)
    k0 = old_tags[axis].order if old_tags[axis].kind == "nest" else None
    tags = []
    for t in old_tags:
        if t.kind == "nest" and k0 is not None and t.order > k0:
            t = ArrayAxisTag("nest", t.order + 1)
        tags.append(t)
    split_tag = old_tags[axis]
    new_tags = tags[:axis] + [None, None] + tags[axis + 1:]
    if split_tag.kind != "nest" or k0 is None:
        raise TransformError(f"split_array_axis: axis {axis} of '{name}' is tagged "
                             f"'{split_tag}'; retag it before splitting")
    new_tags[inner_pos] = ArrayAxisTag("nest", k0)
    new_tags[outer_pos] = ArrayAxisTag("nest", k0 + 1)
    names = list(var.axis_names) if var.axis_names else None
    if names is not None:
        base = names[axis] or f"dim{axis}"
        names[axis:axis + 1] = [None, None]
        names[inner_pos], names[outer_pos] = f"{base}_inner", f"{base}_outer"
    new_var = _with_fortran_layout(var)
    if isinstance(new_var, ArrayArg) and new_var.fortran_layout is not None:
        lay = new_var.fortran_layout
        new_var = new_var.copy(fortran_layout=lay.copy(
            splits=lay.splits + ((axis, count, order),)))
    new_var = new_var.copy(shape=tuple(shape), lower_bounds=tuple(lbs), axis_tags=tuple(new_tags),
                           axis_names=tuple(names) if names else None)

    def rewrite(sub):
        if sub.aggregate.name != name:
            return None
        idx = list(index_tuple(sub))
        rel = normalize_integer(p.Sum((idx[axis], p.Product((-1, lb)))))
        loop = _axis_loop(kernel, idx[axis], lb) if split_loops is not None else None
        if loop is not None:
            if loop not in split_loops:
                taken = [n for pair in split_loops.values() for n in pair]
                outer_name = unique_name(kernel, f"{loop}_outer", taken)
                split_loops[loop] = (outer_name,
                                     unique_name(kernel, f"{loop}_inner", taken + [outer_name]))
            outer, inner = (p.Variable(n) for n in split_loops[loop])
        elif isinstance(rel, (int, np.integer)):
            inner, outer = int(rel) % count, int(rel) // count
        else:
            inner = p.Call(p.Variable("modulo"), (rel, count))
            outer = p.FloorDiv(rel, count)
        parts = [None, None]
        parts[inner_pos - axis], parts[outer_pos - axis] = inner, outer
        idx[axis:axis + 1] = parts
        return make_subscript(name, idx)

    insns = tuple(map_instruction_expressions(i, lambda e: map_subscripts(e, rewrite)) for i in kernel.instructions)
    from f2loopy.ir.kernel import SubstitutionRule
    rules = FrozenMap((n, SubstitutionRule(r.name, r.arguments,
                                           map_subscripts(r.expression, rewrite), r.span))
                      for n, r in kernel.substitutions.items())
    return _replace_var(kernel, new_var).copy(instructions=insns, substitutions=rules)


def parse_address_space(value: str | AddressSpace, who: str) -> AddressSpace:
    """*value* (an :class:`AddressSpace` or its name) as an AddressSpace;
    anything else is a :class:`TransformError` of transformation *who*."""
    if isinstance(value, AddressSpace):
        return value
    try:
        return AddressSpace(str(value).strip().lower())
    except ValueError:
        raise TransformError(f"{who}: unknown address space {value!r} (valid: private, "
                             "local, global)") from None


@for_each_kernel
def set_temporary_address_space(kernel: Kernel, temp_var_names: Names,
                                address_space: str | AddressSpace) -> Kernel:
    """Put temporaries in ``"private"``, ``"local"`` or ``"global"`` memory."""
    space = parse_address_space(address_space, "set_temporary_address_space")
    temps = dict(kernel.temporaries)
    for name in _names(temp_var_names):
        n = resolve_variable(kernel, name)
        if n not in temps:
            raise TransformError(f"set_temporary_address_space: '{n}' is an argument")
        temps[n] = temps[n].copy(address_space=space)
    return kernel.copy(temporaries=FrozenMap(temps))


def set_temporary_scope(kernel: Kernel | TranslationUnit, temp_var_names: Names,
                        scope: str | AddressSpace, *, skip_missing: bool = False
                        ) -> Kernel | TranslationUnit:
    """Old name of :func:`set_temporary_address_space`."""
    return set_temporary_address_space(kernel, temp_var_names, scope,
                                       skip_missing=skip_missing)


@for_each_kernel
def privatize_temporaries_with_inames(kernel: Kernel, privatizing_inames: Names,
                                      only_var_names: Names | None = None) -> Kernel:
    """Give temporaries written inside loops *privatizing_inames* one copy per
    iteration (a new leading axis per iname), so iterations no longer share
    them (e.g. for ``ilp`` loops)."""
    inames = [resolve_iname(kernel, i) for i in _names(privatizing_inames)]
    only = None if only_var_names is None else set(_names(only_var_names))
    from f2loopy.ir.domains import combined_domain
    bounds = {}
    for i in inames:
        d = combined_domain(kernel, [i])
        try:
            lo = int(d.dim_min(0).min_val().to_python())
            hi = int(d.dim_max(0).max_val().to_python())
        except Exception:
            raise TransformError(f"privatize_temporaries_with_inames: loop '{i}' does not "
                                 "have constant bounds") from None
        bounds[i] = (lo, hi - lo + 1)
    targets = {}
    for name, t in kernel.temporaries.items():
        if only is not None and name not in only:
            continue
        if t.address_space not in (None, AddressSpace.PRIVATE):
            continue
        if any(name in ex.flags for ex in kernel.loop_exits.values()):
            continue      # a loop's condition reads it as a scalar (an 'exit' flag)
        writers = [i for i in kernel.instructions if name in i.assignee_names()]
        inside = [i for i in inames if writers and all(i in w.within_inames for w in writers)]
        if not inside:
            continue
        users = [i for i in kernel.instructions
                 if name in i.assignee_names() or _reads(i, name)]
        if any(not set(inside) <= set(u.within_inames) for u in users):
            continue
        targets[name] = inside
    if not targets:
        return kernel
    temps = dict(kernel.temporaries)
    for name, inside in targets.items():
        t = temps[name]
        temps[name] = t.copy(shape=tuple(bounds[i][1] for i in inside) + tuple(t.shape),
                             lower_bounds=tuple(bounds[i][0] for i in inside) + tuple(t.lower_bounds),
                             axis_tags=(), axis_names=None)

    def add_axes(expr):
        from f2loopy.ir.expressions import Rewriter

        class _R(Rewriter):
            def map_variable(self, e, *a, **k):
                if e.name in targets:
                    return make_subscript(e.name, [p.Variable(i) for i in targets[e.name]])
                return e

            def map_subscript(self, e, *a, **k):
                idx = tuple(self.rec(i) for i in index_tuple(e))
                if e.aggregate.name in targets:
                    return make_subscript(e.aggregate.name,
                                          [p.Variable(i) for i in targets[e.aggregate.name]]
                                          + list(idx))
                return make_subscript(e.aggregate.name, idx)

            def map_call(self, e, *a, **k):
                return p.Call(e.function, tuple(self.rec(x) for x in e.parameters))
        return _R()(expr)

    insns = tuple(map_instruction_expressions(i, add_axes) for i in kernel.instructions)
    return kernel.copy(instructions=insns, temporaries=FrozenMap(temps))


def _reads(insn, name) -> bool:
    from f2loopy.ir.expressions import variables_read
    return name in variables_read(*insn.read_expressions())


__all__ = ["tag_array_axes", "tag_data_axes", "set_array_axis_names", "set_array_dim_names",
           "split_array_axis", "split_array_dim", "set_temporary_address_space",
           "set_temporary_scope", "privatize_temporaries_with_inames"]
