"""Transformations of loop axes (inames): split, join, tag, rename, duplicate,
reorder, remove.

Every function takes a kernel and returns a new kernel; options are keyword
arguments.  Names follow loopy, so scripts written for loopy read the same.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence

import islpy as isl
import pymbolic.primitives as p

from f2loopy.diagnostics import TransformError
from f2loopy.ir.domains import iname_to_domain_index
from f2loopy.ir.expressions import Rewriter
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import (
    dim_type, expr_from_pwaff, lazy_affs, params_to_set, set_names, set_to_params)
from f2loopy.ir.kernel import Kernel
from f2loopy.ir.tags import ILPTag, InameTag, SequentialTag, parse_iname_tag
from f2loopy.transform.match import parse_match
from f2loopy.transform.util import (
    NameNotFoundError, MatchSpec, Names, TagSpec, check_new_iname, for_each_kernel, parse_iname_list, rename_in_set, resolve_iname,
    unique_name)


def _rewrite_selected(kernel: Kernel, selected, mapping, remove=(), add=()):
    """Substitute *mapping* (name -> expression) in the *selected* instructions,
    as if their substitution rules were expanded (rules get new versions where
    needed), and replace inames *remove* by *add* in their loops.

    Returns ``(instructions, rules)``.
    """
    from f2loopy.ir.expressions import substitute as _subst
    from f2loopy.transform.rules import RuleAwareRewriter, map_instruction_expressions
    renamer = _ReductionInameRenamer(remove, add, mapping)

    def leaf(e, bound):
        # a reduction over a replaced iname inside a rule body runs over the
        # new inames, as one in the instruction itself
        return renamer(_subst(e, lambda n: None if n in bound else mapping.get(n)))
    rw = RuleAwareRewriter(kernel.substitutions, leaf)
    insns = []
    for insn in kernel.instructions:
        if insn.id in selected:
            insn = map_instruction_expressions(insn, rw)
            if set(remove) & set(insn.within_inames):
                insn = insn.copy(within_inames=(insn.within_inames - set(remove)) | set(add))
            if set(remove) & reduction_inames(insn):
                insn = map_instruction_expressions(insn, renamer)
        insns.append(insn)
    return tuple(insns), FrozenMap(rw.rules)


def reduction_inames(insn, rules=None) -> set:
    """The inames the reductions in *insn*'s expressions run over (with
    *rules*, also those in the substitution rules it calls)."""
    from f2loopy.ir.expressions import Reduction
    out: set = set()
    stack = list(insn.read_expressions())
    entered: set = set()
    while stack:
        e = stack.pop()
        if isinstance(e, Reduction):
            out.update(e.inames)
            stack.append(e.expr)
        elif isinstance(e, p.Call):
            stack.extend(e.parameters)
            name = getattr(e.function, "name", None)
            if rules and name in rules and name not in entered:
                entered.add(name)
                stack.append(rules[name].expression)
        elif isinstance(e, p.ExpressionNode):
            from f2loopy.transform.rules import _children
            stack.extend(_children(e))
    return out


class _ReductionInameRenamer(Rewriter):
    """Replaces the inames *remove* by the inames *add* in reduction iname
    lists, and in the reductions' bodies by *mapping*."""

    def __init__(self, remove, add, mapping):
        self.remove = set(remove)
        self.add = tuple(add)
        self.mapping = mapping

    def map_reduction(self, expr, *args, **kwargs):
        from f2loopy.ir.expressions import Reduction, substitute
        inner = self.rec(expr.expr, *args, **kwargs)
        if self.remove & set(expr.inames):
            # the body's uses of the reduction iname are bound by it: they
            # change with it
            inner = substitute(inner, {n: v for n, v in self.mapping.items()
                                       if n in self.remove})
        names = tuple(x for n in expr.inames
                      for x in (self.add if n in self.remove else (n,)))
        return Reduction(expr.operation, names, inner)


def _finish(kernel: Kernel) -> Kernel:
    from f2loopy.transform.rules import canonicalize_rules
    return canonicalize_rules(kernel)


# {{{ split

