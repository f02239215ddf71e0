"""Index versioning: small private arrays indexed by a run-time value
rewritten so that every subscript is known once constant loops are unrolled.

A GPU compiler keeps a small private array (``ZSOLQA(5, 5)`` of a column
kernel) in registers only when every access names its element at compile
time: after the loops of constant trip count are unrolled, each subscript
must be a constant.  One access ``ZSOLQA(JO, JN)`` with ``JO = IORDER(JM)``
(a species chosen by sorting, CLOUDSC's ``IORDER``) puts the whole array in
local memory for the whole kernel.  Versioning rewrites each statement that
reads such a *key* into one copy per value the key can take,
``IF (JO == c)`` with ``c`` in place of ``JO``: the array's subscripts are
then all constants.

:func:`index_versions` gives the verdict per private array,
:func:`version_indices` rewrites the ones that pass.  Definitions:

* a subscript is *static* when it reads only integer literals, loop indices
  whose loops have constant bounds (not work-item indices), and *settled*
  variables: private integer or logical temporaries whose every assignment
  has a static value and static subscripts, under conditions that read only
  settled variables, loop indices and scalar arguments (a fixpoint;
  ``IMELT(1) = 2``, ``JN = IMELT(JM)`` with ``JM`` a loop of constant bounds);
  what is static is a profitability guess (the GPU compiler folds it), never
  a legality argument;
* a *key* is a non-static subscript that is a variable or an array element
  with static subscripts (``JO``, ``IORDER(JM)``), possibly plus an integer
  constant.

An array ``T`` is versioned when it is a private temporary with constant
bounds and at most :data:`MAX_ELEMENTS` elements, not aliased, not in a
substitution rule, used only through element subscripts, and every
non-static subscript of it is a key, one key per statement.  Each statement
``S`` that indexes a versioned array with its key ``k`` becomes one copy per
value ``c`` of ``k`` in the range below, each with the extra condition
``k == c`` and ``c`` in place of every read of ``k`` (in the value, the
subscripts and the conditions; ``S``'s own assignee is never replaced).
Under ``k == c`` each copy computes exactly what ``S`` computes, so the
results agree whenever the value of ``k`` is in the range.

The range: ``S`` must index some array with ``k`` (plus a constant) where
the index is evaluated whenever ``S`` assigns, that is in its assignee's
subscripts, in its conditions (all of them are evaluated and true when it
assigns) or in its value outside conditional expressions (``merge``, the
operands of ``.AND.``/``.OR.``).  The range is the intersection of the
values of ``k`` that keep those indices within the arrays' declared bounds.
A Fortran program that indexes outside an array's bounds is not
standard-conforming, so in every conforming execution ``S`` assigns only
with ``k`` in the range; with ``k`` outside it, ``S`` does not assign in any
copy (where the original would have written outside the array or used a
value read outside it).  Other statements are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import TransformError
from f2loopy.ir.expressions import Rewriter, index_tuple, variables_read
from f2loopy.ir.isl_tools import dim_type
from f2loopy.ir.kernel import AddressSpace, Assignment, Kernel
from f2loopy.transform.util import for_each_kernel, map_expressions, unique_name

#: the most elements a versioned array may have (registers it would take)
MAX_ELEMENTS = 64

#: the most values a key may take (copies of a statement)
MAX_VALUES = 16


@dataclass(frozen=True)
class IndexVersion:
    """The verdict on one small private array.

    :attr name: the array.
    :attr keys: the run-time subscripts it is versioned on (as text), in
        order of first use; empty if it is refused or needs none.
    :attr reason: why it is not versioned (a sentence naming the line), or
        None if it is.
    """

    name: str
    keys: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def versioned(self) -> bool:
        return self.reason is None and bool(self.keys)


def _line(insn) -> str:
    return f"line {insn.span.line}" if insn.span is not None else f"statement '{insn.id}'"


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _constant_loops(kernel: Kernel) -> frozenset:
    """Loop indices whose loops have constant bounds once the loops around
    them of constant bounds are unrolled (work-item indices excluded)."""
    hardware = kernel.hardware_inames()
    ends: dict[str, frozenset] = {}
    for iname, idx in kernel.iname_domain_index.items():
        if iname in hardware:
            continue
        dom = kernel.domains[idx]
        if dom.find_dim_by_name(dim_type.set, iname) < 0:
            continue
        s = dom.project_out_except([iname], [dim_type.set])
        if not s.is_bounded():
            continue
        ends[iname] = frozenset(
            s.get_dim_name(dim_type.param, j) for j in range(s.dim(dim_type.param))
            if s.involves_dims(dim_type.param, j, 1))
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for iname, needs in ends.items():
            if iname not in out and needs <= out:
                out.add(iname)
                changed = True
    return frozenset(out)


def _settled(kernel: Kernel, loops: frozenset) -> frozenset:
    """Private integer/logical temporaries whose every assignment reads only
    literals, constant loops and settled variables (a fixpoint)."""
    cand = {n for n, t in kernel.temporaries.items()
            if t.address_space in (None, AddressSpace.PRIVATE) and t.base_storage is None
            and np.dtype(t.dtype).kind in "iub"}
    writes: dict[str, list] = {}
    for insn in kernel.instructions:
        for n in insn.assignee_names():
            writes.setdefault(n, []).append(insn)
    cand = {n for n in cand if n in writes and all(isinstance(i, Assignment) for i in writes[n])}
    # conditions may also read any loop index and scalar argument (the
    # same in every column); values only literals, constant loops, settled
    uniform = set(kernel.all_inames()) | {a.name for a in kernel.args if not getattr(a, "shape", ())}
    changed = True
    while changed:
        changed = False
        ok = loops | cand
        for n in sorted(cand):
            for i in writes[n]:
                idx = index_tuple(i.assignee) if isinstance(i.assignee, p.Subscript) else ()
                if not variables_read(i.expression, *idx) <= ok \
                        or not variables_read(*i.predicates) <= ok | uniform:
                    cand.discard(n)
                    changed = True
                    break
    return frozenset(cand)


def _key_of(expr, static) -> tuple | None:
    """``(key, offset)`` if *expr* is a key plus an integer constant, else None."""
    offset = 0
    if isinstance(expr, p.Sum):
        consts = [c for c in expr.children if _is_int(c)]
        rest = [c for c in expr.children if not _is_int(c)]
        if len(rest) != 1:
            return None
        offset, expr = int(sum(consts)), rest[0]
    if isinstance(expr, p.Variable):
        return expr, offset
    if isinstance(expr, p.Subscript) and isinstance(expr.aggregate, p.Variable) \
            and all(static(i) for i in index_tuple(expr)):
        return expr, offset
    return None


class _Forced(Rewriter):
    """Collects the subscripted accesses that are evaluated whenever the
    expression is: of a conditional expression or a logical operator only
    the first operand is."""

    def __init__(self):
        self.found: list = []

    def map_subscript(self, expr, *a, **k):
        if isinstance(expr.aggregate, p.Variable):
            self.found.append(expr)
        return super().map_subscript(expr, *a, **k)

    def map_if(self, expr, *a, **k):
        self.rec(expr.condition)
        return expr

    def map_logical_and(self, expr, *a, **k):
        self.rec(expr.children[0])
        return expr

    map_logical_or = map_logical_and


def _forced_subscripts(insn):
    """Subscripted accesses evaluated whenever *insn* assigns: in its
    assignee, its conditions, its value outside conditional expressions."""
    w = _Forced()
    if isinstance(insn, Assignment):
        w(insn.assignee)
        w(insn.expression)
    for pr in insn.predicates:
        w(pr)
    return w.found


def _subscripts_in(expr):
    """Every subscripted access in *expr* as ``(name, subscript)``."""
    out = []

    class _W(Rewriter):
        def map_subscript(self, e, *a, **k):
            if isinstance(e.aggregate, p.Variable):
                out.append((e.aggregate.name, e))
            return super().map_subscript(e, *a, **k)

    _W()(expr)
    return out


def _bounds(t) -> list[range] | None:
    out = []
    for lo, size in zip(t.lower_bounds, t.shape, strict=True):
        if not _is_int(lo) or not _is_int(size):
            return None
        out.append(range(int(lo), int(lo) + int(size)))
    return out


def _arrays(kernel: Kernel) -> dict:
    return {**{a.name: a for a in kernel.args if getattr(a, "shape", ())},
            **{n: t for n, t in kernel.temporaries.items() if t.shape}}


def _analyse(kernel: Kernel):
    """(verdicts by name, plan: insn id -> (key, values))."""
    loops = _constant_loops(kernel)
    settled = _settled(kernel, loops)
    ok_names = loops | settled

    def static(e) -> bool:
        return _is_int(e) or variables_read(e) <= ok_names

    candidates = {}
    for n, t in kernel.temporaries.items():
        if t.address_space is not AddressSpace.PRIVATE or not t.shape:
            continue
        b = _bounds(t)
        if b is None or int(np.prod([len(r) for r in b])) > MAX_ELEMENTS:
            continue
        candidates[n] = b
    if not candidates:
        return {}, {}
    reasons: dict[str, str] = {}
    for n in candidates:
        t = kernel.temporaries[n]
        if t.base_storage is not None:
            reasons[n] = "it shares storage"
        elif any(n in variables_read(r.expression) for r in kernel.substitutions.values()):
            reasons[n] = "a substitution rule reads it"
    # statement -> {name: [keys of its non-static subscripts]}
    uses: dict[str, dict] = {}
    keys_of: dict[str, list] = {n: [] for n in candidates}
    for insn in kernel.instructions:
        acc = list(insn.read_accesses())
        if isinstance(insn, Assignment):
            a = insn.assignee
            acc.append((insn.assignee_name, index_tuple(a) if isinstance(a, p.Subscript) else None))
        for n, idx in acc:
            if n not in candidates or n in reasons:
                continue
            if idx is None or len(idx) != len(candidates[n]) \
                    or any(isinstance(i, p.Slice) for i in idx):
                reasons[n] = f"{_line(insn)} uses it as a whole or a section"
                continue
            for i in idx:
                if static(i):
                    continue
                kk = _key_of(i, static)
                if kk is None:
                    reasons[n] = f"{_line(insn)} indexes it with '{i}', not a run-time key"
                    break
                uses.setdefault(insn.id, {}).setdefault(n, []).append(kk[0])
                if kk[0] not in keys_of[n]:
                    keys_of[n].append(kk[0])
    arrays = _arrays(kernel)
    plan: dict[str, tuple] = {}
    changed = True
    while changed:
        changed = False
        plan = {}
        for insn in kernel.instructions:
            per = {n: ks for n, ks in uses.get(insn.id, {}).items() if n not in reasons}
            if not per:
                continue
            keys = {k for ks in per.values() for k in ks}
            if len(keys) != 1:
                for n in per:
                    reasons[n] = f"{_line(insn)} indexes it with two run-time values"
                changed = True
                break
            key = next(iter(keys))
            values = None
            for sub in _forced_subscripts(insn):
                t = arrays.get(sub.aggregate.name)
                b = _bounds(t) if t is not None else None
                if b is None or len(b) != len(index_tuple(sub)):
                    continue
                for i, r in zip(index_tuple(sub), b, strict=True):
                    kk = _key_of(i, static)
                    if kk is not None and kk[0] == key:
                        rng = range(r.start - kk[1], r.stop - kk[1])
                        values = rng if values is None else range(
                            max(values.start, rng.start), min(values.stop, rng.stop))
            if values is None or len(values) == 0 or len(values) > MAX_VALUES:
                why = ("with it outside the bounds of every array it indexes"
                       if values is not None and len(values) == 0 else
                       "only under a condition" if values is None else
                       f"over more than {MAX_VALUES} values")
                for n in per:
                    reasons[n] = f"{_line(insn)} indexes it with '{key}' {why}"
                changed = True
                break
            plan[insn.id] = (key, values)
    verdicts = {}
    for n in sorted(candidates):
        if not keys_of[n] and n not in reasons:
            continue
        if n in reasons:
            verdicts[n] = IndexVersion(n, reason=reasons[n])
        else:
            verdicts[n] = IndexVersion(n, keys=tuple(str(k) for k in keys_of[n]))
    return verdicts, plan


def index_versions(kernel: Kernel) -> tuple[IndexVersion, ...]:
    """The verdict on each small private array of *kernel* that some
    statement indexes with a non-static subscript, in name order (see the
    module docstring)."""
    return tuple(_analyse(kernel)[0].values())


class _Replace(Rewriter):
    def __init__(self, key, value: int):
        self.key = key
        self.value = value

    def map_variable(self, expr, *a, **k):
        return self.value if expr == self.key else expr

    def map_subscript(self, expr, *a, **k):
        if expr == self.key:
            return self.value
        return super().map_subscript(expr, *a, **k)


def _replace_reads(insn, key, value: int):
    rep = _Replace(key, value)
    if isinstance(insn, Assignment):
        a = insn.assignee
        if isinstance(a, p.Subscript):
            idx = tuple(rep(i) for i in index_tuple(a))
            a = p.Subscript(a.aggregate, idx if len(idx) > 1 else idx[0])
        return insn.copy(assignee=a, expression=rep(insn.expression),
                         predicates=tuple(rep(x) for x in insn.predicates))
    return map_expressions(insn, rep)


@for_each_kernel
def version_indices(kernel: Kernel, *, names: tuple[str, ...] | list[str] | None = None
                    ) -> Kernel:
    """Version the statements that index the small private arrays *names*
    (default: every one :func:`index_versions` accepts) with a run-time key:
    each becomes one copy per value of the key, under ``key == value`` and
    with the value in place of the key (see the module docstring for when
    that keeps the results).  Statements that depended on a versioned
    statement depend on all its copies.  The kernel is returned unchanged
    when nothing is versioned.

    :arg names: arrays to version; each must be accepted.
    :raises TransformError: *names* is not a list of names, or names an
        array that is not accepted (the message says why).
    """
    verdicts, plan = _analyse(kernel)
    if names is None:
        chosen = {n for n, v in verdicts.items() if v.versioned}
    else:
        if isinstance(names, str) or not all(isinstance(n, str) for n in names):
            raise TransformError(f"version_indices: names is a list of array names, "
                                 f"not {names!r}")
        chosen = set()
        for n in names:
            v = verdicts.get(n)
            if v is None:
                raise TransformError(f"version_indices: '{n}' is not a small private array "
                                     f"that kernel '{kernel.name}' indexes at run time")
            if not v.versioned:
                raise TransformError(f"version_indices: '{n}' is not versioned: {v.reason}")
            chosen.add(n)
    if not chosen:
        return kernel
    todo = {}
    for insn in kernel.instructions:
        if insn.id in plan and {n for n, _ in _subscripts_in_insn(insn)} & chosen:
            todo[insn.id] = plan[insn.id]
    if not todo:
        return kernel
    taken: list[str] = []
    copies: dict[str, list[str]] = {}
    out = []
    for insn in kernel.instructions:
        if insn.id not in todo:
            out.append(insn)
            continue
        key, values = todo[insn.id]
        ids = []
        for c in values:
            new_id = unique_name(kernel, f"{insn.id}_v{c if c >= 0 else f'm{-c}'}",
                                 extra_taken=taken)
            taken.append(new_id)
            ids.append(new_id)
            one = _replace_reads(insn, key, c)
            out.append(one.copy(id=new_id,
                                predicates=(p.Comparison(key, "==", c),) + one.predicates))
        copies[insn.id] = ids
    final = []
    for insn in out:
        deps = insn.depends_on
        if deps & copies.keys():
            deps = frozenset(d2 for d in deps for d2 in copies.get(d, (d,)))
            insn = insn.copy(depends_on=deps)
        final.append(insn)
    return kernel.copy(instructions=tuple(final))


def _subscripts_in_insn(insn):
    out = []
    for e in insn.read_expressions():
        out.extend(_subscripts_in(e))
    if isinstance(insn, Assignment) and isinstance(insn.assignee, p.Subscript):
        out.append((insn.assignee_name, insn.assignee))
    return out
