"""precompute and add_prefetch: compute a substitution rule (or fetch an
array) into a temporary ahead of its uses.

Given a rule and *sweep inames*, the values the rule takes at its uses while
the sweep inames vary (the *footprint*, computed exactly with isl) are
computed by a new loop nest over *precompute inames* into a temporary, and the
uses read the temporary.  The compute loop runs inside the loops the values
depend on (the *outer* inames) and nowhere else: a flux that does not depend
on ``i`` is computed once per ``(e, k)``, not once per ``i``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.ir.types import kernel_type_inferrer
from f2loopy.diagnostics import TransformError
from f2loopy.ir.domains import combined_domain
from f2loopy.ir.expressions import make_subscript, substitute, variables_read
from f2loopy.ir.folding import normalize_integer
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import (
    NonAffineError, align_params, dim_type, lazy_affs, pwaff_from_expr, range_constraint,
    reorder_set, set_to_params)
from f2loopy.ir.kernel import AddressSpace, Assignment, Kernel, SubstitutionRule, Temporary
from f2loopy.transform.iname import parse_tag
from f2loopy.transform.match import parse_match
from f2loopy.transform.rules import (
    RuleAwareRewriter, map_instruction_expressions, canonicalize_rules, expand_rules, rule_calls)
from f2loopy.transform.util import (
    NameNotFoundError, MatchSpec, Names, TagSpec, check_new_iname, for_each_kernel, parse_iname_list, resolve_iname, unique_name)


def _resolve_rule(kernel, subst_use) -> str:
    if isinstance(subst_use, (list, tuple)):
        if len(subst_use) != 1:
            raise TransformError("precompute: give one substitution rule")
        subst_use = subst_use[0]
    name = str(subst_use)
    if name in kernel.substitutions:
        return name
    folded = [n for n in kernel.substitutions if n.lower() == name.lower()]
    if len(folded) == 1:
        return folded[0]
    raise NameNotFoundError(f"precompute: no substitution rule named '{name}' (rules: "
                         f"{', '.join(sorted(kernel.substitutions)) or 'none'})")


def _uses(kernel, rule_name, match):
    """Instructions using *rule_name* (directly or through other rules) with
    the argument tuples of the uses, as if every other rule were expanded."""
    rules = kernel.substitutions
    others = set(rules) - {rule_name}
    # rules that lead (directly or through others) to the one precomputed
    calls = {n: {c.function.name for c in rule_calls(r.expression, rules)}
             for n, r in rules.items()}
    reaching = {rule_name}
    changed = True
    while changed:
        changed = False
        for n, called in calls.items():
            if n not in reaching and called & reaching:
                reaching.add(n)
                changed = True
    out = []
    for insn in kernel.instructions:
        direct = {c.function.name for e in insn.read_expressions()
                  for c in rule_calls(e, rules)}
        if not direct & reaching or not match.match(kernel, insn):
            continue
        args: list = []
        for e in insn.read_expressions():
            expanded = expand_rules(e, rules, only=others & reaching)
            args.extend(c.parameters for c in rule_calls(expanded, {rule_name: None}))
        if args:
            out.append((insn, args))
    return out


@for_each_kernel
def precompute(kernel: Kernel, subst_use: str | Sequence[str], sweep_inames: Names = (),
               within: MatchSpec = None, storage_axes: Names | Sequence[int] | None = None,
               temporary_name: str | None = None, precompute_inames: Names | None = None,
               precompute_outer_inames: Names | None = None,
               storage_axis_to_tag: Mapping[str | int, TagSpec] | None = None,
               default_tag: TagSpec = "l.auto", dtype: np.dtype | type | str | None = None,
               fetch_bounding_box: bool = False,
               temporary_address_space: str | AddressSpace | None = None,
               temporary_scope: str | AddressSpace | None = None,
               compute_insn_id: str | None = None,
               _full_axes: Collection[int] | None = None,
               _array_extents: Sequence | None = None) -> Kernel:
    """Compute rule *subst_use* into a temporary before its uses.

    :arg sweep_inames: the loops over which the stored values are gathered
        (their footprint becomes the temporary's extent).
    :arg storage_axes: which rule arguments index the temporary (default: all
        arguments; for a rule without arguments, the sweep inames it uses).
    :arg precompute_inames: names of the new loops that fill the temporary,
        one per storage axis (they also name its axes).
    :arg default_tag: tag of the new loops (``"l.auto"`` by default; None for
        plain loops); *storage_axis_to_tag* maps individual axes to tags.
    :arg fetch_bounding_box: compute the bounding box of the footprint rather
        than its exact shape.
    :arg temporary_address_space: ``"private"``, ``"local"`` or ``"global"``;
        by default chosen at code generation (local if filled in parallel by
        the work-items of a group).
    """
    rule_name = _resolve_rule(kernel, subst_use)
    rule = kernel.substitutions[rule_name]
    sweep = [resolve_iname(kernel, s) for s in parse_iname_list(sweep_inames)]
    match = parse_match(within)
    uses = _uses(kernel, rule_name, match)
    if not uses:
        raise TransformError(f"precompute: rule '{rule_name}' is not used"
                             + ("" if within is None else f" in instructions {within!r}"))
    expanded_body = expand_rules(rule.expression, kernel.substitutions)
    inames = set(kernel.all_inames())
    body_inames = (variables_read(expanded_body) & inames) - set(rule.arguments)
    axes = _storage_axes(kernel, rule, sweep, body_inames, storage_axes)
    arg_axes = {k for kind, k in axes if kind == "arg"}
    fixed_args = [k for k in range(len(rule.arguments)) if k not in arg_axes]
    # (found also where the caller names them: it refuses a body that reads
    # a temporary the sweep recomputes)
    outer = _outer_inames(kernel, rule_name, uses, axes, fixed_args, sweep, expanded_body,
                          body_inames, _full_axes)
    if precompute_outer_inames is not None:
        outer = {resolve_iname(kernel, i) for i in parse_iname_list(precompute_outer_inames)}
    outer_list = [i for i in kernel.all_inames() if i in outer]
    _check_uses(rule_name, uses, outer, sweep, fixed_args)
    tmp, pnames, existing = _storage_names(kernel, rule_name, len(axes), uses, outer_list,
                                           temporary_name=temporary_name,
                                           precompute_inames=precompute_inames)

    # coordinates of each use along the storage axes
    def coords(args):
        return [args[k] if kind == "arg" else p.Variable(k) for kind, k in axes]

    footprint = _footprint(kernel, uses, coords, outer_list, pnames, fetch_bounding_box,
                           _full_axes, _array_extents)
    added_domain, lbs, extents, sliding = _stored_domain(kernel, rule_name, footprint, pnames,
                                                         outer_list, existing)
    body, rules = _compute_body(kernel, rule, axes, pnames, sliding, fixed_args, uses)
    value_dtype = _value_dtype(kernel, rule_name, body, rules, dtype)
    space = temporary_address_space or temporary_scope
    if isinstance(space, str):
        space = AddressSpace(space.lower())
    temp = Temporary(name=tmp, dtype=value_dtype, shape=tuple(extents),
                     lower_bounds=tuple(lbs), axis_names=tuple(pnames) if pnames else None,
                     address_space=space)
    cid = compute_insn_id or unique_name(kernel, f"{tmp}_compute")
    compute = Assignment(
        id=cid, assignee=make_subscript(tmp, [p.Variable(n) for n in pnames]),
        expression=body, within_inames=frozenset(outer_list) | set(pnames),
        tags=frozenset(), span=uses[0][0].span)
    use_ids = {insn.id for insn, _ in uses}

    def stored(args):
        return make_subscript(tmp, [
            normalize_integer(p.Sum((c, p.Product((-1, sliding[pos])))))
            if pos in sliding else c for pos, c in enumerate(coords(args))])
    insns, rules = _with_stored_uses(kernel, rules, rule_name, uses, compute, stored)
    tags = _new_loop_tags(kernel, pnames, existing, storage_axis_to_tag, default_tag)
    adds_loops = bool(pnames) and len(existing) < len(pnames)
    new = kernel.copy(instructions=tuple(insns), domains=kernel.domains + (added_domain,)
                      if adds_loops else kernel.domains,
                      temporaries=kernel.temporaries.set(tmp, temp),
                      substitutions=FrozenMap(rules), iname_tags=FrozenMap(tags))
    new = _order_compute(new, cid, use_ids)
    return canonicalize_rules(new)


def _value_dtype(kernel: Kernel, rule_name: str, body, rules: dict, dtype):
    """The type of the stored values: *dtype* if given, else the type of the
    compute statement's *body* under the substitution rules *rules*."""
    try:
        if dtype is not None:
            return np.dtype(dtype)
        types = kernel_type_inferrer(kernel.copy(substitutions=FrozenMap(rules)))
        return types(expand_rules(body, rules))
    except Exception as exc:
        raise TransformError(f"precompute: cannot find the type of '{rule_name}': {exc}") \
            from None


def _with_stored_uses(kernel: Kernel, rules: dict, rule_name: str, uses: list,
                      compute: Assignment, stored) -> tuple[list, dict]:
    """The kernel's statements with the uses of rule *rule_name* in *uses*
    read from the stored values (``stored(arguments)``: the element that
    holds the rule's value at those arguments), each depending on
    *compute*, which goes before the first use; and the rules after the
    rewriting (a version of a rule for the uses where needed)."""
    def hook(name, params):
        return stored(params) if name == rule_name else None
    repl = RuleAwareRewriter(rules, lambda e, bound: e, call_hook=hook)
    use_ids = {insn.id for insn, _ in uses}
    first_use = min(kernel.instructions.index(insn) for insn, _ in uses)
    insns = []
    for insn in kernel.instructions:
        if insn.id in use_ids:
            insn = map_instruction_expressions(insn, repl)
            insn = insn.copy(depends_on=insn.depends_on | {compute.id})
        insns.append(insn)
    insns.insert(first_use, compute)
    return insns, repl.rules


def _storage_axes(kernel, rule, sweep, body_inames, storage_axes) -> list[tuple[str, Any]]:
    """The temporary's axes, in order: ``('arg', k)`` for the rule's *k*-th
    argument, ``('iname', s)`` for a sweep iname *s* (by default every
    argument, then the sweep inames the rule's body reads)."""
    if storage_axes is None:
        axes: list[tuple[str, Any]] = [("arg", k) for k in range(len(rule.arguments))]
        return axes + [("iname", s) for s in sweep if s in body_inames]
    axes = []
    for ax in parse_iname_list(storage_axes) if isinstance(storage_axes, str) \
            else storage_axes:
        if isinstance(ax, int):
            axes.append(("arg", ax))
        elif ax in rule.arguments:
            axes.append(("arg", rule.arguments.index(ax)))
        else:
            axes.append(("iname", resolve_iname(kernel, ax)))
    return axes


def _outer_inames(kernel, rule_name, uses, axes, fixed_args, sweep, expanded_body,
                  body_inames, full_axes) -> set:
    """The loops the stored values depend on besides the sweep: those the
    fixed arguments and the storage coordinates read (the sweep's aside),
    the body's, and the loops that compute the temporaries it reads."""
    inames = set(kernel.all_inames())
    arg_axes = {k for kind, k in axes if kind == "arg"}
    outer = set()
    full_args = {axes[k][1] for k in (full_axes or ()) if axes[k][0] == "arg"}
    for _insn, arglists in uses:
        for args in arglists:
            for k in fixed_args:
                outer |= variables_read(args[k]) & inames
            for k in arg_axes - full_args:
                outer |= (variables_read(args[k]) & inames) - set(sweep)
    outer |= body_inames - set(sweep)
    # values read from temporaries vary with the loops those are computed in
    common_use = set.intersection(*(set(insn.within_inames) for insn, _ in uses))
    for tname in variables_read(expanded_body) & set(kernel.temporaries):
        for w in kernel.instructions:
            if tname in w.assignee_names():
                varying = set(w.within_inames) & common_use
                if varying & set(sweep):
                    raise TransformError(
                        f"precompute: '{rule_name}' reads '{tname}', which is computed "
                        f"anew in each iteration of sweep iname(s) "
                        f"{', '.join(sorted(varying & set(sweep)))}", w.span)
                outer |= varying
    return outer


def _check_uses(rule_name, uses, outer, sweep, fixed_args) -> None:
    """Every use lies inside the outer and sweep loops and passes one value
    for each argument that is not a storage axis."""
    for insn, arglists in uses:
        missing = outer - set(insn.within_inames)
        if missing:
            raise TransformError(f"precompute: the values of '{rule_name}' depend on "
                                 f"{', '.join(sorted(missing))}, but instruction '{insn.id}' "
                                 "uses it outside those loops", insn.span)
        if not set(sweep) <= set(insn.within_inames):
            raise TransformError(f"precompute: instruction '{insn.id}' is not inside all "
                                 f"sweep inames {', '.join(sweep)}", insn.span)
        if len({tuple(a[k] for k in fixed_args) for a in arglists}) > 1:
            raise TransformError(f"precompute: the uses in '{insn.id}' pass different values "
                                 "for arguments that are not storage axes")


def _storage_names(kernel, rule_name, n_axes, uses, outer_list, *, temporary_name,
                   precompute_inames) -> tuple[str, list[str], list[str]]:
    """The temporary's name, the precompute inames (one per storage axis:
    those given, then new ones) and those of them that are existing loops."""
    import re
    stem = re.sub(r"(_\d+)+$", "", rule_name)
    stem = stem[:-len("_subst")] if stem.endswith("_subst") and len(stem) > 6 else stem + "_0"
    tmp = temporary_name or unique_name(kernel, stem)
    if kernel.has_variable(tmp):
        raise TransformError(f"precompute: the name '{tmp}' is already used")
    # precompute_inames may name fewer loops than there are storage axes: the
    # others get names of their own (as in loopy)
    pnames = parse_iname_list(precompute_inames) if precompute_inames is not None else []
    if len(pnames) > n_axes:
        raise TransformError(f"precompute: {len(pnames)} precompute inames for "
                             f"{n_axes} storage axes")
    for k in range(len(pnames), n_axes):
        pnames.append(unique_name(kernel, f"{tmp}_dim_{k}", extra_taken=pnames))
    existing = [n for n in pnames if n in kernel.all_inames()]
    around = set(outer_list).union(*(insn.within_inames for insn, _ in uses))
    for n in existing:
        if n in around:
            raise TransformError(f"precompute: '{n}' cannot be a precompute iname: the uses "
                                 f"of '{rule_name}' run inside loop '{n}' (choose a new name)")
    for n in pnames:
        if n not in existing:
            check_new_iname(kernel, n)
    return tmp, pnames, existing


def _stored_domain(kernel, rule_name, footprint, pnames, outer_list, existing):
    """The domain of the new loops (what the outer loops do not already
    guarantee), the temporary's lower bounds and extents, and the storage
    axes whose start slides with the outer loops (axis -> start)."""
    lbs, extents = _box(footprint, pnames, outer_list)
    new_domain = set_to_params(footprint, outer_list) if outer_list else footprint
    new_domain = reorder_set(new_domain, pnames).coalesce()
    # a footprint that slides with the outer loops is stored relative to its
    # start: the precompute inames count from 0 (constant bounds, so they can
    # be work-item axes), the element at precompute iname value v is lb + v
    sliding = {k: lb for k, lb in enumerate(lbs) if not isinstance(lb, int)}
    if sliding:
        new_domain = _shifted(new_domain, pnames, sliding)
        lbs = [0 if k in sliding else lb for k, lb in enumerate(lbs)]
    # keep only what the outer loops do not already guarantee
    ctx = combined_domain(kernel, outer_list)
    ctx = set_to_params(ctx, outer_list).params() if outer_list else ctx.params()
    new_domain, ctx = align_params(new_domain, ctx)
    new_domain = new_domain.gist_params(ctx).drop_unused_params().coalesce()
    added_domain = new_domain
    if existing:
        # reusing loops made by an earlier precompute: they must span exactly
        # what this one needs along their axes; the new ones get a domain of
        # their own, so the footprint must not tie the two groups together
        fresh = [n for n in pnames if n not in existing]
        needed = _project_onto(new_domain, existing)
        if fresh:
            added_domain = _project_onto(new_domain, fresh)
            if not _free_of(new_domain, existing).intersect(
                    _free_of(new_domain, fresh)).is_equal(new_domain):
                raise TransformError(
                    f"precompute: the footprint of '{rule_name}' along the new inames "
                    f"{', '.join(fresh)} depends on the existing {', '.join(existing)} "
                    f"({new_domain}); give all new or all existing precompute inames")
        have = reorder_set(combined_domain(kernel, existing, with_assumptions=False), existing)
        a, b, assumed = align_params(have, needed, kernel.assumptions)
        if not a.gist_params(assumed).is_equal(b.gist_params(assumed)):
            raise TransformError(f"precompute: the existing loops {', '.join(existing)} span "
                                 f"{have}, but '{rule_name}' is needed over {needed}")
    return added_domain, lbs, extents, sliding


def _compute_body(kernel, rule, axes, pnames, sliding, fixed_args, uses):
    """The compute instruction's right-hand side (the rule at the precompute
    inames, the fixed arguments as the first use passes them) and the rules
    it may call, with sweep inames in them replaced."""
    value_map = {}
    for pos, ((kind, k), pn) in enumerate(zip(axes, pnames, strict=True)):
        value = p.Variable(pn)
        if pos in sliding:
            value = normalize_integer(p.Sum((sliding[pos], value)))
        if kind == "arg":
            value_map[rule.arguments[k]] = value
        else:
            value_map[k] = value
    fixed_vals = {}
    if fixed_args:
        args0 = uses[0][1][0]
        for k in fixed_args:
            fixed_vals[rule.arguments[k]] = args0[k]
    body = substitute(rule.expression, {**fixed_vals, **{n: v for n, v in value_map.items()
                                                         if n in rule.arguments}})
    sweep_map = {n: v for n, v in value_map.items() if n not in rule.arguments}
    rw = RuleAwareRewriter(kernel.substitutions,
                           lambda e, bound: substitute(
                               e, lambda n: None if n in bound else sweep_map.get(n)))
    return rw(body), rw.rules


def _new_loop_tags(kernel, pnames, existing, storage_axis_to_tag, default_tag) -> dict:
    """The kernel's iname tags with those of the new precompute loops (by
    name or axis number in *storage_axis_to_tag*, else *default_tag*)."""
    tags = dict(kernel.iname_tags)
    for k, n in enumerate(pnames):
        if n in existing:
            continue
        tag = None
        if storage_axis_to_tag:
            tag = storage_axis_to_tag.get(n, storage_axis_to_tag.get(k))
        if tag is None:
            tag = default_tag
        if tag is not None:
            tags[n] = parse_tag(tag)
    return tags


def _project_onto(s: isl.Set, names) -> isl.Set:
    """*s* with every set dimension but *names* projected out."""
    for name in reversed(s.get_var_names(isl.dim_type.set)):
        if name not in names:
            idx = s.get_var_names(isl.dim_type.set).index(name)
            s = s.project_out(isl.dim_type.set, idx, 1)
    return s


def _free_of(s: isl.Set, names) -> isl.Set:
    """*s* with no constraint left on the set dimensions *names*."""
    for name in names:
        idx = s.get_var_names(isl.dim_type.set).index(name)
        s = s.eliminate(isl.dim_type.set, idx, 1)
    return s


def _footprint(kernel, uses, coords, outer_list, pnames, bounding_box, full_axes,
               array_extents) -> isl.Set:
    """The set over [outer..., precompute inames...] of values needed."""
    result = None
    order = list(kernel.all_inames())
    for insn, arglists in uses:
        own = [i for i in order if i in insn.within_inames]
        dom = combined_domain(kernel, own)
        for args in arglists:
            c = coords(args)
            s = dom.add_dims(dim_type.set, len(pnames))
            for k, n in enumerate(pnames):
                s = s.set_dim_name(dim_type.set, len(own) + k, n)
            affs = lazy_affs(s.get_space())
            for k, (n, e) in enumerate(zip(pnames, c, strict=True)):
                if full_axes is not None and k in full_axes:
                    lo, ext = array_extents[k]
                    s = s & affs[n].ge_set(affs[0] + lo) & affs[n].lt_set(affs[0] + lo + ext)
                    continue
                try:
                    s = s & affs[n].eq_set(pwaff_from_expr(e, s.get_space()))
                except NonAffineError:
                    raise TransformError(f"precompute: the use in '{insn.id}' has a "
                                         f"non-affine index {e}; its footprint is unknown",
                                         insn.span) from None
            s = reorder_set(s, outer_list + pnames)
            result = s if result is None else _union(result, s)
    assert result is not None      # every use adds its footprint
    result = result.coalesce()
    if bounding_box and pnames:
        proj = set_to_params(result, outer_list) if outer_list else result
        box = None
        for k, n in enumerate(pnames):
            cons = range_constraint(n, proj.dim_min(k), proj.dim_max(k), 1)
            box = cons if box is None else _intersect_same(box, cons)
        box_set = reorder_set(isl.Set.from_params(box), outer_list + pnames)
        result = _intersect_same(box_set, _outer_range(result, outer_list, pnames))
    return result


def _shifted(domain, pnames, starts):
    """*domain* (over *pnames*) with axis k moved by ``-starts[k]`` (affine
    expressions of its parameters)."""
    n = len(pnames)
    s = domain.add_dims(dim_type.set, n)
    new_names = [f"{x}__rel" for x in pnames]
    for k, x in enumerate(new_names):
        s = s.set_dim_name(dim_type.set, n + k, x)
    for k, start in starts.items():
        affs = lazy_affs(s.get_space())
        pw = pwaff_from_expr(start, s.get_space())
        s, pw = align_params(s, pw)
        affs = lazy_affs(s.get_space())
        s = s & affs[pnames[k]].eq_set(affs[new_names[k]] + pw)
    for k in range(n):
        if k not in starts:
            affs = lazy_affs(s.get_space())
            s = s & affs[pnames[k]].eq_set(affs[new_names[k]])
    s = s.project_out(dim_type.set, 0, n)
    for k, x in enumerate(pnames):
        s = s.set_dim_name(dim_type.set, k, x)
    return s.coalesce()


def _outer_range(result, outer_list, pnames):
    """Values of the outer inames for which something is needed."""
    s = result
    for n in pnames:
        idx = s.find_dim_by_name(dim_type.set, n)
        s = s.project_out(dim_type.set, idx, 1)
    return reorder_set(s, outer_list + pnames)


def _union(a, b):
    a, b = align_params(a, b)
    return a | b


def _intersect_same(a, b):
    a, b = align_params(a, b)
    return a & b


def _box(footprint, pnames, outer_list):
    """Lower bounds and constant extents of the footprint along each axis.

    A lower bound is a constant where the footprint does not move with the
    outer loops; where it slides with them (a tile of ``a`` fetched per
    work-group) it is the affine expression of the outer inames at which the
    footprint starts, so the temporary holds one tile."""
    from f2loopy.ir.isl_tools import expr_from_pwaff
    lbs, extents = [], []
    if outer_list:
        footprint = set_to_params(footprint, outer_list)
    for k, n in enumerate(pnames):
        lo = footprint.dim_min(k)
        hi = footprint.dim_max(k)
        lb = extent = None
        try:
            lo_min, lo_max, hi_max = lo.min_val(), lo.max_val(), hi.max_val()
            if _finite(lo_min, lo_max, hi_max) and lo_min.eq(lo_max):
                lb = int(lo_min.to_python())
                extent = int(hi_max.to_python()) - lb + 1
            elif lo.n_piece() == 1 and lo.is_cst() is False:
                span = hi.sub(lo).max_val()
                if _finite(span):
                    lb = expr_from_pwaff(lo, footprint.params())
                    extent = int(span.to_python()) + 1
        except isl.Error:
            pass
        if extent is None:
            raise TransformError(f"precompute: the extent of axis '{n}' is not bounded by a "
                                 "constant (fix the parameters it depends on first)")
        lbs.append(lb)
        extents.append(extent)
    return lbs, extents


def _finite(*vals) -> bool:
    return all(not (v.is_infty() or v.is_neginfty() or v.is_nan()) for v in vals)


def _order_compute(kernel, cid, use_ids):
    """Order the compute instruction against the writers of what it reads."""
    from f2loopy.transform.subst import _transitive_deps
    compute = kernel.insn(cid)
    reads = variables_read(expand_rules(compute.expression, kernel.substitutions)) - \
        set(kernel.all_inames())
    tdeps = _transitive_deps(kernel)
    ancestors = set()
    for u in use_ids:
        ancestors |= tdeps[u]
    first = min(k for k, i in enumerate(kernel.instructions) if i.id in use_ids)
    deps = set()
    later = set()
    for k, insn in enumerate(kernel.instructions):
        if insn.id == cid or insn.id in use_ids:
            continue
        if not set(insn.assignee_names()) & reads:
            continue
        if insn.id in ancestors or (k < first and not any(u in tdeps[insn.id]
                                                          for u in use_ids)):
            deps.add(insn.id)
        else:
            later.add(insn.id)
    insns = []
    for insn in kernel.instructions:
        if insn.id == cid:
            insn = insn.copy(depends_on=insn.depends_on | deps)
        elif insn.id in later:
            insn = insn.copy(depends_on=insn.depends_on | {cid})
        insns.append(insn)
    return kernel.copy(instructions=tuple(insns))



def _reads_through_rule(kernel, name, spec, rule, match, *, what, within) -> Kernel:
    """*kernel* with the reads of array *name* that *spec* selects (None:
    all; else one subscript or None per axis) in the instructions *match*
    selects made calls of a new rule *rule* (the element itself); refused
    where no read is found or the kernel writes the array."""
    var = kernel.variable(name)
    args = tuple(f"{name}_fetch_arg{k}" for k in range(var.ndim))
    found, seen = [], []

    def leaf(expr, bound):
        from f2loopy.ir.expressions import index_tuple, map_subscripts

        def repl(sub):
            if sub.aggregate.name != name:
                return None
            idx = index_tuple(sub)
            seen.append(sub)
            if spec is not None and any(s is not None and not _same_value(s, i)
                                        for s, i in zip(spec, idx, strict=True)):
                return None
            found.append(sub)
            return p.Call(p.Variable(rule), idx)
        return map_subscripts(expr, repl)

    rules = dict(kernel.substitutions)
    rules[rule] = SubstitutionRule(rule, args, make_subscript(name, [p.Variable(a)
                                                                     for a in args]))
    rw = RuleAwareRewriter(kernel.substitutions, leaf)
    insns = []
    for insn in kernel.instructions:
        if match.match(kernel, insn):
            insn = insn.copy(expression=rw(insn.expression),
                             predicates=tuple(rw(x) for x in insn.predicates)) \
                if isinstance(insn, Assignment) else insn
        insns.append(insn)
    if not found:
        from f2loopy.ir.printing import expr_to_str
        reads = sorted({expr_to_str(x) for x in seen})
        raise NameNotFoundError(f"add_prefetch: no read of {what!r} found"
                             + ("" if within is None else f" in {within!r}")
                             + (f" (the reads are: {', '.join(reads[:6])}"
                                f"{', ...' if len(reads) > 6 else ''})" if reads else ""))
    if any(name in i.assignee_names() for i in kernel.instructions):
        raise TransformError(f"add_prefetch: '{name}' is written by the kernel; prefetching "
                             "it would read stale values (use buffer_array)")
    rules.update(rw.rules)
    return kernel.copy(instructions=tuple(insns), substitutions=FrozenMap(rules))


def _constant_extents(name, var, storage) -> list[tuple[int, int]]:
    """(lower bound, extent) of each axis in *storage* of array *var*,
    which must be constants (the axes fetched whole)."""
    from f2loopy.ir.folding import evaluate_constant
    extents = []
    for k in storage:
        try:
            extents.append((int(evaluate_constant(var.lower_bounds[k])),
                            int(evaluate_constant(var.shape[k]))))
        except Exception:
            raise TransformError(f"add_prefetch: axis {k} of '{name}' does not have a "
                                 "constant extent (fix_parameters first)") from None
    return extents


def _parse_fetch_spec(kernel, spec):
    """``"q[ii,jj,k,:,:,e]"`` -> ("q", [expr or None for ':'])."""
    from f2loopy.transform.patterns import parse_expression
    from f2loopy.transform.util import resolve_variable
    text = str(spec).strip()
    if "[" not in text:
        return resolve_variable(kernel, text), None
    if not text.endswith("]"):
        raise TransformError(f"add_prefetch: cannot parse {spec!r} (expected 'name[...]')")
    name, inner = text[:-1].split("[", 1)
    name = resolve_variable(kernel, name.strip())
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out: list = []
    for part in parts:
        part = part.strip()
        if part == ":":
            out.append(None)
        elif not part:
            raise TransformError(f"add_prefetch: empty index in {spec!r}")
        else:
            out.append(parse_expression(part))
    return name, out


def _same_value(a, b) -> bool:
    """Whether subscripts *a* and *b* are the same affine value (``1 + i`` and
    ``i + 1``)."""
    if a == b:
        return True
    try:
        diff = normalize_integer(p.Sum((a, p.Product((-1, b)))))
    except Exception:  # noqa: BLE001 - not integer arithmetic: different
        return False
    return isinstance(diff, (int, np.integer)) and int(diff) == 0


@for_each_kernel
def add_prefetch(kernel: Kernel, var_name: str, sweep_inames: Names = (),
                 dim_arg_names: Names | None = None, default_tag: TagSpec = "l.auto",
                 rule_name: str | None = None, temporary_name: str | None = None,
                 temporary_address_space: str | AddressSpace | None = None,
                 temporary_scope: str | AddressSpace | None = None,
                 footprint_subscripts: None = None, fetch_bounding_box: bool = False,
                 fetch_outer_inames: Names | None = None,
                 within: MatchSpec = None) -> Kernel:
    """Fetch (part of) array *var_name* into a temporary before it is used.

    *var_name* is ``"D"``, ``"D[:,:]"`` or ``"q[ii,jj,k,:,:,e]"``: a ``:``
    axis is fetched over the array's whole extent along that axis; an
    expression selects the accesses whose subscript equals it (those axes are
    not stored); a bare name fetches what the accesses touch while
    *sweep_inames* vary.  The fetch loops are named
    ``<var>_dim_<axis name or number>`` (or *dim_arg_names*) and tagged
    *default_tag*; the temporary is ``<var>_fetch``.  The fetch is placed in
    every work-group that uses the data (nothing more needs to be said about
    group axes).  loopy's *footprint_subscripts* is refused (name the
    accesses in *var_name* instead).
    """
    name, spec = _parse_fetch_spec(kernel, var_name)
    if footprint_subscripts is not None:
        raise TransformError("add_prefetch: footprint_subscripts= is not supported: the "
                             "footprint is that of the reads; name the accesses to fetch in "
                             f"the variable instead (e.g. '{name}[:, j]' fetches the reads "
                             "with second subscript j, whole first axis)")
    var = kernel.variable(name)
    if not var.shape:
        raise TransformError(f"add_prefetch: '{name}' is a scalar")
    if spec is not None and len(spec) != var.ndim:
        raise TransformError(f"add_prefetch: '{name}' has {var.ndim} axes but {len(spec)} "
                             "are given")
    match = parse_match(within)
    rule = rule_name or unique_name(kernel, f"{name}_fetch_rule")
    kernel = _reads_through_rule(kernel, name, spec, rule, match, what=var_name,
                                 within=within)

    axis_names = var.axis_names or (None,) * var.ndim
    if spec is None:
        storage = list(range(var.ndim))
        full = None
    else:
        storage = [k for k, s in enumerate(spec) if s is None]
        full = set(range(len(storage)))
    if dim_arg_names is not None:
        pnames = parse_iname_list(dim_arg_names)
    else:
        pnames = [f"{name}_dim_{axis_names[k] if axis_names[k] else k}" for k in storage]
    extents = None if full is None else _constant_extents(name, var, storage)
    return precompute(kernel, rule, sweep_inames, storage_axes=storage,
                      temporary_name=temporary_name or unique_name(kernel, f"{name}_fetch"),
                      precompute_inames=pnames, precompute_outer_inames=fetch_outer_inames,
                      default_tag=default_tag, fetch_bounding_box=fetch_bounding_box,
                      temporary_address_space=temporary_address_space or temporary_scope,
                      _full_axes=full, _array_extents=extents)
