"""Static counts of a kernel: floating-point operations by kind and global
memory traffic by array, exact and parametric in the problem sizes.

An instruction runs once per point of its loop domain and once per work-item
that executes it (a statement outside a parallel loop runs in every work-item
along that axis).  Counts are polynomials in the kernel parameters: they are
counted exactly with isl at a few parameter values and interpolated, then the
polynomial is checked at further values (so the formula is exact wherever the
count is a polynomial, which it is for the affine loop nests of real kernels;
otherwise the counts are given for the requested sizes only).

Conventions (those of the Loo.py paper): one flop per addition, subtraction,
multiplication, division, fused multiply-add and special function (``sqrt``,
``exp``, ``pow``, ...); integer (index) arithmetic is not counted; every
reference to global memory (load or store) counts its element size.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction

import islpy as isl
import numpy as np
import pymbolic.primitives as p

from f2loopy.ir.types import kernel_type_inferrer
from f2loopy.ir.domains import combined_domain
from f2loopy.ir.expressions import index_tuple
from f2loopy.ir.isl_tools import dim_type
from f2loopy.ir.kernel import ArrayArg, Assignment, Kernel, ScalarArg

SPECIAL = {"sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
           "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "gamma",
           "log_gamma", "hypot"}


@dataclass
class OpCounts:
    """Per-instance counts for one instruction (floating point only)."""

    add: int = 0
    mul: int = 0
    div: int = 0
    special: int = 0      # pow, sqrt, exp, ...
    minmax: int = 0

    @property
    def flops(self) -> int:
        return self.add + self.mul + self.div + self.special

    def __iadd__(self, other):
        for k in ("add", "mul", "div", "special", "minmax"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        return self


def _is_float(dt) -> bool:
    return np.dtype(dt).kind in "fc"


def _neg_one(x) -> bool:
    return isinstance(x, (int, float, np.number)) and not isinstance(x, (bool, np.bool_)) \
        and x == -1


def count_ops(expr, types) -> OpCounts:
    """Floating-point operations in one evaluation of *expr* (as emitted: a
    sum with a negated term is a subtraction, ``x**2`` one multiplication)."""
    c = OpCounts()

    def rec(e):
        if not isinstance(e, p.ExpressionNode):
            return
        try:
            fl = _is_float(types(e))
        except Exception:
            fl = False
        if isinstance(e, p.Sum):
            if fl:
                c.add += len(e.children) - 1
            for ch in e.children:
                rec(ch)
        elif isinstance(e, p.Product):
            factors = [ch for ch in e.children if not _neg_one(ch)]
            if fl:
                c.mul += max(len(factors) - 1, 0)
            for ch in factors:
                rec(ch)
        elif isinstance(e, (p.Quotient, p.FloorDiv)):
            if fl:
                c.div += 1
            rec(e.numerator)
            rec(e.denominator)
        elif isinstance(e, p.Remainder):
            rec(e.numerator)
            rec(e.denominator)
        elif isinstance(e, p.Power):
            if fl:
                ex = e.exponent
                if isinstance(ex, (int, np.integer)) and 0 <= int(ex) <= 4:
                    c.mul += max(int(ex) - 1, 0)
                else:
                    c.special += 1
            rec(e.base)
            rec(e.exponent)
        elif isinstance(e, p.Call):
            name = e.function.name
            if fl and name in SPECIAL:
                c.special += 1
            elif fl and name in ("min", "max"):
                c.minmax += len(e.parameters) - 1
            for a in e.parameters:
                rec(a)
        elif isinstance(e, p.Subscript):
            for i in index_tuple(e):
                rec(i)
        elif isinstance(e, (p.Comparison,)):
            rec(e.left)
            rec(e.right)
        elif isinstance(e, (p.LogicalAnd, p.LogicalOr)):
            for ch in e.children:
                rec(ch)
        elif isinstance(e, p.LogicalNot):
            rec(e.child)
        elif isinstance(e, p.If):
            rec(e.condition)
            rec(e.then)
            rec(e.else_)
    rec(expr)
    return c


def global_accesses(kernel: Kernel, insn) -> list[tuple[str, str, int]]:
    """``(array, "load"|"store", bytes)`` for each global memory reference of
    one execution of *insn*."""
    from f2loopy.ir.expressions import accesses
    out = []
    globals_ = {a.name: a for a in kernel.args}
    written = kernel.written_variables()
    if isinstance(insn, Assignment):
        name = insn.assignee_name
        arg = globals_.get(name)
        if isinstance(arg, ArrayArg) or (isinstance(arg, ScalarArg) and name in written):
            out.append((name, "store", np.dtype(arg.dtype).itemsize))
    for e in insn.read_expressions():
        for name, idx in accesses(e):
            arg = globals_.get(name)
            if isinstance(arg, ArrayArg) and idx is not None:
                out.append((name, "load", np.dtype(arg.dtype).itemsize))
            elif isinstance(arg, ScalarArg) and name in written:
                out.append((name, "load", np.dtype(arg.dtype).itemsize))
    return out


# {{{ counting instances

def _instances(kernel: Kernel, insn, grid, params: dict) -> int:
    """How many times *insn* runs (domain points times replication)."""
    order = [i for i in kernel.all_inames() if i in insn.within_inames]
    dom = combined_domain(kernel, order)
    dom = _fix_params(dom, params)
    n = int(dom.count_val().to_python()) if order else (0 if dom.is_empty() else 1)
    if grid is not None:
        covered = set()
        for h in grid.inames:
            if h.iname in insn.within_inames:
                covered.add((h.kind, h.axis))
        for h in grid.inames:
            key = (h.kind, h.axis)
            if key in covered:
                continue
            covered.add(key)
            n *= _axis_size(grid, key, params)
    return n


def _axis_size(grid, key, params) -> int:
    kind, axis = key
    from f2loopy.ir.expressions import substitute
    from f2loopy.ir.folding import evaluate_constant
    size = grid.local_size[axis] if kind == "l" else grid.num_groups[axis]
    return int(evaluate_constant(substitute(size, {k: v for k, v in params.items()})))


def _fix_params(s: isl.Set, params: dict) -> isl.Set:
    for name, value in params.items():
        idx = s.find_dim_by_name(dim_type.param, name)
        if idx >= 0:
            s = s.fix_val(dim_type.param, idx, isl.Val(str(int(value))))
    return s

# }}}


@dataclass
class KernelStatistics:
    """Counts for one kernel at given parameter values, plus formulas."""

    params: dict
    ops: OpCounts = field(default_factory=OpCounts)
    loads: dict = field(default_factory=dict)    # array -> bytes
    stores: dict = field(default_factory=dict)   # array -> bytes
    formulas: dict = field(default_factory=dict)  # quantity -> pymbolic polynomial or None

    @property
    def flops(self) -> int:
        return self.ops.flops

    @property
    def bytes(self) -> int:
        return sum(self.loads.values()) + sum(self.stores.values())


def _raw_counts(kernel, grid, params, types):
    ops = OpCounts()
    loads: dict = {}
    stores: dict = {}
    for insn in kernel.instructions:
        if not isinstance(insn, Assignment):
            continue
        n = _instances(kernel, insn, grid, params)
        if not n:
            continue
        one = OpCounts()
        one += count_ops(insn.expression, types)
        for pr in insn.predicates:
            one += count_ops(pr, types)
        for k in ("add", "mul", "div", "special", "minmax"):
            setattr(ops, k, getattr(ops, k) + n * getattr(one, k))
        for name, kind, size in global_accesses(kernel, insn):
            d = loads if kind == "load" else stores
            d[name] = d.get(name, 0) + n * size
    return ops, loads, stores


def kernel_statistics(kernel: Kernel, params: dict, *, formulas: bool = True
                      ) -> KernelStatistics:
    """Counts of *kernel* (after code generation preprocessing) for parameter
    values *params*; with *formulas*, polynomials in the free parameters."""
    from f2loopy.codegen.grid import compute_grid
    from f2loopy.codegen.phases import without_global_barriers
    from f2loopy.codegen.preprocess import preprocess
    k = preprocess(without_global_barriers(kernel))
    grid = compute_grid(k)
    types = kernel_type_inferrer(k)
    free = [a.name for a in k.args if isinstance(a, ScalarArg) and a.fixed_value is None
            and np.dtype(a.dtype).kind in "iu" and a.name not in k.written_variables()]
    used = set()
    for d in k.domains:
        used |= set(d.get_var_names(dim_type.param))
    free = [n for n in free if n in used]
    missing = [n for n in free if n not in params]
    if missing:
        raise ValueError(f"give sizes for {', '.join(missing)}")
    ops, loads, stores = _raw_counts(k, grid, {n: params[n] for n in free}, types)
    stats = KernelStatistics({n: params[n] for n in free}, ops, loads, stores)
    if formulas and free:
        stats.formulas = _fit_formulas(k, grid, free, types, params)
    return stats


def _fit_formulas(k, grid, free, types, params, max_degree: int = 3) -> dict:
    """Polynomials in the free parameters for flops and bytes, by exact
    interpolation at small parameter values, checked at extra points."""
    def quantities(values):
        ops, loads, stores = _raw_counts(k, grid, values, types)
        return {"flops": ops.flops, "bytes": sum(loads.values()) + sum(stores.values())}

    smallest = {n: _smallest_valid(k, n, params) for n in free}
    base = {n: v for n, v in smallest.items() if v is not None}
    if len(base) != len(smallest):
        return {}
    monomials = [m for m in itertools.product(range(max_degree + 1), repeat=len(free))
                 if sum(m) <= max_degree]
    step = {n: _step(k, n) for n in free}
    points = []
    for offs in itertools.product(range(max_degree + 2), repeat=len(free)):
        points.append({n: base[n] + step[n] * o for n, o in zip(free, offs, strict=True)})
        if len(points) >= len(monomials) + 3:
            break
    samples = [(pt, quantities(pt)) for pt in points]
    out: dict = {}
    for q in ("flops", "bytes"):
        coeffs = _solve(monomials, free, [(pt, val[q]) for pt, val in samples[:len(monomials)]])
        if coeffs is None or any(_evaluate(coeffs, monomials, free, pt) != val[q]
                                 for pt, val in samples[len(monomials):]):
            out[q] = None
            continue
        out[q] = _to_expr(coeffs, monomials, free)
    return out


def _smallest_valid(k, name, params) -> int | None:
    """A small value of parameter *name* satisfying the assumptions."""
    a = k.assumptions
    for v in range(1, 64):
        s = a
        idx = s.find_dim_by_name(dim_type.param, name)
        if idx >= 0:
            s = s.fix_val(dim_type.param, idx, isl.Val(str(v)))
        if not s.is_empty():
            return v
    return None


def _step(k, name) -> int:
    """Spacing of valid values (e.g. 16 under ``n mod 16 = 0``)."""
    a = k.assumptions
    idx = a.find_dim_by_name(dim_type.param, name)
    if idx < 0:
        return 1
    try:
        return max(1, int(a.get_stride(idx).to_python()) if hasattr(a, "get_stride") else 1)
    except Exception:
        return 1


def _solve(monomials, free, samples):
    """Exact rational solution of the interpolation system (None if singular)."""
    n = len(monomials)
    rows = [[Fraction(_mono(m, free, pt)) for m in monomials] + [Fraction(val)]
            for pt, val in samples]
    if len(rows) < n:
        return None
    for col in range(n):
        piv = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if piv is None:
            return None
        rows[col], rows[piv] = rows[piv], rows[col]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                f = rows[r][col] / rows[col][col]
                rows[r] = [x - f * y for x, y in zip(rows[r], rows[col], strict=True)]
    return [rows[i][n] / rows[i][i] for i in range(n)]


def _mono(m, free, pt):
    out = 1
    for e, n in zip(m, free, strict=True):
        out *= pt[n] ** e
    return out


def _evaluate(coeffs, monomials, free, pt):
    return sum(c * _mono(m, free, pt) for c, m in zip(coeffs, monomials, strict=True))


def _to_expr(coeffs, monomials, free):
    terms = []
    for c, m in zip(coeffs, monomials, strict=True):
        if c == 0:
            continue
        factors = [p.Variable(n) if e == 1 else p.Power(p.Variable(n), e)
                   for e, n in zip(m, free, strict=True) if e]
        coef = int(c) if c.denominator == 1 else p.Quotient(c.numerator, c.denominator)
        if not factors:
            terms.append(coef)
        elif coef == 1:
            terms.append(factors[0] if len(factors) == 1 else p.Product(tuple(factors)))
        else:
            terms.append(p.Product((coef, *factors)))
    if not terms:
        return 0
    return terms[0] if len(terms) == 1 else p.Sum(tuple(terms))


def compulsory_bytes(kernel: Kernel, params: dict) -> int:
    """Bytes of global memory a kernel must move at least: every element it
    reads, once, plus every element it writes, once."""
    from f2loopy.codegen.phases import without_global_barriers
    from f2loopy.codegen.preprocess import preprocess
    from f2loopy.ir.isl_tools import pwaff_from_expr
    k = preprocess(without_global_barriers(kernel))
    total = 0
    for arg in k.args:
        if not isinstance(arg, ArrayArg):
            continue
        read_set = None
        write_set = None
        for insn in k.instructions:
            if not isinstance(insn, Assignment):
                continue
            order = [i for i in k.all_inames() if i in insn.within_inames]
            dom = _fix_params(combined_domain(k, order), params)
            refs = []
            if insn.assignee_name == arg.name:
                refs.append(("w", index_tuple(insn.assignee)))
            from f2loopy.ir.expressions import accesses
            for e in insn.read_expressions():
                for name, idx in accesses(e):
                    if name == arg.name and idx is not None:
                        refs.append(("r", idx))
            for kind, idx in refs:
                outs = [f"_x{j}" for j in range(len(idx))]
                s = dom.add_dims(dim_type.set, len(outs))
                for j, o in enumerate(outs):
                    s = s.set_dim_name(dim_type.set, len(order) + j, o)
                from f2loopy.ir.isl_tools import lazy_affs
                affs = lazy_affs(s.get_space())
                for o, e in zip(outs, idx, strict=True):
                    s = s & affs[o].eq_set(pwaff_from_expr(e, s.get_space()))
                for j in range(len(order)):
                    s = s.project_out(dim_type.set, 0, 1)
                if kind == "w":
                    write_set = s if write_set is None else write_set | s
                else:
                    read_set = s if read_set is None else read_set | s
        size = np.dtype(arg.dtype).itemsize
        for s in (read_set, write_set):
            if s is not None:
                total += size * int(s.coalesce().count_val().to_python())
    return total