@for_each_kernel
def split_iname(kernel: Kernel, split_iname: str, inner_length: int, *,
                outer_iname: str | None = None, inner_iname: str | None = None,
                outer_tag: TagSpec = None, inner_tag: TagSpec = None,
                slabs: Sequence[int] = (0, 0), do_tagged_check: bool = True,
                within: MatchSpec = None) -> Kernel:
    """Split loop *split_iname* into an outer and an inner loop.

    ``split_iname = base + inner + inner_length*outer`` with
    ``0 <= inner < inner_length``, where *base* is the loop's lower bound
    when that is a single affine expression (so a Fortran loop ``1..n`` splits
    into full chunks ``1..16, 17..32, ...``) and 0 otherwise.

    :arg inner_length: positive integer length of the inner loop.
    :arg outer_iname, inner_iname: names of the new inames (default
        ``<iname>_outer`` / ``<iname>_inner``, with a suffix ``_1``, ``_2``...
        if those are taken).
    :arg outer_tag, inner_tag: implementation tags for the new inames.
    :arg slabs: ``(first, last)``: peel that many iterations off the start
        and the end of the outer loop into loops of their own, so that the
        guards of a partial last chunk are tested only there (e.g.
        ``slabs=(0, 1)`` when *inner_length* need not divide the trip count).
        Only sequential outer loops are peeled.
    :arg within: match expression: split only in these instructions (the
        others keep the old loop).
    """
    iname = resolve_iname(kernel, split_iname)
    length, slabs = _checked_split_sizes(inner_length, slabs)
    if do_tagged_check and kernel.iname_tag(iname).hardware:
        raise TransformError(f"split_iname: iname '{iname}' is already tagged "
                             f"'{kernel.iname_tag(iname)}'; split before tagging")
    # default names that are taken (a loop split before, within= others) get a
    # suffix, as in loopy; names given must be new
    outer = outer_iname or unique_name(kernel, f"{iname}_outer")
    inner = inner_iname or unique_name(kernel, f"{iname}_inner", [outer])
    for new in (outer, inner):
        check_new_iname(kernel, new)
    if outer == inner:
        raise TransformError("split_iname: outer and inner iname must differ")

    match = parse_match(within)
    users = [insn for insn in kernel.instructions
             if iname in insn.within_inames
             or iname in reduction_inames(insn, kernel.substitutions)]
    selected = {insn.id for insn in users if match.match(kernel, insn)}
    if users and not selected:
        raise TransformError(f"split_iname: no instruction in loop '{iname}' matches "
                             f"within={within!r}")
    keep_old = len(selected) < len(users)

    where = iname_to_domain_index(kernel)
    dom_idx = where[iname]
    dom = kernel.domains[dom_idx]
    if keep_old and len(set_names(dom)) > 1:
        raise TransformError(f"split_iname: loop '{iname}' shares its domain with "
                             f"{', '.join(n for n in set_names(dom) if n != iname)}; split it "
                             "in all instructions (drop within=)")
    base = _affine_lower_bound(dom, iname)
    replacement = p.Sum((base, p.Variable(inner), p.Product((length, p.Variable(outer))))) \
        if base != 0 else p.Sum((p.Variable(inner), p.Product((length, p.Variable(outer)))))

    children = [k for k, d in enumerate(kernel.domains)
                if d.find_dim_by_name(dim_type.param, iname) >= 0]
    if keep_old and children:
        raise TransformError(f"split_iname: loop '{iname}' encloses loops whose bounds depend "
                             "on it; split it in all instructions (drop within=)")

    domains = list(kernel.domains)
    if keep_old:
        # the instructions split get a loop nest of their own; the others keep
        # the old loop (one domain for both would tie the new inames to it)
        domains.append(_split_domain(dom, iname, outer, inner, length, base))
    else:
        domains[dom_idx] = _split_domain(dom, iname, outer, inner, length, base)
    for k in children:
        domains[k] = _substitute_param(domains[k], iname, [outer, inner],
                                       {iname: replacement})

    insns, substitutions = _rewrite_selected(kernel, selected, {iname: replacement},
                                             remove=[iname], add=[outer, inner])

    tags, priority = _split_tags_and_priority(kernel, iname, outer, inner, keep_old,
                                              outer_tag, inner_tag)
    slab_map = kernel.iname_slabs
    if slabs != (0, 0):
        slab_map = slab_map.set(outer, slabs)
    return _finish(kernel.copy(domains=tuple(domains), instructions=insns,
                               iname_tags=FrozenMap(tags), substitutions=substitutions,
                               loop_priority=priority, iname_slabs=slab_map))


