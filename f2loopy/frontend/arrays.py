"""Arrays in the lowering: views, array syntax and array reductions.

An :class:`ArrayView` is what a Fortran array name refers to: an IR array
(argument, temporary or constant table) and a map from the Fortran
subscripts of the name to the IR subscripts (the identity, except for dummy
arguments of inlined procedures, which view part of the caller's array).

Array syntax (``a(:, j) = b(:, j) * 2``, ``a = 0``, ``a(2:n-1) = b(1:n-2)``)
becomes one loop per section axis with fresh inames, the last axis
outermost (Fortran order).  The right-hand side is converted with
placeholders for the zero-based positions along the section axes, which are
substituted once the iteration order is chosen: if the right-hand side reads
the assigned array at other elements, isl decides whether ascending or
descending order keeps Fortran's "evaluate everything, then assign" meaning;
if neither does, the statement is rejected.

The array intrinsics (reductions, ``matmul``, ``transpose``, inquiry) are in
:mod:`f2loopy.frontend.array_intrinsics`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.frontend.allocatables import is_module_struct_array
from f2loopy.frontend.bindings import ArrayView, array_binding
from f2loopy.frontend.lowering_state import ElementalContext, triplet_extent
from f2loopy.ir.types import is_integer
from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.ir.expressions import accesses, index_tuple, make_subscript, substitute, variables_read
from f2loopy.ir.folding import NotConstant, evaluate_constant, normalize_integer
from f2loopy.ir.isl_tools import NonAffineError, make_space, set_from_condition

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost as _Host
else:
    _Host = object


def _triplet_count(lo, hi, st):
    """The number of elements of section ``lo:hi:st`` (an IR expression)."""
    span = p.Sum((hi, p.Product((-1, lo)), st))
    count = span if st == 1 else p.FloorDiv(span, st)
    return normalize_integer(p.Call(p.Variable("max"), (0, normalize_integer(count))))


class ArraySyntaxMixin(_Host):
    """Array views, sections and reductions (mixed into UnitLowering)."""

    # {{{ views

    def view(self, sym, name) -> ArrayView:
        low = sym.name.lower()
        v = self.views.get(low)
        if v is not None:
            return v
        b = self.bindings.get(low)
        if b is not None:
            v = array_binding(b).view
        elif "local_allocatable" in sym.attributes:
            from f2loopy.frontend.local_allocatables import work_array_view
            v = work_array_view(self, sym)
        elif sym.is_parameter or sym.is_initialized:
            lbs, ubs = self.bounds_of(sym)
            v = ArrayView(sym.name, self.table_name(sym), np.dtype(sym.dtype), lbs, ubs,
                          read_only=True, what="a constant")
        else:
            if is_module_struct_array(sym):
                ir_name = sym.name       # (its components hold the data: size, bounds)
            elif self.parent is None:
                self.used.add(low)
                ir_name = sym.name
            else:
                ir_name = self.local_name(sym)
            lbs, ubs = self.bounds_of(sym)
            v = ArrayView(sym.name, ir_name, np.dtype(sym.dtype), lbs, ubs)
        self.views[low] = v
        return v

    def bounds_of(self, sym, extents=None):
        """Lower and upper bounds of array *sym* (upper None: assumed size).
        An assumed-shape dummy argument takes its extents from *extents* (a
        procedure being inlined: the actual argument's) or, in the kernel,
        from arguments the host glue fills in."""
        if "local_allocatable" in sym.attributes:
            from f2loopy.frontend.local_allocatables import work_array_bounds
            return work_array_bounds(self, sym)
        if is_module_struct_array(sym) and "allocatable" in sym.attributes:
            # an allocatable module array of derived type: its components' axes
            from f2loopy.frontend.allocatables import allocatable_bounds
            from f2loopy.frontend.derived_types import leaves
            from f2loopy.frontend.module_data import storage_name
            leaf = next(iter(leaves(sym)))      # (which the kernel then receives)
            lbs, ubs = allocatable_bounds(self, leaf, storage_name(self, leaf))
            return lbs[-len(sym.dims):], ubs[-len(sym.dims):]
        if sym.storage is not None and "allocatable" in sym.attributes:
            from f2loopy.frontend.allocatables import allocatable_bounds
            from f2loopy.frontend.module_data import storage_name
            return allocatable_bounds(self, sym, storage_name(self, sym))
        if sym.path is not None and "allocatable" in sym.attributes:
            from f2loopy.frontend.allocatables import component_bounds
            return component_bounds(self, sym)
        if sym.storage is not None:          # a module array: constant bounds
            from f2loopy.frontend.module_data import storage_bounds
            return storage_bounds(sym)
        lbs, ubs = [], []
        for k, (lo_node, hi_node) in enumerate(sym.dims):
            lo = 1 if lo_node is None else normalize_integer(
                self.int_expr(lo_node, "an array bound"))
            lbs.append(lo)
            if hi_node == ":":
                if extents is not None:
                    ext = extents[k]
                elif self.parent is None:
                    ext = p.Variable(self.assumed_extent(sym, k))
                else:
                    raise self.error(f"the extents of assumed-shape array '{sym.name}' are "
                                     "not known here", sym.name)
                ubs.append(normalize_integer(p.Sum((lo, ext, -1))))
            else:
                ubs.append(None if hi_node == "*" else
                           normalize_integer(self.int_expr(hi_node, "an array bound")))
        return tuple(lbs), tuple(ubs)

    def table_name(self, sym) -> str:
        """IR name of the constant table holding parameter (or data) array *sym*."""
        if self.parent is None:
            self.used.add(sym.name.lower())
            return sym.name
        key = (self.unit_name.lower(), sym.name.lower()) if self.symtab.is_local(sym.name) \
            else ("<module>", id(sym))
        name = self.st.shared_tables.get(key)
        if name is None:
            shape = tuple(sym.value.shape)
            lbs = tuple(int(evaluate_constant(lb)) for lb in self.bounds_of(sym)[0])
            name = self.new_temporary(sym.name, sym.dtype, shape=shape, lower_bounds=lbs,
                                      initializer=sym.value, read_only=True)
            self.st.shared_tables[key] = name
        return name

    def array_ref(self, name: str, index_nodes, node):
        sym = self.symtab.get(name)
        if sym is None or not self.is_array_symbol(sym):
            return None
        view = self.view(sym, name)
        if len(index_nodes) != view.rank:
            raise self.error(f"'{sym.name}' has {view.rank} dimension(s) but "
                             f"{len(index_nodes)} subscript(s) are given", name)
        if any(isinstance(i, F.Subscript_Triplet) for i in index_nodes):
            return self.section_element(view, index_nodes, name)
        indices = [self.subscript(i, sym.name) for i in index_nodes]
        return view.element(indices)

    def subscript(self, node, array_name):
        idx = normalize_integer(self.expr(node))
        if not is_integer(self.checked_dtype(idx)):
            raise self.error(f"subscript of '{array_name}' must be an integer", str(node))
        return idx

    # }}}

    # {{{ sections in array expressions

    def triplet(self, view: ArrayView, k: int, node):
        """``(lower, upper, step)`` of subscript triplet *node* on axis *k*."""
        lo_node, hi_node, st_node = node.items
        lo = self.subscript(lo_node, view.name) if lo_node is not None else view.lbounds[k]
        if hi_node is not None:
            hi = self.subscript(hi_node, view.name)
        elif view.ubounds[k] is None:
            raise self.error(f"the upper bound of the last dimension of assumed-size array "
                             f"'{view.name}' must be given in a section", view.name)
        else:
            hi = view.ubounds[k]
        st = 1
        if st_node is not None:
            try:
                st = int(evaluate_constant(self.expr(st_node)))
            except NotConstant:
                raise self.error("the stride of an array section must be a constant",
                                 str(st_node), UnsupportedFeatureError) from None
            if st == 0:
                raise self.error("the stride of an array section is zero", str(st_node))
        return lo, hi, st

    def section_element(self, view: ArrayView, index_nodes, name):
        ctx = self.elemental
        if ctx is None:
            raise self.error(f"array section of '{view.name}' is not supported here",
                             name, UnsupportedFeatureError)
        axes, parts = [], []
        for k, inode in enumerate(index_nodes):
            if isinstance(inode, F.Subscript_Triplet):
                axes.append(self.triplet(view, k, inode))
                parts.append(("axis", len(axes) - 1))
            else:
                parts.append(("index", self.subscript(inode, view.name)))
        return self.conforming_element(view, axes, parts, name)

    def whole_array_element(self, sym, name):
        view = self.view(sym, name)
        axes = []
        for k in range(view.rank):
            if view.ubounds[k] is None:
                raise self.error(f"assumed-size array '{view.name}' cannot be used as a whole "
                                 "array (give the section bounds)", name)
            axes.append((view.lbounds[k], view.ubounds[k], 1))
        return self.conforming_element(view, axes, [("axis", k) for k in range(view.rank)],
                                       name)

    def conforming_element(self, view, axes, parts, name):
        ctx = self.conform(axes, name, view.name)
        indices = []
        for axis, (kind, value) in enumerate(parts):
            if kind == "axis":
                extent = view.extent(axis)
                if extent is not None and len(ctx.limits) == ctx.rank and all(
                        self.is_invariant_param(v) for v in variables_read(extent)):
                    ctx.limits[value].append(extent)
                lo, hi, st = axes[value]
                indices.append(normalize_integer(
                    p.Sum((lo, p.Product((st, ctx.positions[value]))))))
            else:
                indices.append(value)
        return view.element(indices)

    def in_context(self, ctx, func, *args):
        """``func(*args)`` with *ctx* the array expression being converted
        (None: a scalar expression)."""
        with self.array_expression(ctx):
            return func(*args)

    def conform(self, axes, name, label=None) -> ElementalContext:
        """Make an operand with section *axes* part of the current array
        expression: it fixes the shape, or must have the shape fixed (*name*
        is the operand as written, *label* names it in later messages)."""
        ctx = self.elemental
        assert ctx is not None          # an operand of an array expression
        ctx.operands += 1
        if ctx.rank is None:
            ctx.define(axes, label or name)
        elif len(axes) != ctx.rank:
            raise self.error(f"'{name}' has rank {len(axes)} here but the array expression "
                             f"has rank {ctx.rank}", name)
        else:
            for d, ax in enumerate(axes):
                ext = triplet_extent(*ax)
                if ext is not None and ctx.extents[d] is not None and ext != ctx.extents[d]:
                    raise self.error(f"array shapes do not conform: dimension {d + 1} of "
                                     f"'{name}' has {ext} elements, of '{ctx.names[d]}' "
                                     f"{ctx.extents[d]}", name)
                if ext is None or ctx.extents[d] is None:
                    self.require_equal(_triplet_count(*ax), _triplet_count(*ctx.axes[d]))
        return ctx

    def require_equal(self, a, b) -> None:
        """Record that extents *a* and *b* must agree (Fortran requires
        conforming operands): a kernel assumption when both depend only on
        scalar arguments the kernel leaves unchanged."""
        # the extents the host passes (of assumed-shape dummies and of
        # allocatable module arrays and components): never negative
        extents = set(self.st.assumed_extents.values())
        for names in self.st.allocatable_dope.values():
            extents.update(names["extent"])

        def simpler(e):        # max(0, a_n1) is a_n1: an extent is not negative
            if isinstance(e, p.Call) and e.function == p.Variable("max") and \
                    len(e.parameters) == 2 and e.parameters[0] == 0 and \
                    isinstance(e.parameters[1], p.Variable) and e.parameters[1].name in extents:
                return e.parameters[1]
            return e
        a, b = simpler(a), simpler(b)
        if a == b:
            return
        if all(self.is_invariant_param(n) for n in variables_read(a) | variables_read(b)):
            self.st.conformance.append((a, b))

    # }}}

    # {{{ array assignment

    def is_array_assignment(self, lhs_node) -> bool:
        if isinstance(lhs_node, F.Name):
            sym = self.symtab.get(str(lhs_node))
            return sym is not None and self.is_array_symbol(sym)
        if isinstance(lhs_node, F.Part_Ref):
            sym = self.symtab.get(str(lhs_node.items[0]))
            if sym is None or not self.is_array_symbol(sym):
                return False
            return any(isinstance(i, F.Subscript_Triplet) for i in lhs_node.items[1].items)
        return False

    def array_assignment(self, lhs_node, rhs_node):
        name = str(lhs_node.items[0]) if isinstance(lhs_node, F.Part_Ref) else str(lhs_node)
        sym = self.symtab.get(name)
        assert sym is not None              # an array (is_array_assignment)
        if sym.is_parameter:
            raise self.error(f"cannot assign to parameter '{sym.name}'", name)
        self.check_not_initialized(sym, name)
        view = self.view(sym, name)
        if view.read_only:
            raise self.error(f"'{name}' is assigned, but the actual argument passed for it "
                             f"is {view.what}", name)
        ctx = ElementalContext(self)
        with self.array_expression(ctx):
            if isinstance(lhs_node, F.Name):
                lhs = self.whole_array_element(sym, name)
            else:
                subs = list(lhs_node.items[1].items)
                if len(subs) != view.rank:
                    raise self.error(f"'{sym.name}' has {view.rank} dimension(s) but "
                                     f"{len(subs)} subscript(s) are given", name)
                for s in subs:
                    if not isinstance(s, F.Subscript_Triplet) and _has_section(s):
                        raise self.error("vector subscripts on the left of an assignment "
                                         "are not supported", name, UnsupportedFeatureError)
                lhs = self.section_element(view, subs, name)
            rhs = self.expr(rhs_node)
        rhs = self.convert_for_assignment(rhs, view.dtype, name)
        order = self.assignment_order(lhs, rhs, ctx, name)
        if order == "temporary":
            # Fortran evaluates the whole right-hand side first: through a
            # temporary array, as a compiler does, when no loop order can
            tmp = make_subscript(self.section_temporary(ctx, view.dtype, name),
                                 tuple(ctx.positions))
            self.emit_elemental(ctx, "ascending", name, lambda: self.add_assignment(
                tmp, view.dtype, rhs, name, base_id=tmp.aggregate.name))
            rhs, order = tmp, "ascending"
        self.emit_elemental(ctx, order, name, lambda: self.add_assignment(
            lhs, view.dtype, rhs, name, base_id=view.ir_name),
            subst_targets=True)

    def section_temporary(self, ctx, dtype, name) -> str:
        """A new temporary array that holds one element per position of
        *ctx* (indexed by the zero-based positions): private storage when its
        size is a constant, else device scratch memory sized by the scalar
        arguments the kernel leaves unchanged."""
        from f2loopy.ir.expressions import variables_read
        from f2loopy.ir.kernel import AddressSpace
        shape = []
        for lo, hi, st in ctx.axes:
            # room for every position: |hi - lo| + 1 >= the count for any step
            span = p.Sum((hi, p.Product((-1, lo)), 1)) if st > 0 else \
                p.Sum((lo, p.Product((-1, hi)), 1))
            shape.append(normalize_integer(span))
        constant = all(isinstance(e, (int, np.integer)) for e in shape)
        if constant:
            shape = [max(0, int(e)) for e in shape]
        else:
            for e in shape:
                for v in sorted(variables_read(e)):
                    if not self.is_invariant_param(v):
                        raise self.error(
                            f"the right-hand side reads elements of '{name}' that the "
                            "assignment changes, and the temporary array this needs would "
                            f"have a size that depends on '{v}' (assign through a "
                            "temporary array of your own)", name, UnsupportedFeatureError)
        return self.new_temporary(f"{name}_rhs", dtype, shape=tuple(shape),
                                  lower_bounds=(0,) * len(shape),
                                  address_space=None if constant else AddressSpace.GLOBAL)

    def emit_elemental(self, ctx, order, base, emit, subst_targets=False):
        """Open one loop per axis of *ctx* (last axis outermost) in *order*
        ("ascending" or "descending"), call *emit* inside and replace the
        position placeholders of what it added by the loop positions.
        *subst_targets*: the element assignments of an array assignment,
        which a ``where`` masks (the hook
        :meth:`~f2loopy.frontend.where.WhereMixin.where_element_guard`)."""
        guard = self.where_element_guard(ctx) if subst_targets else None
        with self.guarded(*(() if guard is None else (guard,))):
            self._emit_elemental(ctx, order, base, emit)

    def _emit_elemental(self, ctx, order, base, emit) -> None:
        positions = {}
        start = len(self.instructions)
        with self.loop_nest():
            for d in reversed(range(ctx.rank)):
                lo, hi, st = ctx.axes[d]
                iname_base = f"{base}_i{d + 1}"
                if order == "ascending":
                    scope = self.open_counter_loop(iname_base, lo, hi, st)
                    pos = normalize_integer(p.Sum((scope.value, p.Product((-1, lo))))) \
                        if st == 1 else p.Variable(scope.iname)
                else:
                    # st == 1: run j over [lo, hi], position hi - j
                    scope = self.open_counter_loop(iname_base, lo, hi, 1)
                    pos = normalize_integer(p.Sum((hi, p.Product((-1, scope.value)))))
                positions[ctx.positions[d].name] = pos
            emit()
        for k in range(start, len(self.instructions)):
            insn = self.instructions[k]
            new_expr = _normalized_indices(substitute(insn.expression, positions))
            new_lhs = _normalized_indices(substitute(insn.assignee, positions))
            new_preds = tuple(substitute(x, positions) for x in insn.predicates)
            self.instructions[k] = insn.copy(expression=new_expr, assignee=new_lhs,
                                             predicates=new_preds)

    def assignment_order(self, lhs, rhs, ctx, name) -> str:
        """"ascending" or "descending": an order of the element assignments in
        which no element is read after it was assigned; "temporary" when
        there is none (the right-hand side must go through a temporary)."""
        target = lhs.aggregate.name
        lhs_idx = index_tuple(lhs)
        reads = [idx for n, idx in accesses(rhs) if n == target]
        if all(idx == lhs_idx for idx in reads):
            return "ascending"
        pos_names = [v.name for v in ctx.positions]
        primed = [f"{n}__r" for n in pos_names]
        try:
            later, earlier = self._overlap_sets(lhs_idx, reads, ctx, pos_names, primed)
        except NonAffineError:
            later = earlier = None
        if later is False:
            return "ascending"
        if earlier is False and all(st == 1 for _, _, st in ctx.axes):
            return "descending"
        return "temporary"

    def _overlap_sets(self, lhs_idx, reads, ctx, pos_names, primed):
        """Whether some element is read by a later (resp. earlier) iteration
        than the one assigning it; False when provably not, True otherwise."""
        from f2loopy.ir.expressions import rename, variables_read
        rename_map = dict(zip(pos_names, primed, strict=True))
        exprs = list(lhs_idx) + [e for idx in reads for e in idx]
        for lo, hi, st in ctx.axes:
            exprs += [lo, hi]
        params = sorted(set().union(*(variables_read(e) for e in exprs))
                        - set(pos_names) - set(primed))
        space = make_space(pos_names + primed, params)

        def in_range(names):
            conds = []
            for (lo, hi, st), n in zip(ctx.axes, names, strict=True):
                v = p.Variable(n)
                idx = p.Sum((lo, p.Product((st, v))))
                conds.append(p.Comparison(v, ">=", 0))
                conds.append(p.Comparison(idx, "<=" if st > 0 else ">=", hi))
            return set_from_condition(p.LogicalAnd(tuple(conds)), space)

        base = in_range(pos_names) & in_range(primed)
        # loop order: the last axis is outermost
        order_w = [p.Variable(n) for n in reversed(pos_names)]
        order_r = [p.Variable(n) for n in reversed(primed)]

        def lex(op):
            terms = []
            for k in range(len(order_w)):
                eqs = [p.Comparison(order_r[j], "==", order_w[j]) for j in range(k)]
                terms.append(p.LogicalAnd(tuple(eqs + [p.Comparison(order_r[k], op,
                                                                    order_w[k])])))
            return set_from_condition(p.LogicalOr(tuple(terms)), space)

        later_set, earlier_set = lex(">"), lex("<")
        later = earlier = False
        for idx in reads:
            conflict = base
            for w, r in zip(lhs_idx, idx, strict=True):
                r = rename(r, rename_map)
                conflict = conflict & set_from_condition(p.Comparison(w, "==", r), space)
            if not (conflict & later_set).is_empty():
                later = True
            if not (conflict & earlier_set).is_empty():
                earlier = True
        return later, earlier

    # }}}


def _has_section(node) -> bool:
    if isinstance(node, F.Subscript_Triplet):
        return True
    for ch in getattr(node, "items", ()) or ():
        if hasattr(ch, "items") and _has_section(ch):
            return True
    return False


def _normalized_indices(expr):
    from f2loopy.ir.expressions import map_subscripts

    def norm(sub):
        idx = tuple(normalize_integer(i) for i in index_tuple(sub))
        if idx == index_tuple(sub):
            return None
        return make_subscript(sub.aggregate.name, idx)
    return map_subscripts(expr, norm)

