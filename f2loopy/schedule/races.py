"""Exact (isl) analysis of what parallel execution does to a kernel's accesses.

A work-item is identified by its group ids ``g0..g2`` and local ids
``l0..l2``.  An instruction inside an iname tagged ``l.N`` runs in the
work-item ``lN = iname - base``; an instruction outside every iname of an
axis runs in *all* work-items along that axis (it is replicated).

Two questions are answered exactly where subscripts are affine:

* :meth:`RaceAnalysis.conflicts`: which pairs of instances touch the same
  element from different work-items (memory-based; for storage shared between
  work-items: global memory, and local memory within a group);
* :meth:`RaceAnalysis.value_flows`: where a value read by one instance was
  written by another (value-based, with isl's dataflow analysis over the
  kernel's sequential order), for storage that is *not* shared: a private
  temporary cannot carry a value between work-items, nor local memory between
  groups.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
import pymbolic.primitives as p

from f2loopy.analysis.accesses import Access, instruction_accesses
from f2loopy.ir.domains import combined_domain
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.isl_tools import (
    NonAffineError, align_params, dim_type, lazy_affs, pwaff_from_expr)
from f2loopy.ir.kernel import Kernel
from f2loopy.schedule.linearize import InsnNode, LoopNode

AXIS_NAMES = {("g", 0): "g0", ("g", 1): "g1", ("g", 2): "g2",
              ("l", 0): "l0", ("l", 1): "l1", ("l", 2): "l2"}


@dataclass(frozen=True)
class InstanceSpace:
    """How an instruction's instances are named in a pair set."""

    inames: tuple          # the instruction's inames, kernel order
    axis_iname: dict       # axis name -> iname of the instruction on it (or None)