def _checked_split_sizes(inner_length, slabs) -> tuple[int, tuple[int, int]]:
    """*inner_length* as a positive integer and *slabs* as two non-negative
    integers, else a located refusal."""
    try:
        length = int(inner_length)
    except (TypeError, ValueError):
        raise TransformError(f"split_iname: inner_length must be an integer, got "
                             f"{inner_length!r}") from None
    if length != inner_length or length <= 0:
        raise TransformError(f"split_iname: inner_length must be a positive integer, got "
                             f"{inner_length!r}")
    try:
        slabs = tuple(int(x) for x in slabs)
    except (TypeError, ValueError):
        slabs = ()
    if len(slabs) != 2 or min(slabs) < 0:
        raise TransformError(f"split_iname: slabs must be two non-negative integers "
                             f"(first, last), got {slabs!r}")
    return length, (slabs[0], slabs[1])


def _split_tags_and_priority(kernel, iname, outer, inner, keep_old, outer_tag, inner_tag):
    """The iname tags and loop priorities after *iname* split into *outer*
    and *inner* (the old loop's entries stay where it is kept)."""
    tags = dict(kernel.iname_tags)
    if not keep_old:
        tags.pop(iname, None)
    for name, tag in ((outer, outer_tag), (inner, inner_tag)):
        if tag is not None:
            tags[name] = parse_tag(tag)
    priority = frozenset(
        tuple(x for n in tup for x in ((outer, inner) if n == iname and not keep_old else (n,)))
        for tup in kernel.loop_priority)
    return tags, priority


def _affine_lower_bound(dom: isl.Set, iname: str):
    """The lower bound of *iname* in *dom* as a pymbolic expression, if it is
    one affine piece; 0 otherwise."""
    pos = dom.find_dim_by_name(dim_type.set, iname)
    others = [n for n in set_names(dom) if n != iname]
    d = set_to_params(dom, others) if others else dom
    pos = d.find_dim_by_name(dim_type.set, iname)
    lb = d.dim_min(pos).coalesce()
    if lb.n_piece() != 1:
        return 0
    pieces = lb.get_pieces()
    _, aff = pieces[0]
    if aff.dim(dim_type.div) != 0:
        return 0
    try:
        from f2loopy.ir.folding import normalize_integer
        return normalize_integer(expr_from_pwaff(isl.PwAff.from_aff(aff)))
    except Exception:
        return 0


def _split_domain(dom, iname, outer, inner, length, base):
    n = dom.dim(dim_type.set)
    d = dom.add_dims(dim_type.set, 2)
    d = d.set_dim_name(dim_type.set, n, outer).set_dim_name(dim_type.set, n + 1, inner)
    # iname position stays; place outer/inner right after it
    from f2loopy.ir.isl_tools import pwaff_from_expr, reorder_set
    order = []
    for name in set_names(dom):
        order.append(name)
        if name == iname:
            order += [outer, inner]
    d = reorder_set(d, order)
    space = d.get_space()
    affs = lazy_affs(space)
    base_aff = pwaff_from_expr(base, space) if base != 0 else affs[0]
    cons = (affs[inner].ge_set(affs[0]) & affs[inner].lt_set(affs[0] + length)
            & affs[iname].eq_set(base_aff + affs[inner] + affs[outer] * length))
    d = d & cons
    idx = d.find_dim_by_name(dim_type.set, iname)
    return d.project_out(dim_type.set, idx, 1).coalesce()


