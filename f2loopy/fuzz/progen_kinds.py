"""Kinds in the random programs of the differential fuzzer (issue 26): named
kind parameters defined by ``kind()`` of literals of every type and by
``selected_real_kind``/``selected_int_kind`` (positional and keyword
arguments, a range that asks for a wider kind than the precision), types
spelled with them, and literals with a kind suffix (``0.5_dp``, ``3_4``).
Every spelling names the kind the variable has anyway, so a wrong fold
shows as a refusal or as a wrong result."""

from __future__ import annotations

from f2loopy.fuzz.progen_base import GeneratorBase
from f2loopy.fuzz.program import Variable

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
