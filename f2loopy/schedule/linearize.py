"""Ordering a kernel's instructions into a loop nest (the schedule).

Rules, as in loopy:

* an instruction runs inside exactly the sequential loops of its inames
  (hardware-parallel inames are not loops);
* it runs after every instruction it depends on;
* each loop is entered once.

The search is greedy (program order first, then loop priorities, then the
order in which inames appear in the domains) and backtracks over the choice of
which loop to enter when the greedy choice leads to a dead end.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from f2loopy.diagnostics import CodegenError
from f2loopy.ir.domains import iname_to_domain_index
from f2loopy.ir.isl_tools import dim_type
from f2loopy.ir.kernel import Kernel


@dataclass(frozen=True)
class LoopNode:
    iname: str
    body: tuple


@dataclass(frozen=True)
class InsnNode:
    insn_id: str


@dataclass(frozen=True)
class BarrierNode:
    """A barrier between work-items (scope ``"local"``) with the reason."""

    scope: str
    reason: str = ""


def schedule_nodes(nodes):
    """All nodes of a schedule tree, depth first."""
    for n in nodes:
        yield n
        if isinstance(n, LoopNode):
            yield from schedule_nodes(n.body)


@dataclass
class _State:
    """What a level of the search has placed: the scheduled instructions,
    iname -> how many of its instructions are left, and for each set of
    loops how many of its first instructions are scheduled."""

    scheduled: set
    left: dict
    start: dict

    def copy(self) -> _State:
        return _State(set(self.scheduled), dict(self.left), dict(self.start))


class _Search:
    MAX_STEPS = 50_000

    def __init__(self, kernel: Kernel, max_steps: int | None = None):
        self.kernel = kernel
        self.max_steps = max_steps or self.MAX_STEPS
        hw = kernel.hardware_inames()
        self.insns = list(kernel.instructions)
        self.order = {insn.id: k for k, insn in enumerate(self.insns)}
        self.loops_of = {insn.id: frozenset(insn.within_inames) - hw for insn in self.insns}
        self.deps = {insn.id: frozenset(d for d in insn.depends_on if d in self.order)
                     for insn in self.insns}
        self.sorted_ids = [insn.id for insn in sorted(
            self.insns, key=lambda i: (-i.priority, self.order[i.id]))]
        iname_order = kernel.all_inames()
        self.iname_rank = {n: k for k, n in enumerate(iname_order)}
        # inames whose domain mentions another iname as a parameter
        where = iname_to_domain_index(kernel)
        all_inames = set(iname_order)
        self.parents = {}
        for n in iname_order:
            dom = kernel.domains[where[n]]
            self.parents[n] = frozenset(x for x in dom.get_var_names(dim_type.param)
                                        if x in all_inames) - hw
        self.innermost = {n for n in iname_order if kernel.iname_tag(n).innermost}
        self.prio_pairs = set()
        self.prio_rank: dict[str, int] = {}
        for tup in kernel.loop_priority:
            for a_idx, a in enumerate(tup):
                self.prio_rank.setdefault(a, a_idx)
                for b in tup[a_idx + 1:]:
                    self.prio_pairs.add((a, b))
        # the instructions of each set of loops, in the order the search
        # prefers them (each step looks only at the set of the open loops)
        self.groups: dict[frozenset, list[str]] = {}
        for i in self.sorted_ids:
            self.groups.setdefault(self.loops_of[i], []).append(i)
        # iname -> the instructions that run in it (in the preferred order)
        self.within: dict[str, list[str]] = {}
        for i in self.sorted_ids:
            for x in self.loops_of[i]:
                self.within.setdefault(x, []).append(i)
        # iname -> how many of them there are (none scheduled yet)
        self.count = {x: len(ids) for x, ids in self.within.items()}
        self.steps = 0

    def run(self):
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 10_000))
        try:
            state = _State(set(), dict(self.count), {})
            result = self._search([], state, frozenset(), [[]])
        finally:
            sys.setrecursionlimit(limit)
        if result is None:
            raise self._failure()
        return tuple(result[0])

    def _runnable(self, state: _State, active_set: frozenset) -> str | None:
        """The first instruction (in the preferred order) of exactly the
        open loops whose dependencies are all scheduled."""
        group = self.groups.get(active_set)
        if not group:
            return None
        scheduled = state.scheduled
        k = state.start.get(active_set, 0)
        # the scheduled prefix of the group is skipped from now on
        while k < len(group) and group[k] in scheduled:
            k += 1
        state.start[active_set] = k
        for i in group[k:]:
            if i not in scheduled and self.deps[i] <= scheduled:
                return i
        return None

    def _search(self, active, state: _State, done, stack):
        # each level of the search has its own copy of the state, so that a
        # dead end leaves the caller's as it was (backtracking)
        active = list(active)
        stack = [list(level) for level in stack]
        state = state.copy()
        while True:
            self.steps += 1
            if self.steps > self.max_steps:
                raise CodegenError(f"kernel '{self.kernel.name}': no instruction order found "
                                   "(search limit reached)", self.kernel.span)
            if len(state.scheduled) == len(self.sorted_ids):
                while active:
                    self._close(active, stack)
                return stack
            active_set = frozenset(active)
            insn_id = self._runnable(state, active_set)
            if insn_id is not None:
                stack[-1].append(InsnNode(insn_id))
                state.scheduled.add(insn_id)
                for x in self.loops_of[insn_id]:
                    state.left[x] -= 1
                continue
            if active and not state.left.get(active[-1], 0):
                done = done | {active[-1]}
                self._close(active, stack)
                continue
            # the instructions that can run now inside the open loops
            scheduled = state.scheduled
            pool = self.sorted_ids if not active else min(
                (self.within[x] for x in active), key=len)
            ready = [i for i in pool if i not in scheduled and self.deps[i] <= scheduled
                     and active_set <= self.loops_of[i]]
            candidates = self._candidates(ready, active_set, done)
            for iname in candidates:
                new_stack = [list(level) for level in stack] + [[]]
                result = self._search(active + [iname], state, done, new_stack)
                if result is not None:
                    return result
            return None

    def _close(self, active, stack):
        iname = active.pop()
        body = stack.pop()
        stack[-1].append(LoopNode(iname, tuple(body)))

    def _candidates(self, ready, active_set, done):
        out = []
        for insn_id in ready:
            loops = self.loops_of[insn_id]
            if not active_set <= loops:
                continue
            needed = loops - active_set
            if needed & done:
                continue
            for iname in sorted(needed, key=lambda n: self._rank(n)):
                if iname in out:
                    continue
                if not self.parents[iname] <= active_set:
                    continue
                if any((other, iname) in self.prio_pairs for other in needed if other != iname):
                    continue
                if iname in self.innermost and any(o not in self.innermost for o in needed):
                    continue
                out.append(iname)
        return out

    def _rank(self, iname):
        return (iname in self.innermost, self.prio_rank.get(iname, 10**6),
                self.iname_rank.get(iname, 10**6))

    def _failure(self) -> CodegenError:
        # find an instruction that needs a loop it cannot get, to explain
        for insn in self.insns:
            missing = set(insn.within_inames) - set(self.kernel.all_inames())
            if missing:
                return CodegenError(f"instruction '{insn.id}' runs in unknown loop(s) "
                                    f"{', '.join(sorted(missing))}", insn.span)
        cycle = _find_cycle(self.deps)
        if cycle:
            first = self.kernel.insn(cycle[0])
            return CodegenError("instructions depend on each other in a cycle: "
                                + " -> ".join(cycle), first.span)
        return CodegenError(
            f"kernel '{self.kernel.name}': no order of instructions satisfies the dependencies "
            "with each loop entered once (two instructions that must be ordered both need a "
            "loop that a third, between them, must not be inside; use duplicate_inames to give "
            "them separate loops)", self.kernel.span)


def _find_cycle(deps):
    state = {}
    path = []

    def visit(n):
        state[n] = 1
        path.append(n)
        for d in sorted(deps.get(n, ())):
            if state.get(d) == 1:
                return path[path.index(d):] + [d]
            if d not in state:
                r = visit(d)
                if r:
                    return r
        state[n] = 2
        path.pop()
        return None

    for n in sorted(deps):
        if n not in state:
            r = visit(n)
            if r:
                return r
    return None


def order_keeps_dependences(kernel: Kernel, outer: str, inner: str) -> bool:
    """Whether running loop *outer* around loop *inner* keeps every dependence
    between instances of the instructions inside both: no two conflicting
    instances may lie in opposite directions along the two loops (one has
    the larger *outer*, the other the larger *inner*), since then one of the
    two nestings runs them in the wrong order.  Conservative: non-affine
    subscripts and data-dependent bounds count as such a conflict."""
    from f2loopy.analysis.accesses import AccessAnalysis, instruction_accesses
    from f2loopy.analysis.dependences import dependence_instances, reorders
    hw = kernel.hardware_inames()
    if outer in hw or inner in hw:
        return True
    insns = [i for i in kernel.instructions if {outer, inner} <= set(i.within_inames)]
    if len(insns) == 0:
        return True
    analysis = AccessAnalysis(kernel)
    temps = set(kernel.temporaries)
    for x in insns:
        dom = analysis.instance_domain(x.within_inames)
        if set(dom.get_var_names(dim_type.param)) & temps:
            return False
    accesses = [a for i in insns for a in instruction_accesses(kernel, i,
                                                               with_domain_params=False)]
    for _, _, pairs in dependence_instances(analysis, accesses):
        if pairs is None or reorders(pairs, outer, inner):
            return False
    return True


def check_innermost_order(kernel: Kernel, schedule) -> None:
    """An ``ilp`` or ``vec`` iname runs innermost: the schedule may put it
    inside a loop that it encloses in the Fortran (the kernel's iname order).
    Refuse the tag where that reorders dependent instances (``s = s + ...``
    over both loops)."""
    order = {n: k for k, n in enumerate(kernel.all_inames())}
    hw = kernel.hardware_inames()
    moved: dict[tuple[str, str], str] = {}     # (innermost iname, loop now around it) -> an instruction

    def walk(nodes, around):
        for node in nodes:
            if isinstance(node, LoopNode):
                walk(node.body, around + [node.iname])
            elif isinstance(node, InsnNode):
                for k, x in enumerate(around):
                    if not kernel.iname_tag(x).innermost:
                        continue
                    for o in around[:k]:
                        if o not in hw and order.get(o, -1) > order.get(x, -1):
                            moved.setdefault((x, o), node.insn_id)
    walk(schedule, [])
    for (x, o), insn_id in sorted(moved.items()):
        if not order_keeps_dependences(kernel, x, o):
            insn = kernel.insn(insn_id)
            raise CodegenError(
                f"iname '{x}' is tagged {kernel.iname_tag(x)}: its iterations run innermost, "
                f"inside '{o}', which changes the order of dependent statements (instruction "
                f"{insn_id!r}" + (f", line {insn.span.line}" if insn.span else "") +
                "); tag it 'unr' or leave it a loop", insn.span)


def legal_priorities(kernel: Kernel) -> frozenset:
    """The kernel's loop priorities without those that would reverse a
    dependence (see :func:`order_keeps_dependences`): a priority is advice,
    and advice that changes results is not followed."""
    keep = []
    for tup in kernel.loop_priority:
        if all(order_keeps_dependences(kernel, a, b)
               for k, a in enumerate(tup) for b in tup[k + 1:]):
            keep.append(tup)
    return frozenset(keep)


def linearize(kernel: Kernel, *, max_steps: int | None = None) -> tuple:
    """The schedule tree of *kernel*: a tuple of :class:`LoopNode`,
    :class:`InsnNode` (barriers are added by the barrier pass).

    Loop priorities are followed where the dependencies allow (a priority
    whose loop order would reverse a dependence is dropped); if no schedule
    respects them, they are dropped (they are advice, as in loopy)."""
    if kernel.loop_priority:
        legal = legal_priorities(kernel)
        if legal != kernel.loop_priority:
            kernel = kernel.copy(loop_priority=legal)
    try:
        return _Search(kernel, max_steps).run()
    except CodegenError:
        if not kernel.loop_priority:
            raise
    return _Search(kernel.copy(loop_priority=frozenset()), max_steps).run()