def _substitute_param(dom: isl.Set, old: str, new_params, mapping) -> isl.Set:
    """Replace parameter *old* of *dom* by an affine expression of *new_params*."""
    from f2loopy.ir.isl_tools import pwaff_from_expr
    names = set_names(dom)
    d = params_to_set(dom, [old])
    for np_ in new_params:
        if d.find_dim_by_name(dim_type.param, np_) < 0 and \
                d.find_dim_by_name(dim_type.set, np_) < 0:
            d = d.add_dims(dim_type.set, 1)
            d = d.set_dim_name(dim_type.set, d.dim(dim_type.set) - 1, np_)
        else:
            d = params_to_set(d, [np_])
    space = d.get_space()
    affs = lazy_affs(space)
    d = d & affs[old].eq_set(pwaff_from_expr(mapping[old], space))
    idx = d.find_dim_by_name(dim_type.set, old)
    d = d.project_out(dim_type.set, idx, 1)
    d = set_to_params(d, [n for n in new_params])
    from f2loopy.ir.isl_tools import reorder_set
    return reorder_set(d, names).coalesce()

# }}}


# {{{ tags

def parse_tag(tag: TagSpec) -> InameTag:
    try:
        return parse_iname_tag(tag)
    except ValueError as exc:
        raise TransformError(str(exc)) from None


def _tag_pairs(tags):
    if isinstance(tags, dict):
        return list(tags.items())
    if isinstance(tags, str):
        pairs = []
        for item in tags.split(","):
            item = item.strip()
            if not item:
                continue
            if ":" not in item:
                raise TransformError(f"tag_inames: expected 'iname:tag', got {item!r}")
            name, tag = item.split(":", 1)
            pairs.append((name.strip(), tag.strip()))
        return pairs
    return [tuple(t) for t in tags]


@for_each_kernel
def tag_inames(kernel: Kernel,
               iname_to_tag: str | Mapping[str, TagSpec] | Sequence[tuple[str, TagSpec]], *,
               force: bool = False,
               ignore_nonexistent: bool = False) -> Kernel:
    """Set implementation tags of inames.

    *iname_to_tag* is a dict ``{"i": "l.0"}``, a string ``"i:l.0, e:g.0"`` or
    a list of pairs; iname names may be glob patterns.  Tags: ``for``, ``g.N``,
    ``l.N``, ``l.auto``, ``unr``, ``ilp`` / ``ilp.unr``, ``ilp.seq``, ``vec``.
    Changing an existing parallel tag to a different one needs ``force=True``.
    """
    tags = dict(kernel.iname_tags)
    inames = kernel.all_inames()
    for name, tag_text in _tag_pairs(iname_to_tag):
        tag = parse_tag(tag_text)
        if any(c in name for c in "*?["):
            targets = [i for i in inames if fnmatch.fnmatchcase(i, name)]
        else:
            try:
                targets = [resolve_iname(kernel, name)]
            except TransformError:
                if ignore_nonexistent:
                    continue
                raise
        if not targets and not ignore_nonexistent:
            raise NameNotFoundError(f"tag_inames: no iname matches {name!r}")
        for t in targets:
            old = tags.get(t)
            if (old is not None and not force and old != tag
                    and not isinstance(old, SequentialTag) and not isinstance(tag, SequentialTag)
                    and (old.hardware or tag.hardware)):
                raise TransformError(f"tag_inames: iname '{t}' is already tagged '{old}'; "
                                     f"cannot also tag it '{tag}' (pass force=True to replace)")
            if isinstance(tag, SequentialTag):
                tags.pop(t, None)
            else:
                tags[t] = tag
    return kernel.copy(iname_tags=FrozenMap(tags))


@for_each_kernel
def untag_inames(kernel: Kernel, inames: Names) -> Kernel:
    """Remove the tags of *inames* (they become plain loops)."""
    drop = {resolve_iname(kernel, i) for i in parse_iname_list(inames)}
    return kernel.copy(iname_tags=FrozenMap((k, v) for k, v in kernel.iname_tags.items()
                                            if k not in drop))

# }}}


# {{{ rename / duplicate

