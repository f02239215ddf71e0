"""Whether merging two loops (loop fusion) keeps results.

Moving the instructions of loop *old* into an existing loop *new* of the
same bounds (:func:`~f2loopy.transform.iname.rename_iname` with
``existing_ok=True``, loopy's ``rename_inames``, the ``scc`` recipe's merge
of its horizontal loops) makes both groups of instructions run in the same
iterations: instance *i* of an instruction of *old* then runs next to
instance *i* of the instructions of *new*, where before every instance of
one loop ran before every instance of the other.  :func:`check_loop_fusion`
refuses the merge where two instances that touch the same element (one
writing) would run in the other order, decided on the instance pairs of the
dependence analysis (:mod:`f2loopy.analysis.dependences`):

* the order of two instances is the lexicographic order of the loops the
  two instructions share (outermost first), then their order in the kernel;
  merging adds the pair *old*/*new* to the shared loops, at the place of
  *new* in the nest;
* a temporary private to each iteration of both loops (every read sees a
  write of the same iteration, and nothing after the loop reads the value
  the loop leaves: :class:`~f2loopy.analysis.private.Privatisation`) does
  not join different iterations, so only its accesses in the same
  iteration count, whose order merging keeps;
* updates ``v = v + ...`` (or ``*``) of the same kind on both sides may
  interleave (their order only changes rounding), as in
  :func:`~f2loopy.transform.fusion.fuse_kernels`;
* with *parallel* (the merged loop will run its iterations on different
  work-items), any instance pair in different iterations of the merged loop
  is refused too: it would become a dependence the parallel loop carries.

Scalars carried from one loop to the other (set in the last iteration of
one, read in every iteration of the other) and values carried across
iterations of the enclosing loops are such pairs, so they are refused.
"""

from __future__ import annotations

from collections.abc import Collection

import pymbolic.primitives as p

from f2loopy.analysis.accesses import (
    AccessAnalysis, instruction_accesses, loop_bound_variables)
from f2loopy.analysis.dependences import lex_before, order_changes, split_by
from f2loopy.analysis.private import Privatisation
from f2loopy.diagnostics import TransformError
from f2loopy.ir.expressions import rename
from f2loopy.ir.kernel import Kernel


def _lines(insns) -> str:
    lines = sorted(i.span.line for i in insns if i.span is not None)
    if not lines:
        return "no source lines"
    return f"line {lines[0]}" if lines[0] == lines[-1] else f"lines {lines[0]}-{lines[-1]}"


def _writes_in(insns, name) -> bool:
    return any(name in i.assignee_names() for i in insns)


def _line(insn) -> str:
    return str(insn.span.line) if insn.span is not None else "?"


def check_loop_fusion(kernel: Kernel, old: str, new: str, *,
                      moved: Collection[str] | None = None, parallel: bool = False,
                      lanes: Collection[str] = (), caller: str = "rename_iname") -> None:
    """Refuse (:class:`~f2loopy.diagnostics.TransformError`) to move the
    instructions *moved* (ids; default: all) of loop *old* into the
    existing loop *new* of the same bounds if that changes results (see the
    module docstring); *parallel*: the merged loop will run in parallel,
    one work-item per iteration of it and of the loops *lanes* (which will
    be merged too), each running the rest in order: a temporary each
    work-item then holds privately (every read sees a value the same
    work-item wrote before it,
    :meth:`~f2loopy.analysis.private.Privatisation.why_not_per_lane`) is
    exempt, like ``JN`` set before a horizontal loop that reads it.
    The message names the variable, both loops with their source lines and
    the two statements; *caller* prefixes it."""
    from f2loopy.transform.fusion import _update_kind
    insns = kernel.instructions
    position = {insn.id: k for k, insn in enumerate(insns)}
    in_old = [i for i in insns if old in i.within_inames]
    ms = [i for i in in_old if moved is None or i.id in moved]
    ts = [i for i in insns if new in i.within_inames]
    if not ms or not ts:
        return
    both = [i for i in ms if new in i.within_inames]
    if both:
        raise TransformError(f"{caller}: instruction '{both[0].id}' is already inside both "
                             f"'{old}' and '{new}'", both[0].span)
    order = list(kernel.all_inames())
    analysis = AccessAnalysis(kernel)
    index = _Accesses(kernel)
    accs = {i.id: index.of(i) for i in ms}
    names_m = {a.name for m in ms for a in accs[m.id]}
    writes_m = {a.name for m in ms for a in accs[m.id] if a.is_write}
    t_by_name: dict = {}
    for t in ts:
        # only the instructions of 'new' that may make a pair with one of
        # 'old' (one of the two writing): touching what 'old' writes, or
        # writing what it reads
        if index.may_touch(t, writes_m) or not names_m.isdisjoint(t.assignee_names()):
            for b in index.of(t):
                t_by_name.setdefault(b.name, []).append((t, b))
    private: dict = {}
    priv = per_lane = None
    to_new = {old: p.Variable(new)}
    for m in ms:
        for a in accs[m.id]:
            for t, b in t_by_name.get(a.name, ()):
                if not (a.is_write or b.is_write) or not analysis.may_conflict(a, b):
                    continue
                kind = _update_kind(m, a.name)
                if kind is not None and _update_kind(t, b.name) == kind:
                    continue
                if a.name not in private:
                    ok: bool | None = False
                    # written in both loops: each read of either sees a
                    # write of its own iteration (private), not the other's
                    if a.name in kernel.temporaries and _writes_in(in_old, a.name) \
                            and _writes_in(ts, a.name):
                        if priv is None:
                            priv = Privatisation(kernel)
                        every = index.every(a.name)
                        ok = not priv.why_not(old, a.name, every) \
                            and not priv.why_not(new, a.name, every)
                    if not ok and parallel and a.name in kernel.temporaries:
                        every = index.every(a.name)
                        if per_lane is None:
                            per_lane = Privatisation(kernel, lanes=frozenset(lanes) | {old, new})
                        if not per_lane.why_not_per_lane(a.name, every):
                            ok = None       # private to each work-item: no pair counts
                    private[a.name] = ok
                if private[a.name] is None:
                    continue
                shared = [n for n in order if n in m.within_inames and n in t.within_inames]
                outer = [n for n in shared if order.index(n) < order.index(new)]
                inner = shared[len(outer):] if shared[:len(outer)] == outer else None
                # the common case: the same subscripts, one of them the loop
                # index alone, so only the same iteration conflicts
                if not inner and inner is not None and a.index is not None \
                        and b.index is not None and p.Variable(new) in b.index \
                        and tuple(rename(e, to_new) for e in a.index) == b.index:
                    continue
                why = _why(analysis, a, b, old, new, shared, outer, inner,
                           position[m.id] < position[t.id], parallel, private[a.name])
                if why:
                    first, second = (m, t) if position[m.id] < position[t.id] else (t, m)
                    acc1, acc2 = (a, b) if first is m else (b, a)
                    raise TransformError(
                        f"{caller}: merging loop '{old}' ({_lines(in_old)}) into loop "
                        f"'{new}' ({_lines(ts)}) would change results on '{a.name}': "
                        f"line {_line(first)} {'writes' if acc1.is_write else 'reads'} it "
                        f"and line {_line(second)} "
                        f"{'writes' if acc2.is_write else 'reads'} it {why}",
                        m.span, (("the statement of the other loop", t.span),))


