"""Hoisting the work-item's guard out of statements and loops
(:attr:`~f2loopy.ir.kernel.KernelOptions.hoist_guards`).

A statement inside a parallel loop whose range does not fill the grid (the
columns ``KIDIA..KFDIA`` of a single-column kernel, in work-groups of 128)
runs under a condition on the work-item's indices.  Without hoisting, code
generation tests it on every statement, also inside sequential loops::

    for (int JK = 1; JK <= KLEV; ++JK)
    {
        if (KFDIA >= JL_inner + 128 * JL_outer + KIDIA)
            JO = IORDER[JM - 1];
        ...
        if (KFDIA >= JL_inner + 128 * JL_outer + KIDIA)
            ZSOLQA[JO - 1 + 5 * (JN - 1)] = ...;
    }

Each test is cheap, but the C compiler does not see that the two tests agree:
after unrolling the species loops, the value of ``JO`` that reaches the
second statement is "``IORDER[...]``, or what it was before", so the array
indexed by it stays in (slow) local memory and registers hold more live
values.  With hoisting, consecutive statements and loops that run under the
same condition on the work-item's indices are emitted in one ``if`` block
(the condition tested once), and a statement that runs outside the parallel
loop but only writes private variables that only statements under that
condition read (a loop index's value after its loop, a per-column constant)
joins the block: for a work-item outside the range its result is never used.

:func:`guard_runs` splits the nodes of one block into such runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from f2loopy.diagnostics import CodegenError
from f2loopy.ir.isl_tools import dim_type
from f2loopy.ir.kernel import AddressSpace, Assignment
from f2loopy.schedule.linearize import InsnNode, LoopNode

#: the key of a node that may join any run (see :func:`guard_runs`)
ANY = "any"


@dataclass(frozen=True)
class Run:
    """Consecutive nodes that run under the condition on the work-item's
    parallel indices *hardware* (empty: no common condition; emitted as
    they are)."""

    hardware: frozenset
    nodes: tuple


def _insns_of(node) -> list:
    out: list = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, InsnNode):
            out.append(n.insn_id)
        elif isinstance(n, LoopNode):
            stack.extend(n.body)
        else:
            return []          # a barrier: never inside a guarded block
    return out


def guard_runs(emitter, nodes) -> list[Run] | None:
    """*nodes* (one block of the schedule) as runs of :class:`Run`, or None
    when no two nodes share a condition worth hoisting (the block is
    emitted as before)."""
    hw = set(emitter.hardware_inames)
    info = emitter.hoist_info()
    keys: list = []
    for node in nodes:
        ids = _insns_of(node)
        if not ids or (isinstance(node, LoopNode) and node.iname in hw):
            keys.append(None)
            continue
        sets = {frozenset(set(emitter.kernel.insn(i).within_inames) & hw)
                for i in ids if i not in info.free}
        keys.append(ANY if not sets else next(iter(sets)) if len(sets) == 1 else None)
    runs: list[Run] = []
    current: list = []
    current_key = None        # the run's condition (None: not decided yet)
    pending: list = []        # ANY nodes waiting for the next run

    def close():
        nonlocal current, current_key
        if current:
            runs.append(Run(current_key or frozenset(), tuple(current)))
        current, current_key = [], None

    for node, key in zip(nodes, keys, strict=True):
        if key == ANY:
            # (only into the main condition's block: their readers run there)
            (current if current_key == info.main else pending).append(node)
            continue
        if key and key == current_key:
            current.append(node)
            continue
        close()
        first: list = []
        if pending and key and key == info.main:
            first = pending
        elif pending:
            runs.append(Run(frozenset(), tuple(pending)))
        pending = []
        current, current_key = first + [node], (key or None)
        if not key:
            close()
    close()
    if pending:
        runs.append(Run(frozenset(), tuple(pending)))
    emitted = [id(n) for r in runs for n in r.nodes]
    if emitted != [id(n) for n in nodes]:
        raise CodegenError("internal error: hoisting the column guard would reorder or "
                           "drop statements")
    if not any(r.hardware and (len(r.nodes) > 1 or isinstance(r.nodes[0], LoopNode))
               for r in runs):
        return None
    return runs


@dataclass(frozen=True)
class HoistInfo:
    """Per kernel: the statements that may run inside the block of the main
    condition *main* (the parallel inames of most statements; see
    :func:`hoist_info`)."""

    free: frozenset
    main: frozenset | None = None


def hoist_info(kernel, hardware, address_spaces) -> HoistInfo:
    """The statements outside every parallel loop that only write private
    variables (no loop bound depends on) whose readers all run under the
    kernel's main condition (the parallel inames of most statements) or are
    such statements themselves: for a work-item outside that condition
    their results are never used, so they may run inside its block."""
    hw = set(hardware)
    keys = {insn.id: frozenset(set(insn.within_inames) & hw) for insn in kernel.instructions}
    counts: dict = {}
    for k in keys.values():
        if k:
            counts[k] = counts.get(k, 0) + 1
    if not counts:
        return HoistInfo(frozenset(), None)
    main = max(counts, key=lambda k: (counts[k], sorted(k)))
    params: set = set()
    for dom in kernel.domains:
        params.update(dom.get_var_names(dim_type.param))
    readers: dict = {}
    for insn in kernel.instructions:
        for name in insn.read_dependency_names():
            readers.setdefault(name, []).append(insn.id)
    free = set()
    for insn in kernel.instructions:
        if keys[insn.id] or not isinstance(insn, Assignment):
            continue
        if all(name in kernel.temporaries and name not in params
               and address_spaces.get(name, AddressSpace.PRIVATE) == AddressSpace.PRIVATE
               for name in insn.assignee_names()):
            free.add(insn.id)
    changed = True
    while changed:        # the largest set closed under "read only by main or free"
        changed = False
        for i in sorted(free):
            insn = kernel.insn(i)
            if any(r not in free and keys[r] != main
                   for name in insn.assignee_names() for r in readers.get(name, ())):
                free.discard(i)
                changed = True
    return HoistInfo(frozenset(free), main)