@for_each_kernel
def rename_iname(kernel: Kernel, old_iname: str, new_iname: str, *, within: MatchSpec = None,
                 existing_ok: bool = False, preserve_tags: bool = True) -> Kernel:
    """Rename loop *old_iname* to *new_iname* in the instructions *within*
    selects (all by default).

    If only some instructions are selected, the others keep *old_iname* and
    the selected ones get a new loop with the same bounds.  If *new_iname*
    already exists (allowed with ``existing_ok=True``), its domain must be the
    same as that of *old_iname*; the selected instructions move to it, which
    merges the two loops: refused where that would run two accesses to the
    same element in the other order
    (:func:`~f2loopy.transform.loop_fusion.check_loop_fusion`).  Giving some
    instructions their own loop is refused likewise where it would reorder
    them with the others.
    """
    return _rename(kernel, old_iname, new_iname, within=within, existing_ok=existing_ok,
                   preserve_tags=preserve_tags)


def merge_checked_loop(kernel: Kernel, old_iname: str, new_iname: str) -> Kernel:
    """Move every instruction of loop *old_iname* into the existing loop
    *new_iname*, for a recipe that checked the merge itself with
    :func:`~f2loopy.transform.loop_fusion.check_loop_fusion` (the ``scc``
    recipe: ``parallel=True`` with the column loops as lanes, whose rule
    is the one that holds when each column runs on its own work-item)."""
    return _rename(kernel, old_iname, new_iname, within=None, existing_ok=True,
                   preserve_tags=True, fusion_checked=True)


def _rename(kernel: Kernel, old_iname: str, new_iname: str, *, within: MatchSpec,
            existing_ok: bool, preserve_tags: bool, fusion_checked: bool = False) -> Kernel:
    old = resolve_iname(kernel, old_iname)
    new = new_iname
    exists = new in kernel.all_inames()
    if exists and not existing_ok:
        raise TransformError(f"rename_iname: iname '{new}' already exists (pass "
                             "existing_ok=True to move instructions into it)")
    if not exists:
        check_new_iname(kernel, new)
    match = parse_match(within)
    users = [insn for insn in kernel.instructions if old in insn.within_inames]
    selected = {insn.id for insn in users if match.match(kernel, insn)}
    if not selected:
        if within is None:
            return _rename_everywhere(kernel, old, new) if not exists else kernel
        return kernel
    whole = len(selected) == len(users)
    if whole and not exists:
        return _rename_everywhere(kernel, old, new)

    where = iname_to_domain_index(kernel)
    children = [k for k, d in enumerate(kernel.domains)
                if d.find_dim_by_name(dim_type.param, old) >= 0]
    if children:
        raise TransformError(f"rename_iname: loop '{old}' encloses loops whose bounds depend "
                             "on it; rename it in all instructions")
    domains = list(kernel.domains)
    if exists:
        if not _same_range(kernel, old, new):
            raise TransformError(f"rename_iname: loops '{old}' and '{new}' have different "
                                 "bounds, so instructions cannot move between them")
        if not fusion_checked:
            from f2loopy.transform.loop_fusion import check_loop_fusion
            check_loop_fusion(kernel, old, new, moved=selected)
    _check_distribution(kernel, old, new, selected, {i.id for i in users} - selected)
    if not exists:
        domains.append(_copied_domain(kernel.domains[where[old]], old, new))
    insns, rules = _rewrite_selected(kernel, selected, {old: p.Variable(new)},
                                     remove=[old], add=[new])
    tags = dict(kernel.iname_tags)
    if preserve_tags and old in tags and not exists:
        tags[new] = tags[old]
    kernel = kernel.copy(domains=tuple(domains), instructions=insns,
                         iname_tags=FrozenMap(tags), substitutions=rules)
    if whole:
        kernel = remove_unused_inames(kernel, [old])
    return _finish(kernel)


