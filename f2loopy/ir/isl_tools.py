"""Bridges between pymbolic expressions and islpy objects.

* :func:`pwaff_from_expr` / :func:`set_from_condition`: affine pymbolic
  expressions (with Fortran integer semantics) to isl.
* :func:`expr_from_ast` / :func:`expr_from_pwaff`: isl back to pymbolic, using
  isl's AST builder so that piecewise results come out as compact ``min``,
  ``max`` and conditional expressions.
* Helpers to move named dimensions between parameters and set dimensions.
"""

from __future__ import annotations

import islpy as isl
import numpy as np
import pymbolic.primitives as p
from pymbolic.mapper import Mapper

dim_type = isl.dim_type


class NonAffineError(ValueError):
    """The expression is not affine in the available dimensions.

    :attr names: unknown variable names that caused it (empty for a
        genuinely non-affine form such as ``i*j``).
    """

    def __init__(self, message: str, names: tuple[str, ...] = ()):
        super().__init__(message)
        self.names = names


# {{{ spaces

def make_space(set_names=(), param_names=()) -> isl.Space:
    return isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=list(set_names),
                                       params=list(param_names))


def universe(set_names=(), param_names=()) -> isl.Set:
    return isl.Set.universe(make_space(set_names, param_names))


def set_names(s) -> list[str]:
    return list(s.get_var_names(dim_type.set))


def param_names(s) -> list[str]:
    return list(s.get_var_names(dim_type.param))


def params_to_set(s: isl.Set, names) -> isl.Set:
    """Move the parameters called *names* (those present) to set dimensions."""
    for name in names:
        idx = s.find_dim_by_name(dim_type.param, name)
        if idx >= 0:
            s = s.move_dims(dim_type.set, s.dim(dim_type.set), dim_type.param, idx, 1)
    return s


def set_to_params(s: isl.Set, names) -> isl.Set:
    """Move the set dimensions called *names* (those present) to parameters."""
    for name in names:
        idx = s.find_dim_by_name(dim_type.set, name)
        if idx >= 0:
            s = s.move_dims(dim_type.param, s.dim(dim_type.param), dim_type.set, idx, 1)
    return s


def reorder_set(s: isl.Set, names) -> isl.Set:
    """Return *s* with set dimensions exactly *names*, in that order.

    Parameters named in *names* become set dimensions; names absent from *s*
    become unconstrained dimensions.  Set dimensions not in *names* are
    projected out.
    """
    names = list(names)
    if len(set(names)) != len(names):
        raise ValueError(f"repeated dimension names in {names}")
    s = params_to_set(s, names)
    extra = [n for n in set_names(s) if n not in names]
    for n in extra:
        idx = s.find_dim_by_name(dim_type.set, n)
        s = s.project_out(dim_type.set, idx, 1)
    for n in names:
        if s.find_dim_by_name(dim_type.set, n) < 0:
            s = s.add_dims(dim_type.set, 1)
            s = s.set_dim_name(dim_type.set, s.dim(dim_type.set) - 1, n)
    # permute into the wanted order
    for target, n in enumerate(names):
        idx = s.find_dim_by_name(dim_type.set, n)
        if idx != target:
            s = s.move_dims(dim_type.param, 0, dim_type.set, idx, 1)
            s = s.move_dims(dim_type.set, target, dim_type.param, 0, 1)
    return s


def align_params(*objs):
    """Give every isl object the union of all parameters (same order)."""
    names: list[str] = []
    for o in objs:
        for n in o.get_var_names(dim_type.param):
            if n not in names:
                names.append(n)
    sp = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=[], params=names)
    return tuple(o.align_params(sp) for o in objs)


def intersect(a: isl.Set, b: isl.Set) -> isl.Set:
    a, b = align_params(a, b)
    return a & b

# }}}


# {{{ pymbolic -> isl

def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


