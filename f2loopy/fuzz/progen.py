"""Random Fortran programs in the subset f2loopy translates (differential fuzzing).

:func:`generate_program` builds a :class:`Program` from a seed: one subroutine
with size arguments, input and output arrays of several kinds and ranks (some
with lower bounds other than 1 and halos), scalar inputs and outputs, and a
body of random statements: affine loop nests (rectangular, triangular,
constant trip counts, steps, reversed loops, CSR-style data-dependent bounds),
``if``/``else if``/``else``, ``cycle``, assignments to array elements, local
temporaries and accumulators, with arithmetic over mixed kinds (promotion,
literal kinds), integer division and ``mod``, relational and logical
operators and the supported intrinsics.

Programs are built so that both sides must compute the same thing:

* every subscript stays in bounds for *every* size in [1, 16] (checked with
  isl as the program is built), and index arrays (``x(ix(i))``, row
  pointers) are left to the input planner of :mod:`f2loopy.verify.inputs`;
* values stay bounded: inputs are small, a value stored into a variable the
  program writes is clamped (``max(-C, min(C, e))``) when its bound could
  exceed C, ``exp`` only sees bounded arguments, divisors are bounded away
  from zero (``1.0 + abs(e)``), ``sqrt``/``log`` get non-negative/positive
  arguments, ``asin``/``acos`` arguments in (-1, 1);
* discontinuous operations (comparisons, ``int``/``nint``/``floor``, ``mod``
  of reals, ``sign``, the first argument of ``atan2``) only see values that
  both compilers compute bit for bit (``+ - *``, ``abs``, ``min``/``max``,
  conversions; not ``/``, ``sqrt``, transcendental functions, whose last bit
  may differ between libraries);
* every local variable is set in a prologue before the body runs.

The program is kept as a small tree (:class:`Program`) so that a failing one
can be shrunk (:func:`shrink_candidates`) and rendered again.
"""

from __future__ import annotations

import functools

import islpy as isl
import numpy as np

from f2loopy.fuzz.progen_control import ControlMixin, loop_variables
from f2loopy.fuzz.progen_expressions import ExpressionsMixin
from f2loopy.fuzz.progen_kinds import KindsMixin
from f2loopy.fuzz.program import (
    _REAL_LITS, CLAMP, INT_RANGE, REAL_RANGE, SIZE_BOX, Assign, CallStmt, Cycle, Do,
    DoConcurrent, Expr, Helper, If, OneLineIf, Program, Return, Select, Variable, _all_exprs,
    _children, _wider, lit)

class _Env:
    """Loops enclosing the statement being generated."""

    def __init__(self, sizes):
        self.sizes = sizes
        self.loops: list = []          # (var, isl_lo, isl_hi)
        self.section = None            # length of the array sections (array syntax)
        self.pure = False              # only inputs and loop indices (do concurrent)
        self.in_helper = False
        self.names: list = []          # construct names of the enclosing loops
        self.labels: list = []         # labels a forward goto may jump to
        self.back_labels: list = []    # labels a backward goto may jump to
        self.do_labels: list = []      # terminal labels of enclosing labelled loops

    def domain(self, extra: str = "") -> isl.Set:
        names = [v for v, _, _ in self.loops]
        cons = [f"{SIZE_BOX[0]} <= {s} <= {SIZE_BOX[1]}" for s in self.sizes]
        cons += [f"{lo} <= {v} <= {hi}" for v, lo, hi in self.loops]
        if extra:
            cons.append(extra)
        text = f"[{', '.join(self.sizes)}] -> {{ [{', '.join(names)}] : {' and '.join(cons)} }}"
        return _parsed_set(text)


@functools.lru_cache(maxsize=4096)
def _parsed_set(text: str) -> isl.Set:
    """The isl set of *text* (parsing took three quarters of generating a
    program, and three of five bound checks ask about a set asked before)."""
    return isl.Set(text)