def _check_distribution(kernel, old, new, moved, staying):
    """Refuse to give the instructions *moved* their own copy *new* of loop
    *old* if that changes results.

    The two loops then run one after the other (in the order of the
    statements' dependences), so every instance of one group runs before every
    instance of the other within the same iteration of the loops around *old*.
    That is wrong if two conflicting instances (one writing) ran the other way
    round in the original loop: e.g. a temporary set and read in the same
    iteration, split apart, would be read after its last value was written.
    Accumulations into the same variable may be reordered.
    """
    from f2loopy.analysis.accesses import AccessAnalysis, instruction_accesses
    from f2loopy.transform.fusion import _is_accumulation, _where
    if not moved or not staying:
        return
    analysis = AccessAnalysis(kernel)
    by_id = kernel.id_to_insn
    position = {insn.id: k for k, insn in enumerate(kernel.instructions)}
    accs = {i: instruction_accesses(kernel, by_id[i]) for i in moved | staying}
    order = list(kernel.all_inames())
    for m in sorted(moved, key=position.__getitem__):
        for o in sorted(staying, key=position.__getitem__):
            im, io = by_id[m], by_id[o]
            shared = [n for n in order if n in im.within_inames and n in io.within_inames]
            outside = shared[:shared.index(old)] if old in shared else shared
            inside = shared[len(outside):]
            first, second = ("__a", "__b") if position[m] < position[o] else ("__b", "__a")
            for a in accs[m]:
                for b in accs[o]:
                    if a.name != b.name or not (a.is_write or b.is_write):
                        continue
                    if _is_accumulation(im, a.name) and _is_accumulation(io, b.name):
                        continue
                    if not analysis.may_conflict(a, b):
                        continue
                    pairs = analysis.conflict_set(a, b)
                    why = None
                    if pairs is None:
                        why = "its subscripts are data-dependent, so the order cannot be checked"
                    elif not (pairs & _lex_later(pairs, outside, inside, first,
                                                 second)).is_empty():
                        why = (f"they access the same elements of '{a.name}' in iterations "
                               f"that the separate loops would run in the other order")
                    if why:
                        raise TransformError(
                            f"giving {_where(im)} its own loop '{new}' (a copy of '{old}') "
                            f"would run it apart from {_where(io)}: {why}", im.span,
                            (("the other statement", io.span),))


def _lex_later(pairs, outside, inside, first, second):
    """Instance pairs equal on the loops *outside* where the *first* side's
    iteration of the loops *inside* comes lexicographically after the
    *second* side's (so the second ran first originally)."""
    affs = lazy_affs(pairs.get_space())
    prefix = isl.Set.universe(pairs.get_space())
    for n in outside:
        prefix = prefix & affs[n + first].eq_set(affs[n + second])
    out = isl.Set.empty(pairs.get_space())
    for n in inside:
        out = out | (prefix & affs[n + first].gt_set(affs[n + second]))
        prefix = prefix & affs[n + first].eq_set(affs[n + second])
    return out


def _same_range(kernel, a, b) -> bool:
    from f2loopy.ir.domains import combined_domain
    da = combined_domain(kernel, [a], with_assumptions=True)
    db = combined_domain(kernel, [b], with_assumptions=True)
    db = rename_in_set(db, b, a)
    from f2loopy.ir.isl_tools import align_params
    da, db = align_params(da, db)
    return da.is_equal(db)


def _copied_domain(dom: isl.Set, old: str, new: str) -> isl.Set:
    """A domain introducing only *new*, with the bounds *old* has in *dom*."""
    others = [n for n in set_names(dom) if n != old]
    d = dom
    for n in others:
        idx = d.find_dim_by_name(dim_type.set, n)
        d = d.project_out(dim_type.set, idx, 1)
    return rename_in_set(d, old, new)


def _rename_everywhere(kernel: Kernel, old: str, new: str) -> Kernel:
    domains = tuple(rename_in_set(d, old, new) for d in kernel.domains)
    insns, rules = _rewrite_selected(kernel, {i.id for i in kernel.instructions},
                                     {old: p.Variable(new)}, remove=[old], add=[new])
    tags = FrozenMap((new if k == old else k, v) for k, v in kernel.iname_tags.items())
    priority = frozenset(tuple(new if n == old else n for n in t) for t in kernel.loop_priority)
    slabs = FrozenMap((new if k == old else k, v) for k, v in kernel.iname_slabs.items())
    exits = FrozenMap((new if k == old else k, v) for k, v in kernel.loop_exits.items())
    return _finish(kernel.copy(domains=domains, instructions=insns, iname_tags=tags,
                               loop_priority=priority, substitutions=rules,
                               iname_slabs=slabs, loop_exits=exits))


