"""Fusing several kernels into one."""

from __future__ import annotations

from collections.abc import Sequence

import pymbolic.primitives as p

from f2loopy.analysis.accesses import AccessAnalysis, instruction_accesses
from f2loopy.diagnostics import TransformError
from f2loopy.ir.domains import combined_domain, iname_closure
from f2loopy.ir.expressions import rename, rename_functions
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import align_params, dim_type, lazy_affs, set_names, set_to_params
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.kernel import (
    AddressSpace, Assignment, Kernel, ScalarArg, SubstitutionRule, TranslationUnit)
from f2loopy.transform.util import map_expressions


def _as_kernels(kernels) -> list[Kernel]:
    out: list = []
    for k in kernels:
        if isinstance(k, TranslationUnit):
            out.extend(k.kernels)
        elif isinstance(k, Kernel):
            out.append(k)
        else:
            raise TransformError(f"fuse_kernels: expected kernels, got {type(k).__name__}")
    return out


def _rename_kernel_locals(k: Kernel, suffix: str, keep: set, clashing=None) -> Kernel:
    """Rename temporaries, substitution rules and instruction ids with *suffix*
    (temporaries and rules only where their names are in *clashing*, if given)."""
    tmp_map = {n: n + suffix for n in k.temporaries
               if n not in keep and (clashing is None or n in clashing)}
    rule_map = {n: n + suffix for n in k.substitutions if clashing is None or n in clashing}
    id_map = {i.id: i.id + suffix for i in k.instructions}

    def fix(expr):
        return rename_functions(rename(expr, tmp_map), rule_map)

    insns = []
    for i in k.instructions:
        i = map_expressions(i, fix)
        i = i.copy(id=id_map[i.id], depends_on=frozenset(id_map.get(d, d) for d in i.depends_on),
                   no_sync_with=frozenset((id_map.get(a, a), s) for a, s in i.no_sync_with))
        insns.append(i)
    temps = FrozenMap((tmp_map.get(n, n), t.copy(name=tmp_map.get(n, n)))
                      for n, t in k.temporaries.items())
    rules = FrozenMap((rule_map[n], SubstitutionRule(rule_map[n], r.arguments, fix(r.expression),
                                                     r.span))
                      for n, r in k.substitutions.items())
    domains = []
    for d in k.domains:
        for old, new in tmp_map.items():
            idx = d.find_dim_by_name(dim_type.param, old)
            if idx >= 0:
                d = d.set_dim_name(dim_type.param, idx, new)
        domains.append(d)
    exits = FrozenMap((n, e.renamed(tmp_map)) for n, e in k.loop_exits.items())
    return k.copy(instructions=tuple(insns), temporaries=temps, substitutions=rules,
                  domains=tuple(domains), loop_exits=exits)


