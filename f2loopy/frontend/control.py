"""Control flow that leaves a block early, in the lowering: ``do while``,
endless ``do`` loops, ``exit`` (also named and out of nested loops), forward
``goto``, computed ``goto`` and arithmetic ``if``, and ``do`` loops whose step is a run-time value.

All of it, ``cycle`` and ``return`` too, is built from logical flags
(:meth:`ControlFlowMixin.leave_region`): leaving sets a flag, the statements it
skips are guarded by its negation.  A loop such a flag leaves also stops
when the flag is set (:class:`~f2loopy.ir.control.LoopExit`), which a ``do
while`` loop needs to end at all: its domain is a trip counter ``0 <= k <=
WHILE_TRIP_LIMIT``, its condition evaluated at the start of each iteration
into the flag.

* ``exit``: a flag set before the loop, set by the statement; after the loop
  the loop variable holds the value it had at the ``exit``.
* ``goto 10`` to a label later in the same block or an enclosing one: a
  flag set at the start of the label's block; the statements up to the
  label are guarded.  Loops it leaves stop, as with ``exit``.
* ``goto 10`` back to a label earlier in the same block or an enclosing
  one (the loops of Fortran 77: Reference LAPACK's ``10 continue ... if
  (...) go to 10``): the statements from the label's to the last one of
  its block holding such a goto become an endless loop (a trip counter)
  whose iteration ends by leaving it, unless a ``goto 10`` started the
  next iteration, as ``cycle`` does.  A forward ``goto`` from before them
  to a label among them (reverse communication: LAPACK's dlacn2) sets a flag
  that guards the statements before that label until it is reached.
* ``do i = ix, iend, incx`` with a step known only at run time: a loop over
  the trip counter ``0 <= k < max(0, (iend - ix + incx) / incx)`` with ``i =
  ix + k*incx``, as Fortran defines it.

Such loops run sequentially in one work-item; a parallel tag on one is
refused (:func:`~f2loopy.ir.control.check_loop_exits`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.ir.types import BOOL, INT32, is_integer
from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.source import statement_lines
from f2loopy.ir.control import WHILE_TRIP_LIMIT, LoopExit

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_state import Region
    from f2loopy.frontend.lowering_host import LoweringHost as _Host
else:
    _Host = object


_EXITED = "it is left by 'exit'"
_GOTO = "a 'goto' leaves it"


def statement_label(node) -> int | None:
    """The numeric label of statement or construct *node*, or None."""
    item = getattr(node, "item", None)
    label = getattr(item, "label", None)
    if label is None:
        content = getattr(node, "content", None)
        if content:
            return statement_label(content[0])
        return None
    try:
        return int(label)
    except (TypeError, ValueError):
        return None


def goto_label(node) -> int | None:
    try:
        return int(str(node.items[0]))
    except (TypeError, ValueError, IndexError, AttributeError):
        return None


class BackwardGotoLoop:
    """Statements *body* of one block, from the one labelled *label* to the
    last one holding a ``goto label``: lowered as a loop (a pseudo node that
    the lowering's block walk sees as one statement)."""

    def __init__(self, label: int, body: list):
        self.label = label
        self.body = body
        #: label inside -> the region of a forward goto into it from before
        #: (set by ControlFlowMixin.open_goto_regions)
        self.entries: dict = {}
        self.content = body          # the label and the gotos are found inside
        self.item = getattr(body[0], "item", None)


def backward_goto_loops(nodes, children, skip=frozenset()) -> list:
    """*nodes* (one block) with each run of statements that a backward
    ``goto`` repeats grouped into a :class:`BackwardGotoLoop` (not for the
    labels in *skip*: the loops being lowered)."""
    out, k = [], 0
    while k < len(nodes):
        label = statement_label(nodes[k])
        last: int | None = None
        if label is not None and label not in skip:
            for j in range(len(nodes) - 1, k - 1, -1):
                if label in _gotos_in(nodes[j], children):
                    last = j
                    break
        if last is None or label is None:
            out.append(nodes[k])
            k += 1
        else:
            out.append(BackwardGotoLoop(label, list(nodes[k:last + 1])))
            k = last + 1
    return out


def _gotos_in(node, children):
    """Labels that ``goto`` statements inside *node* jump to."""
    out = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, F.Goto_Stmt):
            label = goto_label(n)
            if label is not None:
                out.add(label)
        elif isinstance(n, F.Computed_Goto_Stmt):
            out.update(int(str(label)) for label in n.items[0].items)
        elif isinstance(n, F.Arithmetic_If_Stmt):
            out.update(int(str(label)) for label in n.items[1:])
        stack.extend(children(n))
    return out