@for_each_kernel
def duplicate_inames(kernel: Kernel, inames: Names, within: MatchSpec = None, *,
                     new_inames: Names | None = None, suffix: str | None = None,
                     tags: Mapping[str, TagSpec] | None = None) -> Kernel:
    """Give the instructions *within* selects their own copies of loops *inames*.

    The copies are named ``<iname>_<k>`` (first free k) unless *new_inames*
    or *suffix* is given; *tags* maps old iname names to tags for the copies.
    """
    names = [resolve_iname(kernel, i) for i in parse_iname_list(inames)]
    if new_inames is not None:
        new_names = parse_iname_list(new_inames)
        if len(new_names) != len(names):
            raise TransformError("duplicate_inames: new_inames must match inames in length")
    else:
        new_names = []
        for n in names:
            if suffix is not None:
                new_names.append(n + suffix)
            else:
                new_names.append(unique_name(kernel, n, new_names))
    for old, new in zip(names, new_names, strict=True):
        kernel = rename_iname(kernel, old, new, within=within if within is not None else "all")
        if tags and old in tags:
            kernel = tag_inames(kernel, {new: tags[old]})
    return kernel

# }}}


# {{{ join

@for_each_kernel
def join_inames(kernel: Kernel, inames: Names, new_iname: str | None = None, *,
                tag: TagSpec = None, within: MatchSpec = None) -> Kernel:
    """Replace loops *inames* (outermost first, the last varying fastest) by one
    loop *new_iname* running over all their combinations.

    The loops must form a box: every iname but the first has constant bounds,
    the first may have parameter-dependent ones.  Every instruction inside any
    of the loops must be inside all of them (and selected by *within*).
    """
    from f2loopy.ir.domains import combined_domain
    from f2loopy.ir.isl_tools import align_params, make_space, pwaff_from_expr

    names = [resolve_iname(kernel, i) for i in parse_iname_list(inames)]
    if len(names) < 2:
        raise TransformError("join_inames: give at least two inames")
    new = new_iname or "_".join(names)
    check_new_iname(kernel, new)
    _check_join_order(kernel, names)
    box = combined_domain(kernel, names)
    lows, sizes = [], []
    rect = isl.Set.universe(box.get_space())
    for k, n in enumerate(names):
        lo, hi = box.dim_min(k), box.dim_max(k)
        if k > 0 and not (lo.is_cst() and hi.is_cst()):
            raise TransformError(f"join_inames: the bounds of '{n}' are not constant")
        lows.append(lo)
        sizes.append(hi - lo + 1)
        affs = lazy_affs(box.get_space())
        lo_l, hi_l, var = align_params(_params_on(lo, box), _params_on(hi, box), affs[n])
        rect = rect & var.ge_set(lo_l) & var.le_set(hi_l)
    rect, box = align_params(rect, box)
    if not rect.is_equal(box):
        raise TransformError(f"join_inames: loops {', '.join(names)} do not form a box (the "
                             "bounds of one depend on another)")
    const_sizes = [int(s.max_val().to_python()) for s in sizes[1:]]
    strides = [1]
    for sz in reversed(const_sizes):
        strides.insert(0, strides[0] * sz)
    j = p.Variable(new)
    low_exprs = [expr_from_pwaff(lo) for lo in lows]
    mapping = {names[0]: p.Sum((low_exprs[0], p.FloorDiv(j, strides[0])))}
    for k in range(1, len(names)):
        mapping[names[k]] = p.Sum((low_exprs[k], p.Remainder(p.FloorDiv(j, strides[k]),
                                                             const_sizes[k - 1])))
    len0 = expr_from_pwaff(sizes[0])
    space = make_space([new], sorted(sizes[0].get_var_names(dim_type.param)))
    affs = lazy_affs(space)
    dom = affs[new].ge_set(affs[0]) & affs[new].lt_set(
        pwaff_from_expr(p.Product((len0, strides[0])), space))

    match = parse_match(within)
    users = [i for i in kernel.instructions if set(names) & set(i.within_inames)]
    for insn in users:
        if not set(names) <= set(insn.within_inames):
            raise TransformError(f"join_inames: instruction '{insn.id}' is inside only some "
                                 f"of {', '.join(names)}")
        if not match.match(kernel, insn):
            raise TransformError("join_inames: within= must select every instruction in "
                                 "the joined loops")
    user_ids = {i.id for i in users}
    insns, rules = _rewrite_selected(kernel, user_ids, mapping, remove=names, add=[new])
    kernel = kernel.copy(domains=kernel.domains + (dom,), instructions=insns,
                         substitutions=rules)
    kernel = remove_unused_inames(kernel, names)
    if tag is not None:
        kernel = tag_inames(kernel, {new: tag})
    return kernel


