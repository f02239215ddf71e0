"""Realising reductions as plain instructions before code generation.

``v = v + sum(k, e)`` becomes, for a sequential ``k``::

    acc = 0                        (inside the instruction's loops)
    acc = acc + e                  (inside them and k)
    v = v + acc

and, for ``k`` tagged ``l.N`` (a tree reduction by the work-items of a group,
in local memory; barriers come from the automatic barrier placement)::

    acc[k - base] = e                          (k parallel)
    acc[x] = acc[x] + acc[x + s]   for s = P/2, ..., 1 with x < s, x + s < L
    v = v + acc[0]                             (lane 0, or every lane for a
                                                private destination)
"""

from __future__ import annotations

from typing import cast

import pymbolic.primitives as p

from f2loopy.ir.types import kernel_type_inferrer, reduction_neutral
from f2loopy.diagnostics import CodegenError
from f2loopy.ir.domains import combined_domain
from f2loopy.ir.expressions import Reduction, Rewriter, make_subscript
from f2loopy.ir.folding import normalize_integer
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import dim_type, expr_from_pwaff, lazy_affs, make_space
from f2loopy.ir.kernel import AddressSpace, Assignment, Kernel, Temporary
from f2loopy.ir.tags import GroupAxisTag, LocalAxisTag


class _Collect(Rewriter):
    def __init__(self):
        self.found = []

    def map_reduction(self, expr, *args, **kwargs):
        inner = self.rec(expr.expr)
        if inner is not expr.expr:
            expr = Reduction(expr.operation, expr.inames, inner)
        self.found.append(expr)
        return expr


def _combine(op, a, b):
    if op == "sum":
        return p.Sum((a, b))
    if op == "product":
        return p.Product((a, b))
    return p.Call(p.Variable(op), (a, b))


