"""Kernels split at global barriers: several OpenCL kernels that the host
glue launches in order.

Work-groups of one launch cannot wait for each other, so a global barrier
(:class:`~f2loopy.ir.kernel.BarrierInstruction` with ``scope="global"``,
placed by :func:`~f2loopy.transform.launches.add_global_barrier` or loopy's
``add_barrier(..., synchronization_kind="global")``) ends one launch and
starts the next, as in loopy.  The loops a global barrier runs inside become
**host loops**: they run on the host, which launches the kernels of their
body once per iteration and passes the loop index as a scalar argument (the
time loop ``do t = 1, tsteps`` around parallel sweeps).

:func:`split_phases` computes the plan: a tuple of steps, each a
:class:`PhaseKernel` (one launch: a kernel of the instructions of one phase)
or a :class:`HostLoop` (its bounds and its own steps).  Which phase an
instruction lands in follows from the dependencies: an instruction runs in
the earliest phase after every instruction it depends on, and a global
barrier (or a host loop) ends the phase of what it depends on.  Values cross
launches through global memory: the arguments, scalars the kernel writes
(one-element buffers every launch that uses them shares), and temporaries
whose values one phase leaves for another (made global).

Refused, with the barrier's line: a global barrier inside a loop that is not
sequential (``g.N``, ``l.N``, ``unr``...), inside a loop whose bounds depend
on a loop that does not go to the host or on computed values, a host loop
with a stride, one that stops early, instructions that cannot be ordered
into launches, and local memory used across a barrier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import islpy as isl

from f2loopy.analysis.accesses import instruction_accesses
from f2loopy.diagnostics import CodegenError
from f2loopy.ir.domains import iname_to_domain_index
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import dim_type, expr_from_pwaff
from f2loopy.ir.kernel import (
    AddressSpace, ArrayArg, BarrierInstruction, Kernel, ScalarArg)
from f2loopy.ir.tags import SequentialTag


@dataclass(frozen=True)
class PhaseKernel:
    """One launch of a split kernel.

    :attr kernel: the instructions of the phase as a kernel of their own
        (named ``NAME_phaseK``), with the indices of the enclosing host loops
        as extra scalar arguments after the original ones.
    :attr host_inames: those indices, outermost first.
    """

    kernel: Kernel
    host_inames: tuple


@dataclass(frozen=True)
class HostLoop:
    """``for iname = lower .. upper`` on the host (step 1), running *body*
    (a tuple of :class:`PhaseKernel` / :class:`HostLoop`, or of their
    generated forms) every iteration.

    :attr lower, upper: pymbolic expressions in the kernel's scalar
        arguments and the indices of enclosing host loops.
    """

    iname: str
    lower: Any
    upper: Any
    body: tuple
    span: Any = None


def is_global_barrier(insn) -> bool:
    return isinstance(insn, BarrierInstruction) and insn.scope == "global"


def has_global_barriers(kernel: Kernel) -> bool:
    return any(is_global_barrier(i) for i in kernel.instructions)


def without_global_barriers(kernel: Kernel) -> Kernel:
    """*kernel* as one launch would run it if work-groups could synchronise:
    its global barriers removed (what depended on one depends on what the
    barrier depended on).  For counting operations and traffic, which the
    split does not change."""
    barriers = {i.id: i for i in kernel.instructions if is_global_barrier(i)}
    if not barriers:
        return kernel

    def resolve(ids, seen=frozenset()):
        out = set()
        for d in ids:
            if d in barriers and d not in seen:
                out |= resolve(barriers[d].depends_on, seen | {d})
            elif d not in barriers:
                out.add(d)
        return frozenset(out)
    return kernel.copy(instructions=tuple(
        i.copy(depends_on=resolve(i.depends_on)) for i in kernel.instructions
        if i.id not in barriers))


def phase_kernels(steps) -> list:
    """Every :class:`PhaseKernel` (or generated launch) of *steps*, in order."""
    out = []
    for s in steps:
        if isinstance(s, HostLoop):
            out.extend(phase_kernels(s.body))
        else:
            out.append(s)
    return out


# {{{ the plan

def split_phases(kernel: Kernel) -> tuple:
    """The launches of *kernel* split at its global barriers (see the module
    docstring); the kernel's temporaries that carry values from one launch
    to another are global in the phase kernels."""
    # every refusal names a line: the statement of the barrier (or of the
    # instruction), else the subroutine's
    kernel = kernel.copy(instructions=tuple(
        i if i.span is not None else i.copy(span=kernel.span) for i in kernel.instructions))
    barriers = [i for i in kernel.instructions if is_global_barrier(i)]
    host: set = set()
    for b in barriers:
        host |= set(b.within_inames)
    where = iname_to_domain_index(kernel)
    for b in barriers:
        for h in sorted(b.within_inames):
            _check_host_loop(kernel, b, h, host, where)
    count = {h: sum(h in i.within_inames for i in kernel.instructions) for h in host}
    order = sorted(host, key=lambda h: (-count[h], kernel.all_inames().index(h)))
    for k, h in enumerate(order):
        members = [i for i in kernel.instructions if h in i.within_inames]
        for outer in order[:k]:
            if any(outer not in i.within_inames for i in members) and \
                    any(outer in i.within_inames for i in members):
                raise CodegenError(
                    f"global barrier: loops '{outer}' and '{h}' both go to the host but are "
                    "not nested", _barrier_in(barriers, h).span)
    inames = kernel.all_inames()
    for h in order:
        for insn in kernel.instructions:
            if h not in insn.within_inames:
                continue
            outer = [x for x in insn.within_inames
                     if x not in host and inames.index(x) < inames.index(h)]
            if outer:
                raise CodegenError(
                    f"global barrier '{_barrier_in(barriers, h).id}' is inside loop '{h}', "
                    f"which is inside loop '{sorted(outer)[0]}' that does not go to the host "
                    "(the host cannot run a loop inside a launch; put the barrier in both "
                    "loops)", _barrier_in(barriers, h).span)
    bounds = {h: _host_bounds(kernel, h, where, _barrier_in(barriers, h)) for h in order}
    plan = _level(kernel, list(kernel.instructions), (), order, bounds, barriers)
    phases = phase_kernels(plan)
    spaces = _crossing_temporaries(kernel, phases)
    for b in barriers:
        if not b.depends_on:
            raise CodegenError(f"global barrier '{b.id}' depends on no instruction, so it "
                               "ends no launch", b.span)
    return _name_and_finish(kernel, plan, spaces, [0])


def _barrier_in(barriers, h):
    return next(b for b in barriers if h in b.within_inames)


def _check_host_loop(kernel: Kernel, barrier, h: str, host: set, where: dict) -> None:
    tag = kernel.iname_tag(h)
    if not isinstance(tag, SequentialTag):
        raise CodegenError(f"global barrier '{barrier.id}' is inside loop '{h}', which is "
                           f"tagged '{tag}': only a sequential loop can run on the host "
                           "around launches", barrier.span)
    if h in kernel.loop_exits:
        raise CodegenError(f"global barrier '{barrier.id}' is inside loop '{h}', which stops "
                           "early: a host loop must run all its iterations", barrier.span)
    if h in kernel.iname_slabs:
        raise CodegenError(f"global barrier '{barrier.id}' is inside loop '{h}', which has "
                           "slabs: a host loop cannot be peeled", barrier.span)
    if h not in where:
        raise CodegenError(f"global barrier '{barrier.id}' runs in loop '{h}', which no "
                           "domain defines", barrier.span)
    dom = kernel.domains[where[h]]
    inames = set(kernel.all_inames())
    scalars = {a.name for a in kernel.args if isinstance(a, ScalarArg)}
    written = kernel.written_variables()
    for p in dom.get_var_names(dim_type.param):
        if p in inames and p not in host:
            raise CodegenError(f"global barrier '{barrier.id}' is inside loop '{h}', whose "
                               f"bounds depend on loop '{p}', which does not go to the host "
                               "(put the barrier outside it, or in both)", barrier.span)
        if p not in inames and (p not in scalars or p in written):
            raise CodegenError(f"global barrier '{barrier.id}' is inside loop '{h}', whose "
                               f"bounds depend on '{p}', which the kernel computes: the "
                               "host cannot know them", barrier.span)
    if len(dom.get_var_names(dim_type.set)) != 1:
        raise CodegenError(f"global barrier '{barrier.id}': loop '{h}' shares its domain "
                           "with other loops", barrier.span)


def _host_bounds(kernel: Kernel, h: str, where: dict, barrier):
    """``(lower, upper)`` of host loop *h* as expressions of the parameters."""
    from f2loopy.ir.isl_tools import align_params
    ctx = kernel.assumptions if kernel.assumptions.is_params() else \
        kernel.assumptions.params()
    dom, ctx = align_params(kernel.domains[where[h]], ctx)
    dom = dom.intersect_params(ctx)
    hull = isl.Set.from_basic_set(dom.remove_divs().simple_hull())
    if not hull.is_subset(dom):
        raise CodegenError(f"global barrier '{barrier.id}' is inside loop '{h}', whose "
                           "iterations are not every integer between its bounds (a stride "
                           "or a guard): a host loop runs with step 1", barrier.span)
    return (expr_from_pwaff(dom.dim_min(0).coalesce(), ctx),
            expr_from_pwaff(dom.dim_max(0).coalesce(), ctx))


def _level(kernel, insns, enclosing: tuple, order, bounds, barriers) -> tuple:
    """The steps of the instructions *insns* (all inside the host loops
    *enclosing*): phases and the host loops directly inside."""
    inside = set(enclosing)
    node_of: dict = {}
    members: dict = {}
    kinds: dict = {}
    for insn in insns:
        rest = [h for h in order if h in insn.within_inames and h not in inside]
        if rest:
            key = ("loop", rest[0])
        elif is_global_barrier(insn):
            key = ("barrier", insn.id)
        else:
            key = ("insn", insn.id)
        node_of[insn.id] = key
        members.setdefault(key, []).append(insn)
        kinds[key] = key[0]
    deps: dict = {k: set() for k in members}
    for insn in insns:
        for d in insn.depends_on:
            if d in node_of and node_of[d] != node_of[insn.id]:
                deps[node_of[insn.id]].add(node_of[d])
    # topological order, ties in program order
    keys = list(members)
    done: dict = {}
    after: dict = {}
    phase: dict = {}
    pending = list(keys)
    while pending:
        for k in pending:
            if deps[k] <= set(done):
                break
        else:
            k = pending[0]
            first = members[k][0]
            other = next(d for d in deps[k] if d not in done)
            raise CodegenError(
                f"global barrier: instruction '{first.id}' and instruction "
                f"'{members[other][0].id}' depend on each other across a launch boundary "
                "(are the instructions of a host loop not contiguous?)", first.span)
        pending.remove(k)
        start = max((after[d] for d in deps[k]), default=0)
        if kinds[k] == "insn":
            phase[k] = start
            after[k] = start
        elif kinds[k] == "barrier":
            phase[k] = start
            after[k] = start + 1
        else:
            phase[k] = start + 1
            after[k] = start + 2
        done[k] = True
    steps: list = []
    for p in sorted(set(phase.values())):
        for k in keys:
            if phase[k] == p and kinds[k] == "loop":
                h = k[1]
                body = _level(kernel, members[k], enclosing + (h,), order, bounds, barriers)
                lower, upper = bounds[h]
                steps.append(HostLoop(h, lower, upper, body,
                                      _barrier_in(barriers, h).span))
        group = [i for k in keys if phase[k] == p and kinds[k] == "insn" for i in members[k]]
        if group:
            steps.append(PhaseKernel(_phase_kernel(kernel, group, enclosing), enclosing))
    return tuple(steps)


def _phase_kernel(kernel: Kernel, insns, host: tuple) -> Kernel:
    """The kernel of one phase (named later)."""
    from f2loopy.transform.iname import reduction_inames
    ids = {i.id for i in insns}
    hostset = set(host)
    new = tuple(i.copy(within_inames=frozenset(i.within_inames) - hostset,
                       depends_on=frozenset(i.depends_on) & ids) for i in insns)
    used = set()
    for i in new:
        # (a reduction's loops too: no statement of the phase may run in them)
        used |= set(i.within_inames) | reduction_inames(i)
    where = iname_to_domain_index(kernel)
    # the loops the phase's loops' bounds need (enclosing non-host domains)
    todo = list(used)
    while todo:
        x = todo.pop()
        for p in kernel.domains[where[x]].get_var_names(dim_type.param):
            if p in where and p not in used and p not in hostset:
                used.add(p)
                todo.append(p)
    domains = tuple(d for d in kernel.domains
                    if set(d.get_var_names(dim_type.set)) & used)
    names = set()
    for i in new:
        for acc in instruction_accesses(kernel, i):
            names.add(acc.name)
    args = [a for a in kernel.args
            if not isinstance(a, ArrayArg) or a.name in names]
    args = [a for a in args if not (isinstance(a, ScalarArg) and a.name in
                                    kernel.written_variables() and a.name not in names)]
    index = kernel.options.index_dtype
    args += [ScalarArg(name=h, dtype=index, intent="in") for h in host]
    assumptions = kernel.assumptions
    for h in host:
        dom = kernel.domains[where[h]]
        as_params = dom.move_dims(dim_type.param, dom.dim(dim_type.param),
                                  dim_type.set, 0, 1).params()
        from f2loopy.ir.isl_tools import align_params
        a, b = align_params(assumptions, as_params)
        assumptions = (a & b)
    temps = {n: t for n, t in kernel.temporaries.items() if n in names}
    return kernel.copy(
        instructions=new, domains=domains, args=tuple(args), temporaries=FrozenMap(temps),
        iname_tags=FrozenMap({i: t for i, t in kernel.iname_tags.items() if i in used}),
        iname_slabs=FrozenMap({i: s for i, s in kernel.iname_slabs.items() if i in used}),
        loop_exits=FrozenMap({i: s for i, s in kernel.loop_exits.items() if i in used}),
        loop_priority=frozenset(tuple(x for x in pr if x in used)
                                for pr in kernel.loop_priority
                                if len([x for x in pr if x in used]) > 1),
        assumptions=assumptions.coalesce(), module_data=())


def _crossing_temporaries(kernel: Kernel, phases) -> dict:
    """name -> address space for the temporaries that carry a value from one
    launch to another (a read in a phase that no earlier write of the same
    phase covers, of a temporary that another launch writes, or this one when
    a host loop runs it again).  A temporary that only its own launch writes
    stays private, as it is in the kernel before the split."""
    out: dict = {}
    written_in: dict = {}
    for ph in phases:
        for i in ph.kernel.instructions:
            for n in i.assignee_names():
                written_in.setdefault(n, set()).add(id(ph))
    for ph in phases:
        k = ph.kernel
        seen_writes: list = []
        for i in k.instructions:
            accs = instruction_accesses(k, i)
            for acc in accs:
                if acc.is_write or acc.name not in kernel.temporaries:
                    continue
                t = kernel.temporaries[acc.name]
                if t.read_only or not (written_in.get(acc.name, set()) - {id(ph)}
                                       or (ph.host_inames and acc.name in written_in)):
                    continue
                covering = [w for w, name, w_idx in seen_writes
                            if name == acc.name and w_idx == acc.index
                            and w.within_inames <= i.within_inames]
                if _writes_cover(i, covering, k):
                    continue
                if t.address_space == AddressSpace.LOCAL:
                    raise CodegenError(f"temporary '{acc.name}' is in local memory but "
                                       "carries a value across a global barrier (local "
                                       "memory lasts one launch)", i.span)
                out[acc.name] = AddressSpace.GLOBAL
            for acc in accs:
                if acc.is_write:
                    seen_writes.append((i, acc.name, acc.index))
    return out


def _writes_cover(reader, writes: list, kernel: Kernel) -> bool:
    """Whether one of *writes* (earlier instructions of the same launch)
    surely ran before *reader*: one without predicates, or writes whose
    predicates together cover every case the reader runs in (``if (c) then
    t = ...; else t = ...``, ``else if`` chains, a read under the write's own
    condition).  Predicates are re-evaluated at each instruction, so a
    predicated write counts only when no instruction of the launch writes a
    variable of the predicates: their values are then the same at every
    write and at the read."""
    from pymbolic.mapper.dependency import DependencyMapper
    from pymbolic.primitives import LogicalAnd, LogicalNot
    if any(not w.predicates for w in writes):
        return True
    if not writes:
        return False

    def literals(preds) -> list:
        """(atom, wanted value) of a conjunction of predicates."""
        out = []
        for p in preds:
            if isinstance(p, LogicalAnd):
                out += literals(p.children)
            elif isinstance(p, LogicalNot):
                out.append((p.child, False))
            else:
                out.append((p, True))
        return out

    conjunctions = [literals(insn.predicates) for insn in (reader, *writes)]
    atoms: list = []
    for lits in conjunctions:
        for atom, _ in lits:
            if atom not in atoms:
                atoms.append(atom)
    if len(atoms) > 10:
        return False
    deps = DependencyMapper(include_subscripts=False, include_calls=False)
    names = {v.name for a in atoms for v in deps(a) if hasattr(v, "name")}
    if any(names & set(i.assignee_names()) for i in kernel.instructions):
        return False
    index = {a: n for n, a in enumerate(atoms)}
    for bits in range(1 << len(atoms)):
        def holds(lits, bits=bits):
            return all(bool(bits >> index[a] & 1) == want for a, want in lits)

        if holds(conjunctions[0]) and not any(holds(c) for c in conjunctions[1:]):
            return False
    return True


def _name_and_finish(kernel: Kernel, steps, spaces: dict, counter: list) -> tuple:
    out: list = []
    taken = {a.name for a in kernel.args}
    for s in steps:
        if isinstance(s, HostLoop):
            out.append(HostLoop(s.iname, s.lower, s.upper,
                                _name_and_finish(kernel, s.body, spaces, counter), s.span))
            continue
        counter[0] += 1
        k = s.kernel
        temps = dict(k.temporaries)
        for n, space in spaces.items():
            if n in temps:
                temps[n] = temps[n].copy(address_space=space)
        name = f"{kernel.name}_phase{counter[0]}"
        if name in taken:
            raise CodegenError(f"the launches of '{kernel.name}' would be named like its "
                               f"argument '{name}'", kernel.span)
        out.append(PhaseKernel(k.copy(name=name, temporaries=FrozenMap(temps)),
                               s.host_inames))
    return tuple(out)

# }}}
