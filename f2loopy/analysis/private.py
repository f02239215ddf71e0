"""Which temporaries each iteration of a loop may have a copy of (privatisation).

A temporary is *private* to loop ``x`` when giving every iteration of ``x``
its own copy keeps the Fortran meaning:

* every read of it inside ``x`` sees a value written earlier in the same
  iteration of ``x`` (never one left by an earlier iteration), and
* every read of it outside ``x`` sees a value written outside ``x`` after
  the loop last wrote it (no value leaves the loop).

A read *sees a value written earlier* when the writes that precede it in
program order, run in loops that all enclose the read (so in the same
iterations of those loops) and write the same element, cover every case in
which the read runs: the read's conditions imply that one of the writes ran.
Conditions are compared as conjunctions of literals (a condition or its
``not``) by enumerating the truth values of the conditions involved; a
write's condition counts only if nothing between the write and the read
changes what it reads (a flag that only ever becomes true, such as the
``exited`` flag of an ``exit``, counts where the read runs only while it is
false).  Array elements match when their subscripts are the same
expressions of values that do not change in between.

Only temporaries a work-item can hold privately qualify: scalars, and
arrays of constant size whose address space is not global.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.analysis.accesses import Access
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.isl_tools import NonAffineError, align_params, make_space, set_from_condition
from f2loopy.ir.kernel import AddressSpace, Assignment, Kernel, ScalarArg

#: the most conditions whose truth values are enumerated for one read
MAX_CONDITIONS = 12


def _literals(predicates) -> tuple[tuple[Any, bool], ...]:
    """``(condition, polarity)`` pairs of the conjunction of *predicates*
    (``.and.`` split, ``.not.`` a negative literal, anything else a positive one)."""
    out: list[tuple[Any, bool]] = []
    todo = list(predicates)
    while todo:
        e = todo.pop()
        if isinstance(e, p.LogicalAnd):
            todo.extend(e.children)
        elif isinstance(e, p.LogicalNot):
            out.append((e.child, False))
        else:
            out.append((e, True))
    return tuple(out)


def _is_true(expr) -> bool:
    return isinstance(expr, (bool, np.bool_)) and bool(expr)


@dataclass
class _Context:
    """Facts about one kernel that every query shares."""

    kernel: Kernel
    position: dict
    writers: dict            # variable -> positions of the instructions writing it
    inames: frozenset
    #: inames that are no loops (a work-item's coordinates: it runs one
    #: instance of each instruction per iteration of the other loops)
    lanes: frozenset = frozenset()

    @classmethod
    def of(cls, kernel: Kernel, lanes: frozenset = frozenset()) -> _Context:
        position = {insn.id: k for k, insn in enumerate(kernel.instructions)}
        writers: dict = {}
        for k, insn in enumerate(kernel.instructions):
            for n in insn.assignee_names():
                writers.setdefault(n, []).append(k)
        return cls(kernel, position, writers, frozenset(kernel.all_inames()), lanes)

    def _between(self, w, r) -> tuple:
        """``(first, last, loops)``: the instructions that may run after *w*
        (included) and before *r* in the same iterations of *w*'s loops are
        those at positions ``first <= k < last`` and those in *loops*."""
        loops = frozenset(r.within_inames) - frozenset(w.within_inames) - self.lanes
        return self.position[w.id], self.position[r.id], loops

    def writes_between(self, name: str, between: tuple) -> list:
        lo, hi, loops = between
        insns = self.kernel.instructions
        return [insns[k] for k in self.writers.get(name, ())
                if lo <= k < hi or (loops and loops & insns[k].within_inames)]

    def stable(self, expr, w, r, between, *, false_at_read: bool = False) -> bool:
        """Whether *expr* has the same value at *w* and at *r*
        (*false_at_read*: only needed where it is false at *r*)."""
        for name in variables_read(expr):
            if name in self.inames:
                if name not in w.within_inames:
                    return False
                continue
            for q in self.writes_between(name, between):
                # a flag that only becomes true: false at r means false at w
                if false_at_read and isinstance(expr, p.Variable) \
                        and isinstance(q, Assignment) and _is_true(q.expression) \
                        and not hasattr(q.assignee, "aggregate"):
                    continue
                return False
        return True


def privatizable(kernel: Kernel, name: str) -> bool:
    """Whether a work-item can hold temporary *name* privately."""
    t = kernel.temporaries.get(name)
    if t is None or t.base_storage:
        return False
    if t.is_scalar:
        return True
    return t.address_space in (None, AddressSpace.PRIVATE) and all(
        isinstance(s, (int, np.integer)) for s in t.shape)


class Privatisation:
    """Answers :meth:`why_not` for the loops and temporaries of one kernel
    (with *lanes*, the work-item coordinates, :meth:`why_not_per_lane`)."""

    def __init__(self, kernel: Kernel, *, lanes: frozenset[str] = frozenset()):
        self.ctx = _Context.of(kernel, frozenset(lanes))
        self._cover: dict = {}
        self._params: dict = {}
        self._clears: list | None = None

    def _covered(self, r, acc: Access, writes: list, within: str | None = None,
                 avoid: str | None = None) -> bool:
        """Whether the writes *writes* (instructions before *r*, see the
        module docstring) cover every case in which *r* reads *acc*
        (*within*: a loop they must all run in; *avoid*: one they must not)."""
        key = (r.id, acc.index, tuple(w.id for w in writes), within, avoid)
        if key in self._cover:
            return self._cover[key]
        read = _literals(r.predicates)
        fixed: dict[Any, bool] = {}
        for atom, pol in read:
            if fixed.get(atom, pol) != pol:
                self._cover[key] = True      # never runs
                return True
            fixed[atom] = pol
        options = []
        for w in writes:
            lits = _literals(w.predicates)
            between = self.ctx._between(w, r)
            if acc.index is not None and not all(
                    self.ctx.stable(e, w, r, between) for e in acc.index):
                continue
            widx = _assignee_index(w)
            if widx != acc.index:
                # one subscript differs: the write covers the read where they agree
                same = _agree(acc.index, widx)
                if same is None or not self.ctx.stable(same, w, r, between):
                    continue
                lits = lits + ((same, True),)
            if all(self.ctx.stable(a, w, r, between,
                                   false_at_read=fixed.get(a, None) is False and not pol)
                   for a, pol in lits):
                options.append(lits)
        for flag in self._witness_flags(r, acc, within, avoid):
            options.append(((p.Variable(flag), True),))
        ok = self._implies(fixed, options, self._other_elements(r, acc, within))
        self._cover[key] = ok
        return ok

    def _other_elements(self, r, acc: Access, within: str | None) -> list | None:
        """For each write in loop *within* of the variable *r* reads, the
        literals of which one holding means that write cannot have touched
        the element *r* reads in this run of the loop: the subscripts differ
        (``(e_r == e_w, False)``, where the write's subscripts are the same in
        all its instances: constants and unchanging arguments), or one of its
        conditions on unchanging
        scalar arguments is false (then it runs in no iteration).  When every
        write is ruled out so, the value comes from before the loop, the same
        in every iteration.  None where a write cannot be ruled out."""
        if within is None:
            return None
        kernel = self.ctx.kernel
        out = []
        for k in self.ctx.writers.get(acc.name, ()):
            w = kernel.instructions[k]
            if within not in w.within_inames:
                continue
            alts = [(a, not pol) for a, pol in _literals(w.predicates) if self._invariant(a)]
            if acc.index is not None and isinstance(w, Assignment) \
                    and hasattr(w.assignee, "aggregate"):
                widx = tuple(w.assignee.index) if isinstance(w.assignee.index, tuple) \
                    else (w.assignee.index,)
                # the element must be the same in every instance of the write
                # (an iname would make it differ between iterations: zv(i)
                # written in iteration 1 is read as zv(1) in iteration 2)
                shared = len(widx) == len(acc.index) and not any(
                    n in self.ctx.inames or n in self.ctx.writers
                    for e in widx for n in variables_read(e))
                conds = [p.Comparison(a, "==", b) for a, b in zip(acc.index, widx, strict=True)
                         if a != b] if shared else []
                if shared and len(conds) == 1:
                    alts.append((conds[0], False))
            if not alts:
                return None
            out.append(alts)
        return out

    def _invariant(self, atom) -> bool:
        """The condition reads only scalar arguments the kernel never writes."""
        names = variables_read(atom)
        kernel = self.ctx.kernel
        return bool(names) and all(
            n not in self.ctx.writers and n not in self.ctx.inames
            and isinstance(_var(kernel, n), ScalarArg) for n in names)

    def _feasible(self, env: dict) -> bool:
        """Whether the kernel's assumptions allow the truth values *env* of
        the conditions on parameters alone (``NSSOPT == 2``)."""
        kernel = self.ctx.kernel
        s = kernel.assumptions.params()
        found = False
        for atom, value in env.items():
            ps = self._param_set(atom)
            if ps is None:
                continue
            found = True
            part = (ps if value else ps.complement()).params()
            s, part = align_params(s, part)
            s = s & part
        return not found or not s.is_empty()

    def _param_set(self, atom):
        if atom in self._params:
            return self._params[atom]
        kernel = self.ctx.kernel
        names = variables_read(atom)
        out = None
        if names and all(n not in self.ctx.writers and n not in self.ctx.inames
                         and isinstance(_var(kernel, n), ScalarArg)
                         and _var(kernel, n).dtype.kind in "iu" for n in names) \
                and isinstance(atom, p.Comparison):
            try:
                out = set_from_condition(atom, make_space((), sorted(names)))
            except (NonAffineError, isl.Error, TypeError, ValueError):
                out = None
        self._params[atom] = out
        return out

    def _witness_flags(self, r, acc: Access, within: str | None,
                       avoid: str | None) -> list[str]:
        """Flags ``F`` (the ``exited`` flag of an ``exit``) whose being true at
        *r* means that an assignment of *acc*'s element ran before: ``F =
        .false.`` runs unconditionally before *r* in the same iterations, and
        every ``F = .true.`` in between follows, in the same
        loops, an assignment of the element under at most its conditions and
        ``.not. F`` (as ``do ...; if (c) exit; ...`` leaves the loop index's
        value: ``if (c .and. .not. exited) j_value = j``, then ``if (c)
        exited = .true.``); all in loop *within* if given, none in loop
        *avoid*."""
        kernel = self.ctx.kernel
        pos = self.ctx.position
        out: list[str] = []
        if acc.index is not None:
            return out       # scalars only (an element's subscripts could change)
        if self._clears is None:
            # the unconditional ``F = .false.`` of scalars, in kernel order
            self._clears = [
                f0 for f0 in kernel.instructions
                if isinstance(f0, Assignment) and not f0.predicates
                and not hasattr(f0.assignee, "aggregate")
                and isinstance(f0.expression, (bool, np.bool_)) and not f0.expression]
        for f0 in self._clears:
            if pos[f0.id] >= pos[r.id]:
                break
            if (within is not None and within not in f0.within_inames) \
                    or not f0.within_inames <= r.within_inames:
                continue
            flag = f0.assignee_name
            t = kernel.temporaries.get(flag)
            if t is None or not t.is_scalar or flag in out:
                continue
            sets = [q for q in self.ctx.writes_between(flag, self.ctx._between(f0, r))
                    if q is not f0]
            if sets and all(avoid not in q.within_inames
                            and self._witnessed(q, flag, acc, f0) for q in sets):
                out.append(flag)
        return out

    def _witnessed(self, q, flag: str, acc: Access, f0) -> bool:
        if not isinstance(q, Assignment) or not _is_true(q.expression):
            return False
        pos = self.ctx.position
        allowed = set(_literals(q.predicates)) | {(p.Variable(flag), False)}
        for w in self.ctx.kernel.instructions[pos[f0.id] + 1:pos[q.id]]:
            if w.within_inames != q.within_inames or not isinstance(w, Assignment) \
                    or w.assignee_name != acc.name:
                continue
            widx = None if not hasattr(w.assignee, "aggregate") else \
                tuple(w.assignee.index) if isinstance(w.assignee.index, tuple) \
                else (w.assignee.index,)
            if widx != acc.index or not set(_literals(w.predicates)) <= allowed:
                continue
            between: tuple[int, int, frozenset] = (pos[w.id], pos[q.id], frozenset())
            if all(self.ctx.stable(a, w, q, between) for a, _ in _literals(q.predicates)) \
                    and (acc.index is None
                         or all(self.ctx.stable(e, w, q, between) for e in acc.index)):
                return True
        return False

    def _implies(self, fixed: dict, options: list, other: list | None) -> bool:
        """Whether, when the literals *fixed* hold, one of the conjunctions
        *options* holds or every list of *other* has a literal that holds
        (see :meth:`_other_elements`); truth values the kernel's assumptions
        exclude are skipped."""
        def ruled_out(env):
            return other is not None and all(
                any(env.get(a) == pol for a, pol in alts) for alts in other)

        if any(all(fixed.get(a) == pol for a, pol in lits) for lits in options):
            return True
        if ruled_out(fixed):
            return True
        free = []
        for lits in options + (other or []):
            for a, _ in lits:
                if a not in fixed and a not in free:
                    free.append(a)
        if len(free) > MAX_CONDITIONS:
            return False
        for values in itertools.product((False, True), repeat=len(free)):
            env = dict(fixed)
            env.update(zip(free, values, strict=True))
            if any(all(env[a] == pol for a, pol in lits) for lits in options):
                continue
            if ruled_out(env):
                continue
            if self._feasible(env):
                return False
        return True

    def why_not(self, x: str, name: str, accs: list[Access]) -> str:
        """Empty if temporary *name* (with accesses *accs*, all of the
        kernel's) is private to loop *x*, else why not (a clause such as
        ``"line 15 may read the value of an earlier iteration ..."``)."""
        kernel = self.ctx.kernel
        if not privatizable(kernel, name):
            return "it is not a temporary a work-item can hold privately"
        insns = kernel.id_to_insn
        pos = self.ctx.position
        writes = [a for a in accs if a.is_write]
        inside = [insns[a.insn_id] for a in writes if x in insns[a.insn_id].within_inames]
        first = min((pos[q.id] for q in inside), default=None)
        for acc in accs:
            if acc.is_write:
                continue
            r = insns[acc.insn_id]
            r_in = x in r.within_inames
            if not r_in and first is not None and pos[r.id] < first and not any(
                    set(r.within_inames) & set(q.within_inames) for q in inside):
                continue        # runs before the loop, and never again after it
            cands = []
            for wa in writes:
                w = insns[wa.insn_id]
                if pos[w.id] >= pos[r.id] or not w.within_inames <= r.within_inames \
                        or (wa.index != acc.index and _agree(acc.index, wa.index) is None):
                    continue
                if r_in and x not in w.within_inames:
                    continue
                if not r_in:
                    loops = set(r.within_inames) - set(w.within_inames)
                    if any(pos[w.id] < pos[q.id] < pos[r.id]
                           or loops & set(q.within_inames) for q in inside):
                        continue
                cands.append(w)
            if self._covered(r, acc, cands, x if r_in else None, None if r_in else x):
                continue
            line = _line(r)
            if not r_in:
                return (f"line {line} reads the value the loop leaves in it "
                        f"(each iteration would need its own copy)")
            if cands:
                lines = sorted({_line(w) for w in cands}, key=_num)
                what = f"the assignment at line {lines[0]} before it does" \
                    if len(lines) == 1 else \
                    f"the assignments at lines {', '.join(lines)} before it do"
                return (f"line {line} may read the value of an earlier iteration "
                        f"({what} not cover every case)")
            return f"line {line} may read the value of an earlier iteration"
        return ""

    def why_not_per_lane(self, name: str, accs: list[Access]) -> str:
        """Empty if temporary *name* (with accesses *accs*, all of the
        kernel's) can be private to each work-item of a kernel whose
        work-items each run the instructions in their order (one instance per
        iteration of the loops that are not *lanes*): every read sees a value
        the same work-item wrote before it, in the same iterations of its
        loops.  A write in a loop of the work-item's coordinates only (in no
        further loop of the read) covers a read in the same coordinates, since
        both run in the work-item's one instance; else why not."""
        kernel = self.ctx.kernel
        if not privatizable(kernel, name):
            return "it is not a temporary a work-item can hold privately"
        insns = kernel.id_to_insn
        pos = self.ctx.position
        writes = [a for a in accs if a.is_write]
        for acc in accs:
            if acc.is_write:
                continue
            r = insns[acc.insn_id]
            cands = []
            for wa in writes:
                w = insns[wa.insn_id]
                if pos[w.id] < pos[r.id] and w.within_inames <= r.within_inames \
                        and (wa.index == acc.index or _agree(acc.index, wa.index) is not None) \
                        and w not in cands:
                    cands.append(w)
            if not self._covered(r, acc, cands):
                return f"line {_line(r)} may read a value another work-item wrote"
        return ""


def _assignee_index(w) -> tuple | None:
    a = getattr(w, "assignee", None)
    if a is None or not hasattr(a, "aggregate"):
        return None
    return tuple(a.index) if isinstance(a.index, tuple) else (a.index,)


def _agree(read: tuple | None, write: tuple | None):
    """``e_r == e_w`` where the subscripts *read* and *write* differ in one
    position only (None otherwise)."""
    if read is None or write is None or len(read) != len(write):
        return None
    diff = [(a, b) for a, b in zip(read, write, strict=True) if a != b]
    if len(diff) != 1:
        return None
    return p.Comparison(diff[0][0], "==", diff[0][1])


def _var(kernel: Kernel, name: str):
    return kernel.variable(name) if kernel.has_variable(name) else None


def _line(insn) -> str:
    return str(insn.span.line) if insn.span is not None else "?"


def _num(text: str) -> int:
    return int(text) if text.isdigit() else 0
