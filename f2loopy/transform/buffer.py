"""On-chip buffers: buffer_array, alias_temporaries,
collect_common_factors_on_increment."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from collections.abc import Sequence

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import TransformError, UnsupportedArgumentError
from f2loopy.ir.domains import combined_domain
from f2loopy.ir.expressions import (
    accesses, index_tuple, make_subscript, map_subscripts, substitute, variables_read)
from f2loopy.ir.folding import normalize_integer
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import (
    NonAffineError, align_params, dim_type, lazy_affs, pwaff_from_expr, reorder_set)
from f2loopy.ir.kernel import AddressSpace, Assignment, Instruction, Kernel, Temporary
from f2loopy.transform.data import parse_address_space
from f2loopy.transform.iname import parse_tag
from f2loopy.transform.match import _rule_reads, parse_match
from f2loopy.transform.patterns import parse_expression
from f2loopy.transform.rules import (
    RuleAwareRewriter, map_instruction_expressions, canonicalize_rules, expand_rules)
from f2loopy.transform.util import (
    NameNotFoundError, MatchSpec, Names, TagSpec, check_new_iname, for_each_kernel, parse_iname_list, resolve_iname, resolve_variable,
    unique_name)


def _all_accesses(kernel, insn, name):
    out = []
    if isinstance(insn, Assignment) and insn.assignee_name == name and \
            isinstance(insn.assignee, p.Subscript):
        out.append(index_tuple(insn.assignee))
    for e in insn.read_expressions():
        for n, idx in accesses(expand_rules(e, kernel.substitutions)):
            if n == name and idx is not None:
                out.append(idx)
    return out


@for_each_kernel
def buffer_array(kernel: Kernel, var_name: str, buffer_inames: Names = (),
                 init_expression: str | None = None, store_expression: str | None = None,
                 within: MatchSpec = None, default_tag: TagSpec = "l.auto",
                 temporary_scope: str | AddressSpace | None = None,
                 temporary_is_local: bool | None = None, fetch_bounding_box: bool = False,
                 temporary_address_space: str | AddressSpace | None = None) -> Kernel:
    """Keep the part of array *var_name* that instructions touch in a buffer
    ``<var>_buf`` while they run, then write it back.

    The buffer, and the loops that fill and store it, cover the bounding box
    of the elements the instructions touch.  loopy's *fetch_bounding_box*
    (default False: only the touched elements) is honoured where it matters:
    with False, a store that would change elements of the box nobody touched
    is refused.

    The buffer lives inside the loops that the accessed elements depend on
    (minus *buffer_inames*, which it spans): for the paper's ``rhsq`` that is
    one buffer of 8 fields per ``(e, k, j, i)``, shared by all ``n`` loops.
    It is filled by *init_expression* (``base`` is the array element; default
    ``base``: a fetch) over inames ``<var>_init_<axis>``, and written back by
    *store_expression* (``base`` and ``buffer``; default ``buffer``) over
    ``<var>_store_<axis>``.  Every instruction touching the array inside those
    loops must be selected by *within*.
    """
    name = resolve_variable(kernel, var_name)
    var = kernel.variable(name)
    if not var.shape:
        raise TransformError(f"buffer_array: '{name}' is a scalar")
    binames = [resolve_iname(kernel, i) for i in parse_iname_list(buffer_inames)]
    match = parse_match(within)
    users = [i for i in kernel.instructions if _all_accesses(kernel, i, name) and
             match.match(kernel, i)]
    if not users:
        raise NameNotFoundError(f"buffer_array: no instruction accesses '{name}'")
    idx_lists = [(i, idx) for i in users for idx in _all_accesses(kernel, i, name)]
    stored_axes, outer = _stored_axes(kernel, var.ndim, idx_lists, binames)
    outer_list = [i for i in kernel.all_inames() if i in outer]
    _check_users_inside(kernel, name, users, outer)

    axis_names = var.axis_names or (None,) * var.ndim
    labels = [axis_names[a] if axis_names[a] else str(a) for a in stored_axes]
    bname = unique_name(kernel, f"{name}_buf")
    init_names = [unique_name(kernel, f"{name}_init_{lb}") for lb in labels]
    store_names = [unique_name(kernel, f"{name}_store_{lb}") for lb in labels]
    for n in init_names + store_names:
        check_new_iname(kernel, n)

    # footprint over (outer, stored axes)
    pn = [f"_ax{k}" for k in range(len(stored_axes))]
    footprint = _buffer_footprint(kernel, name, users, stored_axes, outer_list, pn)
    starts, extents, sliding, domain_template = _buffer_box(footprint, pn, outer_list,
                                                           stored_axes)
    lbs = [0 if k in sliding else lb for k, lb in enumerate(starts)]
    writes = any(isinstance(i, Assignment) and i.assignee_name == name for i in users)
    if not fetch_bounding_box and writes and \
            not _keeps_untouched(init_expression, store_expression):
        _check_footprint_is_box(kernel, name, footprint, outer_list, pn, starts, extents,
                                stored_axes)
    space = temporary_address_space or temporary_scope
    if temporary_is_local:
        space = AddressSpace.LOCAL
    if space is not None:
        space = parse_address_space(space, "buffer_array")
    buf = Temporary(name=bname, dtype=var.dtype, shape=tuple(extents), lower_bounds=tuple(lbs),
                    axis_names=tuple(labels) if all(axis_names[a] for a in stored_axes)
                    else None, address_space=space)
    acc = _BufferAccess(name, bname, var.ndim, stored_axes, sliding,
                        {axis: idx_lists[0][1][axis] for axis in range(var.ndim)
                         if axis not in stored_axes})
    init_id = unique_name(kernel, f"{bname}_init")
    init_value = acc.parse(init_expression if init_expression is not None else "base",
                           init_names)
    init = Assignment(id=init_id, assignee=make_subscript(bname, [p.Variable(n)
                                                                    for n in init_names]),
                      expression=_as_dtype(init_value, var.dtype),
                      within_inames=frozenset(outer_list) | set(init_names),
                      depends_on=frozenset(_fill_dependencies(kernel, name, users)),
                      span=users[0].span)
    store = None
    if writes:
        store = Assignment(
            id=unique_name(kernel, f"{bname}_store", [init_id]),
            assignee=acc.element(store_names),
            expression=acc.parse(store_expression if store_expression is not None
                                 else "buffer", store_names),
            within_inames=frozenset(outer_list) | set(store_names),
            depends_on=frozenset(i.id for i in users), span=users[-1].span)
    # accesses through substitution rules go to the buffer too (a version of
    # the rule for the users; other instructions keep the original)
    rw = RuleAwareRewriter(kernel.substitutions,
                           lambda e, bound: map_subscripts(e, acc.rewrite))
    new_insns = _around_users(kernel, name, users, init, store, rw)

    # the store loops exist only where something is stored
    loop_names = init_names + (store_names if writes else [])
    domains = list(kernel.domains)
    for names in (init_names, store_names) if writes else (init_names,):
        d = domain_template
        for k, n in enumerate(names):
            d = d.set_dim_name(dim_type.set, k, n)
        domains.append(d)
    tags = dict(kernel.iname_tags)
    if default_tag is not None:
        for n in loop_names:
            tags[n] = parse_tag(default_tag)
    temps = kernel.temporaries.set(bname, buf)
    return canonicalize_rules(kernel.copy(
        instructions=tuple(new_insns), domains=tuple(domains), iname_tags=FrozenMap(tags),
        temporaries=temps, substitutions=FrozenMap(rw.rules)))


def _check_users_inside(kernel: Kernel, name: str, users: list, outer: set) -> None:
    """Refuse a buffer of *name* where a selected statement of *users* is
    outside the loops *outer* the buffer lives in, or a statement not
    selected accesses *name* inside them."""
    for u in users:
        if not outer <= set(u.within_inames):
            raise TransformError(f"buffer_array: instruction '{u.id}' accesses '{name}' outside "
                                 f"loop(s) {', '.join(sorted(outer - set(u.within_inames)))}",
                                 u.span)
    others = [i for i in kernel.instructions if i not in users
              and _all_accesses(kernel, i, name) and outer <= set(i.within_inames)]
    if others:
        raise TransformError(f"buffer_array: instruction '{others[0].id}' also accesses "
                             f"'{name}' inside the buffered loops but is not selected",
                             others[0].span)


@dataclass(frozen=True)
class _BufferAccess:
    """How the array *name* and its buffer *bname* are addressed: the
    buffer keeps the axes *stored_axes* (those in *sliding* shifted by the
    window's start), the other axes stay at their subscripts *fixed*."""
    name: str
    bname: str
    ndim: int
    stored_axes: list
    sliding: dict
    fixed: dict

    def rewrite(self, sub):
        """The buffer's element for the array's subscript *sub* (None for
        another array)."""
        if sub.aggregate.name != self.name:
            return None
        idx = index_tuple(sub)
        return make_subscript(self.bname, [
            normalize_integer(p.Sum((idx[a], p.Product((-1, self.sliding[k])))))
            if k in self.sliding else idx[a] for k, a in enumerate(self.stored_axes)])

    def element(self, names):
        """The array's element the buffer's loops *names* address."""
        idx = []
        k = 0
        for axis in range(self.ndim):
            if axis in self.stored_axes:
                idx.append(normalize_integer(p.Sum((self.sliding[k], p.Variable(names[k]))))
                           if k in self.sliding else p.Variable(names[k]))
                k += 1
            else:
                idx.append(self.fixed[axis])
        return make_subscript(self.name, idx)

    def parse(self, expr_text, names):
        """A fill or store expression with ``base`` (the array's element)
        and ``buffer`` (the buffer's) at the loops *names*."""
        e = parse_expression(expr_text) if isinstance(expr_text, str) else expr_text
        return substitute(e, {"base": self.element(names), "buffer": make_subscript(
            self.bname, [p.Variable(n) for n in names])})


def _stored_axes(kernel, ndim, idx_lists, binames) -> tuple[list[int], set]:
    """The array axes the buffer stores (their subscripts differ between
    accesses or read a buffer iname) and the loops the other subscripts
    depend on (the buffer lives inside them)."""
    all_inames = set(kernel.all_inames())
    stored_axes = []
    for axis in range(ndim):
        exprs = {idx[axis] for _, idx in idx_lists}
        inames_here = set().union(*(variables_read(e) for e in exprs)) & all_inames
        if len(exprs) > 1 or inames_here & set(binames):
            stored_axes.append(axis)
    outer = set()
    for _, idx in idx_lists:
        for e in idx:
            outer |= (variables_read(e) & all_inames) - set(binames)
    return stored_axes, outer


def _buffer_footprint(kernel, name, users, stored_axes, outer_list, pn) -> isl.Set:
    """The elements of *name* the *users* touch, over the outer loops and the
    stored axes (named *pn*)."""
    order = list(kernel.all_inames())
    footprint = None
    for insn in users:
        own = [i for i in order if i in insn.within_inames]
        dom = combined_domain(kernel, own)
        for idx in _all_accesses(kernel, insn, name):
            s = dom.add_dims(dim_type.set, len(pn))
            for k, n in enumerate(pn):
                s = s.set_dim_name(dim_type.set, len(own) + k, n)
            affs = lazy_affs(s.get_space())
            try:
                for k, axis in enumerate(stored_axes):
                    s = s & affs[pn[k]].eq_set(pwaff_from_expr(idx[axis], s.get_space()))
            except NonAffineError:
                raise TransformError(f"buffer_array: '{insn.id}' indexes '{name}' with a "
                                     "non-affine subscript", insn.span) from None
            s = reorder_set(s, outer_list + pn)
            if footprint is None:
                footprint = s
            else:
                a, b = align_params(footprint, s)
                footprint = a | b
    if footprint is None:
        raise TransformError(f"buffer_array: '{name}' is not accessed")
    return footprint.coalesce()


def _buffer_box(footprint, pn, outer_list, stored_axes):
    """The bounding box of *footprint* along the stored axes *pn*: its
    starts and (constant) extents, the axes whose start slides with the
    outer loops (axis -> start; a tile per work-group is stored relative to
    its start: buffer index = array index - start) and the box as a set over
    *pn* (what the buffer and its fill and store loops cover)."""
    from f2loopy.transform.precompute import _box
    try:
        starts, extents = _box(footprint, pn, outer_list)
    except TransformError:
        axes = ", ".join(str(a) for a in stored_axes)
        raise TransformError(f"buffer_array: the extent of the buffer along "
                             f"axis{'es' if len(stored_axes) > 1 else ''} {axes} is not a "
                             "constant") from None
    sliding = {k: lb for k, lb in enumerate(starts) if not isinstance(lb, int)}
    lbs = [0 if k in sliding else lb for k, lb in enumerate(starts)]
    box = isl.Set.universe(isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=pn))
    affs = lazy_affs(box.get_space())
    for k, n in enumerate(pn):
        box = box & affs[n].ge_set(affs[0] + lbs[k]) & affs[n].le_set(
            affs[0] + lbs[k] + extents[k] - 1)
    return starts, extents, sliding, box