class _LazyAffs:
    """``affs_from_space`` computed on demand (it is costly for wide spaces)."""

    def __init__(self, space: isl.Space):
        self.space = space
        self.ls = isl.LocalSpace.from_space(space)
        self._cache: dict = {}

    def __getitem__(self, key):
        if key in self._cache:
            return self._cache[key]
        if key == 0:
            value = isl.PwAff.from_aff(isl.Aff.zero_on_domain(self.ls))
        else:
            for dt in (dim_type.set, dim_type.param):
                idx = self.space.find_dim_by_name(dt, key)
                if idx >= 0:
                    value = isl.PwAff.var_on_domain(self.ls, dt, idx)
                    break
            else:
                raise KeyError(key)
        self._cache[key] = value
        return value


def lazy_affs(space: isl.Space) -> _LazyAffs:
    return _LazyAffs(space)


class _PwAffMapper(Mapper):
    def __init__(self, space: isl.Space):
        self.space = space
        self.affs = _LazyAffs(space)

    def _const(self, v) -> isl.PwAff:
        return self.affs[0] + int(v)

    def map_constant(self, expr):
        if _is_int(expr):
            return self._const(expr)
        if isinstance(expr, (float, np.floating)) and float(expr).is_integer():
            raise NonAffineError(f"real constant {expr} in an integer context")
        raise NonAffineError(f"constant {expr!r} is not an integer")

    def map_variable(self, expr):
        try:
            return self.affs[expr.name]
        except KeyError:
            raise NonAffineError(f"unknown name {expr.name!r}", (expr.name,)) from None

    def map_sum(self, expr):
        result = self.rec(expr.children[0])
        for ch in expr.children[1:]:
            result = result + self.rec(ch)
        return result

    def map_product(self, expr):
        result = None
        for ch in expr.children:
            val = self.rec(ch)
            if result is None:
                result = val
            elif result.is_cst():
                result = val.mul(result)
            elif val.is_cst():
                result = result.mul(val)
            else:
                raise NonAffineError("product of two non-constant terms")
        return result

    def _divisor(self, expr) -> isl.PwAff:
        d = self.rec(expr)
        if not d.is_cst():
            raise NonAffineError("division by a non-constant")
        return d

    def map_quotient(self, expr):
        # Fortran integer division truncates toward zero
        return self.rec(expr.numerator).tdiv_q(self._divisor(expr.denominator))

    def map_floor_div(self, expr):
        return self.rec(expr.numerator).div(self._divisor(expr.denominator)).floor()

    def map_remainder(self, expr):
        return self.rec(expr.numerator).tdiv_r(self._divisor(expr.denominator))

    def map_call(self, expr):
        name = expr.function.name
        args = [self.rec(a) for a in expr.parameters]
        if name in ("min", "max") and args:
            result = args[0]
            for a in args[1:]:
                result = result.min(a) if name == "min" else result.max(a)
            return result
        if name == "mod" and len(args) == 2:
            if not args[1].is_cst():
                raise NonAffineError("mod by a non-constant")
            return args[0].tdiv_r(args[1])
        if name == "modulo" and len(args) == 2:
            if not args[1].is_cst():
                raise NonAffineError("modulo by a non-constant")
            q = args[0].div(args[1]).floor()
            return args[0] - q.mul(args[1])
        if name in ("int32", "int64") and len(args) == 1:
            return args[0]
        raise NonAffineError(f"call of {name!r} is not affine")

    def map_power(self, expr):
        if _is_int(expr.exponent) and expr.exponent >= 0:
            base = self.rec(expr.base)
            result = self.affs[0] + 1
            for _ in range(int(expr.exponent)):
                result = result.mul(base) if base.is_cst() or result.is_cst() else None
                if result is None:
                    raise NonAffineError("power of a non-constant")
            return result
        raise NonAffineError("non-integer power")

    def map_if(self, expr):
        cond = set_from_condition(expr.condition, self.space)
        then, else_ = self.rec(expr.then), self.rec(expr.else_)
        return then.intersect_domain(cond).union_add(else_.intersect_domain(cond.complement()))

    def map_subscript(self, expr):
        raise NonAffineError(f"array reference {expr.aggregate.name}(...) is not affine",
                             (expr.aggregate.name,))


