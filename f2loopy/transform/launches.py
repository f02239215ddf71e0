"""Splitting a kernel into several launches: global barriers.

A global barrier orders everything before it (in all work-groups) before
everything after it.  One OpenCL launch cannot do that, so code generation
ends a launch at every global barrier and starts the next one
(:mod:`f2loopy.codegen.phases`); the loops a global barrier runs inside
become host loops, which the host glue runs, passing their index to each
launch.  Each launch gets its own grid, from the parallel loops of its own
instructions.

* :func:`add_global_barrier` places one: after the instructions *after*
  selects and before those *before* selects (loopy's ``add_barrier(...,
  synchronization_kind="global")`` is the same with positional arguments).
* :func:`add_global_barriers_between_nests` places them where loop nests
  depend on each other, and makes the loops *host_loops* (a time loop)
  host loops: what the automatic recipe does before mapping each nest to
  the grid.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from f2loopy.diagnostics import TransformError
from f2loopy.ir.kernel import BarrierInstruction, Kernel
from f2loopy.transform.match import find_instructions
from f2loopy.transform.util import NameNotFoundError, MatchSpec, for_each_kernel, unique_name


@for_each_kernel
def add_global_barrier(kernel: Kernel, *, after: MatchSpec, before: MatchSpec = None,
                       within_inames: Iterable[str] | None = None,
                       id_based_on: str = "gbarrier") -> Kernel:
    """A global barrier after the instructions *after* selects and before
    those *before* selects (match language or ids).

    :arg within_inames: the loops the barrier runs inside, which become host
        loops (sequential loops run by the host around the launches); by
        default the loops that all selected instructions share.  With
        *before* None the barrier ends the launch of *after* inside those
        loops: every iteration of a host loop is then its own launch(es),
        which is how a single loop nest inside a time loop is split.
    :raises TransformError: a match selects nothing, or an instruction of
        *before* does not come after every one of *after*.
    """
    first = find_instructions(kernel, after)
    if not first:
        raise NameNotFoundError(f"add_global_barrier: no instruction matches {after!r} in kernel "
                             f"'{kernel.name}'")
    second = []
    if before is not None:
        second = find_instructions(kernel, before)
        if not second:
            raise NameNotFoundError(f"add_global_barrier: no instruction matches {before!r} in "
                                 f"kernel '{kernel.name}'")
    position = {i.id: k for k, i in enumerate(kernel.instructions)}
    overlap = {i.id for i in first} & {i.id for i in second}
    if overlap:
        raise TransformError(f"add_global_barrier: instruction '{sorted(overlap)[0]}' is "
                             "selected both before and after the barrier")
    last = max(position[i.id] for i in first)
    early = [i for i in second if position[i.id] < last]
    if early:
        raise TransformError(f"add_global_barrier: instruction '{early[0].id}' comes before "
                             f"instruction '{kernel.instructions[last].id}' in the program, "
                             "so it cannot run after a barrier that follows it", early[0].span)
    if within_inames is None:
        loops = None
        for i in first + second:
            mine = set(i.within_inames)
            loops = mine if loops is None else loops & mine
        within = frozenset(loops or ())
    else:
        within = frozenset(within_inames)
        unknown = within - set(kernel.all_inames())
        if unknown:
            raise NameNotFoundError(f"add_global_barrier: no loop named '{sorted(unknown)[0]}' "
                                 f"in kernel '{kernel.name}'")
        outside = [i for i in first + second if not within <= i.within_inames]
        if outside:
            raise TransformError(f"add_global_barrier: instruction '{outside[0].id}' is not "
                                 f"inside loop(s) {', '.join(sorted(within))}", outside[0].span)
    bid = unique_name(kernel, id_based_on)
    barrier = BarrierInstruction(id=bid, within_inames=within, scope="global",
                                 depends_on=frozenset(i.id for i in first),
                                 span=(second or first)[0].span)
    after_ids = {i.id for i in second}
    insns = [i.copy(depends_on=i.depends_on | {bid}) if i.id in after_ids else i
             for i in kernel.instructions]
    insns.insert(last + 1, barrier)
    return kernel.copy(instructions=tuple(insns))


def loop_nests(kernel: Kernel, enclosing: Sequence[str] = (),
               host_loops: Sequence[str] = ()) -> list[list]:
    """The loop nests directly inside the loops *enclosing* (the top level
    when empty), in program order: lists of instructions sharing their
    outermost loop other than *enclosing* (a statement in no further loop
    is a nest of its own; everything inside one of *host_loops* nested
    here is one nest)."""
    inside = set(enclosing)
    order = kernel.all_inames()
    nests: list[list] = []
    keys: list = []
    for insn in kernel.instructions:
        if not inside <= insn.within_inames:
            continue
        if isinstance(insn, BarrierInstruction) and insn.scope == "global" and \
                insn.within_inames == frozenset(inside):
            continue
        rest = [x for x in order if x in insn.within_inames and x not in inside]
        hosts = [x for x in rest if x in host_loops]
        key = ("loop", hosts[0]) if hosts else ("loop", rest[0]) if rest else ("insn", insn.id)
        if keys and keys[-1] == key:
            nests[-1].append(insn)
        else:
            keys.append(key)
            nests.append([insn])
    return nests


@for_each_kernel
def add_global_barriers_between_nests(kernel: Kernel, *, host_loops: Sequence[str] = ()
                                      ) -> Kernel:
    """A global barrier before every loop nest that depends on an earlier
    one (at the top level and directly inside each of *host_loops*), so
    that every such nest runs in launches of its own; and each loop of
    *host_loops* runs on the host (a barrier at the end of its body if
    nothing else put one inside).

    :arg host_loops: sequential loops to run on the host, outermost first,
        each inside the previous one (e.g. ``["t"]`` for a time loop).
    """
    host = list(host_loops)
    for k, h in enumerate(host):
        if h not in kernel.all_inames():
            raise NameNotFoundError(f"add_global_barriers_between_nests: no loop named '{h}' in "
                                 f"kernel '{kernel.name}'")
        members = [i for i in kernel.instructions if h in i.within_inames]
        if k and any(host[k - 1] not in i.within_inames for i in members):
            raise TransformError(f"add_global_barriers_between_nests: loop '{h}' is not "
                                 f"inside loop '{host[k - 1]}'")
    for depth in range(len(host) + 1):
        enclosing = host[:depth]
        nests = loop_nests(kernel, enclosing, host)
        phase: list[int] = []
        touched = [_touched(kernel, nest) for nest in nests]
        for k, nest in enumerate(nests):
            before = [j for j in range(k) if _conflict(touched[j], touched[k])]
            phase.append(max((phase[j] + 1 for j in before), default=0))
            if not before:
                continue
            kernel = add_global_barrier(
                kernel, after=" or ".join(f"id:{i.id}" for j in before for i in nests[j]),
                before=" or ".join(f"id:{i.id}" for i in nest), within_inames=enclosing)
        if depth and nests and not any(phase):
            kernel = add_global_barrier(
                kernel, after=" or ".join(f"id:{i.id}" for n in nests for i in n),
                within_inames=enclosing)
    return kernel


def _touched(kernel: Kernel, nest) -> tuple[set, set]:
    """(variables read, variables written) by the instructions of *nest*."""
    from f2loopy.analysis.accesses import instruction_accesses
    reads: set = set()
    writes: set = set()
    for insn in nest:
        for acc in instruction_accesses(kernel, insn):
            (writes if acc.is_write else reads).add(acc.name)
    return reads, writes


def _conflict(a: tuple, b: tuple) -> bool:
    """Two nests touch a variable that one of them writes."""
    return bool(a[1] & (b[0] | b[1]) or b[1] & a[0])