def _fill_dependencies(kernel, name, users) -> set:
    """What the buffer's fill waits for: the earlier accesses to the array
    (only those: the users' other dependencies concern their other inputs)."""
    from f2loopy.transform.subst import _transitive_deps
    tdeps = _transitive_deps(kernel)
    user_ids = {i.id for i in users}
    before = set().union(*(tdeps[i.id] for i in users)) - user_ids
    return {x for x in before if _all_accesses(kernel, kernel.insn(x), name)
            or name in kernel.insn(x).assignee_names()}


def _around_users(kernel, name, users, init, store, rw) -> list[Instruction]:
    """The kernel's instructions with *init* before the first user, the users
    rewritten by *rw* (waiting for the fill) and *store* (None: nothing
    written) after the last; later accesses to *name* wait for the store."""
    user_ids = {i.id for i in users}
    new_insns: list[Instruction] = []
    first = min(kernel.instructions.index(i) for i in users)
    last = max(kernel.instructions.index(i) for i in users)
    for k, insn in enumerate(kernel.instructions):
        if k == first:
            new_insns.append(init)
        if insn.id in user_ids:
            insn = map_instruction_expressions(insn, rw)
            insn = insn.copy(depends_on=insn.depends_on | {init.id})
        new_insns.append(insn)
        if k == last and store is not None:
            new_insns.append(store)
    # later instructions touching the array wait for the store
    if store is not None:
        later = [i.id for i in new_insns[new_insns.index(store) + 1:]
                 if _all_accesses(kernel, i, name)]
        new_insns = [i.copy(depends_on=i.depends_on | {store.id}) if i.id in later else i
                     for i in new_insns]
    return new_insns