def pwaff_from_expr(expr, space: isl.Space) -> isl.PwAff:
    """Convert an affine integer expression to an isl.PwAff over *space*.

    Integer ``/`` truncates toward zero (Fortran), ``//`` floors; ``mod`` and
    ``modulo`` follow Fortran.  Raises :class:`NonAffineError` otherwise.
    """
    return _PwAffMapper(space)(expr)


def set_from_condition(expr, space: isl.Space) -> isl.Set:
    """Convert an affine logical expression to the isl.Set where it holds."""
    if isinstance(expr, p.LogicalAnd):
        result = isl.Set.universe(space)
        for ch in expr.children:
            result = result & set_from_condition(ch, space)
        return result
    if isinstance(expr, p.LogicalOr):
        result = isl.Set.empty(space)
        for ch in expr.children:
            result = result | set_from_condition(ch, space)
        return result
    if isinstance(expr, p.LogicalNot):
        return set_from_condition(expr.child, space).complement()
    if isinstance(expr, (bool, np.bool_)):
        return isl.Set.universe(space) if expr else isl.Set.empty(space)
    if isinstance(expr, p.Comparison):
        m = _PwAffMapper(space)
        left, right = m(expr.left), m(expr.right)
        op = expr.operator
        if op == "<":
            return left.lt_set(right)
        if op == "<=":
            return left.le_set(right)
        if op == ">":
            return left.gt_set(right)
        if op == ">=":
            return left.ge_set(right)
        if op == "==":
            return left.eq_set(right)
        if op == "!=":
            return left.ne_set(right)
    raise NonAffineError("condition is not an affine comparison")


# }}}


# {{{ isl -> pymbolic

_BINARY = {
    isl.ast_expr_op_type.add: lambda a, b: p.Sum((a, b)),
    isl.ast_expr_op_type.sub: lambda a, b: p.Sum((a, p.Product((-1, b)))),
    isl.ast_expr_op_type.mul: lambda a, b: p.Product((a, b)),
    isl.ast_expr_op_type.div: lambda a, b: p.Quotient(a, b),
    isl.ast_expr_op_type.pdiv_q: lambda a, b: p.Quotient(a, b),
    isl.ast_expr_op_type.fdiv_q: lambda a, b: p.FloorDiv(a, b),
    isl.ast_expr_op_type.pdiv_r: lambda a, b: p.Remainder(a, b),
    isl.ast_expr_op_type.zdiv_r: lambda a, b: p.Remainder(a, b),
    isl.ast_expr_op_type.eq: lambda a, b: p.Comparison(a, "==", b),
    isl.ast_expr_op_type.le: lambda a, b: p.Comparison(a, "<=", b),
    isl.ast_expr_op_type.lt: lambda a, b: p.Comparison(a, "<", b),
    isl.ast_expr_op_type.ge: lambda a, b: p.Comparison(a, ">=", b),
    isl.ast_expr_op_type.gt: lambda a, b: p.Comparison(a, ">", b),
}


def expr_from_ast(e: isl.AstExpr):
    """Convert an isl AST expression to pymbolic (``min``/``max`` become calls)."""
    t = e.get_type()
    if t == isl.ast_expr_type.int:
        return int(e.get_val().to_python())
    if t == isl.ast_expr_type.id:
        return p.Variable(e.get_id().get_name())
    op = e.get_op_type()
    args = [expr_from_ast(e.get_op_arg(i)) for i in range(e.get_op_n_arg())]
    if op in _BINARY:
        return _BINARY[op](*args)
    if op == isl.ast_expr_op_type.minus:
        return p.Product((-1, args[0]))
    if op in (isl.ast_expr_op_type.max, isl.ast_expr_op_type.min):
        name = "max" if op == isl.ast_expr_op_type.max else "min"
        return p.Call(p.Variable(name), tuple(args))
    if op in (isl.ast_expr_op_type.and_, isl.ast_expr_op_type.and_then):
        return p.LogicalAnd(tuple(args))
    if op in (isl.ast_expr_op_type.or_, isl.ast_expr_op_type.or_else):
        return p.LogicalOr(tuple(args))
    if op in (isl.ast_expr_op_type.cond, isl.ast_expr_op_type.select):
        return p.If(args[0], args[1], args[2])
    raise NotImplementedError(f"isl AST operation {op}")