class RaceAnalysis:
    def __init__(self, kernel: Kernel, grid):
        self.kernel = kernel
        self.grid = grid
        self.hw = {h.iname: h for h in grid.inames}
        self.axes = sorted({AXIS_NAMES[(h.kind, h.axis)] for h in grid.inames})
        self._inst: dict = {}
        self._rel: dict = {}
        self._inexact: set = set()
        self.order = list(kernel.all_inames())

    # {{{ instance sets

    def space(self, insn) -> InstanceSpace:
        inames = tuple(i for i in self.order if i in insn.within_inames)
        axis_iname = {}
        for ax in self.axes:
            on_axis = [i for i in inames if i in self.hw and
                       AXIS_NAMES[(self.hw[i].kind, self.hw[i].axis)] == ax]
            if len(on_axis) > 1:
                from f2loopy.diagnostics import CodegenError
                raise CodegenError(f"instruction '{insn.id}' is inside inames "
                                   f"{' and '.join(on_axis)}, both mapped to hardware axis "
                                   f"{ax}", insn.span)
            axis_iname[ax] = on_axis[0] if on_axis else None
        return InstanceSpace(inames, axis_iname)

    def instance_set(self, insn, suffix: str) -> isl.Set:
        """Instances of *insn* with their work-item coordinates, dims renamed
        ``name + suffix``; data-dependent loop-bound variables become
        per-side parameters."""
        key = (insn.id, suffix)
        if key in self._inst:
            return self._inst[key]
        # built once per instruction, renamed per suffix ("", "__a", "__b")
        dom = self._inst.get((insn.id, None))
        if dom is None:
            dom = self._inst[(insn.id, None)] = self._unnamed_instance_set(insn)
        for k in range(dom.dim(dim_type.set)):
            dom = dom.set_dim_name(dim_type.set, k, dom.get_dim_name(dim_type.set, k) + suffix)
        for k in range(dom.dim(dim_type.param)):
            name = dom.get_dim_name(dim_type.param, k)
            if name in self.kernel.temporaries:
                dom = dom.set_dim_name(dim_type.param, k, name + suffix)
        self._inst[key] = dom
        return dom

    def _unnamed_instance_set(self, insn) -> isl.Set:
        sp = self.space(insn)
        dom = combined_domain(self.kernel, list(sp.inames))
        # an instruction outside a g.N loop runs in every group: the number of
        # groups may depend on parameters its own loops do not mention
        dom = self._with_grid_params(dom)
        n = dom.dim(dim_type.set)
        dom = dom.add_dims(dim_type.set, len(self.axes))
        for k, ax in enumerate(self.axes):
            dom = dom.set_dim_name(dim_type.set, n + k, ax)
        space = dom.get_space()
        affs = lazy_affs(space)
        for ax in self.axes:
            x = sp.axis_iname[ax]
            if x is not None:
                base = pwaff_from_expr(self.hw[x].base, space)
                dom = dom & affs[ax].eq_set(affs[x] - base)
            else:
                size = self._axis_size(ax, space)
                dom = dom & affs[ax].ge_set(affs[0]) & affs[ax].lt_set(size)
        return dom

    def _with_grid_params(self, dom: isl.Set) -> isl.Set:
        names = sorted(set().union(*(variables_read(g) for g in self.grid.num_groups))
                       - set(dom.get_var_names(dim_type.param)))
        if not names:
            return dom
        extra = isl.Set.universe(isl.Space.create_from_names(
            isl.DEFAULT_CONTEXT, set=[], params=names)).params()
        return align_params(dom, extra)[0]

    def _axis_size(self, ax: str, space) -> isl.PwAff:
        kind, axis = ax[0], int(ax[1])
        if kind == "l" and isinstance(self.grid.local_size[axis], int):
            return lazy_affs(space)[0] + self.grid.local_size[axis]
        if kind == "l":
            return pwaff_from_expr(self.grid.local_size[axis], space)
        return pwaff_from_expr(self.grid.num_groups[axis], space)

    # }}}

    # {{{ pairs

    def pair_set(self, a: Access, b: Access) -> tuple[isl.Set, bool]:
        """Instance pairs of *a* and *b* touching the same element; the flag
        says whether the subscripts were affine (else all pairs are returned)."""
        ia, ib = self.kernel.insn(a.insn_id), self.kernel.insn(b.insn_id)
        ma = self._access_relation(a, ia, "__a")
        mb = self._access_relation(b, ib, "__b")
        if ma is None or mb is None:
            sa, sb = self.instance_set(ia, "__a"), self.instance_set(ib, "__b")
            sa, sb = align_params(sa, sb)
            return _product(sa, sb), a.index is None or b.index is None
        ma, mb = align_params(ma, mb)
        pairs = ma.apply_range(mb.reverse()).wrap().flatten()
        names = self._dim_names(ia, "__a") + self._dim_names(ib, "__b")
        for k, n in enumerate(names):
            pairs = pairs.set_dim_name(dim_type.set, k, n)
        return pairs, (a, "__a") not in self._inexact and (b, "__b") not in self._inexact

    def _dim_names(self, insn, suffix) -> list[str]:
        s = self.instance_set(insn, suffix)
        return [s.get_dim_name(dim_type.set, k) for k in range(s.dim(dim_type.set))]

    def _access_relation(self, acc: Access, insn, suffix: str):
        """``{instance -> element}`` of *acc* (instances as in
        :meth:`instance_set`; aliased temporaries address their shared
        storage linearly), or None where the subscripts are absent or none is
        affine.  A subscript that is not affine leaves its coordinate of the
        element free (the relation then holds every element the access may
        touch; ``a(i, idx(i))`` still touches column ``i`` only), and the
        access is recorded as inexact."""
        key = (acc, suffix)
        if key in self._rel:
            return self._rel[key]
        rel = None
        if acc.index is not None:
            index = acc.index
            var = self.kernel.temporaries.get(acc.name)
            if var is not None and var.base_storage:
                from f2loopy.ir.layout import linear_offset
                index = (linear_offset(var, index),)
            ren = {i: i + suffix for i in insn.within_inames}
            ren.update({t: t + suffix for t in self.kernel.temporaries})
            from f2loopy.ir.expressions import rename
            inst = self.instance_set(insn, suffix)
            n = inst.dim(dim_type.set)
            s = inst.add_dims(dim_type.set, len(index))
            for k in range(len(index)):
                s = s.set_dim_name(dim_type.set, n + k, f"_e{k}")
            affine = 0
            for k, e in enumerate(index):
                try:
                    pw = pwaff_from_expr(rename(e, ren), s.get_space())
                except NonAffineError:
                    self._inexact.add(key)
                    continue
                s, pw = align_params(s, pw)
                s = s & lazy_affs(s.get_space())[f"_e{k}"].eq_set(pw)
                affine += 1
            rel = _map_from_set(s, n, len(index)) if affine else None
        self._rel[key] = rel
        return rel

    def differs(self, s: isl.Set, axes) -> isl.Set:
        """Pairs of *s* whose coordinates differ on at least one of *axes*."""
        affs = lazy_affs(s.get_space())
        out = isl.Set.empty(s.get_space())
        for ax in axes:
            a, b = affs[ax + "__a"], affs[ax + "__b"]
            out = out | a.lt_set(b) | a.gt_set(b)
        return s & out

    def equal(self, s: isl.Set, names) -> isl.Set:
        affs = lazy_affs(s.get_space())
        for n in names:
            s = s & affs[n + "__a"].eq_set(affs[n + "__b"])
        return s

    @property
    def group_axes(self):
        return [a for a in self.axes if a[0] == "g"]

    @property
    def local_axes(self):
        return [a for a in self.axes if a[0] == "l"]

    def hw_inames_on(self, insn, axes) -> list[str]:
        sp = self.space(insn)
        return [sp.axis_iname[a] for a in axes if sp.axis_iname.get(a)]

    # }}}

    # {{{ value flow (private / local-across-groups storage)

    def _instance_dims(self, insn, per_lane):
        """Instance set of *insn* for the dataflow analysis and its dim names:
        its inames, plus (per lane) the work-item coordinates."""
        if per_lane:
            s = self.instance_set(insn, "")
        else:
            s = combined_domain(self.kernel, [i for i in self.order if i in insn.within_inames])
        return s, [s.get_dim_name(dim_type.set, k) for k in range(s.dim(dim_type.set))]

    def value_flows(self, variables, reference_schedule, *, per_lane=False, lane_axes=None):
        """Flow dependences ``(src_insn, sink_insn, relation)`` on *variables*
        in the sequential order *reference_schedule* (a schedule tree of the
        kernel with every iname a loop).  With *per_lane*, the schedule is
        the kernel's own (parallel inames are not loops): every work-item runs
        it separately, and instances carry their work-item coordinates; the
        axes in *lane_axes* (default all) order the runs of different work-items
        (the others run in lock-step).  The relation maps source instances to
        sink instances."""
        names = {insn.id: f"S{k}" for k, insn in enumerate(self.kernel.instructions)}
        back = {v: k for k, v in names.items()}
        self._per_lane = per_lane
        relevant = {}
        for insn in self.kernel.instructions:
            accs = [acc for acc in instruction_accesses(self.kernel, insn,
                                                        with_domain_params=False)
                    if acc.name in variables]
            if accs:
                relevant[insn.id] = accs
        # only the instructions that touch the variables need a schedule
        sched = _schedule_map(self.kernel, reference_schedule, names,
                              lambda insn: self._instance_dims(insn, per_lane),
                              (self.axes if lane_axes is None else lane_axes)
                              if per_lane else [], only=relevant)
        sinks: list = []
        must: list[isl.Map] = []
        may: list[isl.Map] = []
        covering = covering_writes(self.kernel, relevant)
        for insn in self.kernel.instructions:
            for acc in relevant.get(insn.id, ()):
                m, exact = self._access_map(insn, acc, names[insn.id])
                if acc.is_write:
                    (must if exact and (not insn.predicates or insn.id in covering)
                     else may).append(m)
                else:
                    sinks.append(m)
        if not sinks or not (must or may):
            return []
        info = isl.UnionAccessInfo.from_sink(_union(sinks))
        if must:
            info = info.set_must_source(_union(must))
        if may:
            info = info.set_may_source(_union(may))
        info = info.set_schedule_map(sched)
        dep = info.compute_flow().get_may_dependence()
        out = []
        maps: list[isl.Map] = []
        dep.foreach_map(maps.append)
        for m in maps:
            src = back[m.get_tuple_name(dim_type.in_)]
            snk = back[m.get_tuple_name(dim_type.out)]
            out.append((self.kernel.insn(src), self.kernel.insn(snk), m))
        return out

    def _access_map(self, insn, acc: Access, tuple_name: str):
        dom, inames = self._instance_dims(insn, getattr(self, "_per_lane", False))
        ndim = len(acc.index) if acc.index is not None else 0
        outs = [f"_o{k}" for k in range(ndim)]
        s = dom.add_dims(dim_type.set, ndim)
        for k, o in enumerate(outs):
            s = s.set_dim_name(dim_type.set, len(inames) + k, o)
        exact = True
        if acc.index is not None:
            affs = lazy_affs(s.get_space())
            for o, e in zip(outs, acc.index, strict=True):
                try:
                    s = s & affs[o].eq_set(pwaff_from_expr(e, s.get_space()))
                except NonAffineError:
                    exact = False
        m = _map_from_set(s, len(inames), ndim)
        m = m.set_tuple_name(dim_type.in_, tuple_name).set_tuple_name(dim_type.out, acc.name)
        return m, exact

    def flow_pair_set(self, src, sink, relation: isl.Map) -> isl.Set:
        """A flow relation (from :meth:`value_flows`) as a pair set with the
        work-item coordinates of both sides."""
        from f2loopy.ir.isl_tools import reorder_set
        per_lane = getattr(self, "_per_lane", False)
        s = relation.wrap().flatten()
        src_names = self._instance_dims(src, per_lane)[1]
        sink_names = self._instance_dims(sink, per_lane)[1]
        names = [n + "__a" for n in src_names] + [n + "__b" for n in sink_names]
        for k, n in enumerate(names):
            s = s.set_dim_name(dim_type.set, k, n)
        joint = _product(self.instance_set(src, "__a"), self.instance_set(sink, "__b"))
        s = reorder_set(s, [joint.get_dim_name(dim_type.set, k)
                            for k in range(joint.dim(dim_type.set))])
        s, joint = align_params(s, joint)
        return joint & s

    # }}}