def statement_lines_of(node) -> tuple[int, int]:
    """First and last line of a :class:`BackwardGotoLoop`."""
    first = next((statement_lines(n) for n in node.body if statement_lines(n) != (0, 0)),
                 (0, 0))
    last = next((statement_lines(n) for n in reversed(node.body)
                 if statement_lines(n) != (0, 0)), first)
    return (first[0], last[1])


def is_goto_loop(scope) -> bool:
    """Whether loop *scope* is the statements a backward ``goto`` repeats
    (:class:`BackwardGotoLoop`), not a Fortran ``do``: an ``exit`` or
    ``cycle`` in them belongs to the ``do`` around them."""
    return scope.region is not None and scope.region.name is not None and \
        scope.region.name.startswith("#goto ")


class ControlFlowMixin(_Host):
    """Early exits (mixed into UnitLowering)."""

    # {{{ return, cycle and the flags they set

    def stmt_Return_Stmt(self, node, is_last):
        region = next((r for r in reversed(self.st.regions)
                       if r.kind == "procedure" and r.owner is self), None)
        if region is None or region.flag is None or node is region.trailing:
            return            # the trailing return of the procedure (see lower_body)
        # (the loop variables keep the values they have here: leave_region)
        self.leave_region(region)

    def stmt_Cycle_Stmt(self, node):
        name = node.items[1]
        name = str(name).lower() if name is not None else None
        region = None
        for scope in reversed(self.loops):
            if scope.owner is not self:
                break
            if scope.region is None or is_goto_loop(scope):
                continue          # an array-syntax loop; statements a goto repeats
            if name is None or scope.region.name == name:
                region = scope.region
                break
        if region is None:
            if name is None:
                raise self.error("'cycle' outside a loop", "cycle")
            raise self.error(f"'cycle {name}': no enclosing loop is called '{name}'", name)
        if region.flag is None:
            raise self.error("internal error: no flag for 'cycle'", "cycle")
        self.leave_region(region)

    def leave_region(self, region, sequential: str | None = None):
        """Set *region*'s flag; guard what the flag skips.  The loops it
        leaves stop when it is set (and must run sequentially, for the
        reason *sequential*, if that is given).

        Every way out of a loop comes here (``exit``, ``cycle`` of an
        enclosing loop, ``return``, forward, backward and computed ``goto``,
        arithmetic ``if``): the variables of the loops it leaves keep the
        values they have here, as in Fortran (a LINPACK search's ``goto``
        out of its loop, a function's result that is its loop variable:
        LAPACK's iladlc); the value a loop gives its variable when it ends
        normally is assigned only if none of its flags is set
        (:meth:`~f2loopy.frontend.loops.LoopsMixin.lower_do`).  Unread ones
        are pruned."""
        inner = self.loops[region.depth:]
        for scope in inner:
            if scope.owner is self and scope.var is not None:
                sym = self.symbol(scope.var)
                self.add_assignment(self.loop_scalar(sym), sym.dtype, scope.value, scope.var)
        self.add_raw_assignment(region.flag, np.bool_(True))
        region.count += 1
        if inner and region.flag not in inner[0].skip_flags:
            # later iterations of the loops in between run nothing at all: the
            # whole body of the outermost of them is guarded when it is done
            # (also what comes after this statement in it, in other branches)
            inner[0].skip_flags.append(region.flag)
        for scope in inner:
            self.add_loop_exit(scope, region.flag, sequential)

    def guard_loop_body(self, scope) -> None:
        """Guard every instruction of loop *scope*'s body by the flags that a
        ``cycle`` or ``return`` inside it sets for an enclosing region."""
        for flag in scope.skip_flags:
            guard = p.LogicalNot(p.Variable(flag))
            for k in range(scope.body_start, len(self.instructions)):
                insn = self.instructions[k]
                if guard not in insn.predicates and insn.assignee_name != flag and \
                        insn.id not in self.st.unguarded:
                    self.instructions[k] = insn.copy(predicates=insn.predicates + (guard,))

    # }}}

    # {{{ loops ended by a flag

    def open_trip_loop(self, base: str, *, reason: str):
        """A loop over a trip counter ``0 <= k <= WHILE_TRIP_LIMIT`` (for
        ``do while`` and endless ``do``): it ends by its flags only."""
        import islpy as isl

        from f2loopy.frontend.lowering_state import LoopScope
        iname = self.fresh_name(base)
        self.claimed_inames.add(iname.lower())
        self.domains.append(isl.Set(f"{{ [{iname}] : 0 <= {iname} <= {WHILE_TRIP_LIMIT} }}"))
        scope = LoopScope(None, iname, p.Variable(iname), self)
        scope.sequential = reason
        scope.span = self.statement_span()
        self.loops.append(scope)
        return scope

    def new_exit_flag(self, base: str, *, ends_loop: bool) -> str:
        """A logical temporary, false here, that a loop's exit will set.

        With *ends_loop* (a loop that only its flags end) it is assigned
        whatever the conditions the loop is under, true where they do not
        hold: the loop runs whether they hold or not (its instructions are
        guarded) and must then stop at once."""
        flag = self.new_temporary(base, BOOL)
        if ends_loop and self.predicates:
            conds = tuple(self.predicates)
            value = p.LogicalNot(conds[0] if len(conds) == 1 else p.LogicalAnd(conds))
            insn = self.add_raw_assignment(flag, value, predicates=())
            self.st.unguarded.add(insn.id)
        else:
            self.add_raw_assignment(flag, np.bool_(False))
        return flag

    def while_condition(self, scope, cond_node, flag: str):
        """At the start of each iteration of ``do while`` loop *scope*: the
        flag ends the loop when the condition is false."""
        cond = self.condition(cond_node)
        guard = p.LogicalNot(p.Variable(flag))
        self.add_raw_assignment(flag, p.LogicalNot(cond),
                                predicates=tuple(self.predicates) + (guard,))
        self.add_loop_exit(scope, flag)
        scope.skip_flags.append(flag)

    @staticmethod
    def add_loop_exit(scope, flag: str, sequential: str | None = None):
        if flag not in scope.exit_flags:
            scope.exit_flags.append(flag)
        if sequential is not None and scope.sequential is None:
            scope.sequential = sequential

    def record_loop_exit(self, scope) -> None:
        """Keep what ends loop *scope* early for the kernel (when it closes)."""
        if scope.exit_flags or scope.sequential:
            self.st.loop_exits[scope.iname] = LoopExit(
                tuple(scope.exit_flags), scope.sequential, scope.span)

    # }}}

    # {{{ run-time steps

    def open_runtime_step_loop(self, sym, lo, hi, step, step_text: str):
        """``do i = lo, hi, step`` with *step* a run-time value: a loop over
        the trip counter (see the module docstring)."""
        from f2loopy.frontend.lowering_state import LoopScope
        from f2loopy.ir.folding import normalize_integer
        if not is_integer(self.checked_dtype(step)):
            raise self.error("loop step must be an integer", step_text)
        for bound in (lo, hi):
            if not is_integer(self.checked_dtype(bound)):
                raise self.error("loop bounds must be integers", None,
                                 UnsupportedFeatureError)
        iname = self.claim_iname(f"{sym.name}_t")
        start = self.entry_value(iname, "start", lo)
        stride = self.entry_value(iname, "step", step)
        span = normalize_integer(p.Sum((hi, p.Product((-1, start)), stride)))
        # Fortran's trip count; a zero step (an error in Fortran) runs nothing
        trips_expr = p.If(p.Comparison(stride, "==", 0), 0,
                          p.Call(p.Variable("max"), (0, p.Quotient(span, stride))))
        trips = self.bound_temporary(iname, "trips", trips_expr,
                                     0 if self.predicates else None)
        self.domains.append(self.make_domain(iname, 0, p.Sum((trips, -1)), 1))
        counter = p.Variable(iname)
        if np.dtype(sym.dtype).itemsize > 4:
            # an integer(8) variable computes in 64 bits, though its trip
            # counter is a 32-bit iname (as in open_loop)
            counter = p.Call(p.Variable("int64"), (counter,))
            trips = p.Call(p.Variable("int64"), (trips,))
        value = normalize_integer(p.Sum((start, p.Product((stride, counter)))))
        final = normalize_integer(p.Sum((start, p.Product((stride, trips)))))
        scope = LoopScope(sym.name.lower(), iname, value, self, final=final)
        scope.sequential = f"its step '{step_text}' is only known at run time"
        scope.span = self.statement_span()
        self.loops.append(scope)
        return scope

    def entry_value(self, iname: str, which: str, expr):
        """*expr* as the loop sees it on entry: itself if it is a constant or
        an invariant scalar argument, else a temporary assigned here."""
        from f2loopy.ir.expressions import variables_read
        names = variables_read(expr)
        if all(self.is_invariant_param(n) for n in names):
            for n in names:
                self.root.used.add(n.lower())
            return expr
        tmp = self.new_temporary(f"{iname}_{which}", INT32)
        self.add_assignment(p.Variable(tmp), INT32, expr, None, base_id=tmp)
        return p.Variable(tmp)

    # }}}

    # {{{ exit

    def stmt_Exit_Stmt(self, node):
        name = node.items[1]
        name = str(name).lower() if name is not None else None
        target = None
        for k in range(len(self.loops) - 1, -1, -1):
            scope = self.loops[k]
            if scope.owner is not self:
                break
            if scope.region is None or is_goto_loop(scope):
                continue          # an array-syntax loop; statements a goto repeats
            if name is None or scope.region.name == name:
                target = k
                break
        if target is None:
            if name is None:
                raise self.error("'exit' outside a loop", "exit")
            raise self.error(f"'exit {name}': no enclosing loop is called '{name}' (leaving "
                             "other constructs is not supported)", name,
                             UnsupportedFeatureError)
        scope = self.loops[target]
        while scope.exit_region is None and target > 0 and \
                self.loops[target - 1].region is scope.region:
            target -= 1           # do concurrent headers share one region
            scope = self.loops[target]
        if scope.concurrent:
            raise self.error("'exit' cannot leave a 'do concurrent' loop", "exit")
        region = scope.exit_region
        if region is None:
            raise self.error("internal error: no flag for 'exit'", "exit")
        # (the loop variables keep the values they have now: leave_region)
        self.leave_region(region, sequential=_EXITED)

    # }}}

    # {{{ goto

    @contextmanager
    def goto_regions(self, nodes, children) -> Iterator[dict[int, Region]]:
        """The regions of :meth:`open_goto_regions` (label -> region), open
        until their label is reached (:meth:`arrive_at_label`) or the block
        ends."""
        regions = self.open_goto_regions(nodes, children)
        try:
            yield regions
        finally:
            self.close_goto_regions(regions)

    def open_goto_regions(self, nodes, children) -> dict:
        """Regions for the labels of *nodes* (one block) that a ``goto``
        earlier in the block jumps to: each gets a flag, false here."""
        out = {}
        wanted: set = set()
        for node in nodes:
            label = statement_label(node)
            if label is not None and label in wanted and label not in out:
                out[label] = self._goto_region(label)
            if isinstance(node, BackwardGotoLoop):
                # a forward goto to a label of the statements a backward goto
                # repeats (LAPACK's reverse communication: dlacn2's 'go to (20,
                # 40, 70, 110, 140) isave(1)' into its 'go to 50' loop)
                for inner in node.body:
                    il = statement_label(inner)
                    if il is not None and il != node.label and il in wanted and \
                            il not in out:
                        out[il] = node.entries[il] = self._goto_region(il)
            wanted |= _gotos_in(node, children)
        return out

    def _goto_region(self, label: int) -> Region:
        from f2loopy.frontend.lowering_state import Region
        flag = self.new_temporary(f"goto_{label}", BOOL)
        # set on entering the block, also where a goto jumped into it (not
        # under the guard that skips its statements up to the label)
        entering = {guard for _, guard in self.st.entry_guards.values()}
        self.add_raw_assignment(flag, np.bool_(False), predicates=[
            q for q in self.predicates if q not in entering])
        region = Region("goto", self, label, len(self.loops), len(self.instructions),
                        flag=flag)
        self.st.regions.append(region)
        return region

    def arrive_at_label(self, node, regions: dict, pushed: list) -> None:
        """At the statement of a label that ``goto`` jumps to: the
        statements from here on run again."""
        label = statement_label(node)
        entry = self.st.entry_guards.pop((self, label), None) if label is not None else None
        if entry is not None:
            # the label inside the repeated statements a goto jumped to: what
            # follows runs, and the next repetition runs them all
            region, guard = entry
            if guard in self.predicates:
                self.predicates.remove(guard)
            self.add_raw_assignment(region.flag, np.bool_(False))
        arriving = [regions.pop(label, None) if label is not None else None]
        if isinstance(node, BackwardGotoLoop):
            # the statements a goto jumps into run (up to the label: guarded
            # inside, see stmt_BackwardGotoLoop)
            arriving += [regions.pop(il, None) for il in node.entries]
        for region in arriving:
            if region is None:
                continue
            if region in self.st.regions:
                self.st.regions.remove(region)
            guard = p.LogicalNot(p.Variable(region.flag))
            if guard in pushed:
                pushed.remove(guard)
                self.predicates.remove(guard)

    def close_goto_regions(self, regions: dict) -> None:
        for region in regions.values():
            if region in self.st.regions:
                self.st.regions.remove(region)

    def stmt_BackwardGotoLoop(self, node):
        """The statements a backward goto repeats, as an endless loop that
        each iteration leaves at its end unless a ``goto`` cycled it."""
        lines = statement_lines_of(node)
        with self.at(lines):
            exit_flag = self.new_exit_flag("ended", ends_loop=True)
            exit_depth = len(self.loops)
            with self.loop_nest():
                scope = self.open_trip_loop(f"goto{node.label}_k",
                                            reason=f"a 'goto {node.label}' repeats it")
                scope.span = self.src.span(lines[0])
                region = self.open_body_regions([scope], f"#goto {node.label}", exit_flag,
                                                exit_depth, f"goto_{node.label}_again")
                with self.region(region):
                    exit_region = scope.exit_region
                    entries = node.entries
                    for il, entry in entries.items():
                        # jumped into: the statements before the label do not run
                        guard = p.LogicalNot(p.Variable(entry.flag))
                        self.predicates.append(guard)
                        self.st.entry_guards[(self, il)] = (entry, guard)
                    try:
                        self.lower_block(node.body, skip_labels={node.label})
                    finally:
                        for il in entries:
                            left = self.st.entry_guards.pop((self, il), None)
                            if left is not None and left[1] in self.predicates:
                                self.predicates.remove(left[1])
                    # the end of the statements: leave, unless a goto starts them
                    # again
                    with self.guarded(p.LogicalNot(p.Variable(region.flag))):
                        self.leave_region(exit_region)
            self.guard_loop_body(scope)
            self.record_loop_exit(scope)

    def stmt_Goto_Stmt(self, node):
        self.jump(goto_label(node), self.goto_keyword())

    def stmt_Computed_Goto_Stmt(self, node):
        """``go to (10, 20, 30), k``: to the k-th label, or on to the next
        statement when k is out of range (the conditional jumps of a forward
        or backward ``goto`` each)."""
        keyword = self.goto_keyword()
        labels = [int(str(label)) for label in node.items[0].items]
        value = self.expr(node.items[1])
        dtype = self.checked_dtype(value)
        if not is_integer(dtype):
            raise self.error(f"the index of a computed '{keyword}' must be an integer",
                             str(node.items[1]))
        # in the index's own kind: an integer(8) 2**32 + 1 is out of range
        # (on to the next statement), not 1 as its low 32 bits are
        index = self.new_temporary("goto_index", dtype)
        self.add_raw_assignment(index, value)
        for k, label in enumerate(labels, 1):
            with self.guarded(p.Comparison(p.Variable(index), "==", k)):
                self.jump(label, keyword)

    def stmt_Arithmetic_If_Stmt(self, node):
        """``if (e) 10, 20, 30``: to 10, 20 or 30 as e is negative, zero or
        positive (Fortran 66's three-way branch; a NaN goes to 30)."""
        value = self.expr(node.items[0])
        dtype = self.checked_dtype(value)
        if dtype.kind not in "iuf":
            raise self.error("the expression of an arithmetic 'if' must be an integer or "
                             "real", str(node.items[0]))
        sign = self.new_temporary("if_value", dtype)
        self.add_raw_assignment(sign, value)
        below = p.Comparison(p.Variable(sign), "<", dtype.type(0))
        zero = p.Comparison(p.Variable(sign), "==", dtype.type(0))
        # a real NaN is neither: the third label, as gfortran (and ifx) go
        # there, not on to the next statement
        above = p.Comparison(p.Variable(sign), ">", dtype.type(0)) if dtype.kind in "iu" \
            else p.LogicalAnd((p.LogicalNot(below), p.LogicalNot(zero)))
        for label, cond in zip(node.items[1:], (below, zero, above), strict=True):
            with self.guarded(cond):
                self.jump(int(str(label)), "if")

    def jump(self, label, keyword: str) -> None:
        """``goto label`` from here: on to a later label, or back to the
        start of the statements it repeats."""
        again = next((r for r in reversed(self.st.regions)
                      if r.kind == "loop" and r.owner is self and r.name == f"#goto {label}"),
                     None)
        if again is not None:
            self.leave_region(again, sequential=f"a '{keyword} {label}' leaves it")
            return
        region = next((r for r in reversed(self.st.regions)
                       if r.kind == "goto" and r.owner is self and r.name == label), None)
        if region is None:
            if label in self.labels_seen:
                raise self.error(f"'{keyword} {label}' jumps backwards: only a forward goto "
                                 "to a later statement of the same or an enclosing block, or "
                                 "back to the start of statements it then repeats, is "
                                 "supported (write the loop as 'do' or 'do while')", keyword,
                                 UnsupportedFeatureError)
            raise self.error(f"'{keyword} {label}' does not jump to a later statement of the "
                             "same or an enclosing block (only such a forward goto is "
                             "supported)", keyword, UnsupportedFeatureError)
        self.leave_region(region, sequential=_GOTO)

    def goto_keyword(self) -> str:
        import re
        first, last = self.lines
        for ln in range(first, last + 1):
            text = self.src.lines[ln - 1] if 0 < ln <= len(self.src.lines) else ""
            m = re.search(r"\bgo\s*to\b", text, re.IGNORECASE)
            if m:
                return m.group(0)
        return "goto"


    # }}}