def _keeps_untouched(init_expression, store_expression) -> bool:
    """Whether storing an element nobody touched gives back what was there:
    the store expression with ``buffer`` replaced by the init expression is
    ``base`` (``base`` then ``buffer``; ``0`` then ``base + buffer``)."""
    from pymbolic import evaluate
    init = parse_expression(init_expression) if isinstance(init_expression, str) else \
        (p.Variable("base") if init_expression is None else init_expression)
    store = parse_expression(store_expression) if isinstance(store_expression, str) else \
        (p.Variable("buffer") if store_expression is None else store_expression)
    stored = substitute(store, {"buffer": init})
    try:
        return all(evaluate(stored, {"base": v}) == v for v in (0.5, -3.25, 7.0))
    except Exception:       # other names, calls: cannot tell
        return False


def _check_footprint_is_box(kernel, name, footprint, outer_list, pn, lbs, extents,
                            stored_axes):
    """loopy's ``fetch_bounding_box=False`` (its default) fills and stores only
    the elements the instructions touch; f2loopy's buffer loops always cover
    the bounding box of those.  Refuse where the store would change elements
    of the box that nobody touched."""
    ctx = combined_domain(kernel, outer_list) if outer_list else \
        isl.Set.universe(isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=[]))
    ctx = reorder_set(ctx, outer_list)
    n0 = ctx.dim(dim_type.set)
    full = ctx.add_dims(dim_type.set, len(pn))
    for k, n in enumerate(pn):
        full = full.set_dim_name(dim_type.set, n0 + k, n)
    affs = lazy_affs(full.get_space())
    for k, n in enumerate(pn):
        start = affs[0] + lbs[k] if isinstance(lbs[k], int) else \
            pwaff_from_expr(lbs[k], full.get_space())
        full = full & affs[n].ge_set(start) & affs[n].le_set(start + extents[k] - 1)
    a, b = align_params(full, footprint)
    if not a.is_subset(b):
        axes = ", ".join(str(ax + 1) for ax in stored_axes)
        raise UnsupportedArgumentError(
            "buffer_array", "fetch_bounding_box", False,
            f"the elements of '{name}' the instructions touch (along axes {axes}) do not fill "
            "their bounding box, the buffer is always filled and stored over the whole box, "
            "and this init_expression/store_expression would change the elements nobody "
            "touches; pass fetch_bounding_box=True to accept that")


