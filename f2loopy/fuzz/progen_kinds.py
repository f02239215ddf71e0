"""Kinds in the random programs of the differential fuzzer (issue 26): named
kind parameters defined by ``kind()`` of literals of every type and by
``selected_real_kind``/``selected_int_kind`` (positional and keyword
arguments, a range that asks for a wider kind than the precision), types
spelled with them, and literals with a kind suffix (``0.5_dp``, ``3_4``).
Every spelling names the kind the variable has anyway, so a wrong fold
shows as a refusal or as a wrong result.

Constants of every kind too: named constants defined by expressions of other
constants (attribute and FORTRAN 77 ``parameter`` statement, integer, real,
double and logical ones), BOZ constants in ``int()``, parts of complex
constants (also of mixed kinds), logical literals with kinds; the real
literal spellings are :data:`f2loopy.fuzz.program._REAL_LITS`."""

from __future__ import annotations

from f2loopy.fuzz.progen_base import GeneratorBase
from f2loopy.fuzz.program import _REAL_LITS, Variable, lit

#: (name, fuzzer kind, definitions that give that kind)
KIND_PARAMETERS = (
    ("sp", "r4", ("kind(1.0)", "kind(0.5e0)", "kind((1.0, 0.0))", "selected_real_kind(6)",
                  "selected_real_kind(r=37)", "kind(1.0_4)")),
    ("dp", "r8", ("kind(1.0d0)", "kind(1d0)", "kind((1d0, 2d0))", "selected_real_kind(12)",
                  "selected_real_kind(6, 100)", "selected_real_kind(p=6, r=300)",
                  "selected_real_kind(r=38)", "kind(0.5_8)")),
    ("ik", "i4", ("kind(1)", "kind(2_4)", "selected_int_kind(5)", "selected_int_kind(r=9)")),
    ("lk", "l", ("kind(.true.)", "kind(.false.)", "kind(1 < 2)", "kind(.true._4)")),
)


class KindsMixin(GeneratorBase):
    """Kind parameters, spellings and literal suffixes (mixed into the Generator)."""

    def kind_parameters(self) -> list:
        """Some of :data:`KIND_PARAMETERS`, as parameter variables; their
        names are then the kinds of :meth:`kind_suffix` and :meth:`respell`."""
        self.kind_names = {}
        out = []
        for name, kind, definitions in KIND_PARAMETERS:
            if self.chance(0.25):
                self.kind_names[kind] = name
                out.append(Variable(name, "i4", role="param", bound=8,
                                    value=self.pick(definitions)))
        return out

    def respell(self, variables) -> None:
        """Some of *variables* spelled with the kind parameters."""
        words = {"r4": "real", "r8": "real", "i4": "integer", "l": "logical"}
        for v in variables:
            name = getattr(self, "kind_names", {}).get(v.kind)
            if name is not None and v.role not in ("param", "table") and self.chance(0.5):
                v.spelling = f"{words[v.kind]}({'kind=' if self.chance(0.3) else ''}{name})"

    def kind_suffix(self, text: str, kind: str, env) -> str:
        """Literal *text* of *kind* with a kind suffix, sometimes (a kind
        parameter's name only in the subroutine that declares it)."""
        if kind not in ("r4", "r8", "i4") or not self.chance(0.3):
            return text
        if kind == "r8":
            text = text.lower().replace("d", "e")
        names = {} if env.in_helper else getattr(self, "kind_names", {})
        number = {"r4": "4", "r8": "8", "i4": "4"}[kind]
        suffix = names[kind] if kind in names and self.chance(0.6) else number
        return f"{text}_{suffix}"

    def derived_constants(self, locs) -> list:
        """Named constants defined by expressions of literals and of the
        constants in *locs* (``c0``, ``k0`` when there), some by a
        ``parameter`` statement."""
        have = {v.name: v for v in locs}
        out = []
        if self.chance(0.25):
            t, v = self.pick(_REAL_LITS["r4"])
            forms = [(f"{t} * 4 - 1", 4 * v + 1), (f"-{t} / 2", v / 2)]
            if "c0" in have:
                c = have["c0"].bound
                forms += [(f"2.0 * c0 - {t}", 2 * c + v), (f"c0 / 2 + {t}", c / 2 + v),
                          (f"(c0 + {t}) * .5", (c + v) / 2)]
            text, bound = self.pick(forms)
            out.append(Variable("c1", "r4", role="param", bound=bound, value=text,
                                statement=self.chance(0.4)))
        if self.chance(0.2):
            t, v = self.pick(_REAL_LITS["r8"])
            forms = [(f"{t} * 3", 3 * v), (f"1 - {t}", 1 + v)]
            if "c0" in have:
                forms.append((f"{t} + c0", v + have["c0"].bound))
            text, bound = self.pick(forms)
            out.append(Variable("ck", "r8", role="param", bound=bound, value=text,
                                statement=self.chance(0.4)))
        if self.chance(0.2):
            forms = [("7 - 2 * 3", 1), ("mod(17, 5)", 2), ("int(z'B') / 4", 2),
                     ("-int(b'11')", 3), ("2**3 - 5", 3)]
            if "k0" in have:
                forms += [("k0 * 2 + 1", 7), ("abs(k0) - int(o'7')", 7)]
            text, bound = self.pick(forms)
            out.append(Variable("k1", "i4", role="param", bound=bound, value=text,
                                statement=self.chance(0.5)))
        if self.chance(0.15):
            logicals = [".true.", ".false.", "3 > 2", ".not. .true._4"]
            if "k0" in have:
                logicals.append("k0 >= 0")
            out.append(Variable("lp", "l", role="param", bound=1, value=self.pick(logicals),
                                statement=self.chance(0.4)))
        return out

    def constant_leaf(self, kind: str, env):
        """A literal constant of *kind* in one of the rarer forms (a BOZ
        constant in ``int()``, a part of a complex constant, a logical
        literal), or None."""
        if kind == "i4" and self.chance(0.25):
            v = self.int_in(0, 7)
            text = self.pick([f"int(z'{v:X}')", f"int(b'{v:b}')", f"int(o'{v:o}')",
                              f'int(Z"{v:x}")'])
            return lit(text, "i4", v)
        if kind in ("r4", "r8") and self.chance(0.15):
            # parts of two kinds: the constant has the wider kind, and the
            # value of a single-precision part read is that of the literal
            # converted (real((0.1, 0d0)) is not 0.1d0)
            mixed = kind == "r8" and self.chance(0.4)
            t1, v1 = self.pick(_REAL_LITS["r4" if mixed else kind])
            t2, v2 = self.pick(_REAL_LITS[kind if mixed else self.pick([kind, kind, "r4"])])
            if self.chance(0.5):
                return lit(f"real(({t1}, {t2}))", kind, v1)
            return lit(f"aimag(({t2}, {t1}))", kind, v1)
        if kind == "l" and self.chance(0.1):
            text = self.pick([".true.", ".false."])
            names = {} if env.in_helper else getattr(self, "kind_names", {})
            if self.chance(0.3):
                text += "_" + (names["l"] if "l" in names and self.chance(0.5) else "4")
            return lit(text, "l", 1)
        return None
