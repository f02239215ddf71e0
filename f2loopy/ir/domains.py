"""Loop domains of a kernel: which domain introduces which iname, and the
combined iteration domain of a set of inames."""

from __future__ import annotations

import islpy as isl

from f2loopy.ir.isl_tools import (
    align_params, param_names, reorder_set, set_names, set_to_params)


def iname_to_domain_index(kernel) -> dict[str, int]:
    """Map each iname to the index of the domain that introduces it (a new
    dict: the kernel keeps its own, computed once)."""
    return kernel.iname_domain_index.to_dict()


def iname_closure(kernel, inames) -> list[str]:
    """*inames* plus every iname their domains depend on, in kernel order."""
    all_inames = kernel.all_inames()
    known = set(all_inames)
    where = iname_to_domain_index(kernel)
    result = set()
    stack = [i for i in inames if i in known]
    while stack:
        i = stack.pop()
        if i in result:
            continue
        result.add(i)
        dom = kernel.domains[where[i]]
        stack.extend(set_names(dom))
        stack.extend(n for n in param_names(dom) if n in known)
    return [i for i in all_inames if i in result]


def combined_domain(kernel, inames, *, with_assumptions: bool = True) -> isl.Set:
    """The iteration domain over exactly *inames* (in the given order).

    Domains that introduce any of *inames*, and the domains they depend on, are
    intersected; inames outside *inames* are projected out (existentially), so
    the result says for which values of *inames* some iteration exists.
    Parameters are the kernel parameters and data-dependent bound variables.
    """
    inames = list(inames)
    closure = iname_closure(kernel, inames)
    where = iname_to_domain_index(kernel)
    dom_ids = sorted({where[i] for i in closure})
    result = None
    for idx in dom_ids:
        d = reorder_set(kernel.domains[idx], closure)
        result = d if result is None else _intersect(result, d)
    if result is None:
        result = isl.Set.universe(isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=[]))
    if with_assumptions and kernel.assumptions is not None:
        assumptions = kernel.assumptions
        if not assumptions.is_params():
            assumptions = assumptions.params()
        result = _intersect(result, assumptions)
    return reorder_set(result, inames)


def _intersect(a: isl.Set, b: isl.Set) -> isl.Set:
    if b.is_params():
        a, b = align_params(a, b)
        return a.intersect_params(b)
    a, b = align_params(a, b)
    return a & b


def constant_trip_count(kernel, iname: str) -> int | None:
    """Largest trip count of *iname* over all values of the parameters and of
    the inames its bounds depend on (a tile fetched at ``16*i_outer + 1``
    has length 16), if that is a constant; else None."""
    try:
        outer = [i for i in iname_closure(kernel, [iname]) if i != iname]
        dom = combined_domain(kernel, outer + [iname])
        if outer:
            dom = set_to_params(dom, outer)
        n = (dom.dim_max(0) - dom.dim_min(0) + 1).max_val()
    except isl.Error:
        return None
    if n.is_infty() or n.is_nan():
        return None
    return int(n.to_python())


