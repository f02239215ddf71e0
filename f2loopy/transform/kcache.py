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
  are around it, so each work-item runs the loop once; with two exceptions
  below, nothing outside the loop sees ``T``;
* in every access in the loop, exactly one axis of ``T`` (the same one
  everywhere, the level axis) has a subscript that reads ``k``; the other
  subscripts do not read ``k`` and are element subscripts; the other axes
  have constant extents with at most :data:`MAX_ELEMENTS` elements in all;
* every write is to level ``k + s``, the same shift ``s`` (0 or 1) for
  every write (a flux written at the level below), and every read in the
  loop is of level ``k + s`` (the current level) or ``k + s - 1`` (the
  previous one);
* where the previous level is read, loop ``k`` steps by one: for each
  value of the indices around it, its iterations are a range of
  consecutive integers (checked with isl on its domain), so iteration
  ``k - 1`` is the one before ``k``;
* exception one, a fill: at most one statement before the loop (in the
  schedule) assigns one constant (an expression that reads no variable) to
  every element of ``T`` (``T(:, :) = 0``: its subscripts are the indices
  of loops of its own whose domains are exactly the axes' bounds, checked
  with isl), unconditionally;
* exception two, reads after the loop: statements after the loop, outside
  every sequential loop, read ``T`` (never write it) at level ``u + s``,
  ``u`` the loop's last value (checked with isl for every value of the
  parameters where the loop runs).

Why that keeps every value: a level ``j`` is written only in iteration
``j - s``, and nothing else but the fill writes ``T``.  So in iteration
``k`` a read of level ``k + s`` sees the last write of this iteration or,
if there is none yet, the fill's value (or a value never written), and a
read of level ``k + s - 1`` sees the last write of iteration ``k - 1`` or
the fill's value: exactly what ``T_k`` (the current level: set to the
fill's value at the start of each iteration, then written) and ``T_km1``
(the previous level, copied from ``T_k`` at the end of each iteration,
after every statement of the iteration that uses ``T``; set to the fill's
value before the loop, where level ``k + s - 1`` of the first iteration
holds it) hold.  After the loop, level ``u + s`` holds the last iteration's
write or the fill's value, as ``T_k`` does (set to the fill's value before
the loop too, for a loop that does not run).  A level that no statement
wrote holds an undefined value in the original as in the cache.  After
rewriting, the schedule is computed again: the loop must still be the
outermost sequential loop around every use, copy and reset, the fill's
replacement before it and the reads after it; otherwise nothing is cached.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import islpy as isl
import numpy as np
import pymbolic.primitives as p
from pymbolic.mapper.substitutor import substitute

from f2loopy.diagnostics import CodegenError
from f2loopy.ir.domains import iname_to_domain_index
from f2loopy.ir.expressions import (
    Rewriter, accesses, index_tuple, make_subscript, variables_read)