def same_iteration_inames(kernel: Kernel, paths: dict, sink, var: str) -> frozenset:
    """Inames in each iteration of which every value of *var* that *sink*
    uses (one that matters: read while all its predicates hold) was written
    in that same iteration.

    Such a value comes from a write W of the element that *sink* reads which
    runs before *sink* in the same iteration of W's loops, under predicates
    that are all among the sink's and that nothing after W changes: when the
    sink's predicates hold, W ran.  The dataflow analysis sees a conditional
    W as a write that may not happen (it cannot relate the two predicates),
    so without this a flag set under a condition and read under it (the
    ``exit`` flag of a loop inside an ``if``) looked carried between
    iterations of a parallel loop: a false race.

    :arg paths: instruction id -> ``[(position, iname or None), ...]`` in a
        sequential order of the kernel (loops from the outside in).
    """
    from f2loopy.ir.expressions import accesses
    reads: set = set()
    for e in (*sink.read_expressions(), *sink.predicates):
        reads.update(idx for name, idx in accesses(e) if name == var)
    if len(reads) != 1 or sink.id not in paths:
        return frozenset()
    (index,) = reads
    out: set = set()
    written = {n for i in kernel.instructions for n in i.assignee_names()}
    for w in kernel.instructions:
        if w.id == sink.id or w.id not in paths or not hasattr(w, "assignee") or \
                not set(w.within_inames) <= set(sink.within_inames) or \
                not set(w.predicates) <= set(sink.predicates):
            continue
        target = w.assignee
        w_index = None
        if isinstance(target, p.Subscript):
            w_index = tuple(target.index) if isinstance(target.index, tuple) else \
                (target.index,)
            target = target.aggregate
        if not isinstance(target, p.Variable) or target.name != var or w_index != index:
            continue
        if w_index is not None and any(n in written and n not in w.within_inames
                                       for e in w_index for n in variables_read(e)):
            continue
        pw, pr = paths[w.id], paths[sink.id]
        depth = len(pw) - 1
        if len(pr) <= depth or pw[:depth] != pr[:depth] or pw[depth][0] >= pr[depth][0]:
            continue
        # what W's predicates read keeps its value up to the sink: what assigns
        # it in W's loops comes before W in each of their iterations
        cond = set().union(*(variables_read(c) for c in w.predicates)) if w.predicates \
            else set()
        if any(cond & set(i.assignee_names()) and not _earlier(paths.get(i.id), pw, depth)
               for i in kernel.instructions
               if set(w.within_inames) <= set(i.within_inames)):
            continue
        out.update(w.within_inames)
    return frozenset(out)


