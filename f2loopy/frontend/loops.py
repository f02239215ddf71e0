"""``do`` loops in the lowering: loop domains, bounds, labelled and
``concurrent`` loops, counters for array syntax.

A loop becomes a domain over a fresh iname.  Bounds that are affine in
invariant scalar arguments and enclosing inames are part of the domain;
others are stored in temporaries first.  A loop with a negative step runs
over a zero-based trip counter (``do i = n, 1, -2`` is ``i_t`` in ``{ [i_t] :
i_t >= 0 and n - 2*i_t >= 1 }`` with ``i = n - 2*i_t``), so the iterations keep
their order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import islpy as isl
import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.ir.types import BOOL, INT32, is_integer
from f2loopy.diagnostics import FortranError, UnsupportedFeatureError
from f2loopy.frontend.declarations import statement_lines
from f2loopy.frontend.lowering_state import LoopScope, Region
from f2loopy.ir.expressions import variables_read
from f2loopy.ir.folding import NotConstant, evaluate_constant, normalize_integer
from f2loopy.ir.isl_tools import NonAffineError, make_space, pwaff_from_expr

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost as _Host
else:
    _Host = object


_DO_CONSTRUCTS = (F.Block_Nonlabel_Do_Construct, F.Block_Label_Do_Construct)


class LoopsMixin(_Host):
    """``do`` loops (mixed into UnitLowering)."""

    def _after_leading(self, content, head_types) -> list:
        """*content* from its head statement on.  fparser attaches lines that
        precede a nested construct (an 'include') to that construct, before
        its head: they are lowered first, in order, as statements."""
        content = list(content)
        while content and not isinstance(content[0], head_types):
            self.lower_statement(content.pop(0))
        return content

    def stmt_Block_Nonlabel_Do_Construct(self, node):
        content = self._after_leading(node.content, F.Nonlabel_Do_Stmt)
        if content:
            self.lower_do(content[0], content[1:-1])

    def stmt_Block_Label_Do_Construct(self, node):
        content = self._after_leading(node.content, F.Label_Do_Stmt)
        if not content:
            return
        # fparser flattens loops that share a terminal label into one construct
        heads = []
        while content and isinstance(content[0], F.Label_Do_Stmt):
            heads.append(content.pop(0))
        body = content   # the terminal labelled statement is part of the body
        self._lower_label_do(heads, body)

    # a labelled DO whose terminal statement is an action (``do 100 i = 1, n`` /
    # ``100 a(i) = a(i)**2``, F77): fparser gives it the same shape, heads then
    # the body with the terminal statement last, which runs in every iteration
    stmt_Action_Term_Do_Construct = stmt_Block_Label_Do_Construct

    def _lower_label_do(self, heads, body):
        if len(heads) == 1:
            self.lower_do(heads[0], body)
        else:
            self.lower_do(heads[0], [_NestedLabelDo(heads[1:], body)])

    def stmt__NestedLabelDo(self, node):
        self._lower_label_do(node.heads, node.body)

    def lower_do(self, do_stmt, body):
        construct_name = getattr(do_stmt.item, "name", None) if hasattr(do_stmt, "item") \
            else None
        construct_name = construct_name.lower() if construct_name else None
        opened: list[LoopScope] = []
        mask = concurrent = exit_flag = None
        exit_depth = 0
        with self.loop_nest():
            with self.at(statement_lines(do_stmt)):
                try:
                    control = do_stmt.items[-1] if isinstance(do_stmt, F.Label_Do_Stmt) \
                        else do_stmt.items[1]
                    cond, var_bounds, _, concurrent = control.items if control is not None \
                        else (None, None, None, None)
                    if control is None or cond is not None or \
                            _leaves_loop(body, construct_name, F.Exit_Stmt):
                        trip_loop = control is None or cond is not None
                        exit_flag = self.new_exit_flag("ended" if trip_loop else "exited",
                                                       ends_loop=trip_loop)
                        exit_depth = len(self.loops)
                    headers, mask_node = [], None
                    if control is None:
                        opened.append(self.open_trip_loop(
                            "loop_k", reason="it is a 'do' loop without a control"))
                    elif cond is not None:
                        opened.append(self.open_trip_loop(
                            "while_k", reason="it is a 'do while' loop"))
                        assert exit_flag is not None    # a trip loop ends by its flag
                        self.while_condition(opened[-1], cond, exit_flag)
                    elif concurrent is not None:
                        headers, mask_node = self.concurrent_headers(concurrent)
                    else:
                        assert var_bounds is not None   # fparser: a counted loop's control
                        var_node, bound_nodes = var_bounds
                        headers = [(str(var_node), *bound_nodes,
                                    *([None] * (3 - len(bound_nodes))))]
                    if control is not None and cond is None:
                        for var, lo_node, hi_node, step_node in headers:
                            opened.append(self.open_loop(var, lo_node, hi_node, step_node))
                            opened[-1].concurrent = concurrent is not None
                    if mask_node is not None:
                        mask = self.condition(mask_node)
                except FortranError as exc:
                    self.record(exc)
                    # collecting mode: still check the body, in a loop of its own
                    opened.append(self.placeholder_loop(do_stmt))
                for scope in opened:
                    if scope.span is None:
                        scope.span = self.src.span_in_lines(*self.lines, "do")
            region = self.open_body_regions(
                opened, construct_name, exit_flag, exit_depth,
                "cycled" if _cycles_loop(body, construct_name) else None)
            with self.region(region):
                if mask is None:
                    self.lower_block(body)
                else:
                    self.with_predicate(mask, lambda: self.lower_block(body))
        if opened:
            self.guard_loop_body(opened[0])
        for scope in opened:
            self.record_loop_exit(scope)
        if concurrent is None:
            preds = None
            # after any way out of the loop but its end (exit, cycle of an
            # enclosing loop, return, goto) the variables keep the values
            # they had there (ControlFlowMixin.leave_region)
            flags = [f for f in opened[0].exit_flags if f != exit_flag] \
                if opened else []
            if exit_flag is not None:
                flags.append(exit_flag)
            if flags:
                preds = tuple(self.predicates) + tuple(p.LogicalNot(p.Variable(f))
                                                       for f in flags)
            for scope in opened:
                if scope.var is not None and scope.final is not None:
                    sym = self.symbol(scope.var)
                    self.add_assignment(self.loop_scalar(sym), sym.dtype, scope.final,
                                        scope.var, predicates=preds)

    def open_body_regions(self, opened, name, exit_flag, exit_depth: int,
                          cycled: str | None) -> Region:
        """Make the regions of the body of loop *opened* (its scopes,
        outermost first; the construct *name*): the one ``cycle`` leaves,
        with a flag named after *cycled* reset at the start of each
        iteration if given, and with *exit_flag* (set before the loops, at
        *exit_depth*) the one ``exit`` leaves, which stops the loop.  Returns
        the first, which the caller opens (``with self.region(...)``)."""
        region = Region("loop", self, name, len(self.loops), len(self.instructions))
        for scope in opened:
            scope.body_start = len(self.instructions)
        opened[-1].region = region
        if exit_flag is not None:
            opened[0].exit_region = Region("exit", self, name, exit_depth,
                                           len(self.instructions), flag=exit_flag)
            self.add_loop_exit(opened[0], exit_flag)
            if exit_flag not in opened[0].skip_flags:
                opened[0].skip_flags.append(exit_flag)
        if cycled is not None:
            region.flag = self.new_temporary(cycled, BOOL)
            self.add_raw_assignment(region.flag, np.bool_(False))
            region.body_start = len(self.instructions)
        return region

    def placeholder_loop(self, do_stmt) -> LoopScope:
        """A loop scope with no domain, so that the body of a loop whose header
        failed can still be checked (collecting mode only)."""
        var = None
        try:
            control = do_stmt.items[-1] if isinstance(do_stmt, F.Label_Do_Stmt) \
                else do_stmt.items[1]
            if control is not None and control.items[1] is not None:
                var = str(control.items[1][0]).lower()
        except (AttributeError, IndexError, TypeError):
            var = None
        iname = self.fresh_name("unsupported_loop")
        scope = LoopScope(var, iname, p.Variable(iname), self)
        self.loops.append(scope)
        return scope

    def concurrent_headers(self, header):
        spec_list, mask = header.items[0], None
        if isinstance(header, F.Forall_Header):
            spec_list = header.items[0]
            mask = header.items[1]
        headers = []
        for spec in spec_list.items:
            var, lo, hi, step = spec.items
            headers.append((str(var), lo, hi, step))
        return headers, mask

    def open_loop(self, var: str, lo_node, hi_node, step_node) -> LoopScope:
        sym = self.symbol(var)
        low = sym.name.lower()
        assert sym.dtype is not None        # symbol() types every symbol or raises
        if sym.is_array or sym.is_parameter or not is_integer(sym.dtype) or \
                low in self.bindings:
            what = "a dummy argument" if low in self.bindings else \
                "an integer scalar variable"
            raise self.error(f"loop variable '{var}' must be {what}"
                             if low not in self.bindings else
                             f"loop variable '{var}' must not be a dummy argument of an "
                             "inlined procedure", var)
        if self.loop_for(var) is not None:
            raise self.error(f"loop variable '{var}' is already the variable of an "
                             "enclosing loop", var)
        lo, hi = self.expr(lo_node), self.expr(hi_node)
        step = 1
        if step_node is not None:
            step_expr = self.expr(step_node)
            try:
                step = int(evaluate_constant(step_expr))
            except NotConstant:
                return self.open_runtime_step_loop(sym, lo, hi, step_expr, str(step_node))
            if step == 0:
                raise self.error("loop step is zero", str(step_node), last_occurrence=True)
        for bound, node in ((lo, lo_node), (hi, hi_node)):
            if not is_integer(self.checked_dtype(bound)):
                raise self.error("loop bounds must be integers", str(node),
                                 UnsupportedFeatureError)
        if step > 0:
            iname = self.claim_iname(sym.name)
            lo_p, hi_p = self.loop_bounds(iname, ("lbound", "ubound"), lo, hi, 1)
            self.domains.append(self.make_domain(iname, lo_p, hi_p, step))
            value = p.Variable(iname)
            first, last = lo_p, hi_p
        else:
            # zero-based trip counter t: the variable is start + step*t
            iname = self.claim_iname(f"{sym.name}_t")
            start, end = self.loop_bounds(iname, ("start", "end"), lo, hi, -1)
            value = normalize_integer(p.Sum((start, p.Product((step, p.Variable(iname))))))
            names = sorted(variables_read(start) | variables_read(end))
            space = make_space([iname], names)
            t = pwaff_from_expr(p.Variable(iname), space)
            dom = t.ge_set(t.sub(t)) & pwaff_from_expr(value, space).ge_set(
                pwaff_from_expr(end, space))
            self.domains.append(dom.coalesce())
            first, last = start, end
        # Fortran: the trip count is max(0, (last - first + step) / step); after
        # the loop the variable holds first + trips * step
        try:
            span = normalize_integer(p.Sum((last, p.Product((-1, first)), step)))
            trips = span if step == 1 else p.FloorDiv(span, step)
            try:
                trips = max(0, int(evaluate_constant(trips)))
            except NotConstant:
                trips = p.Call(p.Variable("max"), (0, trips))
            final = normalize_integer(p.Sum((first, p.Product((step, trips)))))
        except (OverflowError, ArithmeticError):
            final = None       # past the integer's range: Fortran leaves it undefined
        if np.dtype(sym.dtype).itemsize > 4:
            # an integer(8) variable: its arithmetic is 64-bit ('t*t*t*1000'),
            # though the loop's index is a 32-bit iname (isl and the index
            # analyses see through the conversion)
            value = p.Call(p.Variable("int64"), (value,))
        scope = LoopScope(low, iname, value, self, final=final)
        self.loops.append(scope)
        return scope

    def claim_iname(self, base: str) -> str:
        if self.parent is None and base.lower() not in self.claimed_inames and \
                self.symtab.is_local(base) and base.lower() not in self.dummies:
            iname = base
            self.taken_names.add(base.lower())
        else:
            iname = self.fresh_name(base)
        self.claimed_inames.add(iname.lower())
        return iname

    def loop_bounds(self, iname: str, which, lo, hi, direction: int):
        """The first and last values *lo*, *hi* of loop *iname* (which runs
        up for *direction* 1, down for -1) as they enter its domain: each
        itself if it can (affine in invariant scalar arguments and enclosing
        inames), else a temporary assigned here.

        The domain does not know the conditions the loop is under (its body
        is predicated instead): where there are some, such temporaries first
        get values for which the loop is empty, so that it does not run, with
        bounds nobody computed, when the condition is false."""
        lo_p, hi_p = self.domain_bound(lo, iname), self.domain_bound(hi, iname)
        guarded = bool(self.predicates)
        if lo_p is None:
            empty = None
            if guarded:
                empty = 0 if hi_p is None else normalize_integer(p.Sum((hi_p, direction)))
            lo_p = self.bound_temporary(iname, which[0], lo, empty)
        if hi_p is None:
            empty = normalize_integer(p.Sum((lo_p, -direction))) if guarded else None
            hi_p = self.bound_temporary(iname, which[1], hi, empty)
        return lo_p, hi_p

    def domain_bound(self, expr, iname: str):
        """*expr* if it can be part of the domain of *iname*, else None."""
        names = variables_read(expr)
        outer = self.current_inames()
        if all(n in outer or self.is_invariant_param(n) for n in names):
            try:
                self.to_pwaff(expr, iname)
            except NonAffineError:
                return None
            for n in names:
                if n not in outer:
                    self.root.used.add(n.lower())
            return expr
        return None

    def bound_temporary(self, iname: str, which: str, expr, empty=None):
        """A temporary holding loop bound *expr*; given the value *empty* first
        (outside the current conditions) unless that is None."""
        tmp = self.new_temporary(f"{iname}_{which}", INT32)
        if empty is not None:
            self.add_assignment(p.Variable(tmp), INT32, empty, None, base_id=tmp,
                                predicates=())
        self.add_assignment(p.Variable(tmp), INT32, expr, None, base_id=tmp)
        return p.Variable(tmp)

    def to_pwaff(self, expr, iname):
        names = sorted(variables_read(expr))
        space = make_space([iname], names)
        return pwaff_from_expr(expr, space)

    def make_domain(self, iname: str, lo, hi, step: int) -> isl.Set:
        names = sorted(variables_read(lo) | variables_read(hi))
        space = make_space([iname], names)
        i = isl.PwAff.var_on_domain(isl.LocalSpace.from_space(space), isl.dim_type.set, 0)
        lo_a, hi_a = pwaff_from_expr(lo, space), pwaff_from_expr(hi, space)
        dom = i.ge_set(lo_a) & i.le_set(hi_a)
        if step != 1:
            # i = lo + step*t for some t >= 0
            zero = i.sub(i)
            dom = dom & (i - lo_a).mod_val(isl.Val.int_from_si(space.get_ctx(), step)) \
                .eq_set(zero)
        return dom.coalesce()

    def open_counter_loop(self, base: str, lo, hi, step: int = 1) -> LoopScope:
        """A loop with no Fortran variable over ``lo, lo+step, ... <= hi`` (for
        array syntax): step 1 runs the iname over the values, other steps over
        a zero-based counter.  Returns the scope; its value is the index."""
        if step == 1:
            iname = self.claim_iname(base)
            lo_p, hi_p = self.loop_bounds(iname, ("lbound", "ubound"), lo, hi, 1)
            self.domains.append(self.make_domain(iname, lo_p, hi_p, 1))
            value = p.Variable(iname)
        else:
            iname = self.claim_iname(base)
            start, end = self.loop_bounds(iname, ("start", "end"), lo, hi,
                                          1 if step > 0 else -1)
            value = normalize_integer(p.Sum((start, p.Product((step, p.Variable(iname))))))
            names = sorted(variables_read(start) | variables_read(end))
            space = make_space([iname], names)
            t = pwaff_from_expr(p.Variable(iname), space)
            v, e = pwaff_from_expr(value, space), pwaff_from_expr(end, space)
            dom = t.ge_set(t.sub(t)) & (v.le_set(e) if step > 0 else v.ge_set(e))
            self.domains.append(dom.coalesce())
        scope = LoopScope(None, iname, value, self)
        scope.body_start = len(self.instructions)
        self.loops.append(scope)
        return scope



@dataclass
class _NestedLabelDo:
    """Inner loops of a group of labelled DOs sharing one terminal statement."""

    heads: list
    body: list
    content = ()

    def __post_init__(self):
        self.item = getattr(self.heads[0], "item", None)


def _children(node):
    if isinstance(node, _NestedLabelDo):
        return list(node.heads) + list(node.body)
    content = getattr(node, "content", None)
    if content:
        return list(content)
    return [c for c in (getattr(node, "items", None) or ())
            if hasattr(c, "items") or hasattr(c, "content")]


def _cycles_loop(body, construct_name) -> bool:
    """Whether a ``cycle`` in *body* leaves the loop whose body it is."""
    return _leaves_loop(body, construct_name, F.Cycle_Stmt)


def _leaves_loop(body, construct_name, kind) -> bool:
    """Whether a statement of *kind* (``cycle``, ``exit``) in *body* applies
    to the loop whose body it is."""
    def visit(node, nested):
        if isinstance(node, kind):
            target = node.items[1]
            if target is None:
                return not nested
            return construct_name is not None and str(target).lower() == construct_name
        inner = nested or isinstance(node, (*_DO_CONSTRUCTS, _NestedLabelDo))
        return any(visit(ch, inner) for ch in _children(node))
    return any(visit(n, False) for n in body if n is not None)


def _has_early_return(nodes) -> bool:
    """Whether a ``return`` other than a trailing one occurs in *nodes*."""
    def visit(node):
        if isinstance(node, F.Return_Stmt):
            return True
        return any(visit(ch) for ch in _children(node))
    nodes = [n for n in nodes if n is not None]
    if nodes and isinstance(nodes[-1], F.Return_Stmt):
        nodes = nodes[:-1]
    return any(visit(n) for n in nodes)