def _as_dtype(expr, dtype):
    if isinstance(expr, (int, float)) and not isinstance(expr, bool):
        return np.dtype(dtype).type(expr)
    return expr


@for_each_kernel
def alias_temporaries(kernel: Kernel, names: Names, base_name_prefix: str = "temp_storage",
                      synchronize_for_exclusive_use: bool = True) -> Kernel:
    """Let temporaries *names* share one storage area (their uses must not
    overlap in time).

    With *synchronize_for_exclusive_use* (the default), dependencies are added
    so that all uses of ``names[k]`` come before any use of ``names[k+1]``;
    code generation then needs nothing more (barriers between the users of
    the shared storage are placed automatically).
    """
    names = [resolve_variable(kernel, n) for n in (names.split(",") if isinstance(names, str)
                                                  else names)]
    temps = dict(kernel.temporaries)
    for n in names:
        if n not in temps:
            raise TransformError(f"alias_temporaries: '{n}' is not a temporary")
    dtypes = {temps[n].dtype for n in names}
    if len(dtypes) != 1:
        raise TransformError("alias_temporaries: the temporaries have different types")
    spaces = {temps[n].address_space for n in names}
    if len(spaces) > 1:
        raise TransformError("alias_temporaries: the temporaries are in different address "
                             "spaces")
    bases = {t.base_storage for t in kernel.temporaries.values() if t.base_storage}
    base = unique_name(kernel, base_name_prefix, bases)
    for n in names:
        temps[n] = temps[n].copy(base_storage=base)
    kernel = kernel.copy(temporaries=FrozenMap(temps))
    if not synchronize_for_exclusive_use:
        return kernel
    users = {n: [i.id for i in kernel.instructions
                 if n in i.assignee_names() or n in variables_read(*i.read_expressions())]
             for n in names}
    for n in names:
        both = [u for u in users[n] for m in names if m != n and u in users[m]]
        if both:
            raise TransformError(f"alias_temporaries: instruction '{both[0]}' uses two of the "
                                 "aliased temporaries at once")
    extra: dict = {}
    for prev, nxt in itertools.pairwise(names):
        for u in users[nxt]:
            extra.setdefault(u, set()).update(users[prev])
    insns = tuple(i.copy(depends_on=i.depends_on | frozenset(extra[i.id])) if i.id in extra
                  else i for i in kernel.instructions)
    return kernel.copy(instructions=insns)