def fuse_kernels(kernels: Sequence[Kernel | TranslationUnit],
                 suffixes: Sequence[str] | None = None,
                 data_flow: Sequence[tuple[str, int, int]] | None = None, *,
                 name: str | None = None) -> Kernel:
    """Fuse *kernels* into one kernel that does the work of all of them, in order.

    * Inames with the same name are joined: their domains must agree (the
      projection of each kernel's domain onto the shared inames must be the
      same), else the fusion would change what runs and is refused.
    * Arguments with the same name are merged (their declarations must agree).
    * Temporaries and substitution rules of kernel *k* whose names another
      kernel also uses get the suffix ``suffixes[k]``, as in loopy (a
      temporary only one kernel has keeps its name: the paper's script then
      tells ``g12`` of refFluxS from the clashing ``U1_s``); its instruction ids
      all get it.  Without *suffixes*: ``_0``, ``_1``, ... on every local of a
      kernel whose names clash with an earlier kernel's.
    * Conflicting accesses to shared arguments are ordered like the original
      sequence of calls (exactly: only accesses that can touch the same
      element are ordered).
    * *data_flow*: ``[(variable, from_kernel_index, to_kernel_index), ...]``
      names temporaries that carry values from one kernel to a later one;
      they are shared instead of renamed, and ordered.
    """
    ks = _as_kernels(kernels)
    if len(ks) < 2:
        raise TransformError("fuse_kernels: give at least two kernels")
    if suffixes is not None and len(suffixes) != len(ks):
        raise TransformError("fuse_kernels: one suffix per kernel is needed")
    shared = {v for v, *_ in (data_flow or ())}
    for v, src, dst in (data_flow or ()):
        if not (0 <= src < dst < len(ks)):
            raise TransformError(f"fuse_kernels: data_flow entry ({v!r}, {src}, {dst}) must go "
                                 "from an earlier kernel to a later one")
    renamed = _renamed_locals(ks, suffixes, shared)
    _check_domains_agree(renamed)
    args = _merge_args(renamed)
    temps, rules, tags, exits = _merged_tables(ks, renamed, shared)
    ids = [i.id for k in renamed for i in k.instructions]
    if len(set(ids)) != len(ids):
        raise TransformError("fuse_kernels: instruction ids clash (give suffixes=)")

    domains, assumptions = _merged_domains(renamed)
    fused = Kernel(
        name=name or "_".join(k.name for k in ks),
        args=tuple(args), temporaries=FrozenMap(temps), domains=tuple(domains),
        instructions=tuple(i for k in renamed for i in k.instructions),
        iname_tags=FrozenMap(tags), substitutions=FrozenMap(rules),
        assumptions=assumptions.coalesce(),
        loop_priority=frozenset().union(*(k.loop_priority for k in renamed)),
        loop_exits=FrozenMap(exits),
        options=renamed[0].options, span=renamed[0].span, module=renamed[0].module)
    return _order_across_kernels(fused, [[i.id for i in k.instructions] for k in renamed])


def _renamed_locals(ks, suffixes, shared) -> list:
    """*ks* with the temporaries, rules and instruction ids that clash
    between kernels renamed by their suffixes (see :func:`fuse_kernels`);
    the *shared* temporaries (data flow) keep their names."""
    renamed: list = []
    for k_idx, k in enumerate(ks):
        if suffixes is not None:
            suffix = suffixes[k_idx]
            others = [o for j, o in enumerate(ks) if j != k_idx]
            clashing = {n for n in list(k.temporaries) + list(k.substitutions)
                        if any(n in o.temporaries or n in o.substitutions
                               or any(a.name == n for a in o.args) for o in others)}
            renamed.append(_rename_kernel_locals(k, suffix, shared, clashing) if suffix
                           else k)
            continue
        else:
            clash = any(n in other.temporaries or n in {i.id for i in other.instructions}
                        for other in renamed for n in list(k.temporaries)
                        + [i.id for i in k.instructions])
            suffix = f"_{k_idx}" if clash else ""
        renamed.append(_rename_kernel_locals(k, suffix, shared) if suffix else k)

    return renamed


def _merged_tables(ks, renamed, shared):
    """The fused kernel's temporaries, rules, iname tags and loop exits:
    those of every kernel, refused where two kernels disagree."""
    temps: dict = {}
    for k in renamed:
        for n, t in k.temporaries.items():
            if n in temps and temps[n] != t and n not in shared:
                raise TransformError(f"fuse_kernels: temporary '{n}' is declared differently "
                                     "in two kernels (give suffixes=)")
            temps.setdefault(n, t)
    rules: dict = {}
    for k in renamed:
        for n, r in k.substitutions.items():
            if n in rules and rules[n].expression != r.expression:
                raise TransformError(f"fuse_kernels: substitution rule '{n}' differs between "
                                     "kernels (give suffixes=)")
            rules[n] = r
    tags: dict = {}
    for k in renamed:
        for n, t in k.iname_tags.items():
            if n in tags and tags[n] != t:
                raise TransformError(f"fuse_kernels: iname '{n}' is tagged '{tags[n]}' in one "
                                     f"kernel and '{t}' in another")
            tags[n] = t
    exits = {}
    for k_idx, k in enumerate(renamed):
        for n, e in k.loop_exits.items():
            others = [o for o in renamed if o is not k and n in o.all_inames()]
            if others:
                raise TransformError(
                    f"fuse_kernels: loop '{n}' of kernel '{ks[k_idx].name}' ends early "
                    f"({e.sequential or 'exit, cycle or return'}), and kernel "
                    f"'{others[0].name}' has a loop of the same name: the fused loop would "
                    "end both (rename_iname one of them first)")
            exits[n] = e
    return temps, rules, tags, exits


