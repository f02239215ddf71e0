"""Array intrinsics in the lowering: reductions, ``matmul``, ``transpose`` and
the inquiry functions.

* ``sum``, ``product``, ``maxval``, ``minval``, ``count``, ``any``, ``all``
  and ``dot_product`` over a whole array become an accumulator temporary,
  initialised before loops over the argument's sections (``mask=`` guards
  the update).  With ``dim=`` the result is an array: a temporary of the
  result's shape is initialised, then updated in one loop nest over the
  argument (along ``dim`` in ascending order, as Fortran sums), and the
  expression reads it.
* ``matmul`` fills a temporary the same way (``t(i, j) = t(i, j) + a(i, k)
  * b(k, j)``, ``k`` ascending); ``transpose`` needs none: it swaps the
  positions of its argument's axes.
* ``size``, ``lbound`` and ``ubound`` are folded from the declarations (an
  assumed-shape extent is a kernel argument).

Operands are array expressions evaluated in an
:class:`~f2loopy.frontend.arrays.ElementalContext` of their own; their
zero-based position placeholders are replaced by the loop positions of the
loops that evaluate them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pymbolic.primitives as p
from fparser.two import Fortran2003 as F

from f2loopy.ir.types import BOOL, INT32, is_complex, is_integer, is_logical, promote
from f2loopy.diagnostics import UnsupportedFeatureError
from f2loopy.frontend.bindings import ArrayView
from f2loopy.frontend.lowering_state import ElementalContext
from f2loopy.ir.expressions import substitute, variables_read
from f2loopy.ir.folding import NotConstant, evaluate_constant, normalize_integer
from f2loopy.ir.kernel import AddressSpace

if TYPE_CHECKING:
    from f2loopy.frontend.lowering_host import LoweringHost as _Host
else:
    _Host = object


#: reductions: name -> the keyword of the argument reduced
_REDUCTIONS = {"sum": "array", "product": "array", "maxval": "array", "minval": "array",
               "count": "mask", "any": "mask", "all": "mask"}


class ArrayIntrinsicsMixin(_Host):
    """Array intrinsics (mixed into UnitLowering)."""

    def array_intrinsic(self, name, arg_nodes, node):
        if name in ("size", "lbound", "ubound"):
            return self.array_inquiry(name, arg_nodes)
        if name == "shape":
            return self.shape_of(arg_nodes)
        if name == "present":
            from f2loopy.frontend.optionals import present_value
            return present_value(self, arg_nodes)
        if name in ("allocated", "associated"):
            from f2loopy.frontend.local_allocatables import work_array_allocated
            flag = work_array_allocated(self, arg_nodes) if name == "allocated" else None
            if flag is not None:
                return flag
            from f2loopy.frontend.allocatables import allocated_flag
            from f2loopy.frontend.module_data import storage_name
            return allocated_flag(self, arg_nodes, storage_name, name)
        if name in _REDUCTIONS:
            return self.array_reduction(name, arg_nodes)
        if name == "dot_product":
            return self.dot_product(arg_nodes)
        if name == "matmul":
            return self.matmul(arg_nodes)
        if name == "norm2":
            return self.norm2(arg_nodes)
        if name in ("maxloc", "minloc"):
            return self.location(name, arg_nodes)
        if name in ("cshift", "eoshift"):
            return self.shift(name, arg_nodes)
        if name == "spread":
            return self.spread(arg_nodes)
        return self.transpose(arg_nodes)

    # {{{ operands and results

    def array_operand(self, node, what):
        """*node* evaluated as an array expression: ``(element, context)``,
        the element in terms of the context's position placeholders."""
        ctx = ElementalContext(self)
        elem = self.in_context(ctx, self.expr, node)
        if ctx.rank is None:
            raise self.error(f"the argument of '{what}' must be an array", what)
        return elem, ctx

    def axis_counts(self, axes) -> list:
        """Number of elements along each of the section *axes* ``(lo, hi,
        step)`` (ints or IR expressions)."""
        out = []
        for lo, hi, st in axes:
            count = p.Sum((hi, p.Product((-1, lo)), 1)) if st == 1 else \
                p.FloorDiv(p.Sum((hi, p.Product((-1, lo)), st)), st)
            count = normalize_integer(count)
            try:
                out.append(max(0, int(evaluate_constant(count))))
            except NotConstant:
                out.append(normalize_integer(p.Call(p.Variable("max"), (0, count))))
        return out

    def positions_context(self, counts, name) -> ElementalContext:
        """An elemental context over zero-based positions ``0 .. count-1``."""
        ctx = ElementalContext(self)
        ctx.define([(0, normalize_integer(p.Sum((c, -1))), 1) for c in counts], name)
        return ctx

    def result_temporary(self, name, dtype, counts, limits=None) -> ArrayView:
        """A temporary array of shape *counts* (zero-based): private when the
        shape is constant, else device scratch sized by unchanged scalar
        arguments; a count with a variable the kernel changes (``sum(a(:,
        1:k), dim=1)``) takes the first of its *limits* (extents of arrays
        whose sections have that length, :attr:`ElementalContext.limits`)."""
        sizes = list(counts)
        for d, c in enumerate(counts):
            changed = [v for v in sorted(variables_read(c)) if not self.is_invariant_param(v)]
            if changed and limits is not None and limits[d]:
                sizes[d] = limits[d][0]
            elif changed:
                raise self.error(f"the result of '{name}' needs a temporary array whose size "
                                 f"depends on '{changed[0]}', which the kernel changes",
                                 name, UnsupportedFeatureError)
        constant = all(isinstance(c, (int, np.integer)) for c in sizes)
        tmp = self.new_temporary(f"{name}_result", dtype, shape=tuple(sizes),
                                 lower_bounds=(0,) * len(counts),
                                 address_space=None if constant else AddressSpace.GLOBAL)
        ubs = tuple(normalize_integer(p.Sum((c, -1))) for c in counts)
        return ArrayView(tmp, tmp, np.dtype(dtype), (0,) * len(counts), ubs)

    def array_result(self, view: ArrayView, name):
        """The element of result array *view* in the enclosing array
        expression (an error outside one)."""
        if self.elemental is None:
            raise self.error(f"the result of '{name}' is an array: use it in an array "
                             "assignment or an array expression", name)
        axes = [(0, view.ubounds[k], 1) for k in range(view.rank)]
        return self.conforming_element(view, axes, [("axis", k) for k in range(view.rank)],
                                       name)

    def fill(self, view: ArrayView, ctx, value_of, name):
        """``view(pos) = value_of(pos)`` for every position of *ctx*."""
        self.emit_elemental(ctx, "ascending", view.ir_name, lambda: self.add_assignment(
            view.element(tuple(ctx.positions)), view.dtype,
            value_of(tuple(ctx.positions)), name, base_id=view.ir_name))

    # }}}

    # {{{ reductions

    def array_reduction(self, name, arg_nodes):
        first = _REDUCTIONS[name]
        conv = self.converter()
        positional, kw = conv._split_args(name, arg_nodes, {first, "dim", "mask", "kind"})
        if "kind" in kw:
            raise self.error(f"the 'kind' argument of '{name}' is not supported", "kind",
                             UnsupportedFeatureError)
        order = [first, "dim"] if first == "mask" else [first, "dim", "mask"]
        if len(positional) > len(order):
            raise self.error(f"intrinsic '{name}' takes at most {len(order)} arguments", name)
        args = dict(zip(order, positional, strict=False))   # the rest by keyword
        for k, v in kw.items():
            if k in args:
                raise self.error(f"argument '{k}' of '{name}' is given twice", k)
            args[k] = v
        if first not in args:
            raise self.error(f"intrinsic '{name}' needs an array argument", name)
        # a positional second argument of sum(a, m) may be the mask (a logical array)
        elem, ctx = self.array_operand(args[first], name)
        dtype = self.checked_dtype(elem)
        mask = None
        if "mask" in args and first != "mask":
            mask = self.operand_in(ctx, args["mask"], name, "mask")
        if "dim" in args and "mask" not in kw and first == "array" and len(positional) == 2:
            guess = self.operand_in(ctx, args["dim"], name, "dim", probe=True)
            if guess is not None:
                mask = guess
                del args["dim"]
        if first == "mask":
            if not is_logical(dtype):
                raise self.error(f"the argument of '{name}' must be logical", name)
            mask, elem = elem, None
            dtype = INT32 if name == "count" else BOOL
        elif is_logical(dtype) or (name in ("maxval", "minval") and is_complex(dtype)):
            kinds = "integer or real" if name in ("maxval", "minval") else "numeric"
            raise self.error(f"the argument of '{name}' must be {kinds}", name)
        dim = int(self.constant(args["dim"])) if "dim" in args else None
        if dim is not None and not 1 <= dim <= ctx.rank:
            raise self.error(f"dimension {dim} of the argument of '{name}' does not exist "
                             f"(it has {ctx.rank})", name)
        # the mask guards the update (any/all fold it into the value)
        guard = [mask] if mask is not None and name not in ("any", "all") else []
        if dim is None or ctx.rank == 1:
            # over every element: a scalar (also along the only dimension)
            acc = self.new_temporary(name, dtype)
            self.add_raw_assignment(acc, _initial_value(name, dtype))
            update = _update(name, p.Variable(acc), elem, mask)
            self.emit_elemental(ctx, "ascending", acc, lambda: self.add_assignment(
                p.Variable(acc), dtype, update, name, base_id=acc,
                predicates=self.predicates + guard))
            return p.Variable(acc)
        counts = self.axis_counts(ctx.axes)
        kept = [d for d in range(ctx.rank) if d != dim - 1]
        view = self.result_temporary(name, dtype, [counts[d] for d in kept],
                                     [ctx.limits[d] for d in kept])
        rctx = self.positions_context([counts[d] for d in kept], name)
        self.fill(view, rctx, lambda pos: _initial_value(name, dtype), name)
        target = view.element(tuple(ctx.positions[d] for d in kept))
        update = _update(name, target, elem, mask)
        self.emit_elemental(ctx, "ascending", view.ir_name, lambda: self.add_assignment(
            target, dtype, update, name, base_id=view.ir_name,
            predicates=self.predicates + guard))
        return self.array_result(view, name)

    def operand_in(self, ctx, node, name, what, probe=False):
        """Array operand *node* conforming to *ctx* (a mask); with *probe*,
        None if it is not a logical array."""
        rank = ctx.rank
        e = self.in_context(ctx, self.expr, node)
        is_array = bool(variables_read(e) & {v.name for v in ctx.positions})
        if probe:
            if is_array and is_logical(self.checked_dtype(e)):
                return e
            return None
        if ctx.rank != rank or not is_array:
            raise self.error(f"the '{what}' argument of '{name}' must be an array of the "
                             "shape of the array argument", what)
        if not is_logical(self.checked_dtype(e)):
            raise self.error(f"the '{what}' argument of '{name}' must be logical", what)
        return e

    def dot_product(self, arg_nodes):
        conv = self.converter()
        positional, kw = conv._split_args("dot_product", arg_nodes, {"vector_a", "vector_b"})
        args = list(positional) + [kw[k] for k in ("vector_a", "vector_b") if k in kw]
        if len(args) != 2:
            raise self.error(f"intrinsic 'dot_product' takes 2 array arguments here, got "
                             f"{len(args)}", "dot_product")
        a, ctx = self.array_operand(args[0], "dot_product")
        b = self.in_context(ctx, self.expr, args[1])
        dts = [self.checked_dtype(e) for e in (a, b)]
        if any(is_logical(dt) for dt in dts):
            raise self.error("the argument of 'dot_product' must be numeric", "dot_product")
        dtype = promote(*dts)
        if is_complex(dts[0]):
            a = p.Call(p.Variable("conjg"), (a,))
        acc = self.new_temporary("dot_product", dtype)
        self.add_raw_assignment(acc, dtype.type(0))
        update = p.Sum((p.Variable(acc), p.Product((a, b))))
        self.emit_elemental(ctx, "ascending", acc, lambda: self.add_assignment(
            p.Variable(acc), dtype, update, "dot_product", base_id=acc))
        return p.Variable(acc)

    # }}}

    def location(self, name, arg_nodes):
        """``maxloc``/``minloc``: the position (from 1, in the argument) of
        the first largest/smallest element, 0 if there is none; along
        ``dim`` an array of positions, else one position per axis."""
        conv = self.converter()
        positional, kw = conv._split_args(name, arg_nodes, {"array", "dim", "mask", "kind",
                                                            "back"})
        for bad in ("kind", "back"):
            if bad in kw:
                raise self.error(f"the '{bad}' argument of '{name}' is not supported", bad,
                                 UnsupportedFeatureError)
        if len(positional) > 3:       # kind, back: positional forms of the refused keywords
            raise self.error(f"the 'kind' and 'back' arguments of '{name}' are not supported",
                             name, UnsupportedFeatureError)
        args = dict(zip(["array", "dim", "mask"], positional, strict=False))
        for k, v in kw.items():
            if k in args:
                raise self.error(f"argument '{k}' of '{name}' is given twice", k)
            args[k] = v
        if "array" not in args:
            raise self.error(f"intrinsic '{name}' needs an array argument", name)
        elem, ctx = self.array_operand(args["array"], name)
        dtype = self.checked_dtype(elem)
        if dtype.kind not in "iuf":
            raise self.error(f"the argument of '{name}' must be integer or real", name)
        mask = None
        if "dim" in args and "mask" not in args and len(positional) == 2:
            mask = self.operand_in(ctx, args["dim"], name, "dim", probe=True)
            if mask is not None:
                del args["dim"]
        if "mask" in args:
            mask = self.operand_in(ctx, args["mask"], name, "mask")
        dim = int(self.constant(args["dim"])) if "dim" in args else None
        if dim is not None and not 1 <= dim <= ctx.rank:
            raise self.error(f"dimension {dim} of the argument of '{name}' does not exist "
                             f"(it has {ctx.rank})", name)
        counts = self.axis_counts(ctx.axes)
        if dim is None:
            # one best value; the position along every axis
            best = p.Variable(self.new_temporary(f"{name}_value", dtype))
            where = self.result_temporary(name, INT32, [ctx.rank])
            self.fill(where, self.positions_context([ctx.rank], name), lambda pos: np.int32(0),
                      name)
            first = where.element((0,))
            stores = [(where.element((d,)), d) for d in range(ctx.rank)]
        else:
            kept = [d for d in range(ctx.rank) if d != dim - 1]
            if kept:
                limits = [ctx.limits[d] for d in kept]
                values = self.result_temporary(f"{name}_value", dtype, [counts[d] for d in kept],
                                               limits)
                where = self.result_temporary(name, INT32, [counts[d] for d in kept], limits)
                self.fill(where, self.positions_context([counts[d] for d in kept], name),
                          lambda pos: np.int32(0), name)
                kept_pos = tuple(ctx.positions[d] for d in kept)
                best = values.element(kept_pos)
                first = where.element(kept_pos)
            else:
                best = p.Variable(self.new_temporary(f"{name}_value", dtype))
                tmp = self.new_temporary(name, INT32)
                self.add_raw_assignment(tmp, np.int32(0))
                first = p.Variable(tmp)
                where = None
            stores = [(first, dim - 1)]
        better = p.Comparison(elem, ">" if name == "maxloc" else "<", best)
        cond = p.LogicalOr((p.Comparison(first, "==", np.int32(0)), better))
        if mask is not None:
            cond = p.LogicalAnd((mask, cond))
        flag = p.Variable(self.new_temporary(f"{name}_better", BOOL))

        def update():
            self.add_assignment(flag, BOOL, cond, name, base_id=flag.name)
            guarded = self.predicates + [flag]
            self.add_assignment(best, dtype, elem, name, predicates=guarded,
                                base_id=flag.name)
            for target, d in stores:
                self.add_assignment(target, INT32, p.Sum((ctx.positions[d], np.int32(1))),
                                    name, predicates=guarded, base_id=flag.name)
        self.emit_elemental(ctx, "ascending", name, update)
        if where is None:
            return first
        return self.array_result(where, name)

    def shift(self, name, arg_nodes):
        """``cshift(a, s, dim)``: element ``i`` along *dim* is ``a``'s element
        ``i + s``, wrapping around; ``eoshift(a, s, boundary, dim)``: the
        same without wrapping, *boundary* (default 0) where it would."""
        conv = self.converter()
        keys = ["array", "shift", "dim"] if name == "cshift" else \
            ["array", "shift", "boundary", "dim"]
        positional, kw = conv._split_args(name, arg_nodes, set(keys))
        if len(positional) > len(keys):
            raise self.error(f"intrinsic '{name}' takes at most {len(keys)} arguments", name)
        args = dict(zip(keys, positional, strict=False))
        for k, v in kw.items():
            if k in args:
                raise self.error(f"argument '{k}' of '{name}' is given twice", k)
            args[k] = v
        if "array" not in args or "shift" not in args:
            raise self.error(f"intrinsic '{name}' needs an array and a shift", name)
        if self.elemental is None:
            raise self.error(f"the result of '{name}' is an array: use it in an array "
                             "assignment or an array expression", name)
        a, actx = self.array_operand(args["array"], name)
        dim = int(self.constant(args["dim"])) if "dim" in args else 1
        if not 1 <= dim <= actx.rank:
            raise self.error(f"dimension {dim} of the argument of '{name}' does not exist "
                             f"(it has {actx.rank})", name)
        amount = self.scalar_with(args["shift"], None, None)
        if not is_integer(self.checked_dtype(amount)):
            raise self.error(f"the shift of '{name}' must be a scalar integer", name)
        boundary = None
        if name == "eoshift":
            dtype = self.checked_dtype(a)
            boundary = dtype.type(0) if "boundary" not in args else \
                self.scalar_with(args["boundary"], None, None)
        counts = self.axis_counts(actx.axes)
        ctx = self.conform([(0, normalize_integer(p.Sum((c, -1))), 1) for c in counts], name)
        moved = {v.name: ctx.positions[d] for d, v in enumerate(actx.positions)}
        d = dim - 1
        shifted = normalize_integer(p.Sum((ctx.positions[d], amount)))
        if name == "cshift":
            moved[actx.positions[d].name] = p.Call(p.Variable("modulo"), (shifted, counts[d]))
            return substitute(a, moved)
        # the element read is clamped into the array (the value is the
        # boundary's there): every subscript stays in bounds
        last = normalize_integer(p.Sum((counts[d], -1)))
        moved[actx.positions[d].name] = p.Call(p.Variable("max"), (
            0, p.Call(p.Variable("min"), (shifted, last))))
        inside = p.LogicalAnd((p.Comparison(shifted, ">=", 0),
                               p.Comparison(shifted, "<", counts[d])))
        return p.If(inside, substitute(a, moved), boundary)

    def spread(self, arg_nodes):
        """``spread(source, dim, ncopies)``: *source* (a scalar or an array)
        repeated *ncopies* times along a new axis *dim*."""
        conv = self.converter()
        keys = ["source", "dim", "ncopies"]
        positional, kw = conv._split_args("spread", arg_nodes, set(keys))
        if len(positional) > len(keys):
            raise self.error("intrinsic 'spread' takes source, dim and ncopies", "spread")
        args = dict(zip(keys, positional, strict=False))
        args.update(kw)
        if set(args) != set(keys):
            raise self.error("intrinsic 'spread' takes source, dim and ncopies", "spread")
        if self.elemental is None:
            raise self.error("the result of 'spread' is an array: use it in an array "
                             "assignment or an array expression", "spread")
        sctx = ElementalContext(self)
        value = self.in_context(sctx, self.expr, args["source"])
        rank = sctx.rank or 0
        dim = int(self.constant(args["dim"]))
        if not 1 <= dim <= rank + 1:
            raise self.error(f"dimension {dim} of the result of 'spread' does not exist (it "
                             f"has {rank + 1})", "spread")
        copies = self.scalar_with(args["ncopies"], None, None)
        if not is_integer(self.checked_dtype(copies)):
            raise self.error("the ncopies argument of 'spread' must be a scalar integer",
                             "spread")
        try:
            copies = max(0, int(evaluate_constant(copies)))
        except NotConstant:
            copies = normalize_integer(p.Call(p.Variable("max"), (0, copies)))
        counts = self.axis_counts(sctx.axes) if rank else []
        counts.insert(dim - 1, copies)
        ctx = self.conform([(0, normalize_integer(p.Sum((c, -1))), 1) for c in counts],
                           "spread")
        kept = [ctx.positions[d] for d in range(rank + 1) if d != dim - 1]
        return substitute(value, {v.name: kept[j] for j, v in enumerate(sctx.positions)})

    def norm2(self, arg_nodes):
        """``sqrt(sum(x**2))`` over a real array (no ``dim``)."""
        conv = self.converter()
        positional, kw = conv._split_args("norm2", arg_nodes, {"x", "dim"})
        if "dim" in kw or len(positional) > 1:
            raise self.error("the 'dim' argument of 'norm2' is not supported", "norm2",
                             UnsupportedFeatureError)
        args = list(positional) + ([kw["x"]] if "x" in kw else [])
        if len(args) != 1:
            raise self.error("intrinsic 'norm2' takes 1 argument", "norm2")
        x, ctx = self.array_operand(args[0], "norm2")
        dtype = self.checked_dtype(x)
        if dtype.kind != "f":
            raise self.error("the argument of 'norm2' must be real", "norm2")
        acc = self.new_temporary("norm2", dtype)
        self.add_raw_assignment(acc, dtype.type(0))
        update = p.Sum((p.Variable(acc), p.Product((x, x))))
        self.emit_elemental(ctx, "ascending", acc, lambda: self.add_assignment(
            p.Variable(acc), dtype, update, "norm2", base_id=acc))
        return p.Call(p.Variable("sqrt"), (p.Variable(acc),))

    # }}}

    # {{{ array constructors

    def array_constructor(self, node):
        """``(/ x, 2*y, (f(i), i = 1, n) /)`` in an array expression: its
        values are stored in a temporary array (scalars one by one, an
        implied-do in a loop), which the expression reads."""
        text = "(/" if str(node).startswith("(/") else "["
        if self.elemental is None:
            raise self.error("an array constructor is an array: use it in an array "
                             "assignment or an array expression", text)
        items = _items(node.items[1])
        segments = []          # (count, value or (implied-do control, body))
        dtypes = []
        for item in items:
            if isinstance(item, F.Ac_Implied_Do):
                body_items = _items(item.items[0])
                control = item.items[1]
                if len(body_items) != 1 or isinstance(body_items[0], F.Ac_Implied_Do):
                    raise self.error("an implied-do in an array constructor may have one "
                                     "value, not a list or another implied-do", text,
                                     UnsupportedFeatureError)
                var, bounds = str(control.items[0]), control.items[1]
                lo, hi = self.expr(bounds[0]), self.expr(bounds[1])
                st = 1
                if len(bounds) > 2:
                    try:
                        st = int(evaluate_constant(self.expr(bounds[2])))
                    except NotConstant:
                        raise self.error("the step of an implied-do must be a constant",
                                         text, UnsupportedFeatureError) from None
                    if st == 0:
                        raise self.error("the step of an implied-do is zero", text)
                count = self.axis_counts([(lo, hi, st)])[0]
                pos = p.Variable(self.fresh_name("_ac_pos"))
                self.st.placeholders.add(pos.name)
                index = normalize_integer(p.Sum((lo, p.Product((st, pos)))))
                value = self.scalar_with(body_items[0], var, index)
                segments.append((count, (pos, value)))
                dtypes.append(self.checked_dtype(value))
            else:
                value = self.scalar_with(item, None, None)
                segments.append((1, value))
                dtypes.append(self.checked_dtype(value))
        if not segments:
            raise self.error("an empty array constructor has no type here", text)
        dtype = promote(*dtypes) if not all(is_logical(d) for d in dtypes) else BOOL
        if any(is_logical(d) for d in dtypes) and not all(is_logical(d) for d in dtypes):
            raise self.error("an array constructor mixes logical and numeric values", text)
        total = normalize_integer(p.Sum(tuple(c for c, _ in segments)))
        try:
            total = max(0, int(evaluate_constant(total)))
        except NotConstant:
            pass
        view = self.result_temporary("constructor", dtype, [total])
        offset = 0
        for count, value in segments:
            if isinstance(value, tuple):
                pos, body = value
                ctx = self.positions_context([count], "constructor")
                base = offset

                def shifted(idx: tuple, base=base) -> tuple:
                    return (normalize_integer(p.Sum((base, idx[0]))),)

                self.fill(ArrayView(view.name, view.ir_name, view.dtype, (0,), view.ubounds,
                                    mapper=shifted),
                          ctx, lambda where, pos=pos, body=body: substitute(
                              body, {pos.name: where[0]}), "constructor")
            else:
                self.add_assignment(view.element((offset,)), dtype, value, text,
                                    base_id=view.ir_name)
            offset = normalize_integer(p.Sum((offset, count)))
        return self.array_result(view, "constructor")

    def scalar_with(self, node, var, value):
        """Scalar expression *node*, with name *var* (an implied-do variable)
        standing for *value*."""
        names = {var.lower(): value} if var is not None else {}
        with self.array_expression(None), self.names.scope(names):
            return self.expr(node)

    # }}}

    # {{{ matmul and transpose

    def matmul(self, arg_nodes):
        conv = self.converter()
        positional, kw = conv._split_args("matmul", arg_nodes, {"matrix_a", "matrix_b"})
        args = list(positional) + [kw[k] for k in ("matrix_a", "matrix_b") if k in kw]
        if len(args) != 2:
            raise self.error(f"intrinsic 'matmul' takes 2 arguments, got {len(args)}",
                             "matmul")
        a, actx = self.array_operand(args[0], "matmul")
        b, bctx = self.array_operand(args[1], "matmul")
        dts = [self.checked_dtype(e) for e in (a, b)]
        if any(is_logical(dt) for dt in dts):
            raise self.error("logical 'matmul' is not supported", "matmul",
                             UnsupportedFeatureError)
        if actx.rank > 2 or bctx.rank > 2 or actx.rank + bctx.rank < 3:
            raise self.error(f"'matmul' of arrays of rank {actx.rank} and {bctx.rank} (one "
                             "must be a matrix, neither of rank above 2)", "matmul")
        ca, cb = self.axis_counts(actx.axes), self.axis_counts(bctx.axes)
        inner_a, inner_b = ca[-1], cb[0]
        if isinstance(inner_a, (int, np.integer)) and isinstance(inner_b, (int, np.integer)):
            if inner_a != inner_b:
                raise self.error(f"'matmul' of arrays that do not conform: {inner_a} columns "
                                 f"against {inner_b} rows", "matmul")
        else:
            self.require_equal(inner_a, inner_b)
        dtype = promote(*dts)
        # result positions, then the summation position last
        rows = ca[:-1]
        cols = cb[1:]
        view = self.result_temporary("matmul", dtype, rows + cols)
        rctx = self.positions_context(rows + cols, "matmul")
        self.fill(view, rctx, lambda pos: dtype.type(0), "matmul")
        full = self.positions_context(rows + cols + [inner_a], "matmul")
        pos = full.positions
        k = pos[-1]
        a_at = substitute(a, dict(zip([v.name for v in actx.positions],
                                      list(pos[:len(rows)]) + [k], strict=True)))
        b_at = substitute(b, dict(zip([v.name for v in bctx.positions],
                                      [k] + list(pos[len(rows):-1]), strict=True)))
        target = view.element(tuple(pos[:-1]))
        update = p.Sum((target, p.Product((a_at, b_at))))
        self.emit_elemental(full, "ascending", view.ir_name, lambda: self.add_assignment(
            target, dtype, update, "matmul", base_id=view.ir_name))
        return self.array_result(view, "matmul")

    def transpose(self, arg_nodes):
        conv = self.converter()
        positional, kw = conv._split_args("transpose", arg_nodes, {"matrix"})
        args = list(positional) + ([kw["matrix"]] if "matrix" in kw else [])
        if len(args) != 1:
            raise self.error("intrinsic 'transpose' takes 1 argument", "transpose")
        a, actx = self.array_operand(args[0], "transpose")
        if actx.rank != 2:
            raise self.error(f"the argument of 'transpose' must have rank 2, not {actx.rank}",
                             "transpose")
        if self.elemental is None:
            raise self.error("the result of 'transpose' is an array: use it in an array "
                             "assignment or an array expression", "transpose")
        rows, cols = self.axis_counts(actx.axes)
        # an operand of the transposed shape: its element (i, j) is a's (j, i)
        ctx = self.conform([(0, normalize_integer(p.Sum((cols, -1))), 1),
                            (0, normalize_integer(p.Sum((rows, -1))), 1)], "transpose")
        i, j = ctx.positions
        return substitute(a, {actx.positions[0].name: j, actx.positions[1].name: i})

    # }}}

    # {{{ inquiry

    def shape_of(self, arg_nodes):
        """``shape(a)`` of array *a* in an array expression: a rank-1 array
        of its extents (``any(shape(t) /= (/nx, ny/))``)."""
        extents = self.shape_extents(arg_nodes)
        result = self.result_temporary("shape", np.int32, [len(extents)])
        for k, ext in enumerate(extents):
            self.add_assignment(result.element((k,)), np.dtype(np.int32), ext, "shape",
                                base_id=result.ir_name)
        return self.array_result(result, "shape")

    def shape_extents(self, arg_nodes) -> list:
        """The elements of ``shape(a)`` (*arg_nodes*: its arguments): the
        extents of array *a*, each at least 0."""
        conv = self.converter()
        positional, kw = conv._split_args("shape", arg_nodes, {"source"})
        args = list(positional) + ([kw["source"]] if "source" in kw else [])
        arr = args[0] if len(args) == 1 else None
        sym = self.symtab.get(str(arr)) if isinstance(arr, F.Name) else None
        if sym is None or not self.is_array_symbol(sym):
            raise self.error("the argument of 'shape' must be the name of an array here (one "
                             "argument; 'kind' is not supported)", "shape",
                             UnsupportedFeatureError)
        view = self.view(sym, str(arr))
        if any(u is None for u in view.ubounds):
            raise self.error(f"'shape' of assumed-size array '{view.name}'", "shape")
        extents = []
        for k in range(view.rank):
            ext = view.extent(k)
            try:
                ext = np.int32(max(0, int(evaluate_constant(ext))))
            except NotConstant:
                ext = p.Call(p.Variable("max"), (np.int32(0), ext))
            extents.append(ext)
        return extents

    def array_inquiry(self, name, arg_nodes):
        conv = self.converter()
        positional, kw = conv._split_args(name, arg_nodes, {"array", "dim", "kind"})
        if "kind" in kw:
            raise self.error(f"the 'kind' argument of '{name}' is not supported", "kind",
                             UnsupportedFeatureError)
        args = list(positional) + [kw[k] for k in ("array", "dim") if k in kw]
        if not args or len(args) > 2:
            raise self.error(f"intrinsic '{name}' takes 1 or 2 arguments", name)
        arr = args[0]
        if name == "size" and isinstance(arr, F.Part_Ref):
            return self.section_size(arr, args[1] if len(args) == 2 else None)
        sym = self.symtab.get(str(arr)) if isinstance(arr, F.Name) else None
        spelled = str(arr)
        if isinstance(arr, F.Data_Ref):
            # an array component of a scalar of derived type (size(f%data, 1))
            from f2loopy.frontend.derived_types import selector_symbol
            sym = selector_symbol(self.symtab, arr)
            if sym is not None and sym.struct_rank:
                sym = None
            spelled = sym.name if sym is not None else spelled
        if sym is None or not self.is_array_symbol(sym):
            raise self.error(f"the first argument of '{name}' must be an array or an array "
                             "section", name, UnsupportedFeatureError)
        view = self.view(sym, spelled)
        if len(args) == 2:
            dim = int(self.constant(args[1]))
            if not 1 <= dim <= view.rank:
                raise self.error(f"dimension {dim} of '{view.name}' does not exist", name)
            dims = [dim - 1]
        elif name != "size":
            raise self.error(f"'{name}' without a 'dim' argument (an array result) is not "
                             "supported", name, UnsupportedFeatureError)
        else:
            dims = list(range(view.rank))
        if name == "lbound":
            return _int32(view.lbounds[dims[0]])
        if any(view.ubounds[k] is None for k in dims):
            raise self.error(f"'{name}' of the assumed-size dimension of '{view.name}'", name)
        if name == "ubound":
            return _int32(view.ubounds[dims[0]])
        total = None
        for k in dims:
            ext = view.extent(k)
            try:
                ext = np.int32(max(0, int(evaluate_constant(ext))))
            except NotConstant:
                ext = p.Call(p.Variable("max"), (np.int32(0), ext))
            total = ext if total is None else p.Product((total, ext))
        return normalize_integer(total) if not isinstance(total, np.generic) else total

    def section_size(self, node, dim_node):
        name = str(node.items[0])
        sym = self.symtab.get(name)
        if sym is None or not self.is_array_symbol(sym):
            raise self.error("the first argument of 'size' must be an array or an array "
                             "section", "size", UnsupportedFeatureError)
        view = self.view(sym, name)
        subs = list(node.items[1].items)
        if len(subs) != view.rank:
            raise self.error(f"'{sym.name}' has {view.rank} dimension(s) but {len(subs)} "
                             "subscript(s) are given", name)
        extents = []
        for k, s in enumerate(subs):
            if isinstance(s, F.Subscript_Triplet):
                lo, hi, st = self.triplet(view, k, s)
                ext = p.FloorDiv(normalize_integer(p.Sum((hi, p.Product((-1, lo)), st))), st)
                try:
                    ext = np.int32(max(0, int(evaluate_constant(ext))))
                except NotConstant:
                    ext = p.Call(p.Variable("max"), (np.int32(0), ext))
                extents.append(ext)
        if not extents:
            raise self.error("the argument of 'size' is an array element, not an array",
                             "size")
        if dim_node is not None:
            dim = int(self.constant(dim_node))
            if not 1 <= dim <= len(extents):
                raise self.error(f"dimension {dim} of the section does not exist", "size")
            return extents[dim - 1]
        total = extents[0]
        for e in extents[1:]:
            total = p.Product((total, e))
        return total if isinstance(total, np.generic) else normalize_integer(total)

    # }}}


