"""``if`` and ``select case`` in the lowering: predicates on the
instructions inside.  A condition that the construct itself may change is
evaluated once, into a logical temporary, before the guarded statements."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.ir.types import BOOL, is_integer, is_logical
from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend.declarations import statement_lines
from f2loopy.ir.expressions import is_constant, variables_read
from f2loopy.ir.folding import fold_constants
from f2loopy.ir.kernel import Assignment

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import Expr, LoweringHost as _Host
else:
    _Host = object


class ConditionalsMixin(_Host):
    """``if`` and ``select case`` (mixed into UnitLowering)."""

    def stmt_If_Stmt(self, node):
        cond_node, action = node.items
        cond = self.condition(cond_node)
        start = len(self.instructions)
        self.with_predicate(cond, lambda: self.lower_statement(action))
        self.snapshot_conditions(start, [(cond, self.lines)])

    def condition(self, node):
        cond = self.expr(node)
        if not is_logical(self.checked_dtype(cond)):
            raise self.error("condition is not logical", str(node))
        return cond

    def with_predicate(self, cond, body):
        if is_constant(cond):
            if bool(cond):
                body()
            elif self.parent is not None:
                pass      # a never-taken branch of library code: not even lowered
            else:
                # statements in a never-taken branch are still checked, then dropped
                n = len(self.instructions)
                body()
                del self.instructions[n:]
            return
        with self.guarded(cond):
            body()

    def stmt_If_Construct(self, node):
        content = self._after_leading(node.content, F.If_Then_Stmt)
        branches: list[list] = []   # [condition node or None, [statements], lines]
        current = None
        for ch in content:
            if isinstance(ch, (F.If_Then_Stmt, F.Else_If_Stmt)):
                current = [ch.items[0], [], statement_lines(ch)]
                branches.append(current)
            elif isinstance(ch, F.Else_Stmt):
                current = [None, [], statement_lines(ch)]
                branches.append(current)
            elif isinstance(ch, F.End_If_Stmt):
                pass
            else:
                assert current is not None      # the construct starts with 'if'
                current[1].append(ch)
        # conditions first (each evaluated only when the earlier ones are false)
        conds: list = []
        taken: list = []
        for cond_node, body, lines in branches:
            if cond_node is None:
                conds.append(None)
                continue
            with self.at(lines), self.guarded(*(p.LogicalNot(c) for c in taken)):
                try:
                    cond = self.condition(cond_node)
                except FortranError as exc:
                    self.record(exc)
                    cond = np.bool_(True)
            conds.append(cond)
            taken.append(cond)
        start = len(self.instructions)
        taken = []
        for (cond_node, body, lines), cond in zip(branches, conds, strict=True):
            preds = [p.LogicalNot(c) for c in taken]
            if cond is not None:
                preds.append(cond)
            guard = _conjunction(fold_constants(x) for x in preds)
            if guard is None:
                self.lower_block(body)
            else:
                self.with_predicate(guard, lambda b=body: self.lower_block(b))
            if cond is not None:
                taken.append(cond)
        self.snapshot_conditions(start, [(c, ln) for c, (_, _, ln) in zip(conds, branches, strict=True)
                                         if c is not None])

    def stmt_Case_Construct(self, node):
        content = self._after_leading(node.content, F.Select_Case_Stmt)
        if not content:
            return
        select = content[0]
        branches = []          # [case stmt, body]
        for ch in content[1:]:
            if isinstance(ch, F.Case_Stmt):
                branches.append([ch, []])
            elif isinstance(ch, F.End_Select_Stmt):
                pass
            elif branches:
                branches[-1][1].append(ch)
            else:
                # before the first 'case' (not Fortran; an 'include'): not dropped
                self.lower_statement(ch)
        char_length = None      # of a character selector: its case values are codes
        with self.at(statement_lines(select)):
            try:
                chars = self.char_selector(select.items[0])
                if chars is not None:
                    selector, char_length = chars
                else:
                    selector = self.expr(select.items[0])
                dt = self.checked_dtype(selector)
                if not is_integer(dt):
                    raise self.error("'select case' is only supported on integer expressions",
                                     str(select.items[0]), UnsupportedFeatureError)
                if not (isinstance(selector, p.Variable) or is_constant(selector)):
                    tmp = self.new_temporary("selector", dt)
                    self.add_assignment(p.Variable(tmp), dt, selector, None, base_id=tmp)
                    selector = p.Variable(tmp)
            except FortranError as exc:
                self.record(exc)
                selector = None
        conds: list = []
        seen: list = []      # (lo, hi) of the values so far, for overlap checks
        default = None
        for k, (case_stmt, body) in enumerate(branches):
            with self.at(statement_lines(case_stmt)):
                try:
                    sel = case_stmt.items[0]
                    if sel.items[0] is None:
                        if default is not None:
                            raise self.error("two 'case default' in one 'select case'",
                                             "default")
                        default = k
                        conds.append(None)
                        continue
                    conds.append(self.case_condition(selector, sel.items[0], seen, char_length)
                                 if selector is not None else np.bool_(True))
                except FortranError as exc:
                    self.record(exc)
                    conds.append(np.bool_(False))
        start = len(self.instructions)
        others = [c for c in conds if c is not None]
        for k, (case_stmt, body) in enumerate(branches):
            cond = conds[k]
            if cond is None:
                guard = _conjunction([fold_constants(p.LogicalNot(c)) for c in others])
            else:
                guard = cond
            if guard is None:
                self.lower_block(body)
            else:
                self.with_predicate(fold_constants(guard), lambda b=body: self.lower_block(b))
        self.snapshot_conditions(start, [(c, statement_lines(b[0]))
                                         for c, b in zip(conds, branches, strict=True) if c is not None],
                                 chained=False)

    def case_condition(self, selector, ranges, seen, char_length):
        terms = []
        for item in ranges.items:
            if isinstance(item, F.Case_Value_Range):
                lo_node, hi_node = item.items
                lo = self.case_value(lo_node, char_length, True) if lo_node is not None \
                    else None
                hi = self.case_value(hi_node, char_length, True) if hi_node is not None \
                    else None
            else:
                lo = hi = self.case_value(item, char_length)
            self.check_case_overlap(lo, hi, seen, str(item))
            seen.append((lo, hi))
            if lo is not None and hi is not None and lo == hi:
                terms.append(p.Comparison(selector, "==", lo))
                continue
            parts = []
            if lo is not None:
                parts.append(p.Comparison(selector, ">=", lo))
            if hi is not None:
                parts.append(p.Comparison(selector, "<=", hi))
            if lo is not None and hi is not None and int(lo) > int(hi):
                terms.append(np.bool_(False))
                continue
            terms.append(_conjunction(parts))
        cond = terms[0] if len(terms) == 1 else p.LogicalOr(tuple(terms))
        return fold_constants(cond)

    def case_value(self, node, char_length, in_range=False):
        """A case value: an integer constant, or the code of a character
        constant where the selector is a character of *char_length*."""
        if char_length is not None:
            return self.char_case_value(node, char_length, in_range)
        v = self.constant(node)
        if not is_integer(v.dtype):
            raise self.error("case values must be integer constants", str(node))
        return v

    def check_case_overlap(self, lo, hi, seen, text):
        big = 2**63
        a_lo = -big if lo is None else int(lo)
        a_hi = big if hi is None else int(hi)
        if a_lo > a_hi:
            return
        for s_lo, s_hi in seen:
            b_lo = -big if s_lo is None else int(s_lo)
            b_hi = big if s_hi is None else int(s_hi)
            if b_lo <= b_hi and a_lo <= b_hi and b_lo <= a_hi:
                raise self.error(f"case value '{text}' overlaps an earlier case", text)

    def snapshot_conditions(self, start: int, conds, chained: bool = True) -> None:
        """If statements from index *start* on write a variable that one of the
        *conds* reads, evaluate each condition once into a logical temporary
        before the construct (Fortran evaluates conditions on entry).

        *chained*: each condition is only evaluated when the earlier ones are
        false (``else if``: the guards of later branches include the negated
        earlier conditions); a ``select case`` guards each branch by its own
        condition alone, so every snapshot must be evaluated."""
        body = self.instructions[start:]
        if not _condition_may_change(body, conds, self.current_inames()):
            return
        replacements: dict[Expr, str] = {}     # condition -> its snapshot
        snapshot_insns = []
        for k, (cond, lines) in enumerate(conds):
            if is_constant(cond) or cond in replacements:
                continue
            name = self.new_temporary("cond", BOOL)
            earlier = [p.LogicalNot(p.Variable(n)) for n in list(replacements.values())] \
                if chained else []
            preds = tuple(self.predicates) + tuple(earlier)
            snapshot_insns.append(Assignment(
                id=self.fresh_id(name), assignee=p.Variable(name), expression=cond,
                within_inames=self.current_inames(), tags=self.src.tags_at(lines[0]),
                predicates=preds, span=self.src.span(lines[0])))
            replacements[cond] = name
        from f2loopy.ir.expressions import Rewriter

        class _Replace(Rewriter):
            def rec(self, expr, *args, **kwargs):
                if not is_constant(expr) and expr in replacements:
                    return p.Variable(replacements[expr])
                return super().rec(expr, *args, **kwargs)

        rep = _Replace()

        def replace(expr):
            return p.Variable(replacements[expr]) if expr in replacements else rep(expr)

        # only the construct's own guard reads the snapshots: the predicates of
        # enclosing constructs come before it (an outer 'if (mask(1))' is not
        # the inner 'else if (mask(1))'), those of nested ones after it (they
        # are evaluated later, when the variables may have changed)
        own = len(self.predicates)
        guards = _snapshot_guards([c for c, _ in conds], replacements) if chained else {}

        def fix(preds):
            if len(preds) <= own:
                return preds
            guard = guards.get(preds[own])
            return preds[:own] + (replace(preds[own]) if guard is None else guard,) + \
                preds[own + 1:]

        new_body = [insn.copy(predicates=fix(insn.predicates)) for insn in body]
        self.instructions[start:] = snapshot_insns + new_body



def _condition_may_change(body, conds, outer_inames) -> bool:
    """Whether a guarded instruction of *body* could see a condition of
    *conds* changed by an earlier instruction of the construct (or by itself,
    in an earlier iteration of a loop inside the construct)."""
    reads = set()
    for c, _ in conds:
        reads |= variables_read(c)
    for k, insn in enumerate(body):
        if insn.assignee_name not in reads:
            continue
        if k < len(body) - 1 or set(insn.within_inames) - set(outer_inames):
            return True
    return False


def _snapshot_guards(conds, names) -> dict:
    """The guard of each branch of an ``if``/``else if`` chain on *conds*
    (as :meth:`ConditionalsMixin.stmt_If_Construct` builds it) -> the same
    guard on the snapshots *names* (condition -> temporary).  Built branch by
    branch, not by rewriting the guard's terms: a term ``not c1`` (an earlier
    branch not taken) may equal a later condition ``.not. c1``, whose
    snapshot is evaluated only when the earlier conditions are false."""
    out: dict = {}
    for k in range(len(conds) + 1):
        old, new = [], []
        for j, c in enumerate(conds[:k + 1]):
            term = c if j == k else p.LogicalNot(c)
            old.append(fold_constants(term))
            if c in names and not is_constant(c):
                snap = p.Variable(names[c])
                new.append(snap if j == k else p.LogicalNot(snap))
            else:
                new.append(old[-1])
        guard = _conjunction(old)
        if guard is not None and not is_constant(guard):
            out.setdefault(guard, _conjunction(new))
    return out


def _conjunction(preds):
    preds = [x for x in preds if not (is_constant(x) and bool(x))]
    if not preds:
        return None
    if any(is_constant(x) and not bool(x) for x in preds):
        return np.bool_(False)
    if len(preds) == 1:
        return preds[0]
    return p.LogicalAnd(tuple(preds))
