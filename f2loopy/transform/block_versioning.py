"""Block versioning: the body of a loop indexed through a run-time key
rewritten as one block per value of the key, under one chain of tests.

:mod:`f2loopy.transform.versioning` copies *each statement* that indexes a
small private array with a run-time key (``ZSOLQA(JO, JN)``, ``JO =
IORDER(JM)``: a species chosen by a sort) once per value of the key.  The
copies of consecutive statements then carry different conditions, and
inside an inner loop (``DO JN``) every iteration tests the key again.  This
module versions a whole loop body at once: every statement of the body of
loop ``L`` gets one copy per value ``c`` of the key, the copies of value
``c`` run together in one block under the one test ``key == c`` (a loop of
at most one iteration whose domain is that test), the inner loops of the
body are copied per block, and inside block ``c`` the constant ``c`` stands
for the key.  Each block is straight-line code over constant subscripts.

Definitions (``E`` is the key expression):

* a *key* is a non-static subscript of a small private array
  (:func:`~f2loopy.transform.versioning.index_versions`' sense: private,
  constant bounds, at most
  :data:`~f2loopy.transform.versioning.MAX_ELEMENTS` elements) that is an
  array element with static subscripts (``IORDER(JM)``), or a private
  integer scalar that aliases one (``JO`` below), possibly plus a constant;
* ``E`` is *invariant* in the body of ``L`` when no statement of the body
  writes ``E``'s array or a variable ``E`` reads, and ``E`` reads no loop
  index of a loop inside ``L``;
* a private integer scalar ``v`` *aliases* ``E`` in the body when every
  statement of the body that writes ``v`` is ``v = E`` without conditions,
  run once per iteration of ``L`` (in no inner loop), and the first statement
  of the body (in program order) that reads or writes ``v`` is one of them:
  every read of ``v`` in the body then sees the value of ``E``.

``L`` is the outermost sequential loop around a statement that indexes a
small private array with the key in whose body ``E`` is invariant (and the
scalar aliases it, if the key is a scalar).  It is refused when its
statements are not consecutive in program order, when it or a loop inside
it stops early or is peeled, when it holds a statement other than an
assignment or more than :data:`MAX_STATEMENTS` statements, or when a loop
inside it shares its domain with a loop outside it.  The *values* of the
key: the intersection of

* the *range*: the values of ``E`` (plus offset) that keep in bounds every
  index with the key in a statement of the body that runs in every iteration
  of ``L`` (no conditions; inner loops of constant, non-empty ranges) where
  the index is evaluated whenever the statement runs (its assignee, its
  conditions, its value outside conditional expressions); and
* the *written values*: when ``E``'s array is a temporary, every value any
  statement of the kernel stores in it (integer literals and indices of
  loops of constant bounds; a temporary holds only what was stored).

At least one of the two must be known, and the result must be non-empty
and have at most :data:`MAX_VALUES` values.  Legality: in an execution
where ``E`` takes a value outside the range, the original body indexes an
array out of its bounds in that iteration (not a standard-conforming
execution, about which nothing is owed); a value outside the written values
cannot occur.  So in every conforming execution exactly one block runs per
iteration of ``L``, and block ``c`` computes exactly what the body computes
with ``E == c``.  The key's value is read once per iteration into a new
private scalar (the blocks' test), before the blocks; no block writes it, so
code generation prints the tests as one ``if`` / ``else if`` chain.

:func:`block_versions` gives the verdict per key, :func:`version_blocks`
rewrites the loops that pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.diagnostics import TransformError
from f2loopy.ir.domains import iname_to_domain_index
from f2loopy.ir.expressions import Rewriter, index_tuple, variables_read
from f2loopy.ir.isl_tools import dim_type
from f2loopy.ir.kernel import AddressSpace, Assignment, Kernel, Temporary
from f2loopy.ir.frozen import FrozenMap
from f2loopy.transform.util import for_each_kernel, rename_in_set, unique_name
from f2loopy.transform.versioning import (
    MAX_ELEMENTS, _bounds, _constant_loops, _forced_subscripts, _is_int, _key_of, _line,
    _replace_reads, _settled)

#: the most values a key may take (blocks of a body)
MAX_VALUES = 16

#: the most statements a versioned body may hold (all blocks together hold
#: this times the number of values)
MAX_STATEMENTS = 400


@dataclass(frozen=True)
class BlockVersion:
    """The verdict on one run-time key of small private arrays.

    :attr key: the key expression as text (``IORDER[JM_16]``).
    :attr loop: the loop whose body is versioned, or None when no loop fits.
    :attr aliases: the private scalars that alias the key in the body.
    :attr values: the values of the key, one block each (empty if refused).
    :attr reason: why it is not versioned (a sentence), or None if it is.
    """

    key: str
    loop: str | None = None
    aliases: tuple[str, ...] = ()
    values: tuple[int, ...] = ()
    reason: str | None = None

    @property
    def versioned(self) -> bool:
        return self.reason is None


def _small_arrays(kernel: Kernel) -> dict:
    out = {}
    for n, t in kernel.temporaries.items():
        if t.address_space is not AddressSpace.PRIVATE or not t.shape \
                or t.base_storage is not None:
            continue
        b = _bounds(t)
        if b is not None and int(np.prod([len(r) for r in b])) <= MAX_ELEMENTS:
            out[n] = b
    return out


def _int_scalar(kernel: Kernel, name: str) -> bool:
    t = kernel.temporaries.get(name)
    return t is not None and not t.shape and t.base_storage is None \
        and t.address_space in (None, AddressSpace.PRIVATE) and np.dtype(t.dtype).kind in "iu"


def _keys(kernel: Kernel, static) -> dict:
    """key expression -> the statements that index a small private array
    with it (in program order)."""
    small = _small_arrays(kernel)
    keys: dict = {}
    for insn in kernel.instructions:
        acc = list(insn.read_accesses())
        if isinstance(insn, Assignment) and isinstance(insn.assignee, p.Subscript):
            acc.append((insn.assignee_name, index_tuple(insn.assignee)))
        for n, idx in acc:
            if n not in small or idx is None:
                continue
            for i in idx:
                if isinstance(i, p.Slice) or static(i):
                    continue
                kk = _key_of(i, static)
                if kk is not None:
                    users = keys.setdefault(kk[0], [])
                    if insn not in users:
                        users.append(insn)
    return keys


def _sequential_loops(kernel: Kernel, insn) -> list[str]:
    """The sequential loops around *insn*, outermost first (a loop is
    outside another when it holds more statements)."""
    hardware = kernel.hardware_inames()
    count: dict[str, int] = {}
    for i in kernel.instructions:
        for x in i.within_inames:
            count[x] = count.get(x, 0) + 1
    return sorted((x for x in insn.within_inames if x not in hardware),
                  key=lambda x: (-count[x], x))


def _body(kernel: Kernel, loop: str) -> list:
    return [i for i in kernel.instructions if loop in i.within_inames]


def _alias_reason(v: str, expr, body, level: frozenset) -> str | None:
    """Why scalar *v* does not alias *expr* in *body* (None if it does)."""
    first = next((i for i in body if v in i.dependency_names()), None)
    if first is None:
        return None
    for i in body:
        if v not in i.assignee_names():
            continue
        if not (isinstance(i, Assignment) and isinstance(i.assignee, p.Variable)
                and i.expression == expr and not i.predicates and i.within_inames == level):
            return (f"{_line(i)} assigns '{v}' other than '{v} = {expr}' once per "
                    f"iteration")
    if v not in first.assignee_names():
        return f"{_line(first)} reads '{v}' before the loop's body assigns it"
    return None


def _invariance_reason(expr, body, inner: set) -> str | None:
    """Why *expr* may change in *body* (None if it cannot)."""
    names = variables_read(expr) | ({expr.aggregate.name}
                                    if isinstance(expr, p.Subscript) else set())
    for i in body:
        hit = set(i.assignee_names()) & names
        if hit:
            return f"{_line(i)} writes '{sorted(hit)[0]}'"
    if names & inner:
        return f"it reads the index of loop '{sorted(names & inner)[0]}' inside the body"
    return None


def _loop_range(kernel: Kernel, iname: str) -> range | None:
    """The values of loop *iname* when its bounds are constants."""
    dom = kernel.domains[kernel.iname_domain_index[iname]]
    s = dom.project_out_except([iname], [dim_type.set])
    if any(s.involves_dims(dim_type.param, j, 1) for j in range(s.dim(dim_type.param))):
        return None
    if s.is_empty() or not s.is_bounded():
        return None
    lo = s.dim_min_val(0).to_python()
    hi = s.dim_max_val(0).to_python()
    if s.count_val().to_python() != hi - lo + 1:
        return None
    return range(lo, hi + 1)


def _written_values(kernel: Kernel, expr) -> set | None:
    """Every value stored in the temporary *expr* is an element of (None if
    not known: an argument, or a value other than a literal or an index of a
    loop of constant bounds)."""
    name = expr.aggregate.name if isinstance(expr, p.Subscript) else expr.name
    if name not in kernel.temporaries or kernel.temporaries[name].initializer is not None \
            or kernel.temporaries[name].base_storage is not None:
        return None
    out: set = set()
    for i in kernel.instructions:
        if name not in i.assignee_names():
            continue
        if not isinstance(i, Assignment):
            return None
        e = i.expression
        if _is_int(e):
            out.add(int(cast(Any, e)))
        elif isinstance(e, p.Variable) and e.name in i.within_inames:
            r = _loop_range(kernel, e.name)
            if r is None:
                return None
            out.update(r)
        else:
            return None
    return out


def _value_range(kernel: Kernel, body, level: frozenset, keys: set) -> range | None:
    """The values of the key that keep the indices of the statements of
    *body* that always run within bounds (None if no such index)."""
    arrays = {**{a.name: a for a in kernel.args if getattr(a, "shape", ())},
              **{n: t for n, t in kernel.temporaries.items() if t.shape}}
    values: range | None = None
    for insn in body:
        if insn.predicates:
            continue
        if any(_loop_range(kernel, x) is None for x in insn.within_inames - level):
            continue
        for sub in _forced_subscripts(insn):
            t = arrays.get(sub.aggregate.name)
            b = _bounds(t) if t is not None else None
            if b is None or len(b) != len(index_tuple(sub)):
                continue
            for i, r in zip(index_tuple(sub), b, strict=True):
                kk = _key_of(i, lambda e: False)
                if kk is None or kk[0] not in keys:
                    continue
                rng = range(r.start - kk[1], r.stop - kk[1])
                values = rng if values is None else range(
                    max(values.start, rng.start), min(values.stop, rng.stop))
    return values


def _analyse(kernel: Kernel) -> list[tuple[BlockVersion, Any]]:
    loops = _constant_loops(kernel)
    settled = _settled(kernel, loops)
    ok_names = loops | settled

    def static(e) -> bool:
        return _is_int(e) or variables_read(e) <= ok_names

    out = []
    for key, users in _keys(kernel, static).items():
        seen: set = set()
        for user in users:
            v, expr = _verdict(kernel, key, user, static)
            if (v.key, v.loop, v.reason) not in seen:
                seen.add((v.key, v.loop, v.reason))
                out.append((v, expr))
    return out


def _verdict(kernel: Kernel, key, user, static) -> tuple[BlockVersion, Any]:
    text = str(key)
    expr = key
    aliases: tuple[str, ...] = ()
    if isinstance(key, p.Variable):
        v = key.name
        if not _int_scalar(kernel, v):
            return BlockVersion(text, reason=f"'{v}' is not a private integer scalar"), expr
        defs = {i.expression for i in kernel.instructions
                if isinstance(i, Assignment) and v in i.assignee_names()}
        subs = [d for d in defs if isinstance(d, p.Subscript)]
        if not subs:
            return BlockVersion(text, reason=f"no statement assigns '{v}' an array element"), expr
        aliases = (v,)
    chosen = None
    why = f"{_line(user)} is in no sequential loop"
    for loop in _sequential_loops(kernel, user):
        body = _body(kernel, loop)
        level = frozenset.intersection(*(i.within_inames for i in body))
        inner = set().union(*(i.within_inames for i in body)) - level
        if aliases:
            cands = [i.expression for i in body if isinstance(i, Assignment)
                     and i.assignee_names() == aliases and isinstance(i.expression, p.Subscript)]
            if not cands:
                why = f"loop '{loop}' does not assign '{aliases[0]}'"
                continue
            expr = cands[0]
            if np.dtype(kernel.variable(expr.aggregate.name).dtype) != \
                    np.dtype(kernel.temporaries[aliases[0]].dtype):
                why = (f"'{aliases[0]}' and '{expr.aggregate.name}' are integers of different "
                       "kinds")
                continue
            r = _alias_reason(aliases[0], expr, body, level)
            if r is not None:
                why = f"in loop '{loop}', {r}"
                continue
        r = _invariance_reason(expr, body, inner)
        if r is not None:
            why = f"'{expr}' changes in loop '{loop}': {r}"
            continue
        chosen = (loop, body, level, inner)
        break
    if chosen is None:
        return BlockVersion(text, aliases=aliases, reason=why), expr
    loop, body, level, inner = chosen
    ids = [i.id for i in kernel.instructions]
    pos = [ids.index(i.id) for i in body]
    if pos[-1] - pos[0] + 1 != len(body):
        return BlockVersion(text, loop, aliases, reason=f"the statements of loop '{loop}' are "
                            "not consecutive in program order"), expr
    if any(x in kernel.loop_exits or x in kernel.iname_slabs for x in inner | {loop}):
        return BlockVersion(text, loop, aliases,
                            reason=f"loop '{loop}' or a loop inside it stops early or is peeled"), expr
    if any(not isinstance(i, Assignment) for i in body):
        return BlockVersion(text, loop, aliases,
                            reason=f"loop '{loop}' holds a statement other than an assignment"), expr
    if len(body) > MAX_STATEMENTS:
        return BlockVersion(text, loop, aliases, reason=f"loop '{loop}' holds {len(body)} "
                            f"statements, more than {MAX_STATEMENTS}"), expr
    where = iname_to_domain_index(kernel)
    for x in sorted(inner):
        dom = kernel.domains[where[x]]
        others = set(dom.get_var_names(dim_type.set)) - inner
        if others:
            return BlockVersion(text, loop, aliases, reason=f"loop '{x}' shares its domain "
                                f"with loop '{sorted(others)[0]}' outside loop '{loop}'"), expr
    rng = _value_range(kernel, body, level, {expr, *(p.Variable(a) for a in aliases)})
    written = _written_values(kernel, expr)
    if rng is None and written is None:
        return BlockVersion(text, loop, aliases, reason=(
            f"the values of '{expr}' are not known: no statement that runs in every iteration "
            f"of loop '{loop}' indexes an array with it, and it is not a temporary that only "
            "literals and loop indices are stored in")), expr
    values: set = set(rng) if rng is not None else set()
    if written is not None:
        values = values & written if rng is not None else written
    if not values:
        return BlockVersion(text, loop, aliases,
                            reason=f"'{expr}' has no value that keeps its indices in bounds"), expr
    if len(values) > MAX_VALUES:
        return BlockVersion(text, loop, aliases, reason=f"'{expr}' takes {len(values)} values, "
                            f"more than {MAX_VALUES}"), expr
    return BlockVersion(str(expr), loop, aliases, tuple(sorted(values))), expr


def block_versions(kernel: Kernel) -> tuple[BlockVersion, ...]:
    """The verdict on each run-time key of small private arrays of *kernel*,
    in program order of first use (see the module docstring)."""
    return tuple(v for v, _ in _analyse(kernel))


class _Renamer(Rewriter):
    def __init__(self, mapping: dict):
        self.mapping = mapping

    def map_variable(self, expr, *a, **k):
        new = self.mapping.get(expr.name)
        return p.Variable(new) if new is not None else expr


def _copy(insn, keys, value: int, rename: dict):
    for k in keys:
        insn = _replace_reads(insn, k, value)
    r = _Renamer(rename)
    if isinstance(insn, Assignment):
        a = insn.assignee
        if isinstance(a, p.Subscript):
            a = r(a)
        insn = insn.copy(assignee=a, expression=r(insn.expression),
                         predicates=tuple(r(x) for x in insn.predicates))
    return insn


def _version_loop(kernel: Kernel, v: BlockVersion, expr) -> Kernel:
    loop = v.loop
    assert loop is not None
    body = _body(kernel, loop)
    body_ids = {i.id for i in body}
    level = frozenset.intersection(*(i.within_inames for i in body))
    inner = sorted(set().union(*(i.within_inames for i in body)) - level)
    first = body[0]
    keys = [expr, *(p.Variable(a) for a in v.aliases)]
    taken: list[str] = []

    def fresh(base: str) -> str:
        n = unique_name(kernel, base, extra_taken=taken)
        taken.append(n)
        return n

    kname = fresh(f"{loop}_key")
    dtype = kernel.variable(expr.aggregate.name).dtype
    temps = dict(kernel.temporaries)
    temps[kname] = Temporary(name=kname, dtype=np.dtype(dtype),
                             address_space=AddressSpace.PRIVATE)
    outside = frozenset(d for i in body for d in i.depends_on if d not in body_ids)
    kid = fresh(f"{loop}_key_read")
    read = Assignment(id=kid, within_inames=level, depends_on=outside,
                      assignee=p.Variable(kname), expression=expr, span=first.span)
    domains = list(kernel.domains)
    where = iname_to_domain_index(kernel)
    ctx = kernel.domains[where[loop]].get_ctx()
    tags = dict(kernel.iname_tags)
    priority = set(kernel.loop_priority)
    copies: dict[str, list[str]] = {i.id: [] for i in body}
    blocks: list = [read]
    inner_domains = sorted({where[x] for x in inner})
    for c in v.values:
        suffix = f"v{c}" if c >= 0 else f"vm{-c}"
        guard = fresh(f"{loop}_{suffix}")
        domains.append(isl.Set.read_from_str(
            ctx, f"[{kname}] -> {{ [{guard}] : {guard} = 0 and {kname} = {c} }}"))
        rename = {x: fresh(f"{x}_{suffix}") for x in inner}
        for d in inner_domains:
            dom = domains[d]
            for x in inner:       # its own loops, and the inner loops its bounds read
                dom = rename_in_set(dom, x, rename[x])
            domains.append(dom)
        for x in inner:
            if x in kernel.iname_tags:
                tags[rename[x]] = kernel.iname_tags[x]
        priority |= {tuple(rename.get(x, x) for x in t) for t in kernel.loop_priority
                     if set(t) & set(inner)}
        ids = {i.id: fresh(f"{i.id}_{suffix}") for i in body}
        for i in body:
            new = _copy(i, keys, c, rename)
            deps = frozenset(ids.get(d, d) for d in i.depends_on) | {kid}
            within = frozenset(rename.get(x, x) for x in i.within_inames) | {guard}
            blocks.append(new.copy(id=ids[i.id], within_inames=within, depends_on=deps))
            copies[i.id].append(ids[i.id])
    out = []
    for insn in kernel.instructions:
        if insn.id in body_ids:
            if insn.id == first.id:
                out.extend(blocks)
            continue
        if insn.depends_on & body_ids:
            deps = frozenset(d2 for d in insn.depends_on
                             for d2 in (copies[d] + [kid] if d in copies else [d]))
            insn = insn.copy(depends_on=deps)
        out.append(insn)
    # the inner loops' own domains go unused: drop them
    keep = [d for k, d in enumerate(domains) if k not in inner_domains]
    for x in inner:
        tags.pop(x, None)
    priority = {t for t in priority if not set(t) & set(inner)}
    return kernel.copy(instructions=tuple(out), domains=tuple(keep),
                       temporaries=FrozenMap(temps), iname_tags=FrozenMap(tags),
                       loop_priority=frozenset(priority))


@for_each_kernel
def version_blocks(kernel: Kernel, *, loops: tuple[str, ...] | list[str] | None = None
                   ) -> Kernel:
    """Version the bodies of the loops *loops* (default: every loop that
    :func:`block_versions` accepts) as one block per value of their key
    (see the module docstring for when that keeps the results).  Statements
    after a versioned loop that depended on a statement of its body depend
    on all its copies.  The kernel is returned unchanged when nothing is
    versioned.

    :arg loops: loop indices whose bodies to version; each must be the loop
        of an accepted key.
    :raises TransformError: *loops* is not a list of names, or names a loop
        that is not the loop of an accepted key (the message says why).
    """
    verdicts = block_versions(kernel)
    if loops is None:
        chosen = [v.loop for v in verdicts if v.versioned]
    else:
        if isinstance(loops, str) or not all(isinstance(n, str) for n in loops):
            raise TransformError(f"version_blocks: loops is a list of loop indices, "
                                 f"not {loops!r}")
        chosen = []
        for n in loops:
            mine = [v for v in verdicts if v.loop == n]
            if not mine:
                refused = [v for v in verdicts if v.reason is not None]
                raise TransformError(
                    f"version_blocks: no key of kernel '{kernel.name}' is versioned in loop "
                    f"'{n}'" + (f" ({refused[0].key}: {refused[0].reason})" if refused else ""))
            bad = [v for v in mine if not v.versioned]
            if bad:
                raise TransformError(f"version_blocks: loop '{n}' is not versioned: "
                                     f"{bad[0].reason}")
            chosen.append(n)
    done: list[str] = []
    for loop in chosen:
        if loop in done or loop is None:
            continue
        # each versioning renames the loops inside: decide on the kernel as it is
        hit = next(((x, e) for x, e in _analyse(kernel) if x.loop == loop and x.versioned),
                   None)
        if hit is None:
            continue
        kernel = _version_loop(kernel, *hit)
        done.append(loop)
    return kernel