def _factors(expr, rules):
    """The factors of a product (nested products and rules flattened)."""
    expr = _unwrap_rule_product(expr, rules)
    if isinstance(expr, p.Product):
        out = []
        for c in expr.children:
            out.extend(_factors(c, rules))
        return out
    return [expr]


def _unwrap_rule_product(expr, rules):
    if isinstance(expr, p.Call) and expr.function.name in rules:
        rule = rules[expr.function.name]
        body = substitute(rule.expression, dict(zip(rule.arguments, expr.parameters, strict=True)))
        if isinstance(_unwrap_rule_product(body, rules), p.Product):
            return _unwrap_rule_product(body, rules)
    return expr


def _is_zero(expr) -> bool:
    return isinstance(expr, (int, float, np.number)) and not isinstance(expr, bool) \
        and expr == 0


def _increment_terms(insn):
    """(assignee, [terms]) for ``v = v + t1 + t2 ...`` (None if not such)."""
    if not isinstance(insn, Assignment) or not isinstance(insn.expression, p.Sum):
        return None
    children = list(insn.expression.children)
    if insn.assignee not in children:
        return None
    children.remove(insn.assignee)
    return children


@for_each_kernel
def collect_common_factors_on_increment(kernel: Kernel, var_name: str,
                                        vary_by_axes: Sequence[int | str] = ()) -> Kernel:
    """Pull factors common to every increment ``v = v + f*...`` of *var_name*
    out of the increments and apply them where *var_name* is read.

    With the paper's buffered ``rhsq``, every increment is
    ``-JiD*flux`` with ``JiD = Jinv*D(i,n)``: ``-1`` and ``Jinv`` (the same for
    all increments of an element) move to the store, one multiplication per
    element instead of one per increment.  Factors that depend on loops the
    reads are not inside (``D(i,n)`` depends on ``n``) stay.

    Every other assignment to *var_name* must set it to zero (as
    ``buffer_array(..., init_expression="0")`` does), and a factor may only
    depend on loops those assignments are inside (the sum restarts whenever
    the factor changes): otherwise the value read is not the factor times
    the sum of what is left of the increments, and this is refused.
    """
    if vary_by_axes:
        raise UnsupportedArgumentError(
            "collect_common_factors_on_increment", "vary_by_axes", vary_by_axes,
            "f2loopy finds where the factors may vary itself (a factor may depend on every "
            "loop the reads of the variable run in); leave it out")
    name = resolve_variable(kernel, var_name)
    rules = kernel.substitutions
    incs, readers, inits = _increments_reads_inits(kernel, name)
    allowed = set.intersection(*(set(r.within_inames) for r in readers + inits))
    common = _common_factors(kernel, incs, allowed)
    if not common:
        return kernel

    def strip(t):
        fs = _factors(t, rules)
        for f in common:
            fs.remove(f)
        if not fs:
            return 1
        return fs[0] if len(fs) == 1 else p.Product(tuple(fs))

    factor = common[0] if len(common) == 1 else p.Product(tuple(common))
    scalar = not kernel.variable(name).shape

    def scale(expr):
        """*expr* with every read of the variable multiplied by the factor."""
        if scalar:
            return substitute(expr, {name: p.Product((factor, p.Variable(name)))})
        return map_subscripts(expr, lambda sub: p.Product((factor, sub))
                              if sub.aggregate.name == name else None)
    # reads through substitution rules are scaled in a version of the rule
    rw = RuleAwareRewriter(rules, lambda e, bound: scale(e))
    inc_ids = {i.id for i, _ in incs}
    new = []
    for insn in kernel.instructions:
        if insn.id in inc_ids:
            assert isinstance(insn, Assignment)
            terms = _increment_terms(insn)
            insn = insn.copy(expression=p.Sum((insn.assignee, *[strip(t) for t in terms])))
        elif insn in readers:
            preds = tuple(rw(x) for x in insn.predicates)
            insn = insn.copy(expression=rw(insn.expression), predicates=preds) \
                if isinstance(insn, Assignment) else insn.copy(predicates=preds)
        new.append(insn)
    return canonicalize_rules(kernel.copy(instructions=tuple(new),
                                          substitutions=FrozenMap(rw.rules)))