def _check_join_order(kernel: Kernel, names) -> None:
    """The joined loop runs the iterations of *names* in the order given
    (the first outermost), which may be another nesting than the kernel's:
    refused where two conflicting instances (one writing) lie in opposite
    directions along two of the loops, since then the two nestings run
    them in different orders."""
    from f2loopy.schedule.linearize import order_keeps_dependences
    for k, x in enumerate(names):
        for y in names[k + 1:]:
            if not order_keeps_dependences(kernel, x, y):
                raise TransformError(f"join_inames: the instructions in loops '{x}' and "
                                     f"'{y}' depend on each other across iterations of "
                                     "both in opposite directions, so the joined loop may "
                                     "run them in another order than the loops do")


def _params_on(pw: isl.PwAff, s: isl.Set) -> isl.PwAff:
    """A parameter-only PwAff as a function on the set space of *s*."""
    n = s.dim(dim_type.set)
    out = pw.insert_dims(dim_type.in_, 0, n)
    for k in range(n):
        out = out.set_dim_id(dim_type.in_, k, isl.Id.read_from_str(
            isl.DEFAULT_CONTEXT, s.get_dim_name(dim_type.set, k)))
    return out


# }}}


# {{{ loop order, cleanup

@for_each_kernel
def prioritize_loops(kernel: Kernel, loop_priority: Names) -> Kernel:
    """Prefer the nesting *loop_priority* (outermost first, e.g. ``"i,j"``)
    where the dependencies leave the order open."""
    names = tuple(resolve_iname(kernel, i) for i in parse_iname_list(loop_priority))
    return kernel.copy(loop_priority=kernel.loop_priority | {names})


@for_each_kernel
def set_loop_priority(kernel: Kernel, loop_priority: Names) -> Kernel:
    """Old name of :func:`prioritize_loops`."""
    return prioritize_loops(kernel, loop_priority)


@for_each_kernel
def remove_unused_inames(kernel: Kernel, inames: Names | None = None) -> Kernel:
    """Drop loops no instruction runs in (all such, or only those in *inames*).

    An iname that the bounds of a used loop depend on is kept.
    """
    used = set()
    for insn in kernel.instructions:
        used |= set(insn.within_inames)
    from f2loopy.ir.domains import iname_closure
    used = set(iname_closure(kernel, used))
    candidates = set(kernel.all_inames()) if inames is None else \
        {resolve_iname(kernel, i) for i in parse_iname_list(inames)}
    drop = candidates - used
    if not drop:
        return kernel
    domains = []
    for d in kernel.domains:
        for n in drop:
            idx = d.find_dim_by_name(dim_type.set, n)
            if idx >= 0:
                d = d.project_out(dim_type.set, idx, 1)
        if d.dim(dim_type.set) > 0:
            domains.append(d.coalesce())
    tags = FrozenMap((k, v) for k, v in kernel.iname_tags.items() if k not in drop)
    priority = frozenset(t2 for t2 in (tuple(n for n in t if n not in drop)
                                       for t in kernel.loop_priority) if t2)
    slabs = FrozenMap((k, v) for k, v in kernel.iname_slabs.items() if k not in drop)
    return kernel.copy(domains=tuple(domains), iname_tags=tags, loop_priority=priority,
                       iname_slabs=slabs)

# }}}


__all__ = ["split_iname", "tag_inames", "untag_inames", "rename_iname", "duplicate_inames",
           "join_inames", "prioritize_loops", "set_loop_priority", "remove_unused_inames",
           "parse_tag", "ILPTag"]