class _Realizer:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.types = kernel_type_inferrer(kernel)
        self.taken = set(kernel.all_variable_names()) | {i.id for i in kernel.instructions}
        self.temps = dict(kernel.temporaries)
        self.domains = list(kernel.domains)
        self.tags = dict(kernel.iname_tags)

    def fresh(self, base):
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def run(self) -> Kernel:
        out = []
        changed = False
        for insn in self.kernel.instructions:
            if not isinstance(insn, Assignment):
                out.append(insn)
                continue
            col = _Collect()
            col(insn.expression)
            if not col.found:
                out.append(insn)
                continue
            changed = True
            extra, insn = self.realize(insn, col.found)
            out.extend(extra)
            out.append(insn)
        if not changed:
            return self.kernel
        return self.kernel.copy(instructions=tuple(out), temporaries=FrozenMap(self.temps),
                                domains=tuple(self.domains), iname_tags=FrozenMap(self.tags))

    def realize(self, insn, reductions):
        extra = []
        replacements = {}
        deps = set(insn.depends_on)
        for red in reductions:
            original = red
            for k in red.inames:
                if k in insn.within_inames:
                    raise CodegenError(f"instruction '{insn.id}' reduces over '{k}' but also "
                                       "runs inside that loop", insn.span)
            local = [k for k in red.inames if isinstance(self.kernel.iname_tag(k), LocalAxisTag)]
            groups = [k for k in red.inames if isinstance(self.kernel.iname_tag(k), GroupAxisTag)]
            if groups:
                raise CodegenError(f"reduction over '{groups[0]}', which is tagged "
                                   f"{self.kernel.iname_tag(groups[0])}: work-groups cannot "
                                   "combine results (use l.N or a sequential loop)", insn.span)
            dtype = self.types(red.expr)
            if local:
                if len(local) != 1:
                    raise CodegenError(f"a reduction can run in parallel over one l.N iname "
                                       f"only, not over {', '.join(local)}", insn.span)
                (k,) = local
                seq = [x for x in red.inames if x != k]
                partial = []
                if seq:
                    # each work-item first reduces its share sequentially
                    # (e.g. i_outer of a split), then the group combines
                    partial, v = self.sequential(
                        insn.copy(within_inames=insn.within_inames | {k}),
                        Reduction(red.operation, tuple(seq), red.expr), dtype)
                    red = Reduction(red.operation, (k,), v)
                insns, value = self.local_tree(insn, red, dtype,
                                               after=[partial[-1].id] if partial else [])
                insns = partial + insns
            else:
                insns, value = self.sequential(insn, red, dtype)
            extra.extend(insns)
            deps.add(insns[-1].id)
            replacements[original] = value
        new_expr = _replace(insn.expression, replacements)
        owner = getattr(self, "_owner_iname", None)
        within = insn.within_inames | ({owner} if owner else set())
        self._owner_iname = None
        return extra, insn.copy(expression=new_expr, depends_on=frozenset(deps),
                                within_inames=within)

    def sequential(self, insn, red, dtype):
        acc = self.fresh(f"acc_{'_'.join(red.inames)}")
        self.temps[acc] = Temporary(name=acc, dtype=dtype, address_space=AddressSpace.PRIVATE)
        v = p.Variable(acc)
        init = Assignment(id=self.fresh(f"{acc}_init"), assignee=v,
                          expression=reduction_neutral(red.operation, dtype),
                          within_inames=insn.within_inames, predicates=insn.predicates,
                          span=insn.span, tags=insn.tags)
        update = Assignment(id=self.fresh(f"{acc}_update"), assignee=v,
                            expression=_combine(red.operation, v, red.expr),
                            within_inames=insn.within_inames | set(red.inames),
                            predicates=insn.predicates,
                            depends_on=insn.depends_on | {init.id}, span=insn.span,
                            tags=insn.tags)
        return [init, update], v

    def local_tree(self, insn, red, dtype, after=()):
        (k,) = red.inames
        tag = self.kernel.iname_tag(k)
        dom = combined_domain(self.kernel, [k])
        lo, hi = dom.dim_min(0), dom.dim_max(0)
        try:
            length = int((hi - lo + 1).max_val().to_python())
        except Exception:
            raise CodegenError(f"parallel reduction over '{k}': its length is not a constant",
                               insn.span) from None
        # lanes that contribute nothing (a partial last chunk, a short
        # loop) must hold the neutral element when the tree reads them
        partial = _partial_lanes(dom, lo, length, self.kernel.assumptions)
        base = normalize_integer(expr_from_pwaff(lo))
        # (no assignment expression here: it would rebind this method's `tag`,
        # the reduction iname's, which the tree's inames below are given)
        local_tags = {i: self.kernel.iname_tag(i) for i in insn.within_inames}
        others = sorted((i for i, t in local_tags.items() if isinstance(t, LocalAxisTag)),
                        key=lambda i: cast(LocalAxisTag, local_tags[i]).axis)
        other_idx, other_shape = [], []
        for i in others:
            d = combined_domain(self.kernel, [i])
            ilo, ihi = d.dim_min(0), d.dim_max(0)
            other_shape.append(int((ihi - ilo + 1).max_val().to_python()))
            other_idx.append(normalize_integer(p.Sum((p.Variable(i), p.Product(
                (-1, expr_from_pwaff(ilo)))))))
        acc = self.fresh(f"acc_{k}")
        self.temps[acc] = Temporary(name=acc, dtype=dtype, shape=(length, *other_shape),
                                    lower_bounds=(0,) * (1 + len(other_shape)),
                                    address_space=AddressSpace.LOCAL)

        def ref(lane):
            return make_subscript(acc, [lane, *other_idx])

        lane = normalize_integer(p.Sum((p.Variable(k), p.Product((-1, base)))))
        insns = []
        deps = set(insn.depends_on) | set(after)
        if partial:
            f = self.fresh(f"{k}_fill")
            space = make_space([f], [])
            affs = lazy_affs(space)
            self.domains.append(affs[f].ge_set(affs[0]) & affs[f].lt_set(affs[0] + length))
            self.tags[f] = tag
            insns.append(Assignment(
                id=self.fresh(f"{acc}_neutral"), assignee=ref(p.Variable(f)),
                expression=reduction_neutral(red.operation, dtype),
                within_inames=insn.within_inames | {f}, predicates=insn.predicates,
                depends_on=insn.depends_on, span=insn.span, tags=insn.tags))
            deps.add(insns[-1].id)
        contrib = Assignment(id=self.fresh(f"{acc}_contrib"), assignee=ref(lane),
                             expression=red.expr, within_inames=insn.within_inames | {k},
                             predicates=insn.predicates, depends_on=frozenset(deps),
                             span=insn.span, tags=insn.tags)
        insns.append(contrib)
        power = 1
        while power < length:
            power *= 2
        step = power // 2
        while step >= 1:
            x = self.fresh(f"{k}_tree{step}")
            space = make_space([x], [])
            affs = lazy_affs(space)
            d = (affs[x].ge_set(affs[0]) & affs[x].lt_set(affs[0] + step)
                 & (affs[x] + step).lt_set(affs[0] + length))
            self.domains.append(d)
            self.tags[x] = tag
            xv = p.Variable(x)
            insns.append(Assignment(
                id=self.fresh(f"{acc}_step{step}"), assignee=ref(xv),
                expression=_combine(red.operation, ref(xv), ref(p.Sum((xv, step)))),
                within_inames=insn.within_inames | {x}, predicates=insn.predicates,
                depends_on=frozenset({insns[-1].id}), span=insn.span, tags=insn.tags))
            step //= 2
        # who stores the result: lane 0 for shared memory, every lane for a private value
        dest_private = self._private(insn.assignee_name)
        if not dest_private:
            owner = self.fresh(f"{k}_first")
            space = make_space([owner], [])
            affs = lazy_affs(space)
            self.domains.append(affs[owner].eq_set(affs[0]))
            self.tags[owner] = tag
            self._owner_iname = owner
        return insns, ref(0)

    def _private(self, name) -> bool:
        t = self.kernel.temporaries.get(name)
        return t is not None and t.address_space in (None, AddressSpace.PRIVATE)


def _partial_lanes(dom, lo, length, assumptions) -> bool:
    """Whether some of the *length* lanes starting at *lo* may lie outside
    *dom* (the reduction iname's domain) for parameters under *assumptions*."""
    from f2loopy.ir.isl_tools import align_params
    if not lo.is_cst():
        return True
    try:
        start = int(lo.max_val().to_python())
    except Exception:
        return True
    affs = lazy_affs(dom.get_space())
    box = affs[dom.get_dim_name(dim_type.set, 0)].ge_set(affs[0] + start) & \
        affs[dom.get_dim_name(dim_type.set, 0)].lt_set(affs[0] + start + length)
    ctx = assumptions if assumptions.is_params() else assumptions.params()
    box, ctx, dom = align_params(box, ctx, dom)
    return not box.intersect_params(ctx).subtract(dom).is_empty()


class _ReplaceReductions(Rewriter):
    def __init__(self, mapping):
        self.mapping = mapping

    def map_reduction(self, expr, *args, **kwargs):
        return self.mapping.get(expr, expr)


def _replace(expr, mapping):
    if isinstance(expr, Reduction):
        return mapping.get(expr, expr)
    return _ReplaceReductions(mapping)(expr)


def realize_reductions(kernel: Kernel) -> Kernel:
    """*kernel* with every :class:`~f2loopy.ir.expressions.Reduction` turned
    into ordinary instructions."""
    return _Realizer(kernel).run()