def _earlier(path, before, depth: int) -> bool:
    """Whether the instruction at *path* runs before the one at *before*
    (``depth`` loops deep) in each iteration of those loops."""
    return path is not None and len(path) > depth and path[:depth] == before[:depth] and \
        path[depth][0] < before[depth][0]


def _map_from_set(s: isl.Set, n_in: int, n_out: int) -> isl.Map:
    """The set over [in..., out...] as a map in -> out."""
    m = isl.Map.from_range(s)
    m = m.move_dims(dim_type.in_, 0, dim_type.out, 0, n_in)
    return m


def covering_writes(kernel: Kernel, accesses: dict) -> set:
    """Ids of conditional writes after which the element they write has been
    written in the same loop instance whatever the conditions were: the
    writes of one element (same inames, same subscripts) up to them have
    predicates that together cover every case (``if ... else``, ``select
    case`` with ``case default``), and nothing in between changes what the
    predicates read.  For the dataflow analysis such a write kills earlier
    values as an unconditional one would.

    :arg accesses: instruction id -> its accesses of interest."""
    groups: dict = {}
    position = {insn.id: k for k, insn in enumerate(kernel.instructions)}
    for insn in kernel.instructions:
        if not insn.predicates:
            continue
        for acc in accesses.get(insn.id, ()):
            if acc.is_write:
                groups.setdefault((acc.name, acc.index, insn.within_inames), []).append(insn)
    out = set()
    for members in groups.values():
        if len(members) < 2:
            continue
        first = position[members[0].id]
        conds, reads = [], set()
        for insn in members:
            cond = insn.predicates[0] if len(insn.predicates) == 1 else \
                p.LogicalAnd(tuple(insn.predicates))
            conds.append(cond)
            reads |= variables_read(cond)
            between = kernel.instructions[first:position[insn.id] + 1]
            if any(set(i.assignee_names()) & reads for i in between):
                break
            if _always(conds):
                out.add(insn.id)
    return out