class Generator(ExpressionsMixin, ControlMixin, KindsMixin):
    """Builds one random program (see the module docstring)."""

    def __init__(self, seed: int, *, max_statements: int = 10, max_depth: int = 3):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.max_statements = max_statements
        self.max_depth = max_depth
        self.n_loops = 0
        self.budget = 0
        self.init_control()

    # {{{ declarations

    def declare(self):
        sizes = ["n"] + (["m"] if self.chance(0.7) else [])
        self.sizes = sizes
        args = [Variable(s, "i4", intent="in", role="size") for s in sizes]

        def shape(ndim):
            dims = []
            for _ in range(ndim):
                s = self.pick(sizes + ["3", "4"] if ndim > 1 else sizes)
                kind = self.int_in(0, 9)
                if s in ("3", "4"):
                    dims.append(("1", s))
                elif kind < 5:
                    dims.append(("1", s))
                elif kind < 7:
                    dims.append(("0", f"{s}+1"))        # a halo
                elif kind < 8:
                    dims.append(("-1", s))
                else:
                    dims.append(("1", f"{s}+2"))
            return tuple(dims)

        arrays = []
        n_in = self.int_in(1, 3)
        names = iter("abcdefgh")
        for _ in range(n_in):
            kind = self.pick(["r4", "r4", "r8", "i4"])
            arrays.append(Variable(next(names), kind, shape(self.int_in(1, 3)), "in", "data",
                                   INT_RANGE[1] if kind == "i4" else REAL_RANGE[1]))
        n_out = self.int_in(1, 2)
        outs = iter("uvw")
        for _ in range(n_out):
            kind = self.pick(["r4", "r8", "r4", "i4"])
            arrays.append(Variable(next(outs), kind, shape(self.int_in(1, 3)), "inout", "out",
                                   CLAMP))
        if self.chance(0.25):
            arrays.append(Variable("mask", "l", shape(1), "in", "data", 1))
        if self.chance(0.25):
            # an index array: x(ix(i)) (values chosen by the input planner)
            arrays.append(Variable("ix", "i4", (("1", sizes[0]),), "in", "index", 0))
        self.csr = len(sizes) > 1 and self.chance(0.15)
        if self.csr:
            arrays.append(Variable("ptr", "i4", (("1", "n+1"),), "in", "ptr", 0))
            arrays.append(Variable("val", "r4", (("1", "m"),), "in", "data", REAL_RANGE[1]))
            arrays.append(Variable("col", "i4", (("1", "m"),), "in", "index", 0))
        scalars = []
        if self.chance(0.6):
            scalars.append(Variable("alpha", self.pick(["r4", "r8"]), (), "in", "data",
                                    REAL_RANGE[1]))
        if self.chance(0.3):
            scalars.append(Variable("kk", "i4", (), "in", "data", INT_RANGE[1]))
        outs_s = []
        if self.chance(0.6):
            outs_s.append(Variable("s", self.pick(["r4", "r8"]), (), "inout", "out", CLAMP))
        if self.chance(0.3):
            outs_s.append(Variable("cnt", "i4", (), "inout", "out", CLAMP))
        if self.chance(0.15):
            outs_s.append(Variable("flag", "l", (), "inout", "out", 1))
        self.args = args + scalars + arrays + outs_s
        for v in self.args:
            if v.kind == "r8":
                v.spelling = self.pick(["double precision", "real*8", "real(8)",
                                        "real(kind=8)", "double precision"])
            elif v.kind == "r4" and self.chance(0.2):
                v.spelling = self.pick(["real*4", "real(4)", "real(kind=4)"])
        locs = [Variable("t1", "r4", role="local", bound=CLAMP),
                Variable("t2", "r8", role="local", bound=CLAMP),
                Variable("it", "i4", role="local", bound=CLAMP)]
        if self.chance(0.3):
            locs.append(Variable("lg", "l", role="local", bound=1))
        if self.chance(0.3):
            locs.append(Variable("wk", "r4", (("1", "4"),), role="local", bound=CLAMP))
        if self.chance(0.3):
            text, value = self.pick(_REAL_LITS["r4"])
            locs.append(Variable("c0", "r4", role="param", bound=value, value=text))
        if self.chance(0.2):
            locs.append(Variable("k0", "i4", role="param", bound=3,
                                 value=str(self.int_in(-3, 3))))
        locs += self.derived_constants(locs)
        if self.chance(0.25):
            vals = [self.pick(["0.5", "1.5", "-0.25", "2.0", "0.125"]) for _ in range(4)]
            locs.append(Variable("tab", "r4", (("1", "4"),), role="table", bound=2.0,
                                 value=", ".join(vals)))
        locs.append(self.counter_variable())
        locs = self.kind_parameters() + locs
        self.respell(self.args + locs)
        self.locals = locs
        for v in self.args + self.locals:
            if v.role in ("out", "local") and v.kind in ("r4", "r8"):
                v.exact = self.chance(0.4)
        self.vars = {v.name: v for v in self.args + self.locals}
        self.loose64 = False
        self.helpers = []
        self.functions = []
        self.helper_module = self.chance(0.5)
        for k in range(self.int_in(0, 2)):
            self.helpers.append(self.helper(k))
        self.functions = [h for h in self.helpers if h.is_function]

    def helper(self, k: int) -> "Helper":
        """A small subroutine or function of scalars, called from the body."""
        kind = self.pick(["r4", "r8"])
        is_function = self.chance(0.5)
        name = f"{'f' if is_function else 'h'}{k + 1}"
        nargs = self.int_in(1, 2)
        args = [Variable(x, kind, (), "in", "hdata", CLAMP) for x in ("x", "y")[:nargs]]
        saved = self.vars
        self.vars = {a.name: a for a in args}
        env = _Env([])
        env.in_helper = True
        env.pure = True
        try:
            value = self.expr(env, kind)
            if self.chance(0.4):
                other = self.expr(env, kind)
                cond = self.comparison(env)
                body_value = None
            else:
                body_value = value
        finally:
            self.vars = saved
        result = name
        result_name = ""
        if is_function and self.chance(0.3):
            result = result_name = "res"
        res = Expr("var", kind, result, (), CLAMP, False)
        if not is_function:
            args.append(Variable("r", kind, (), "out", "hout", CLAMP))
            res = Expr("var", kind, "r", (), CLAMP, False)
        body: list[Assign | If]
        if body_value is not None:
            body = [self.stored(res, self.fit(value, kind))]
        else:
            body = [If([(cond, [self.stored(res, self.fit(value, kind))])],
                       [self.stored(res, self.fit(other, kind))])]
        h = Helper(name, kind, is_function, args, body, result_name,
                   pure=self.helper_module and self.chance(0.8))
        h.det = all(e.det for st in body for e in _all_exprs(st) if e is not res)
        return h

    def prologue(self):
        out = []
        for v in self.locals:
            if v.role in ("param", "table"):
                continue
            if v.is_array:
                for k in range(1, 5):
                    out.append(Assign(Expr("ref", v.kind, v.name, (lit(str(k), "i4", k),),
                                           CLAMP), lit(f"{k}.0", "r4", k)))
            else:
                value = {"r4": lit("0.0", "r4", 0), "r8": lit("1.0d0", "r8", 1),
                         "i4": lit("0", "i4", 0), "l": lit(".false.", "l", 0)}[v.kind]
                out.append(Assign(Expr("var", v.kind, v.name, (), CLAMP), value))
        return out

    # }}}

    # {{{ subscripts

    def index_for(self, env: _Env, lb: str, ub: str):
        """An affine subscript in [lb, ub] for every size in the box, or None."""
        cands = []
        for var, _, _ in env.loops:
            for off in (0, 0, 0, 1, -1, 2):
                cands.append(f"{var} + {off}" if off > 0 else
                             (f"{var} - {-off}" if off < 0 else var))
            cands.append(f"2*{var}")
            cands.append(f"{var} - 1")
        for s in self.sizes:
            cands.append(s)
            cands.append(f"{s} - {var}" if env.loops else s)
        cands += ["1", "2", lb, ub]
        order = list(self.rng.permutation(len(cands)))
        for k in order[:12]:
            c = cands[int(k)]
            if self.in_bounds(env, c, lb, ub):
                return c
        return None

    def in_bounds(self, env: _Env, idx: str, lb: str, ub: str) -> bool:
        try:
            bad = env.domain(f"({idx} < {lb} or {idx} > {ub})")
        except isl.Error:
            return False
        return bad.is_empty()

    def array_ref(self, env: _Env, var: Variable):
        idx = []
        for lb, ub in var.dims:
            c = self.index_for(env, lb, ub)
            if c is None:
                return None
            idx.append(Expr("lit", "i4", c, (), 0.0, True))
        return Expr("ref", var.kind, var.name, tuple(idx), var.bound, var.exact)

    def indirect_ref(self, env: _Env, var: Variable):
        """``x(ix(...))`` on a 1-D array *var* (ix's values are planned)."""
        ix = self.vars.get("ix")
        if ix is None or len(var.dims) != 1 or var.role == "index":
            return None
        inner = self.array_ref(env, ix)
        if inner is None:
            return None
        return Expr("ref", var.kind, var.name, (Expr("ref", "i4", "ix", inner.args, 0, True),),
                    var.bound, var.exact)

    # }}}

    # {{{ statements

    def stored(self, target: Expr, value: Expr) -> Assign:
        """``target = value``, clamped to the variable's bound."""
        kind = target.kind
        if kind == "l":
            return Assign(target, value)
        if target.det and not value.det:
            # an exact variable keeps exact values (comparisons may read it)
            value = lit("0" if kind == "i4" else ("0.0d0" if kind == "r8" else "0.0"), kind, 0)
        if kind == "r8" and any(n.kind == "r4" and not n.det for n in value.walk()):
            self.loose64 = True       # single-precision rounding reaches a double
        if kind == "i4" and value.kind != "i4":
            value = self.convert(value, "i4") if value.det else lit("1", "i4", 1)
        if value.bound > CLAMP:
            if kind == "i4":
                c = lit(str(int(CLAMP)), "i4", CLAMP)
            else:
                c = lit("1000.0" if value.kind != "r8" else "1000.0d0", value.kind, CLAMP)
            ck = c.kind if kind != "i4" else "i4"
            v = value if value.kind == ck else self.convert(value, ck)
            value = Expr("call", ck, "max", (
                Expr("un", ck, "-", (c,), CLAMP, True),
                Expr("call", ck, "min", (c, v), CLAMP, v.det)), CLAMP, v.det)
        return Assign(target, value)

    def target(self, env, want_kind=None):
        cands = [v for v in self.vars.values() if v.role in ("out", "local")]
        if want_kind:
            cands = [v for v in cands if v.kind == want_kind] or cands
        for _ in range(5):
            v = self.pick(cands)
            if v.is_array:
                e = self.array_ref(env, v)
                if e is None:
                    continue
                return e
            return Expr("var", v.kind, v.name, (), v.bound, v.exact)
        return None

    def assignment(self, env):
        t = self.target(env)
        if t is None:
            return None
        if t.kind == "l":
            return Assign(t, self.logical(env, 0))
        r = self.rng.random()
        if r < 0.35 and t.kind != "l":
            # accumulate: t = t + e, or max/min
            e = self.expr(env, t.kind if t.kind != "i4" else "i4", t.kind == "i4" or t.det)
            if t.kind == "i4" and e.kind != "i4":
                e = self.convert(e, "i4")
            if self.chance(0.7):
                value = Expr("bin", _wider(t.kind, e.kind), self.pick(["+", "-"]), (t, e),
                             t.bound + e.bound, t.det and e.det)
            else:
                e2 = self.same_kind(e, t.kind)
                value = Expr("call", t.kind, self.pick(["max", "min"]), (t, e2),
                             max(t.bound, e2.bound), e2.det)
            return self.stored(t, self.fit(value, t.kind) if t.kind != "i4" else value)
        e = self.expr(env, t.kind, t.kind == "i4" or t.det)
        return self.stored(t, self.fit(e, t.kind) if t.kind != "i4" else e)

    def loop(self, env, depth):
        self.n_loops += 1
        var = f"i{self.n_loops}"
        outer = [v for v, _, _ in env.loops]
        r = self.int_in(0, 9)
        size = self.pick(self.sizes)
        lo, hi = "1", size
        if r == 0 and outer:
            lo = self.pick(outer)                 # triangular
        elif r == 1 and outer:
            hi = self.pick(outer)
        elif r == 2:
            lo, hi = "1", str(self.int_in(2, 4))
        elif r == 3:
            lo = "2"
            hi = f"{size} - 1"
        elif r == 4:
            lo = "0"
            hi = f"{size} + 1"
        elif r == 5 and len(self.sizes) > 1:
            hi = "min(n, m)"
        step = 1
        if self.chance(0.12):
            step = self.pick([2, 3, -1, -2])
        runtime = self.runtime_step() if self.chance(0.1) else None
        d = Do(var, lo, hi, step, [], isl_lo=lo, isl_hi=hi)
        if runtime is not None:
            d.step, (d.rstep, d.rsign) = 0, runtime
        if self.chance(0.08) and step == 1:
            d.label = 10 * (self.n_loops + 1)
        elif self.chance(0.1) and not self.fixed_form:
            # (construct names in fixed form: fparser refuses them)
            d.name = f"l{self.n_loops}"
        env.loops.append((var, lo, hi))
        env.names.append(d.name)
        if d.label is not None:
            env.do_labels.append(d.label)
        try:
            d.body = self.block(env, depth + 1, self.int_in(1, 4))
        finally:
            env.loops.pop()
            env.names.pop()
            if d.label is not None:
                env.do_labels.pop()
        return d

    def csr_loop(self, env, depth):
        """do j = ptr(i), ptr(i+1) - 1 inside a loop over i = 1..n."""
        outer = [v for v, lo, hi in env.loops if lo == "1" and hi == "n"]
        if not outer:
            return None
        i = self.pick(outer)
        self.n_loops += 1
        var = f"i{self.n_loops}"
        d = Do(var, f"ptr({i})", f"ptr({i} + 1) - 1", 1, [], isl_lo="1", isl_hi="m")
        env.loops.append((var, "1", "m"))
        env.names.append(None)
        try:
            d.body = self.block(env, depth + 1, self.int_in(1, 3))
        finally:
            env.loops.pop()
            env.names.pop()
        return d

    def concurrent(self, env, depth):
        """``do concurrent`` writing one element per iteration from inputs only."""
        outs = [v for v in self.vars.values() if v.role == "out" and v.is_array]
        if not outs:
            return None
        target = self.pick(outs)
        n_heads = min(self.int_in(1, 2), len(target.dims))
        axes = list(self.rng.permutation(len(target.dims)))[:n_heads]
        outer_env_loops = list(env.loops)
        heads = []
        idx: list[Expr | None] = [None] * len(target.dims)
        for ax in axes:
            lb, ub = target.dims[int(ax)]
            self.n_loops += 1
            var = f"i{self.n_loops}"
            lo, hi = self.pick([("1", self.pick(self.sizes)), ("2", self.pick(self.sizes)),
                                (lb, ub)])
            env.loops.append((var, lo, hi))
            if not self.in_bounds(env, var, lb, ub):
                env.loops = outer_env_loops
                return None
            heads.append((var, lo, hi))
            idx[int(ax)] = Expr("lit", "i4", var, (), 0.0, True)
        # the other subscripts may not use the heads' variables; giving up
        # leaves the outer loops only (the heads would leak into later statements)
        saved = env.loops
        env.loops = outer_env_loops
        for d, (lb, ub) in enumerate(target.dims):
            if idx[d] is None:
                c = self.index_for(env, lb, ub)
                if c is None:
                    return None
                idx[d] = Expr("lit", "i4", c, (), 0.0, True)
        env.loops = saved
        env.pure = True
        try:
            t = Expr("ref", target.kind, target.name, tuple(idx), target.bound, target.exact)
            value = self.expr(env, target.kind, target.kind == "i4" or target.exact)
            body = [self.stored(t, self.fit(value, t.kind) if t.kind != "i4" else value)]
            mask = self.logical(env, 1) if self.chance(0.4) else None
        finally:
            env.pure = False
            env.loops = outer_env_loops
        return DoConcurrent(heads, mask, body)

    def array_statement(self, env):
        """Array syntax: ``u(2:n) = a(1:n-1) * 2 + ...`` or ``u = scalar``."""
        outs = [v for v in self.vars.values() if v.role == "out" and v.is_array]
        if not outs:
            return None
        v = self.pick(outs)
        if self.chance(0.15):
            value = self.expr(env, v.kind, v.kind == "i4" or v.exact, 1)
            if v.name in value.names():
                return None
            return self.stored(Expr("var", v.kind, v.name, (), v.bound, v.exact),
                               self.fit(value, v.kind) if v.kind != "i4" else value)
        env.section = len_section = self.pick(self.sizes + [f"{self.sizes[0]} - 1", "3", "2"])
        try:
            t = self.section_ref(env, v)
            if t is None:
                return None
            value = self.expr(env, v.kind, v.kind == "i4" or v.exact)
        finally:
            env.section = None
        if any(x.op == "ref" and x.text == v.name and not any(":" in i.text for i in x.args)
               for x in value.walk()):
            # an element of the array being assigned: f2loopy asks for a temporary
            return None
        st = self.stored(t, self.fit(value, v.kind) if v.kind != "i4" else value)
        if self.chance(0.3):
            # where (mask) u(...) = ...: a mask of the section's shape, on exact values
            env.section = len_section
            try:
                mask = self.logical(env, 1)
            finally:
                env.section = None
            if any(":" in i.text for x in mask.walk() for i in x.args) and \
                    v.name not in mask.names():
                return OneLineIf(mask, st, keyword="where")
        return st

    def select_statement(self, env, depth):
        sel = self.expr(env, "i4", True, 1)
        values = sorted(set(int(x) for x in self.rng.integers(-3, 9, size=self.int_in(1, 5))))
        k = self.int_in(1, min(3, len(values)))
        cuts = sorted(self.rng.choice(range(1, len(values)), size=k - 1, replace=False)) \
            if k > 1 else []
        groups = [values[a:b] for a, b in zip([0] + list(cuts), list(cuts) + [len(values)], strict=True)]
        cases = []
        for gi, g in enumerate(groups):
            r = self.int_in(0, 5)
            if gi == 0 and r == 0:
                sel_text = [f":{g[-1]}"]
            elif gi == len(groups) - 1 and r == 1:
                sel_text = [f"{g[0]}:"]
            elif len(g) > 1 and r <= 3:
                sel_text = [f"{g[0]}:{g[-1]}"]
            else:
                sel_text = [str(x) for x in g]
            cases.append((sel_text, self.block(env, depth, self.int_in(1, 2))))
        default = self.block(env, depth, 1) if self.chance(0.5) else None
        return Select(sel, cases, default)

    def call_statement(self, env):
        subs = [h for h in self.helpers if not h.is_function]
        if not subs:
            return None
        h = self.pick(subs)
        t = self.target(env, want_kind=h.kind)
        if t is None or t.kind != h.kind:
            return None
        args = []
        for a in h.args[:-1]:
            e = self.same_kind(self.fit(self.expr(env, a.kind, False, 1), a.kind), a.kind)
            if e.kind != a.kind or t.text in e.names():
                return None          # no aliasing between inputs and the output
            args.append(e)
        if t.det and not (h.det and all(a.det for a in args)):
            return None
        if t.kind == "r8" and (h.kind == "r4" and not h.det):
            self.loose64 = True
        return CallStmt(h.name, (*args, t))

    def if_block(self, env, depth):
        branches = [(self.logical(env, 0), self.block(env, depth, self.int_in(1, 3)))]
        while self.chance(0.3):
            branches.append((self.logical(env, 0), self.block(env, depth, self.int_in(1, 2))))
        els = self.block(env, depth, self.int_in(1, 2)) if self.chance(0.5) else None
        return If(branches, els)

    def statement(self, env, depth):
        if self.chance(0.12):
            st = self.control_statement(env)
            if st is not None:
                return st
        r = self.rng.random()
        in_loop = bool(env.loops)
        if r < 0.22 and depth < self.max_depth:
            return self.loop(env, depth)
        if r < 0.27 and self.csr and in_loop and depth < self.max_depth:
            s = self.csr_loop(env, depth)
            if s is not None:
                return s
        if r < 0.37:
            return self.if_block(env, depth)
        if r < 0.42:
            a = self.assignment(env)
            if a is not None:
                return OneLineIf(self.logical(env, 1), a)
        if r < 0.45 and in_loop:
            names = [n for n in env.names if n]
            name = self.pick(names) if names and self.chance(0.5) else None
            return OneLineIf(self.logical(env, 1), Cycle(name))
        if r < 0.46:
            return OneLineIf(self.logical(env, 1), Return())
        if r < 0.51:
            st = self.select_statement(env, depth)
            if st is not None:
                return st
        if r < 0.57:
            st = self.array_statement(env)
            if st is not None:
                return st
        if r < 0.61:
            st = self.call_statement(env)
            if st is not None:
                return st
        if r < 0.64 and depth < self.max_depth:
            st = self.concurrent(env, depth)
            if st is not None:
                return st
        return self.assignment(env)

    def block(self, env, depth, n):
        out: list = []
        labels = self.open_labels(env, out)
        try:
            for _ in range(n):
                if self.budget <= 0:
                    break
                self.budget -= 1
                s = self.statement(env, depth)
                if s is not None:
                    out.append(s)
                if isinstance(s, Do) and self.chance(0.25):
                    # the loop variable after its loop: past the end, or where
                    # an exit, a cycle of an outer loop or a goto left it
                    self.read_loop_variable(env, out, s.var)
        finally:
            self.close_labels(env, out, *labels)
        return out

    # }}}

    def generate(self) -> Program:
        self.fixed_form = self.chance(0.15)
        self.declare()
        env = _Env(self.sizes)
        self.budget = self.int_in(3, self.max_statements)
        body: list = []
        # most programs start with a loop nest
        while self.budget > 0:
            if not body or self.chance(0.6):
                self.budget -= 1
                body.append(self.loop(env, 0))
            else:
                body.extend(self.block(env, 0, 1))
        # loop variables read after loops that may not have run are defined
        prologue = self.prologue() + [
            Assign(Expr("var", "i4", v, (), 0), lit("0", "i4", 0))
            for v in dict.fromkeys(v for s in body for v in loop_variables(s))]
        prog = Program(f"fz{self.seed}", self.args, self.locals, prologue, body,
                       [f"i{k}" for k in range(1, self.n_loops + 1)], seed=self.seed,
                       helpers=self.helpers, helper_module=self.helper_module,
                       loose64=self.loose64)
        prog.fixed_form = self.fixed_form
        prog.upper = self.chance(0.5 if self.fixed_form else 0.1)
        return prog


def generate_program(seed: int, **options) -> Program:
    """A random program (deterministic in *seed*)."""
    return Generator(seed, **options).generate()


# {{{ transformations

def loops_of(program: Program):
    """``(Do, depth, enclosing Do list)`` for every loop of the body."""
    out = []

    def visit(stmts, outer):
        for s in stmts:
            if isinstance(s, Do):
                out.append((s, len(outer), list(outer)))
                visit(s.body, outer + [s])
            elif isinstance(s, If):
                for b in _children(s):
                    visit(b, outer)
    visit(program.body, [])
    return out


# }}}


# {{{ shrinking