def _merged_domains(renamed):
    """The fused kernel's domains (a later kernel's loops that an earlier
    kernel already has become parameters of its domains) and assumptions."""
    domains = list(renamed[0].domains)
    known = set(renamed[0].all_inames())
    for k in renamed[1:]:
        for d in k.domains:
            present = [n for n in set_names(d) if n in known]
            if present:
                d = set_to_params(d, present)
            if d.dim(dim_type.set):
                domains.append(d.coalesce())
                known |= set(set_names(d))
    assumptions = renamed[0].assumptions
    for k in renamed[1:]:
        a, b = align_params(assumptions, k.assumptions)
        assumptions = a & b
    return domains, assumptions


def _check_domains_agree(kernels):
    seen: dict = {}
    for k in kernels:
        for iname in k.all_inames():
            closure = iname_closure(k, [iname])
            dom = combined_domain(k, closure, with_assumptions=False)
            if iname in seen:
                other_k, other = seen[iname]
                if set(set_names(other)) != set(set_names(dom)):
                    raise TransformError(
                        f"fuse_kernels: loop '{iname}' depends on different loops in kernels "
                        f"'{other_k}' and '{k.name}'")
                from f2loopy.ir.isl_tools import reorder_set
                a, b = align_params(other, reorder_set(dom, set_names(other)))
                if not a.is_equal(b):
                    raise TransformError(
                        f"fuse_kernels: loop '{iname}' has different bounds in kernels "
                        f"'{other_k}' ({other}) and '{k.name}' ({dom}); fusing would change "
                        "which iterations run (rename the iname in one kernel first)")
            else:
                seen[iname] = (k.name, dom)


def _merge_args(kernels):
    args: dict = {}
    order = []
    for k in kernels:
        for a in k.args:
            if a.name in args:
                b = args[a.name]
                same = type(a) is type(b) and a.dtype == b.dtype and \
                    tuple(a.shape) == tuple(b.shape) and \
                    tuple(a.lower_bounds) == tuple(b.lower_bounds)
                if isinstance(a, ScalarArg):
                    same = same and a.fixed_value == b.fixed_value
                if not same:
                    raise TransformError(f"fuse_kernels: argument '{a.name}' is declared "
                                         f"differently in the kernels")
                continue
            args[a.name] = a
            order.append(a.name)
    return [args[n] for n in order]


def _order_across_kernels(fused: Kernel, groups) -> Kernel:
    """Add dependencies from each kernel's instructions on the earlier kernels'
    instructions they conflict with, after checking that running them in the
    shared loops does not reorder a dependence (which would change results)."""
    analysis = AccessAnalysis(fused)
    accumulates = _Accumulations(fused)
    by_id = fused.id_to_insn
    accs = {i.id: instruction_accesses(fused, i) for i in fused.instructions}
    order = list(fused.all_inames())
    extra: dict = {}
    for g_idx, group in enumerate(groups):
        for later in group:
            for earlier_group in groups[:g_idx]:
                for earlier in earlier_group:
                    for a in accs[earlier]:
                        for b in accs[later]:
                            if a.name != b.name or not (a.is_write or b.is_write):
                                continue
                            if not analysis.may_conflict(a, b):
                                continue
                            extra.setdefault(later, set()).add(earlier)
                            _check_not_reversed(analysis, order, by_id[earlier],
                                                by_id[later], a, b, accumulates)
    insns = tuple(i.copy(depends_on=i.depends_on | frozenset(extra.get(i.id, ())))
                  for i in fused.instructions)
    return fused.copy(instructions=insns)


def _update_kind(insn, name, through=None):
    """``"+"`` for ``v[idx] = v[idx] + ...``, ``"*"`` for ``v[idx] = v[idx] * ...``
    (*through*: the variable holding ``v[idx]`` instead), else None.  Updates
    of one kind may run in any order (up to rounding)."""
    if not isinstance(insn, Assignment) or insn.assignee_name != name:
        return None
    e = insn.expression
    old = insn.assignee if through is None else p.Variable(through)
    if isinstance(e, (p.Sum, p.Product)) and any(c == old for c in e.children):
        return "+" if isinstance(e, p.Sum) else "*"
    return None