def _always(conds, max_atoms: int = 10) -> bool:
    """Whether one of the logical expressions *conds* holds whatever values
    their atoms (the parts that are not .and./.or./.not.) take."""
    atoms: list = []

    def collect(e):
        if isinstance(e, (p.LogicalAnd, p.LogicalOr)):
            for c in e.children:
                collect(c)
        elif isinstance(e, p.LogicalNot):
            collect(e.child)
        elif e not in atoms:
            atoms.append(e)
    for c in conds:
        collect(c)
    if len(atoms) > max_atoms:
        return False

    def value(e, env):
        if isinstance(e, p.LogicalAnd):
            return all(value(c, env) for c in e.children)
        if isinstance(e, p.LogicalOr):
            return any(value(c, env) for c in e.children)
        if isinstance(e, p.LogicalNot):
            return not value(e.child, env)
        return env[atoms.index(e)]

    for bits in range(1 << len(atoms)):
        env = [(bits >> k) & 1 == 1 for k in range(len(atoms))]
        if not any(value(c, env) for c in conds):
            return False
    return True


def _union(maps) -> isl.UnionMap:
    out = None
    for m in maps:
        u = isl.UnionMap.from_map(m)
        out = u if out is None else out.union(u)
    return out


def _schedule_map(kernel, tree, names, dom_of, prefix_dims=(), only=None) -> isl.UnionMap:
    """The 2d+1 schedule of *tree*: instance -> [prefix..., pos0, iname1, pos1,
    ...]; *dom_of* gives an instruction's instance set and dim names; *only*:
    the ids of the instructions to include (default all)."""
    paths = {}

    def walk(nodes, prefix):
        for pos, node in enumerate(nodes):
            if isinstance(node, LoopNode):
                walk(node.body, prefix + [pos, p.Variable(node.iname)])
            elif isinstance(node, InsnNode):
                paths[node.insn_id] = prefix + [pos]
    walk(tree, [])
    for k in paths:
        paths[k] = [p.Variable(d) for d in prefix_dims] + paths[k]
    depth = max((len(v) for v in paths.values()), default=1)
    out = None
    for insn in kernel.instructions:
        if insn.id not in paths or (only is not None and insn.id not in only):
            continue
        dom, inames = dom_of(insn)
        path = paths[insn.id] + [0] * (depth - len(paths[insn.id]))
        ts = [f"_t{k}" for k in range(depth)]
        s = dom.add_dims(dim_type.set, depth)
        for pos, t in enumerate(ts):
            s = s.set_dim_name(dim_type.set, len(inames) + pos, t)
        affs = lazy_affs(s.get_space())
        for t, v in zip(ts, path, strict=True):
            val = affs[v.name] if isinstance(v, p.Variable) else affs[0] + v
            s = s & affs[t].eq_set(val)
        m = _map_from_set(s, len(inames), depth)
        m = m.set_tuple_name(dim_type.in_, names[insn.id])
        m = m.reset_tuple_id(dim_type.out)
        u = isl.UnionMap.from_map(m)
        out = u if out is None else out.union(u)
    return out


def _product(a: isl.Set, b: isl.Set) -> isl.Set:
    na, nb = a.dim(dim_type.set), b.dim(dim_type.set)
    a2 = a.add_dims(dim_type.set, nb)
    for k in range(nb):
        a2 = a2.set_dim_name(dim_type.set, na + k, b.get_dim_name(dim_type.set, k))
    b2 = b.insert_dims(dim_type.set, 0, na)
    for k in range(na):
        b2 = b2.set_dim_name(dim_type.set, k, a.get_dim_name(dim_type.set, k))
    a2, b2 = align_params(a2, b2)
    return a2 & b2
