"""Dead-store removal: assignments to temporaries whose values nothing reads.

A column routine often computes a value that the rest of the routine never
uses (CLOUDSC's tropopause search fills ``ZTRPAUS`` in a loop over the
levels and never reads it).  On a GPU such a loop still runs, reading its
inputs from memory.  :func:`dead_temporaries` finds the temporaries whose
stores can go and :func:`remove_dead_stores` removes them with their
statements; a loop left without statements is gone from the generated
code.

A temporary ``T`` is *dead* when all of these hold (checked on the IR):

* ``T`` is a temporary of the kernel (not an argument), is not aliased to
  other storage and no other temporary is aliased to it;
* no statement reads ``T`` (in a value, a subscript or a condition), except
  statements that themselves only write dead temporaries; no substitution
  rule reads it; it is not the flag of a loop exit nor a loop bound;
* every statement that writes ``T`` is an assignment whose value calls no
  function (a call might have an effect besides its value) and is not
  atomic.

The dead temporaries are the largest set with these properties (a fixpoint
from all candidates, removing any temporary read by a statement that writes
a temporary not in the set).  Removing their statements changes no value
that the kernel writes to an argument: every statement that remains reads
only variables whose writers all remain, so each remaining statement reads
the same values in the same order.  Statements that depended on a removed
statement depend on what it depended on, so the order of the rest is kept.
Kernels with output statements or stop sites are left unchanged (their
items may read temporaries outside any statement).
"""

from __future__ import annotations

from f2loopy.diagnostics import TransformError
from f2loopy.ir.expressions import Rewriter, variables_read
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import dim_type
from f2loopy.ir.kernel import Assignment, Kernel
from f2loopy.transform.util import for_each_kernel


class _HasCall(Rewriter):
    def __init__(self):
        self.found = False

    def map_call(self, expr, *a, **k):
        self.found = True
        return expr

    map_call_with_kwargs = map_call


def _calls(expr) -> bool:
    w = _HasCall()
    w(expr)
    return w.found


def dead_temporaries(kernel: Kernel) -> tuple[str, ...]:
    """The temporaries of *kernel* whose stores :func:`remove_dead_stores`
    removes, in name order (see the module docstring)."""
    if kernel.prints or kernel.error_sites:
        return ()
    aliased = {t.base_storage for t in kernel.temporaries.values() if t.base_storage}
    flags = {f for ex in kernel.loop_exits.values() for f in ex.flags}
    # a loop bound read from a temporary is a read outside any statement
    flags |= {n for dom in kernel.domains for n in dom.get_var_names(dim_type.param)}
    in_rules = variables_read(*(r.expression for r in kernel.substitutions.values()))
    writers: dict[str, list] = {}
    for insn in kernel.instructions:
        for n in insn.assignee_names():
            writers.setdefault(n, []).append(insn)
    cand = set()
    for n, t in kernel.temporaries.items():
        if t.base_storage is not None or n in aliased or n in flags or n in in_rules:
            continue
        ws = writers.get(n, [])
        if not ws or any(not isinstance(i, Assignment) or i.atomic or _calls(i.expression)
                         for i in ws):
            continue
        cand.add(n)
    changed = True
    while changed:
        changed = False
        for insn in kernel.instructions:
            written = set(insn.assignee_names())
            if written and written <= cand:
                continue              # a statement that would be removed
            read = insn.read_dependency_names() & cand
            if read:
                cand -= read
                changed = True
    return tuple(sorted(cand))


@for_each_kernel
def remove_dead_stores(kernel: Kernel, *, names: tuple[str, ...] | list[str] | None = None
                       ) -> Kernel:
    """Remove the statements that write the dead temporaries *names*
    (default: all of :func:`dead_temporaries`) and the temporaries; see the
    module docstring for when a temporary is dead.  Statements that
    depended on a removed one depend on what it depended on.  The kernel is
    returned unchanged when nothing is dead.

    :arg names: temporaries to remove; each must be dead.
    :raises TransformError: *names* is not a list of names, or names a
        temporary that is not dead.
    """
    dead = set(dead_temporaries(kernel))
    if names is not None:
        if isinstance(names, str) or not all(isinstance(n, str) for n in names):
            raise TransformError(f"remove_dead_stores: names is a list of temporary names, "
                                 f"not {names!r}")
        for n in names:
            if n not in dead:
                raise TransformError(f"remove_dead_stores: '{n}' is not a dead temporary of "
                                     f"kernel '{kernel.name}' (something reads it, or a "
                                     "statement writing it has an effect besides its value)")
        # a statement that stays must not read a removed temporary
        dead = set(names)
        for insn in kernel.instructions:
            written = set(insn.assignee_names())
            if written and written <= dead:
                continue
            read = insn.read_dependency_names() & dead
            if read:
                raise TransformError(
                    f"remove_dead_stores: '{sorted(read)[0]}' is read by the store to "
                    f"'{sorted(written)[0]}': remove both")
    if not dead:
        return kernel
    gone = {i.id: i for i in kernel.instructions
            if i.assignee_names() and set(i.assignee_names()) <= dead}
    if not gone:
        return kernel

    def resolve(deps, seen=()):
        out = set()
        for d in deps:
            if d in gone and d not in seen:
                out |= resolve(gone[d].depends_on, seen + (d,))
            elif d not in gone:
                out.add(d)
        return out

    insns = []
    for insn in kernel.instructions:
        if insn.id in gone:
            continue
        if insn.depends_on & gone.keys():
            insn = insn.copy(depends_on=frozenset(resolve(insn.depends_on)))
        insns.append(insn)
    temps = FrozenMap({n: t for n, t in kernel.temporaries.items() if n not in dead})
    per_item = tuple(n for n in kernel.options.per_work_item if n not in dead)
    return kernel.copy(instructions=tuple(insns), temporaries=temps,
                       options=kernel.options.copy(per_work_item=per_item))

