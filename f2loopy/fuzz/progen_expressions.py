"""Random expressions of the differential fuzzer's programs (a mixin of
:class:`f2loopy.fuzz.progen.Generator`): typed, bounded, and built so that
gfortran and OpenCL compute the same values (see :mod:`f2loopy.fuzz.progen`)."""

from __future__ import annotations

import islpy as isl
import numpy as np

from f2loopy.fuzz.progen_base import GeneratorBase
from f2loopy.fuzz.program import _REAL_LITS, CLAMP, SIZE_BOX, Expr, Variable, _wider, lit


class ExpressionsMixin(GeneratorBase):
    """Expressions (mixed into the Generator)."""

    def readable(self, env, v: Variable) -> bool:
        if v.role in ("size", "index", "ptr"):
            return False
        if env.pure:
            return v.role in ("data", "param", "table", "hdata")
        return v.role not in ("hdata", "hout")

    def leaf(self, env, kind, det):
        """A variable, array element or literal of *kind* (or convertible)."""
        for _ in range(6):
            r = self.rng.random()
            if r < 0.15:
                c = self.constant_leaf(kind, env)
                if c is not None:
                    return c
            if kind == "l":
                logicals = [v for v in self.vars.values() if v.kind == "l"
                            and self.readable(env, v)]
                if logicals and r < 0.5 and not env.section:
                    v = self.pick(logicals)
                    e = self.array_ref(env, v) if v.is_array else \
                        Expr("var", "l", v.name, (), 1, True)
                    if e is not None:
                        return e
                return self.comparison(env, det=True)
            if r < 0.15:
                if kind == "i4":
                    small = self.int_in(0, 7)
                    return lit(self.kind_suffix(str(small), "i4", env), "i4", small)
                text, value = self.pick(_REAL_LITS[kind])
                return lit(self.kind_suffix(text, kind, env), kind, value)
            if r < 0.3 and env.loops and kind in ("i4", "r4", "r8"):
                var = self.pick([v for v, _, _ in env.loops])
                e = Expr("var", "i4", var, (), float(SIZE_BOX[1] * 2 + 2), True)
                return e if kind == "i4" else self.convert(e, kind)
            if r < 0.35 and kind == "i4" and not env.in_helper:
                s = self.pick(self.sizes)
                return Expr("var", "i4", s, (), float(SIZE_BOX[1] + 2), True)
            if r < 0.38 and kind == "i4" and not env.in_helper:
                e = self.inquiry(env)
                if e is not None:
                    return e
            if r < 0.45 and kind in ("r4", "r8") and self.functions and not env.in_helper \
                    and not env.section:
                e = self.function_call(env, kind)
                if e is not None and (e.det or not det):
                    return e
            if r < 0.5 and not env.section and not env.in_helper:
                e = self.reduction(env, kind)
                if e is not None and (e.det or not det):
                    return e
            cands = [v for v in self.vars.values() if v.kind == kind and self.readable(env, v)
                     and (v.exact or not det)]
            if not cands:
                cands = [v for v in self.vars.values()
                         if v.kind in ("i4", "r4", "r8") and self.readable(env, v)
                         and (v.exact or not det)]
            if not cands:
                break
            v = self.pick(cands)
            if v.is_array:
                e = None
                if env.section and self.chance(0.7):
                    e = self.section_ref(env, v)
                elif v.role == "data" and "ix" in self.vars and self.chance(0.3):
                    e = self.indirect_ref(env, v)
                if e is None:
                    e = self.array_ref(env, v)
                if e is None:
                    continue
            else:
                e = Expr("var", v.kind, v.name, (), v.bound, v.exact)
            if e.kind != kind:
                if kind == "i4" and e.kind in ("r4", "r8"):
                    continue
                e = self.convert(e, kind)
            return e
        fallback = {"i4": ("1", 1), "r4": ("1.0", 1.0), "r8": ("1.0d0", 1.0),
                    "l": (".true.", 1)}[kind]
        return lit(fallback[0], kind, fallback[1])

    def inquiry(self, env):
        """``size(a, d)``, ``lbound(a, d)`` or ``ubound(a, d)`` of an argument array."""
        arrays = [v for v in self.args if v.is_array]
        if not arrays:
            return None
        v = self.pick(arrays)
        d = self.int_in(1, len(v.dims))
        fn = self.pick(["size", "lbound", "ubound", "size"])
        if fn == "size" and len(v.dims) == 1 and self.chance(0.5):
            return Expr("call", "i4", "size", (Expr("var", v.kind, v.name, (), 0, True),),
                        float(SIZE_BOX[1] + 3), True)
        return Expr("call", "i4", fn, (Expr("var", v.kind, v.name, (), 0, True),
                                       lit(str(d), "i4", d)), float(SIZE_BOX[1] + 3), True)

    def function_call(self, env, kind):
        usable = [h for h in self.functions if h.pure or not env.pure]
        if not usable:
            return None
        h = self.pick(usable)
        args = []
        for a in h.args:
            e = self.expr(env, a.kind, False, 2)
            e = self.same_kind(self.fit(e, a.kind), a.kind)
            if e.kind != a.kind:
                return None
            args.append(e)
        call = Expr("call", h.kind, h.name, tuple(args), CLAMP,
                    h.det and all(x.det for x in args))
        return self.fit(call, kind) if kind != h.kind else call

    def reduction(self, env, kind):
        """``sum``/``product``/``maxval``/``minval``/``dot_product`` of an
        expression over array sections."""
        lengths = [x for x in self.sizes] + ["3", "2"]
        length = self.pick(lengths)
        fn = self.pick(["sum", "maxval", "minval", "sum", "dot_product", "product"])
        env.section = length
        try:
            a = self.expr(env, kind, False, 2)
            b = self.expr(env, kind, False, 2) if fn == "dot_product" else None
        finally:
            env.section = None
        if not any(x.op == "lit" and ":" in x.text for x in a.walk()):
            return None
        if fn == "dot_product":
            if b is None or not any(x.op == "lit" and ":" in x.text for x in b.walk()):
                return None
            b = self.same_kind(b, a.kind)
            if b.kind != a.kind:
                return None
            return Expr("call", a.kind, fn, (a, b), a.bound * b.bound * 20, False)
        if fn == "product":
            if a.bound > 2:
                return None
            return Expr("call", a.kind, fn, (a,), 2.0 ** 18, False)
        bound = a.bound * 20 if fn == "sum" else a.bound
        # maxval/minval of exactly reproducible elements are exact
        return Expr("call", a.kind, fn, (a,), bound, a.det and fn != "sum")

    def section_for(self, env, lb, ub, length):
        """Section text ``start:end`` of *length* elements inside [lb, ub]."""
        cands = [lb, "1", "2", f"{lb} + 1", "0"]
        order = list(self.rng.permutation(len(cands)))
        for k in order:
            start = cands[int(k)]
            try:
                bad = env.domain(f"{length} >= 1 and ({start} < {lb} or "
                                 f"{start} + {length} - 1 > {ub})")
            except isl.Error:
                continue
            if not bad.is_empty():
                continue
            if lb == "1" and ub == length and start == "1" and self.chance(0.5):
                return ":"
            end = length if start == "1" else f"{start} + {length} - 1"
            if self.chance(0.15):
                return f"{end}:{start}:-1"
            return f"{start}:{end}"
        return None

    def section_ref(self, env, var):
        axis = self.int_in(0, len(var.dims) - 1)
        idx = []
        for d, (lb, ub) in enumerate(var.dims):
            if d == axis:
                sec = self.section_for(env, lb, ub, env.section)
            else:
                sec = self.index_for(env, lb, ub)
            if sec is None:
                return None
            idx.append(Expr("lit", "i4", sec, (), 0.0, True))
        return Expr("ref", var.kind, var.name, tuple(idx), var.bound, var.exact)

    def convert(self, e: Expr, kind: str) -> Expr:
        if e.kind == kind:
            return e
        if kind == "r4":
            return Expr("call", "r4", self.pick(["real", "real"] + (["float"] if e.kind == "i4"
                                                                    else ["sngl"])),
                        (e,), e.bound, e.det)
        if kind == "r8":
            return Expr("call", "r8", "dble", (e,), e.bound, e.det)
        if kind == "i4":
            if not e.det:
                raise ValueError("int() of a value that is not exactly reproducible")
            fn = self.pick(["int", "nint", "floor", "ceiling"])
            return Expr("call", "i4", fn, (e,), e.bound + 1, True)
        raise ValueError(kind)

    def expr(self, env, kind: str, det: bool = False, depth: int = 0) -> Expr:
        """A random expression of *kind*; only exactly reproducible
        operations if *det*."""
        if kind == "l":
            return self.logical(env, depth)
        if depth >= 3 or self.chance(0.3 + 0.15 * depth):
            return self.leaf(env, kind, det)
        if kind == "i4":
            return self.int_op(env, depth)
        return self.real_op(env, kind, det, depth)

    def int_op(self, env, depth):
        a = self.expr(env, "i4", True, depth + 1)
        r = self.int_in(0, 13)
        if r <= 3:
            b = self.expr(env, "i4", True, depth + 1)
            op = self.pick(["+", "-", "+", "-", "*"])
            if op == "*" and a.bound * b.bound > 1e5:
                op = "+"
            bound = a.bound * b.bound if op == "*" else a.bound + b.bound
            return Expr("bin", "i4", op, (a, b), bound, True)
        if r == 4:
            c = self.pick([2, 3, -2, 5, 7, -3])
            return Expr("bin", "i4", "/", (a, lit(str(c) if c > 0 else f"({c})", "i4", c)),
                        a.bound, True)
        if r == 5:
            c = self.pick([2, 3, 5, -3])
            fn = self.pick(["mod", "modulo"])
            return Expr("call", "i4", fn, (a, lit(str(c), "i4", c)), abs(c), True)
        if r == 6:
            return Expr("call", "i4", "abs", (a,), a.bound, True)
        if r == 7:
            b = self.expr(env, "i4", True, depth + 1)
            fn = self.pick(["min", "max"])
            return Expr("call", "i4", fn, (a, b), max(a.bound, b.bound), True)
        if r == 8:
            b = self.expr(env, "i4", True, depth + 1)
            return Expr("call", "i4", self.pick(["sign", "dim"]), (a, b),
                        a.bound + b.bound, True)
        if r == 9 and a.bound < 300:
            return Expr("bin", "i4", "**", (a, lit("2", "i4", 2)), a.bound ** 2, True)
        if r == 10:
            x = self.expr(env, self.pick(["r4", "r8"]), True, depth + 1)
            if x.bound < 1e6:
                return self.convert(x, "i4")
        if r == 11:
            # division by a value that is never zero
            b = self.expr(env, "i4", True, depth + 1)
            den = Expr("paren", "i4", "", (Expr("bin", "i4", "+", (
                Expr("call", "i4", "abs", (b,), b.bound, True), lit("1", "i4", 1)),
                b.bound + 1, True),), b.bound + 1, True)
            return Expr("bin", "i4", "/", (a, den), a.bound, True)
        if r == 12:
            return Expr("un", "i4", "-", (Expr("paren", "i4", "", (a,), a.bound, True),),
                        a.bound, True)
        return a

    def real_op(self, env, kind, det, depth):
        r = self.int_in(0, 19)
        sub_kind = kind if self.chance(0.7) else self.pick(["r4", "r8", "i4"])
        if sub_kind == "r8" and kind == "r4" and self.chance(0.5):
            sub_kind = "r4"
        a = self.expr(env, sub_kind, det, depth + 1)
        if a.kind != kind and not (a.kind in ("i4", "r4") and kind == "r8"):
            a = self.convert(a, kind) if a.kind != "i4" or self.chance(0.5) else a
        if r <= 5:
            b = self.expr(env, kind if self.chance(0.8) else "i4", det, depth + 1)
            op = self.pick(["+", "-", "*", "+", "-"])
            bound = a.bound * b.bound if op == "*" else a.bound + b.bound
            res_kind = _wider(a.kind, b.kind)
            if res_kind == "i4":
                res_kind = kind
                a = self.convert(a, kind)
            return self.fit(Expr("bin", res_kind, op, (a, b), bound, a.det and b.det), kind)
        a = self.convert(a, kind) if a.kind == "i4" else a
        if det:
            r = self.pick([6, 7, 8, 9, 10, 11, 12])
        if r == 6:
            return Expr("call", a.kind, "abs", (a,), a.bound, a.det)
        if r == 7:
            b = self.same_kind(self.expr(env, a.kind, det, depth + 1), a.kind)
            return Expr("call", a.kind, self.pick(["min", "max"]), (a, b),
                        max(a.bound, b.bound), a.det and b.det)
        if r == 8:
            # clamp
            c = "1.0" if a.kind == "r4" else "1.0d0"
            return Expr("call", a.kind, "max", (
                Expr("un", a.kind, "-", (lit(c, a.kind, 1),), 1, True),
                Expr("call", a.kind, "min", (lit(c, a.kind, 1), a), 1, a.det)), 1, a.det)
        if r == 9:
            b = self.same_kind(self.expr(env, a.kind, True, depth + 1), a.kind)
            return Expr("call", a.kind, "sign", (a, b), a.bound, a.det and b.det)
        if r == 10:
            b = self.same_kind(self.expr(env, a.kind, det, depth + 1), a.kind)
            return Expr("call", a.kind, "dim", (a, b), a.bound + b.bound, a.det and b.det)
        if r == 11:
            return Expr("un", a.kind, "-", (Expr("paren", a.kind, "", (a,), a.bound, a.det),),
                        a.bound, a.det)
        if r == 12:
            if a.bound < 1e3:
                return Expr("bin", a.kind, "**", (a, lit("2", "i4", 2)), a.bound ** 2, a.det)
            return a
        if r == 13:
            b = self.expr(env, a.kind, False, depth + 1)
            den = Expr("paren", a.kind, "", (Expr("bin", a.kind, "+", (
                lit("1.0" if a.kind == "r4" else "1.0d0", a.kind, 1),
                Expr("call", b.kind, "abs", (b,), b.bound, b.det)), b.bound + 1, False),),
                b.bound + 1, False)
            return Expr("bin", _wider(a.kind, b.kind), "/", (a, den), a.bound, False)
        if r == 14:
            fn = self.pick(["sin", "cos", "tanh", "atan"])
            return Expr("call", a.kind, fn, (a,), 1.6 if fn == "atan" else 1.0, False)
        if r == 15:
            one = "1.0" if a.kind == "r4" else "1.0d0"
            inner = Expr("bin", a.kind, "+", (Expr("call", a.kind, "abs", (a,), a.bound, a.det),
                                              lit(one, a.kind, 1)), a.bound + 1, a.det)
            fn = self.pick(["sqrt", "log", "log10"])
            return Expr("call", a.kind, fn, (inner,), max(1.0, a.bound), False)
        if r == 16 and a.bound <= 8:
            fn = self.pick(["exp", "sinh", "cosh"])
            return Expr("call", a.kind, fn, (a,), float(np.exp(a.bound)) + 1, False)
        if r == 17:
            one = "1.0" if a.kind == "r4" else "1.0d0"
            den = Expr("paren", a.kind, "", (Expr("bin", a.kind, "+", (
                lit(one, a.kind, 1), Expr("call", a.kind, "abs", (a,), a.bound, a.det)),
                a.bound + 1, a.det),), a.bound + 1, a.det)
            frac = Expr("bin", a.kind, "/", (a, den), 1.0, False)
            fn = self.pick(["asin", "acos"])
            return Expr("call", a.kind, fn, (frac,), 3.2, False)
        if r == 18:
            b = self.same_kind(self.expr(env, a.kind, det, depth + 1), a.kind)
            one = "1.0" if a.kind == "r4" else "1.0d0"
            pos = Expr("bin", a.kind, "+", (lit(one, a.kind, 1),
                                             Expr("call", a.kind, "abs", (b,), b.bound, b.det)),
                       b.bound + 1, b.det)
            return Expr("call", a.kind, "atan2", (a, pos), 3.2, False)
        if r == 19:
            if a.bound < 50 and a.det:
                e = "1.5" if a.kind == "r4" else "1.5d0"
                base = Expr("call", a.kind, "abs", (a,), a.bound, a.det)
                return Expr("bin", a.kind, "**", (base, lit(e, a.kind, 1.5)),
                            a.bound ** 1.5 + 1, False)
            return a
        return a

    def same_kind(self, e: Expr, kind: str) -> Expr:
        if e.kind == kind:
            return e
        if e.kind == "i4" or kind in ("r4", "r8"):
            return self.convert(e, kind)
        return e

    def fit(self, e: Expr, kind: str) -> Expr:
        """Make an arithmetic result *kind* (real(...) narrows a double)."""
        if e.kind == kind or (e.kind in ("i4", "r4") and kind == "r8"):
            return e
        if e.kind == "r8" and kind == "r4":
            return Expr("call", "r4", "real", (e,), e.bound, e.det)
        return self.convert(e, kind)

    def comparison(self, env, det=True):
        kind = self.pick(["i4", "i4", "r4", "r8"])
        a = self.expr(env, kind, True, 2)
        b = self.expr(env, kind if self.chance(0.7) else self.pick(["i4", "r4"]), True, 2)
        if a.kind in ("r4", "r8") and b.kind in ("r4", "r8") and a.kind != b.kind and \
                self.chance(0.5):
            b = self.convert(b, a.kind)
        op = self.pick(["<", "<=", ">", ">=", "==", "/=", ".lt.", ".ge.", ".ne."])
        return Expr("bin", "l", op, (a, b), 1, True)

    def logical(self, env, depth):
        r = self.int_in(0, 9)
        if depth >= 2 or r <= 4:
            return self.leaf(env, "l", True)
        if r <= 7:
            a = self.logical(env, depth + 1)
            b = self.logical(env, depth + 1)
            return Expr("bin", "l", self.pick([".and.", ".or.", ".and.", ".eqv.", ".neqv."]),
                        (a, b), 1, True)
        return Expr("un", "l", ".not.", (Expr("paren", "l", "", (self.logical(env, depth + 1),),
                                              1, True),), 1, True)