def _increments_reads_inits(kernel, name) -> tuple[list, list, list]:
    """The increments of *name* (with their terms), the instructions reading
    it and the other assignments to it (which must set it to zero); refused
    where the factors could not move to the reads."""
    incs: list = []
    readers: list = []
    inits: list = []
    for insn in kernel.instructions:
        writes = name in insn.assignee_names()
        terms = _increment_terms(insn) if writes else None
        if terms is not None:
            incs.append((insn, terms))
        elif writes:
            inits.append(insn)
        elif name in variables_read(*insn.read_expressions()) or \
                name in _rule_reads(kernel, insn):
            readers.append(insn)
    if not incs:
        raise TransformError(f"collect_common_factors_on_increment: no increments of "
                             f"'{name}' found")
    if not readers:
        raise TransformError(f"collect_common_factors_on_increment: '{name}' is never read")
    # the reads see factor * (sum of the stripped increments) only if the sum
    # starts from zero: a non-zero start would be scaled too
    for insn in inits:
        if not (isinstance(insn, Assignment) and _is_zero(insn.expression)):
            what = insn.expression if isinstance(insn, Assignment) else "a value"
            raise TransformError(f"collect_common_factors_on_increment: '{insn.id}' sets "
                                 f"'{name}' to {what}, not to zero; the factors cannot move "
                                 "to the reads (they would scale that value too)", insn.span)
    if not inits:
        raise TransformError(f"collect_common_factors_on_increment: nothing sets '{name}' "
                             "to zero before its increments; the factors cannot move to the "
                             "reads (they would scale its first value too)")
    return incs, readers, inits


def _common_factors(kernel, incs, allowed) -> list:
    """The factors every term of every increment in *incs* has (with
    multiplicity), less those that depend on loops outside *allowed*."""
    rules = kernel.substitutions
    all_inames = set(kernel.all_inames())
    common = None
    for _insn, terms in incs:
        for t in terms:
            fs = _factors(t, rules)
            if common is None:
                common = fs
            else:
                rest = list(fs)
                keep = []
                for f in common:
                    if f in rest:
                        rest.remove(f)
                        keep.append(f)
                common = keep
    common = [f for f in (common or [])
              if not ((variables_read(expand_rules(f, rules)) & all_inames) - allowed)]
    return common


__all__ = ["buffer_array", "alias_temporaries", "collect_common_factors_on_increment"]