def _build(context: isl.Set | None, space: isl.Space) -> isl.AstBuild:
    if context is None:
        context = isl.Set.universe(space.params())
    context = context.params() if not context.is_params() else context
    return isl.AstBuild.from_context(context)


def expr_from_pwaff(pw: isl.PwAff, context: isl.Set | None = None):
    """Simplest pymbolic expression for *pw*, valid wherever *context* holds.

    Set dimensions of *pw*'s domain are treated as free variables.
    """
    dom_names = list(pw.get_space().get_var_names(dim_type.in_))
    if dom_names:
        pw = _pwaff_dims_to_params(pw)
    ctx = _context_params(context, pw)
    pw = pw.gist_params(ctx) if not ctx.plain_is_universe() else pw
    build = isl.AstBuild.from_context(ctx)
    return expr_from_ast(build.expr_from_pw_aff(pw.coalesce()))


def expr_from_set(s: isl.Set, context: isl.Set | None = None):
    """A pymbolic condition equivalent to *s* wherever *context* holds
    (True if *s* contains the context)."""
    names = set_names(s)
    if names:
        s = set_to_params(s, names)
    s = s.params() if not s.is_params() else s
    ctx = _context_params(context, s)
    s, ctx = align_params(s, ctx)
    g = s.gist(ctx)
    if g.plain_is_universe():
        return True
    build = isl.AstBuild.from_context(ctx)
    return expr_from_ast(build.expr_from_set(g.coalesce()))


def _pwaff_dims_to_params(pw: isl.PwAff) -> isl.PwAff:
    n = pw.dim(dim_type.in_)
    return pw.move_dims(dim_type.param, pw.dim(dim_type.param), dim_type.in_, 0, n)


def _context_params(context, obj) -> isl.Set:
    if context is None:
        return isl.Set.universe(obj.get_space().params())
    names = set_names(context)
    if names:
        context = set_to_params(context, names)
    context = context.params() if not context.is_params() else context
    sp = obj.get_space().params()
    context = context.align_params(sp)
    # drop parameters the object does not know
    extra = [n for n in param_names(context) if sp.find_dim_by_name(dim_type.param, n) < 0]
    for n in extra:
        idx = context.find_dim_by_name(dim_type.param, n)
        context = context.project_out(dim_type.param, idx, 1)
    return context

# }}}


def range_constraint(name: str, lower: isl.PwAff, upper: isl.PwAff, stride: int) -> isl.Set:
    """The parameter set ``lower <= name <= upper`` (and ``name - lower``
    divisible by *stride*), *lower* and *upper* being parameter-only."""
    sp = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=[name], params=[])
    var = isl.PwAff.var_on_domain(isl.LocalSpace.from_space(sp), dim_type.set, 0)
    lo = _on_dim(lower, name)
    hi = _on_dim(upper, name)
    var, lo, hi = align_params(var, lo, hi)
    cons = var.ge_set(lo) & var.le_set(hi)
    if stride != 1:
        zero = var.sub(var)
        cons = cons & (var - lo).mod_val(isl.Val.int_from_si(sp.get_ctx(), stride)).eq_set(zero)
    return set_to_params(cons, [name]).params()


def _on_dim(pw: isl.PwAff, name: str) -> isl.PwAff:
    """A parameter-only PwAff as a function on the one-dimensional space [name]."""
    out = pw.insert_dims(dim_type.in_, 0, 1)
    return out.set_dim_id(dim_type.in_, 0, isl.Id.read_from_str(isl.DEFAULT_CONTEXT, name))