from f2loopy.ir.folding import normalize_integer
from f2loopy.ir.frozen import FrozenMap
from f2loopy.ir.isl_tools import (
    NonAffineError, align_params, dim_type, expr_from_pwaff, pwaff_from_expr)
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
    :attr shift: the level each iteration writes, relative to the loop's
        index: 0 (level ``k``; ``k - 1`` is the previous level) or 1 (level
        ``k + 1``; ``k`` is the previous level).
    :attr fill: the id of the statement that fills it with a constant
        before the loop, or None.
    :attr after: the ids of the statements after the loop that read the
        level its last iteration writes.
    """

    name: str
    loop: str | None = None
    axis: int | None = None
    previous: bool = False
    reason: str | None = None
    shift: int = 0
    fill: str | None = None
    after: tuple[str, ...] = ()

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


def _top_order(kernel: Kernel) -> list[tuple[str | None, frozenset]] | None:
    """The outermost nodes of the schedule in order: ``(iname, ids)`` for a
    sequential loop (the ids of the instructions inside it, any depth) and
    ``(None, {id})`` for an instruction outside every sequential loop; None
    if the kernel cannot be scheduled or enters a loop twice."""
    from f2loopy.schedule.linearize import InsnNode, LoopNode, linearize, schedule_nodes
    try:
        tree = linearize(kernel)
    except CodegenError:
        return None
    seen: set[str] = set()
    for node in schedule_nodes(tree):
        if isinstance(node, LoopNode):
            if node.iname in seen:        # a loop entered twice: trust nothing
                return None
            seen.add(node.iname)
    out: list[tuple[str | None, frozenset]] = []
    for node in tree:
        if isinstance(node, LoopNode):
            out.append((node.iname, frozenset(n.insn_id for n in schedule_nodes(node.body)
                                              if isinstance(n, InsnNode))))
        elif isinstance(node, InsnNode):
            out.append((None, frozenset({node.insn_id})))
    return out


def _position(order: list, insn_id: str) -> int | None:
    """Index of the outermost node of *order* that holds *insn_id*."""
    return next((j for j, (_, ids) in enumerate(order) if insn_id in ids), None)


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


def _iname_domain(kernel: Kernel, iname: str) -> isl.Set:
    """The values of *iname* alone (the other indices of its domain
    projected out), a set over the parameters."""
    dom = kernel.domains[iname_to_domain_index(kernel)[iname]]
    pos = dom.find_dim_by_name(dim_type.set, iname)
    n = dom.dim(dim_type.set)
    return dom.project_out(dim_type.set, pos + 1, n - pos - 1).project_out(dim_type.set, 0, pos)


def _fill(kernel: Kernel, insn, t, hardware, others: list) -> tuple[bool, str | None]:
    """Whether *insn* is a fill of temporary *t*: it writes ``t(i, j, ...)``
    in loops over ``i, j, ...`` of its own (which none of the *others*
    statements that use ``t`` runs in) a value that reads no variable; and
    if it is, why it cannot be cached as one (None when it can: every
    element of ``t`` is assigned, unconditionally)."""
    if not isinstance(insn, Assignment) or insn.assignee_name != t.name \
            or not isinstance(insn.assignee, p.Subscript):
        return False, None
    idx = index_tuple(insn.assignee)
    own = insn.within_inames - hardware
    if len(idx) != t.ndim or not all(isinstance(i, p.Variable) for i in idx) \
            or len({i.name for i in idx}) != len(idx) or {i.name for i in idx} != own \
            or any(own & other.within_inames for other in others if other is not insn):
        return False, None
    if variables_read(insn.expression):     # the values of another loop
        return False, None
    if insn.predicates:
        return True, f"{_line(insn)} fills it under a condition"
    for i, lo, size in zip(idx, t.lower_bounds, t.shape, strict=True):
        values = _iname_domain(kernel, i.name)
        space = values.get_space()
        try:
            first = pwaff_from_expr(lo, space)
            last = pwaff_from_expr(p.Sum((lo, size, -1)), space)
        except (NonAffineError, KeyError):
            return True, f"{_line(insn)} fills an axis whose bounds are not affine"
        var = isl.PwAff.var_on_domain(isl.LocalSpace.from_space(space), dim_type.set, 0)
        if not values.is_equal(var.ge_set(first) & var.le_set(last)):
            return True, f"{_line(insn)} does not fill all of it"
    return True, None


def _single_values(kernel: Kernel, inames, memo: dict) -> dict | None:
    """iname -> its one value (an expression of the parameters) for each of
    *inames*, or None if one of them may take two values (a loop of one
    iteration: the peeled last level of a loop); *memo* keeps each iname's
    answer."""
    out = {}
    for x in sorted(inames):
        if x not in memo:
            values = _iname_domain(kernel, x)
            low, high = values.dim_min(0), values.dim_max(0)
            memo[x] = expr_from_pwaff(low) \
                if values.params().is_subset(low.eq_set(high)) else None
        if memo[x] is None:
            return None
        out[x] = memo[x]
    return out


def _is_last_level(kernel: Kernel, loop: str, expr, shift: int, values: dict) -> bool:
    """Whether *expr* (of the parameters and of the indices *values* gives
    the one value of) is the last value of *loop* plus *shift* whenever the
    loop runs."""
    last = _iname_domain(kernel, loop).dim_max(0)
    expr = substitute(expr, {k: v for k, v in values.items()})
    try:
        level = pwaff_from_expr(p.Sum((expr, -shift)), last.get_domain_space())
    except (NonAffineError, KeyError):
        return False
    last, level = align_params(last, level)
    return last.domain().is_subset(last.eq_set(level))


def _verdict(kernel: Kernel, name: str, users: list, hardware,
             order: list | None, memo: dict, checked: bool = False) -> LevelCache:
    """The verdict on temporary *name* used by the statements *users*; with
    *checked* False only the checks that need no schedule are made (a
    temporary that passes them is returned with ``loop`` None and no
    reason), else *order* is the schedule's outermost nodes; *memo*: see
    :func:`_single_values`."""
    t = kernel.temporaries[name]

    def no(reason: str) -> LevelCache:
        return LevelCache(name, reason=reason)

    if t.initializer is not None or t.read_only or t.base_storage is not None:
        return no("it has initial values or shares storage")
    if any(name in variables_read(rule.expression)
           for rule in kernel.substitutions.values()):
        return no("a substitution rule reads it")
    fills, after, inside = [], [], []
    for insn in users:
        shaped, why = _fill(kernel, insn, t, hardware, users)
        if shaped and why is not None:
            return no(why)
        if shaped:
            fills.append(insn)
        elif not insn.within_inames - hardware and name in insn.write_dependency_names():
            return no(f"{_line(insn)} writes it outside the loops")
        elif name not in insn.write_dependency_names() \
                and _single_values(kernel, insn.within_inames - hardware, memo) is not None:
            after.append(insn)      # perhaps a read after the loop
        else:
            inside.append(insn)
    # a statement in the loop of the others is not after it
    common = frozenset.intersection(*(i.within_inames - hardware for i in inside)) \
        if inside else frozenset()
    inside += [i for i in after if i.within_inames & common]
    after = [i for i in after if not i.within_inames & common]
    rank = {id(i): j for j, i in enumerate(users)}
    inside.sort(key=lambda i: rank[id(i)])
    if not inside:
        return no(f"{_line(users[0])} uses it outside the loops")
    if len(fills) > 1:
        return no(f"it is filled twice ({_line(fills[0])} and {_line(fills[1])})")
    common = frozenset(inside[0].within_inames) - hardware
    for insn in inside[1:]:
        if not common & insn.within_inames:
            return no(f"it is used in two loops ({_line(inside[0])} and {_line(insn)})")
        common &= insn.within_inames
    found = [(insn, idx, is_write) for insn in inside for idx, is_write in _access_list(insn, name)]
    late = [(insn, idx, is_write) for insn in after for idx, is_write in _access_list(insn, name)]
    for insn, idx, is_write in found + late:
        if idx is None or len(idx) != t.ndim:
            return no(f"{_line(insn)} uses it as a whole")
        if any(isinstance(i, p.Slice) for i in idx):
            return no(f"{_line(insn)} uses a section of it")
    levels = {x for _, idx, _ in found for i in idx for x in variables_read(i) & common}
    if not levels:
        return no("it has no level axis: no subscript reads a loop around all its uses")
    if not checked:
        return LevelCache(name)
    where = None if order is None else _position(order, inside[0].id)
    if order is None or where is None or order[where][0] is None \
            or any(insn.id not in order[where][1] for insn in inside):
        return no("the schedule has no loop around all its uses")
    loop = order[where][0]
    places = {insn.id: _position(order, insn.id) for insn in fills + after}
    if loop not in levels:
        inner = sorted(levels)[0]
        return no(f"the loop its subscripts read, '{inner}', runs inside loop '{loop}'")
    for insn in fills:
        if (places[insn.id] or 0) > where:
            return no(f"{_line(insn)} fills it after loop '{loop}'")
    for insn in after:
        if (places[insn.id] or 0) < where:
            return no(f"{_line(insn)} reads it before loop '{loop}'")
    axis: int | None = None
    # the level each iteration writes: k, or k + 1 (then k + 1 and k are read)
    shift = 0
    for _, idx, is_write in found:
        reading = [i for i in idx if loop in variables_read(i)]
        c = _offset(reading[0], loop) if is_write and len(reading) == 1 else None
        if c in (0, 1):
            shift = int(c)
            break

    def level(c: int) -> str:
        return f"'{loop}'" if c == 0 else f"'{loop} + {c}'" if c > 0 else f"'{loop} - {-c}'"

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
        if is_write and c == -1:
            return no(f"{_line(insn)} writes level '{loop} - 1'")
        if is_write and c not in (0, 1):
            return no(f"{_line(insn)} writes a level other than '{loop}' and '{loop} + 1'")
        if is_write and c is not None and c != shift:
            return no(f"{_line(insn)} writes level {level(c)}, another statement "
                      f"level {level(shift)}")
        if c not in (shift, shift - 1):
            return no(f"{_line(insn)} reads a level other than {level(shift)} and "
                      f"{level(shift - 1)}")
        previous = previous or c == shift - 1
    assert axis is not None
    for insn, idx, _ in late:
        values = _single_values(kernel, insn.within_inames - hardware, memo) or {}
        if any(variables_read(i) & hardware for i in idx) \
                or not _is_last_level(kernel, loop, idx[axis], shift, values):
            return no(f"{_line(insn)} reads it after loop '{loop}' at a level other than "
                      f"the one its last iteration writes")
    bounds = _other_ranges(t, axis)
    if bounds is None:
        return no("its other axes' bounds are not numbers")
    if int(np.prod([len(r) for r in bounds], dtype=np.int64)) > MAX_ELEMENTS:
        return no(f"its other axes hold more than {MAX_ELEMENTS} elements")
    if previous and not _steps_by_one(kernel, loop):
        return no(f"loop '{loop}' does not step by one (and level {level(shift - 1)} is read)")
    return LevelCache(name, loop=loop, axis=axis, previous=previous, shift=shift,
                      fill=fills[0].id if fills else None,
                      after=tuple(insn.id for insn in after))


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
    memo: dict = {}
    first = {n: _verdict(kernel, n, users[n], hardware, None, memo) for n in sorted(users)}
    if all(v.reason is not None for v in first.values()):
        return tuple(first.values())
    order = _top_order(kernel)
    return tuple(v if v.reason is not None
                 else _verdict(kernel, n, users[n], hardware, order, memo, checked=True)
                 for n, v in first.items())


class _Cacher(Rewriter):
    """Replaces the accesses of cached temporaries by their current or
    previous level (every access of a temporary in *late*: its current
    level, the one the loop's last iteration left)."""

    def __init__(self, plans: dict, late: frozenset = frozenset()):
        self.plans = plans        # name -> (LevelCache, current name, previous name)
        self.late = late

    def map_subscript(self, expr, *args, **kwargs):
        name = expr.aggregate.name if isinstance(expr.aggregate, p.Variable) else None
        idx = index_tuple(expr)
        if name not in self.plans:
            new = tuple(self.rec(i) for i in idx)
            if all(a is b for a, b in zip(new, idx, strict=True)):
                return expr
            return p.Subscript(expr.aggregate, new if len(new) > 1 else new[0])
        plan, current, prev = self.plans[name]
        c = plan.shift if name in self.late else _offset(idx[plan.axis], plan.loop)
        rest = tuple(self.rec(i) for j, i in enumerate(idx) if j != plan.axis)
        return make_subscript(current if c == plan.shift else prev, rest)


@for_each_kernel
def cache_levels(kernel: Kernel, *, names: tuple[str, ...] | list[str] | None = None) -> Kernel:
    """Keep the level temporaries *names* (default: every one that
    :func:`level_caches` accepts) as their current level ``T_k`` and, where
    the level before is read, their previous level ``T_km1``, private
    variables (or small private arrays of the other axes) instead of arrays
    over all levels; see the module docstring for when that is allowed.

    ``T(k, m)`` becomes ``T_k(m)``, ``T(k - 1, m)`` becomes ``T_km1(m)`` (for
    a temporary written at level ``k + 1``: ``T(k + 1, m)`` and ``T(k, m)``),
    and statements ``T_km1(m) = T_k(m)`` (one per element of the other axes)
    end each iteration of the loop, after every statement of the loop that
    uses ``T``.  A fill ``T(:, :) = c`` before the loop becomes ``T_k(m) =
    c`` (and ``T_km1(m) = c``) in its place and ``T_k(m) = c`` at the start
    of each iteration; a read after the loop of the level its last iteration
    writes becomes ``T_k(m)``.  The kernel is returned unchanged when nothing
    is cached, or when the rewritten kernel's schedule no longer has the
    loop outermost around the uses, copies and resets, the fills' values
    before it and the reads after it.

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

    def fresh(base: str) -> str:
        out = unique_name(kernel, base, extra_taken=taken)
        taken.append(out)
        return out

    for v in chosen:
        t = temps.pop(v.name)
        shape = tuple(s for j, s in enumerate(t.shape) if j != v.axis)
        lower = tuple(s for j, s in enumerate(t.lower_bounds) if j != v.axis)
        axis_names = (tuple(s for j, s in enumerate(t.axis_names) if j != v.axis)
                      if t.axis_names else None)
        current = fresh(f"{v.name}_k")
        prev = fresh(f"{v.name}_km1") if v.previous else None
        for made in (current, prev):
            if made is not None:
                temps[made] = t.copy(name=made, shape=shape, lower_bounds=lower,
                                  axis_tags=fortran_axis_tags(len(shape)),
                                  axis_names=axis_names, address_space=AddressSpace.PRIVATE)
        plans[v.name] = (v, current, prev)
    hardware = kernel.hardware_inames()
    by_id = kernel.id_to_insn
    inside = {n: [i for i in kernel.instructions if n in i.dependency_names()
                  and i.id != v.fill and i.id not in v.after]
              for n, (v, _, _) in plans.items()}
    before: dict[int, list] = {}     # position -> statements placed before it
    behind: dict[int, list] = {}     # position -> statements placed after it
    replaced: dict[str, list] = {}   # a fill's id -> the statements in its place
    extra: dict[str, set] = {}       # id -> ids it must now also depend on
    pos_of = {i.id: j for j, i in enumerate(kernel.instructions)}
    made_ids: dict[str, set] = {}    # name -> ids of the statements made for it
    for n, (v, current, prev) in plans.items():
        users = inside[n]
        within = frozenset({v.loop}) | frozenset.intersection(
            *(i.within_inames & hardware for i in users))
        ranges = _other_ranges(kernel.temporaries[n], v.axis)
        assert ranges is not None         # (checked by the verdict)
        elements = list(itertools.product(*ranges))
        mine = made_ids.setdefault(n, set())
        resets = []
        if v.fill is not None:
            fill = by_id[v.fill]
            inits = []
            for target in (current, prev):
                if target is None:
                    continue
                for element in elements:
                    inits.append(Assignment(
                        id=fresh(f"{target}_init"),
                        within_inames=fill.within_inames & hardware,
                        depends_on=fill.depends_on, assignee=make_subscript(target, element),
                        expression=fill.expression, span=fill.span))
            replaced[fill.id] = inits
            init_ids = {i.id for i in inits}
            for element in elements:
                resets.append(Assignment(
                    id=fresh(f"{current}_reset"), within_inames=within,
                    depends_on=frozenset(init_ids), assignee=make_subscript(current, element),
                    expression=fill.expression, span=fill.span))
            before.setdefault(min(pos_of[i.id] for i in users), []).extend(resets)
            reset_ids = {i.id for i in resets}
            for i in users:
                extra.setdefault(i.id, set()).update(reset_ids)
            user_ids = {i.id for i in users}
            for i in kernel.instructions:
                if v.fill in i.depends_on:
                    extra.setdefault(i.id, set()).update(
                        reset_ids if i.id in user_ids else init_ids)
            mine |= init_ids | reset_ids
        if prev is None:
            continue
        last = max(users, key=lambda i: pos_of[i.id])
        for element in elements:
            shift = Assignment(
                id=fresh(f"{prev}_shift"), within_inames=within,
                depends_on=frozenset(i.id for i in users) | {r.id for r in resets},
                assignee=make_subscript(prev, element),
                expression=make_subscript(current, element), span=last.span)
            behind.setdefault(pos_of[last.id], []).append(shift)
            mine.add(shift.id)
    late: dict[str, set] = {}
    for n, (v, _, _) in plans.items():
        for i in v.after:
            late.setdefault(i, set()).add(n)
    cacher = _Cacher(plans)
    cached = set(plans)
    fills = {v.fill for v, _, _ in plans.values()} - {None}
    out_insns: list = []
    for pos, insn in enumerate(kernel.instructions):
        out_insns.extend(before.get(pos, ()))
        if insn.id in replaced:
            out_insns.extend(replaced[insn.id])
            continue
        if insn.dependency_names() & cached:
            insn = map_expressions(insn, _Cacher(plans, frozenset(late[insn.id]))
                                   if insn.id in late else cacher)
        deps = (insn.depends_on - fills) | extra.get(insn.id, set())
        if deps != insn.depends_on:
            insn = insn.copy(depends_on=frozenset(deps))
        out_insns.append(insn)
        out_insns.extend(behind.get(pos, ()))
    per_item = set(kernel.options.per_work_item)
    for n, (_, current, prev) in plans.items():
        if n in per_item:
            per_item.discard(n)
            per_item |= {current} | ({prev} if prev else set())
    out = kernel.copy(instructions=tuple(out_insns), temporaries=FrozenMap(temps),
                      options=kernel.options.copy(per_work_item=tuple(sorted(per_item))))
    # the loop must still be outermost around every use, copy and reset, the
    # fill's values before it and the reads after it
    order = _top_order(out)
    if order is None:
        return kernel
    for n, (v, current, prev) in plans.items():
        where = next((j for j, (x, _) in enumerate(order) if x == v.loop), None)
        if where is None:
            return kernel
        made_now = {current} | ({prev} if prev else set())
        before_ids = {i.id for i in replaced.get(v.fill or "", ())}
        for i in out.instructions:
            if not made_now & i.dependency_names():
                continue
            at = _position(order, i.id)
            if i.id in before_ids:
                ok = at is not None and at < where
            elif i.id in v.after:
                ok = at is not None and at > where
            else:
                ok = at == where
            if not ok:
                return kernel
    return out