class _Accesses:
    """The accesses of a kernel's instructions (:func:`instruction_accesses`),
    each computed when first asked: a merge asks about the instructions that
    may touch the variables of the loop it moves, not about all."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self._of: dict = {}
        self._names: dict = {}
        self._bounds: dict = {}

    def of(self, insn) -> list:
        found = self._of.get(insn.id)
        if found is None:
            found = self._of[insn.id] = instruction_accesses(self.kernel, insn)
        return found

    def may_touch(self, insn, names: Collection[str]) -> bool:
        """Whether *insn* may access one of *names* (a superset of the names
        of its accesses: what it writes and reads, and the variables the
        bounds of its loops read)."""
        own = self._names.get(insn.id)
        if own is None:
            bounds = self._bounds.get(insn.within_inames)
            if bounds is None:
                bounds = self._bounds[insn.within_inames] = frozenset(
                    loop_bound_variables(self.kernel, insn.within_inames))
            own = self._names[insn.id] = (
                {n for n, _ in insn.read_accesses()} | set(insn.assignee_names()) | bounds)
        return not own.isdisjoint(names)

    def every(self, name: str) -> list:
        """Every access of the kernel to *name*, in instruction order."""
        return [c for i in self.kernel.instructions if self.may_touch(i, (name,))
                for c in self.of(i) if c.name == name]


def _why(analysis, a, b, old, new, shared, outer, inner, m_first, parallel,
         same_only) -> str:
    """Why the instance pairs of accesses *a* (of an instruction in *old*)
    and *b* (in *new*) forbid the merge, or empty; *same_only*: only pairs
    in the same iteration of the merged loop count (a private temporary)."""
    # a subscript that is not affine constrains nothing: every pair that
    # may touch the same element
    pairs = analysis.conflict_set(a, b, skip_non_affine=True)
    if pairs is None:
        return "with data-dependent subscripts, so the order cannot be checked"
    if inner is None:
        return "inside loops nested differently in the two, so the order cannot be checked"
    if same_only:
        pairs = split_by(pairs, old + "__a", new + "__b", equal=True)
    before = [(n + "__a", n + "__b") for n in shared]
    after = [(n + "__a", n + "__b") for n in outer] + [(old + "__a", new + "__b")] + \
        [(n + "__a", n + "__b") for n in inner]
    if order_changes(pairs, before, after, first_on_tie=m_first):
        return "in iterations that the merged loop would run in the other order"
    if parallel:
        together = lex_before(pairs, [(n + "__a", n + "__b") for n in outer], tie_only=True)
        apart = split_by(together, old + "__a", new + "__b", equal=False)
        if not apart.is_empty():
            return "in different iterations, which the merged loop would run in parallel"
    return ""