def _items(value_list) -> list:
    """The items of an fparser list node (or the node itself)."""
    if isinstance(value_list, (F.Ac_Value_List,)):
        return list(value_list.items)
    return [value_list]


def _update(name, acc, elem, mask):
    """The accumulation of *elem* (or of *mask* for count/any/all) into *acc*."""
    if name == "sum":
        return p.Sum((acc, elem))
    if name == "product":
        return p.Product((acc, elem))
    if name in ("maxval", "minval"):
        return p.Call(p.Variable("max" if name == "maxval" else "min"), (acc, elem))
    if name == "count":
        return p.Sum((acc, np.int32(1)))
    if name == "any":
        return p.LogicalOr((acc, mask))
    return p.LogicalAnd((acc, mask))


def _int32(e):
    if isinstance(e, (int, np.integer)):
        return np.int32(e)
    return e


def _initial_value(name, dtype):
    dt = np.dtype(dtype)
    if name in ("sum", "dot_product", "count"):
        return dt.type(0)
    if name == "product":
        return dt.type(1)
    if name == "any":
        return np.bool_(False)
    if name == "all":
        return np.bool_(True)
    if is_integer(dt):
        info = np.iinfo(dt)
        return dt.type(info.min if name == "maxval" else info.max)
    info = np.finfo(dt)
    return dt.type(-info.max if name == "maxval" else info.max)