def _is_accumulation(insn, name) -> bool:
    """``v[idx] = v[idx] + ...`` (or ``*``) written directly."""
    return _update_kind(insn, name) is not None


class _Accumulations:
    """Which instructions of *kernel* are part of an update
    ``v[idx] = v[idx] + ...`` (or ``*``) of an array: written directly, or
    through a private scalar temporary (``t = v[idx]`` then
    ``v[idx] = t + ...``, nothing else writing the array in between and
    nothing else reading or writing ``t``): either of the two instructions."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self._through_temps: dict = {}

    def __call__(self, insn, name: str) -> str | None:
        """The kind of update (``"+"``, ``"*"``) *insn* is part of, or None."""
        kind = _update_kind(insn, name)
        if kind is not None:
            return kind
        kinds = self._through_temps.get(name)
        if kinds is None:
            kinds = {i.id: kind for kind, pair in _accumulation_pairs(self.kernel, name)
                     for i in pair}
            self._through_temps[name] = kinds
        return kinds.get(insn.id)


def _accumulation_pairs(kernel: Kernel, name: str) -> list:
    """``(kind, (t = v[idx], v[idx] = t + ...))`` for the instruction pairs
    of *kernel* updating array *name* through private scalar temporaries
    (see :class:`_Accumulations`)."""
    insns = list(kernel.instructions)
    out = []
    for k, load in enumerate(insns):
        if not (isinstance(load, Assignment) and isinstance(load.assignee, p.Variable)
                and isinstance(load.expression, p.Subscript)
                and load.expression.aggregate.name == name and not load.predicates):
            continue
        t = load.assignee.name
        temp = kernel.temporaries.get(t)
        if temp is None or not temp.is_scalar or \
                temp.address_space not in (None, AddressSpace.PRIVATE):
            continue
        readers = [j for j in insns if t in variables_read(*j.read_expressions())]
        writers = [j for j in insns if t in j.assignee_names()]
        if len(readers) != 1 or writers != [load]:
            continue
        store = readers[0]
        kind = _update_kind(store, name, through=t)
        if kind is None or not isinstance(store, Assignment) \
                or not isinstance(store.expression, (p.Sum, p.Product)) \
                or store.assignee != load.expression \
                or store.within_inames != load.within_inames or store.predicates \
                or t in variables_read(*store.read_expressions()[1:]) \
                or sum(1 for c in store.expression.children if t in variables_read(c)) != 1:
            continue
        between = insns[k + 1:insns.index(store)]
        if any(name in j.assignee_names() for j in between):
            continue
        out.append((kind, (load, store)))
    return out


def _check_not_reversed(analysis, order, ia, ib, a, b, accumulates):
    """Refuse the fusion if an instance of *ib* (later kernel) would run in an
    earlier iteration of the shared loops than an instance of *ia* it conflicts
    with (updates ``v = v + ...`` of both may interleave: their order only
    changes rounding)."""
    kind = accumulates(ia, a.name)
    if kind is not None and accumulates(ib, b.name) == kind:
        return
    shared = [n for n in order if n in ia.within_inames and n in ib.within_inames]
    if not shared:
        return
    pairs = analysis.conflict_set(a, b)
    if pairs is None:
        raise TransformError(
            f"fuse_kernels: cannot prove that fusing keeps the order of "
            f"{_where(ia)} and {_where(ib)} on '{a.name}' (data-dependent subscripts)")
    import islpy as isl
    affs = lazy_affs(pairs.get_space())
    reversed_pairs = isl.Set.empty(pairs.get_space())
    prefix = isl.Set.universe(pairs.get_space())
    for n in shared:
        xa, xb = affs[n + "__a"], affs[n + "__b"]
        reversed_pairs = reversed_pairs | (prefix & xb.lt_set(xa))
        prefix = prefix & xa.eq_set(xb)
    if not (pairs & reversed_pairs).is_empty():
        raise TransformError(
            f"fuse_kernels: fusing would change results: {_where(ib)} reads or writes "
            f"elements of '{a.name}' in an earlier iteration of loop(s) "
            f"{', '.join(shared)} than {_where(ia)} of the earlier kernel produces them")


def _where(insn) -> str:
    return f"instruction '{insn.id}'" + (f" (line {insn.span.line})" if insn.span else "")
