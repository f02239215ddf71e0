"""K-caching: a level temporary of one work-item kept as its current and
previous level only.

A column routine mapped one column per work-item (:func:`~f2loopy.transform.
scc.scc`) keeps its level temporaries (``ZTP1(KLON, KLEV)`` demoted to a
private ``ZTP1(KLEV)``) as private arrays of the whole column: on a GPU they
live in local memory (CLOUDSC: a 40 KB stack frame per work-item).  When a
vertical loop is the only place that uses such an array, and each iteration
touches only its own level and the one above, two values (or two small
arrays, for the other axes such as a species index) hold everything that is
ever read: this is the k-caching of the CLOUDSC dwarf's fastest CUDA kernel.

:func:`level_caches` decides, for every private temporary, whether it can be
cached and if not why; :func:`cache_levels` rewrites the ones that can.  A
temporary ``T`` is cached in loop ``k`` when all of these hold (each is
checked on the IR, otherwise ``T`` stays as it is):

* ``T`` is a private temporary (not an argument, no initial values, not
  aliased to other storage, not read-only), used only through element
  subscripts, and not in a substitution rule;
* every statement that reads or writes ``T`` is inside the sequential loop
  ``k``, and ``k`` is the outermost sequential loop of the schedule
  (:func:`~f2loopy.schedule.linearize.linearize`): only work-item indices
  are around it, so each work-item runs the loop once, and nothing outside
  the loop sees ``T``;
* where level ``k - 1`` is read, loop ``k`` steps by one: for each value
  of the indices around it, its iterations are a range of consecutive
  integers (checked with isl on its domain), so iteration ``k - 1`` is the
  one before ``k``;
* in every access, exactly one axis of ``T`` (the same one everywhere, the
  level axis) has a subscript that reads ``k``, and that subscript is
  ``k`` or ``k - 1`` exactly; the other subscripts do not read ``k`` and are
  element subscripts; the other axes have constant extents with at most
  :data:`MAX_ELEMENTS` elements in all;
* every write is to level ``k``.

Why that keeps every value: a level ``j`` is written only in iteration
``j``, and nothing outside the loop reads ``T``.  So in iteration ``k`` a
read of level ``k`` sees the last write of this iteration (or a value never
written), and a read of level ``k - 1`` sees the last write of iteration
``k - 1`` (or a value never written): exactly what ``T_k`` (the current
level) and ``T_km1`` (the previous level, copied from ``T_k`` at the end of
each iteration, after every statement of the iteration that uses ``T``)
hold.  A level that no statement wrote holds an undefined value in the
original as in the cache (in the loop's first iteration ``T_km1`` holds no
written value, as ``T(k - 1)`` held none).  After rewriting, the schedule
is computed again and the loop must still be the outermost sequential loop
around every use and every copy; otherwise nothing is cached.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import CodegenError
from f2loopy.ir.domains import iname_to_domain_index
from f2loopy.ir.expressions import (
    Rewriter, accesses, index_tuple, make_subscript, variables_read)
from f2loopy.ir.folding import normalize_integer
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import dim_type
from f2loopy.ir.kernel import AddressSpace, Assignment, Kernel
from f2loopy.ir.tags import fortran_axis_tags
from f2loopy.transform.util import for_each_kernel, map_expressions, unique_name

#: the most elements the other axes of a cached temporary may have (each is
#: copied once per level)
MAX_ELEMENTS = 32


@dataclass(frozen=True)
class LevelCache:
    """The verdict on one private temporary.

    :attr name: the temporary.
    :attr loop: the vertical loop it is cached in, or None.
    :attr axis: the level axis (0-based), or None.
    :attr previous: whether level ``k - 1`` is read (a second value is kept).
    :attr reason: why it is not cached (a sentence naming the statement's
        line where there is one), None if it is.
    """

    name: str
    loop: str | None = None
    axis: int | None = None
    previous: bool = False
    reason: str | None = None

    @property
    def cached(self) -> bool:
        return self.reason is None


def _line(insn) -> str:
    return f"line {insn.span.line}" if insn.span is not None else f"statement '{insn.id}'"


def _offset(expr, k: str) -> int | None:
    """``c`` if *expr* is ``k + c`` for an integer ``c``, else None."""
    try:
        diff = normalize_integer(p.Sum((expr, p.Product((-1, p.Variable(k))))))
    except Exception:      # noqa: BLE001 - not an integer expression
        return None
    if isinstance(diff, (int, np.integer)) and not isinstance(diff, (bool, np.bool_)):
        return int(diff)
    return None


def _steps_by_one(kernel: Kernel, k: str) -> bool:
    """Whether, for each value of the other indices of its domain, the values
    of *k* are consecutive integers (no stride, no hole)."""
    dom = kernel.domains[iname_to_domain_index(kernel)[k]]
    pos = dom.find_dim_by_name(dim_type.set, k)
    n = dom.dim(dim_type.set)
    both = isl.Map.from_domain_and_range(dom, dom)
    space = both.get_space()

    def related(strictly_next: bool) -> isl.Set:
        m = both
        for j in range(n):
            if j == pos:
                # out - in - 1 = 0 (the next value) or >= 0 (any later one)
                c = (isl.Constraint.equality_alloc(space) if strictly_next
                     else isl.Constraint.inequality_alloc(space))
                c = c.set_coefficient_val(dim_type.in_, j, -1) \
                    .set_coefficient_val(dim_type.out, j, 1).set_constant_val(-1)
            else:
                c = isl.Constraint.equality_alloc(space) \
                    .set_coefficient_val(dim_type.in_, j, 1) \
                    .set_coefficient_val(dim_type.out, j, -1)
            m = m.add_constraint(c)
        return m.range()

    with_predecessor = related(True)
    after_another = related(False)
    # a value with an earlier one on its line but not the one just before
    return dom.subtract(with_predecessor).intersect(after_another).is_empty()


def _top_loops(kernel: Kernel) -> dict[str, frozenset]:
    """Outermost sequential loops of the schedule -> the ids of the
    instructions inside them (any depth); empty if the kernel cannot be
    scheduled."""
    from f2loopy.schedule.linearize import InsnNode, LoopNode, linearize, schedule_nodes
    try:
        tree = linearize(kernel)
    except CodegenError:
        return {}
    out: dict[str, frozenset] = {}
    seen: set[str] = set()
    for node in schedule_nodes(tree):
        if isinstance(node, LoopNode):
            if node.iname in seen:        # a loop entered twice: trust nothing
                return {}
            seen.add(node.iname)
    for node in tree:
        if isinstance(node, LoopNode):
            out[node.iname] = frozenset(n.insn_id for n in schedule_nodes(node.body)
                                        if isinstance(n, InsnNode))
    return out


def _other_ranges(t, axis: int) -> list[range] | None:
    """The index ranges of the axes of temporary *t* other than *axis*, or
    None if a bound is not a number."""
    out = []
    for j, (lo, size) in enumerate(zip(t.lower_bounds, t.shape, strict=True)):
        if j == axis:
            continue
        if not isinstance(lo, (int, np.integer)) or not isinstance(size, (int, np.integer)):
            return None
        out.append(range(int(lo), int(lo) + int(size)))
    return out


def _access_list(insn, name: str):
    """``(subscripts or None, is_write)`` for each access of *name* in *insn*."""
    out = []
    if isinstance(insn, Assignment) and insn.assignee_name == name:
        a = insn.assignee
        out.append((index_tuple(a) if isinstance(a, p.Subscript) else None, True))
    for e in insn.read_expressions():
        out.extend((idx, False) for n, idx in accesses(e) if n == name)
    return out


def _verdict(kernel: Kernel, name: str, users: list, hardware,
             top: dict | None) -> LevelCache:
    """The verdict on temporary *name* used by the statements *users*; with
    *top* None only the checks that need no schedule are made (a temporary
    that passes them is returned with ``loop`` None and no reason)."""
    t = kernel.temporaries[name]

    def no(reason: str) -> LevelCache:
        return LevelCache(name, reason=reason)

    if t.initializer is not None or t.read_only or t.base_storage is not None:
        return no("it has initial values or shares storage")
    if any(name in variables_read(rule.expression)
           for rule in kernel.substitutions.values()):
        return no("a substitution rule reads it")
    common = frozenset(users[0].within_inames) - hardware
    if not common:
        return no(f"{_line(users[0])} uses it outside the loops")
    for insn in users[1:]:
        if not common & insn.within_inames:
            return no(f"it is used in two loops ({_line(users[0])} and {_line(insn)})")
        common &= insn.within_inames
    found = [(insn, idx, is_write) for insn in users for idx, is_write in _access_list(insn, name)]
    for insn, idx, _ in found:
        if idx is None or len(idx) != t.ndim:
            return no(f"{_line(insn)} uses it as a whole")
        if any(isinstance(i, p.Slice) for i in idx):
            return no(f"{_line(insn)} uses a section of it")
    levels = {x for _, idx, _ in found for i in idx for x in variables_read(i) & common}
    if not levels:
        return no("it has no level axis: no subscript reads a loop around all its uses")
    if top is None:
        return LevelCache(name)
    loop = next((k for k, ids in top.items() if users[0].id in ids), None)
    if loop is None or any(insn.id not in top[loop] for insn in users):
        return no("the schedule has no loop around all its uses")
    if loop not in levels:
        inner = sorted(levels)[0]
        return no(f"the loop its subscripts read, '{inner}', runs inside loop '{loop}'")
    axis: int | None = None
    previous = False
    for insn, idx, is_write in found:
        reading = [j for j, i in enumerate(idx) if loop in variables_read(i)]
        if len(reading) != 1:
            return no(f"{_line(insn)} uses it at a fixed level" if not reading else
                      f"{_line(insn)} indexes two of its axes with '{loop}'")
        if axis is None:
            axis = reading[0]
        elif reading[0] != axis:
            return no(f"{_line(insn)} indexes another of its axes with '{loop}'")
        c = _offset(idx[axis], loop)
        if c not in (0, -1):
            return no(f"{_line(insn)} {'writes' if is_write else 'reads'} a level "
                      f"other than '{loop}' and '{loop} - 1'")
        if is_write and c != 0:
            return no(f"{_line(insn)} writes level '{loop} - 1'")
        previous = previous or c == -1
    assert axis is not None
    bounds = _other_ranges(t, axis)
    if bounds is None:
        return no("its other axes' bounds are not numbers")
    if int(np.prod([len(r) for r in bounds], dtype=np.int64)) > MAX_ELEMENTS:
        return no(f"its other axes hold more than {MAX_ELEMENTS} elements")
    if previous and not _steps_by_one(kernel, loop):
        return no(f"loop '{loop}' does not step by one (and level '{loop} - 1' is read)")
    return LevelCache(name, loop=loop, axis=axis, previous=previous)


def level_caches(kernel: Kernel) -> tuple[LevelCache, ...]:
    """The verdict on each private temporary of *kernel* that has axes and
    is used by some statement, in name order (see the module docstring for
    the conditions).  The schedule is computed only when some temporary
    passes the checks that need none."""
    users: dict[str, list] = {}
    candidates = {n for n, t in kernel.temporaries.items()
                  if t.ndim >= 1 and t.address_space is AddressSpace.PRIVATE}
    if not candidates:
        return ()
    for insn in kernel.instructions:
        for n in insn.dependency_names() & candidates:
            users.setdefault(n, []).append(insn)
    hardware = kernel.hardware_inames()
    first = {n: _verdict(kernel, n, users[n], hardware, None) for n in sorted(users)}
    if all(v.reason is not None for v in first.values()):
        return tuple(first.values())
    top = _top_loops(kernel)
    return tuple(v if v.reason is not None else _verdict(kernel, n, users[n], hardware, top)
                 for n, v in first.items())


class _Cacher(Rewriter):
    """Replaces the accesses of cached temporaries by their current or
    previous level."""

    def __init__(self, plans: dict):
        self.plans = plans        # name -> (LevelCache, current name, previous name)

    def map_subscript(self, expr, *args, **kwargs):
        name = expr.aggregate.name if isinstance(expr.aggregate, p.Variable) else None
        idx = index_tuple(expr)
        if name not in self.plans:
            new = tuple(self.rec(i) for i in idx)
            if all(a is b for a, b in zip(new, idx, strict=True)):
                return expr
            return p.Subscript(expr.aggregate, new if len(new) > 1 else new[0])
        plan, current, prev = self.plans[name]
        c = _offset(idx[plan.axis], plan.loop)
        rest = tuple(self.rec(i) for j, i in enumerate(idx) if j != plan.axis)
        return make_subscript(current if c == 0 else prev, rest)


@for_each_kernel
def cache_levels(kernel: Kernel, *, names: tuple[str, ...] | list[str] | None = None) -> Kernel:
    """Keep the level temporaries *names* (default: every one that
    :func:`level_caches` accepts) as their current level ``T_k`` and, where
    level ``k - 1`` is read, their previous level ``T_km1``, private
    variables (or small private arrays of the other axes) instead of arrays
    over all levels; see the module docstring for when that is allowed.

    ``T(k, m)`` becomes ``T_k(m)``, ``T(k - 1, m)`` becomes ``T_km1(m)``, and
    statements ``T_km1(m) = T_k(m)`` (one per element of the other axes)
    end each iteration of the loop, after every statement that uses ``T``.
    The kernel is returned unchanged when nothing is cached, or when the
    rewritten kernel's schedule no longer has the loop outermost around
    the uses and copies.

    :arg names: temporaries to cache; each must be accepted.
    :raises TransformError: *names* is not a list of names, or names a
        temporary that is not accepted (the message says why).
    """
    from f2loopy.diagnostics import TransformError
    verdicts = {v.name: v for v in level_caches(kernel)}
    if names is None:
        chosen = [v for v in verdicts.values() if v.cached]
    else:
        if isinstance(names, str) or not all(isinstance(n, str) for n in names):
            raise TransformError(f"cache_levels: names is a list of temporary names, "
                                 f"not {names!r}")
        chosen = []
        for n in names:
            v = verdicts.get(n)
            if v is None:
                raise TransformError(f"cache_levels: '{n}' is not a private temporary "
                                     f"with axes that kernel '{kernel.name}' uses")
            if not v.cached:
                raise TransformError(f"cache_levels: '{n}' is not cached: {v.reason}")
            chosen.append(v)
    if not chosen:
        return kernel
    temps = dict(kernel.temporaries)
    plans: dict = {}
    taken: list[str] = []
    for v in chosen:
        t = temps.pop(v.name)
        shape = tuple(s for j, s in enumerate(t.shape) if j != v.axis)
        lower = tuple(s for j, s in enumerate(t.lower_bounds) if j != v.axis)
        axis_names = (tuple(s for j, s in enumerate(t.axis_names) if j != v.axis)
                      if t.axis_names else None)
        current = unique_name(kernel, f"{v.name}_k", extra_taken=taken)
        taken.append(current)
        prev = None
        made = [current]
        if v.previous:
            prev = unique_name(kernel, f"{v.name}_km1", extra_taken=taken)
            taken.append(prev)
            made.append(prev)
        for n in made:
            temps[n] = t.copy(name=n, shape=shape, lower_bounds=lower,
                              axis_tags=fortran_axis_tags(len(shape)), axis_names=axis_names,
                              address_space=AddressSpace.PRIVATE)
        plans[v.name] = (v, current, prev)
    cacher = _Cacher(plans)
    cached = set(plans)
    insns = list(kernel.instructions)
    new_insns = []
    last_user: dict[str, int] = {}
    for pos, insn in enumerate(insns):
        used = insn.dependency_names() & cached
        if used:
            insn = map_expressions(insn, cacher)
            for n in used:
                last_user[n] = pos
        new_insns.append(insn)
    hardware = kernel.hardware_inames()
    shifts: dict[int, list] = {}
    for n, (v, current, prev) in plans.items():
        if prev is None:
            continue
        users = [i for i in kernel.instructions if n in i.dependency_names()]
        within = frozenset({v.loop}) | frozenset.intersection(
            *(i.within_inames & hardware for i in users))
        t = kernel.temporaries[n]
        ranges = _other_ranges(t, v.axis)
        assert ranges is not None         # (checked by the verdict)
        last = kernel.instructions[last_user[n]]
        for element in itertools.product(*ranges):
            new_id = unique_name(kernel, f"{prev}_shift", extra_taken=taken)
            taken.append(new_id)
            shifts.setdefault(last_user[n], []).append(Assignment(
                id=new_id, within_inames=within, depends_on=frozenset(i.id for i in users),
                assignee=make_subscript(prev, element),
                expression=make_subscript(current, element), span=last.span))
    out_insns = []
    for pos, insn in enumerate(new_insns):
        out_insns.append(insn)
        out_insns.extend(shifts.get(pos, ()))
    per_item = set(kernel.options.per_work_item)
    for n, (_, current, prev) in plans.items():
        if n in per_item:
            per_item.discard(n)
            per_item |= {current} | ({prev} if prev else set())
    out = kernel.copy(instructions=tuple(out_insns), temporaries=FrozenMap(temps),
                      options=kernel.options.copy(per_work_item=tuple(sorted(per_item))))
    # the loop must still be outermost around every use and copy
    top = _top_loops(out)
    for n, (v, current, prev) in plans.items():
        inside = top.get(v.loop, frozenset())
        made_now = {current} | ({prev} if prev else set())
        if any(made_now & i.dependency_names() and i.id not in inside for i in out.instructions):
            return kernel
    return out
