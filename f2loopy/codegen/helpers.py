"""Small OpenCL C helper functions for Fortran semantics C lacks.

A :class:`HelperSet` records which helpers a kernel uses; :meth:`source`
emits their definitions, in a fixed order, so output is deterministic.
"""

from __future__ import annotations

import numpy as np

from f2loopy.ir.types import is_integer

_INT_TYPES = ("int", "long", "short", "char")
_FLOAT_TYPES = ("float", "double")


def _ctype(dtype) -> str:
    from f2loopy.codegen.c_expressions import c_type
    return c_type(dtype)


def _floor_div(t):
    return (f"inline {t} f2l_floor_div_{t}({t} a, {t} b)\n{{\n"
            f"    {t} q = a / b;\n"
            f"    return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;\n}}\n")


def _iabs(t):
    return f"inline {t} f2l_iabs_{t}({t} a)\n{{\n    return a < 0 ? ({t})(-a) : a;\n}}\n"


def _powi(t):
    if t in _INT_TYPES:
        return (f"inline {t} f2l_powi_{t}({t} x, int m)\n{{\n"
                f"    if (m < 0)\n"
                f"        return x == 1 ? 1 : (x == -1 ? ((m & 1) ? -1 : 1) : 0);\n"
                f"    {t} y = 1;\n"
                f"    while (m) {{\n"
                f"        if (m & 1)\n            y *= x;\n"
                f"        m >>= 1;\n"
                f"        if (m)\n            x *= x;\n"
                f"    }}\n"
                f"    return y;\n}}\n")
    one = "1.0f" if t == "float" else "1.0"
    return (f"inline {t} f2l_powi_{t}({t} x, int m)\n{{\n"
            f"    unsigned int n = m < 0 ? -(unsigned int)m : (unsigned int)m;\n"
            f"    {t} y = (n & 1) ? x : {one};\n"
            f"    while (n >>= 1) {{\n"
            f"        x = x * x;\n"
            f"        if (n & 1)\n            y = y * x;\n"
            f"    }}\n"
            f"    return m < 0 ? {one} / y : y;\n}}\n")


def _modulo(t):
    if t in _INT_TYPES:
        return (f"inline {t} f2l_modulo_{t}({t} a, {t} p)\n{{\n"
                f"    {t} r = a % p;\n"
                f"    return (r != 0 && ((r < 0) != (p < 0))) ? r + p : r;\n}}\n")
    return (f"inline {t} f2l_modulo_{t}({t} a, {t} p)\n{{\n"
            f"    {t} r = fmod(a, p);\n"
            f"    return (r != 0 && ((r < 0) != (p < 0))) ? r + p : r;\n}}\n")


def _sign(t):
    if t in _INT_TYPES:
        return (f"inline {t} f2l_sign_{t}({t} a, {t} b)\n{{\n"
                f"    {t} m = a < 0 ? ({t})(-a) : a;\n"
                f"    return b >= 0 ? m : ({t})(-m);\n}}\n")
    return f"inline {t} f2l_sign_{t}({t} a, {t} b)\n{{\n    return copysign(fabs(a), b);\n}}\n"


def _dim(t):
    zero = "0" if t in _INT_TYPES else ("0.0f" if t == "float" else "0.0")
    return f"inline {t} f2l_dim_{t}({t} a, {t} b)\n{{\n    return a > b ? a - b : {zero};\n}}\n"


def _ccast(t):
    """Conversion between the complex kinds (defined only where used: the
    single precision one names double2)."""
    if t == "double2":
        return ("inline double2 f2l_ccast_double2(float2 z)\n{\n"
                "    return (double2)((double)z.x, (double)z.y);\n}\n")
    return ("inline float2 f2l_ccast_float2(double2 z)\n{\n"
            "    return (float2)((float)z.x, (float)z.y);\n}\n")


def _ishft(t):
    """Fortran's logical shift: left for a positive count, right (zero-filling)
    for a negative one; zero once the count reaches the bit size."""
    return (f"inline {t} f2l_ishft_{t}({t} a, int s)\n{{\n"
            f"    int bits = 8 * (int)sizeof({t});\n"
            f"    if (s >= bits || s <= -bits)\n        return 0;\n"
            f"    return s >= 0 ? ({t})((u{t})a << s) : ({t})((u{t})a >> -s);\n}}\n")


def _shifta(t):
    """Arithmetic right shift (the sign bit is copied), defined for every count."""
    return (f"inline {t} f2l_shifta_{t}({t} a, int s)\n{{\n"
            f"    int bits = 8 * (int)sizeof({t});\n"
            f"    if (s >= bits)\n        return a < 0 ? ({t})-1 : ({t})0;\n"
            f"    return a < 0 ? ({t})~(({t})~a >> s) : ({t})(a >> s);\n}}\n")


_GENERATORS = {
    "ishft": _ishft, "shifta": _shifta,
    "floor_div": _floor_div, "iabs": _iabs, "powi": _powi, "modulo": _modulo,
    "sign": _sign, "dim": _dim, "ccast": _ccast,
}


def _complex_lib(c, r):
    """Complex arithmetic on OpenCL vectors (``.x`` real, ``.y`` imaginary)."""
    one = "1.0f" if r == "float" else "1.0"
    zero = "0.0f" if r == "float" else "0.0"
    return f"""typedef {r}2 {c}_t;
inline {c}_t {c}_new({r} re, {r} im) {{ return ({c}_t)(re, im); }}
inline {c}_t {c}_fromreal({r} re) {{ return ({c}_t)(re, {zero}); }}
inline {r} {c}_real({c}_t z) {{ return z.x; }}
inline {r} {c}_imag({c}_t z) {{ return z.y; }}
inline {c}_t {c}_add({c}_t a, {c}_t b) {{ return a + b; }}
inline {c}_t {c}_sub({c}_t a, {c}_t b) {{ return a - b; }}
inline {c}_t {c}_neg({c}_t a) {{ return -a; }}
inline {c}_t {c}_conj({c}_t a) {{ return ({c}_t)(a.x, -a.y); }}
inline int {c}_eq({c}_t a, {c}_t b) {{ return a.x == b.x && a.y == b.y; }}
inline {c}_t {c}_mul({c}_t a, {c}_t b)
{{
    return ({c}_t)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}}
inline {c}_t {c}_divide({c}_t a, {c}_t b)
{{
    /* Smith's algorithm: no overflow for large |b| */
    if (fabs(b.y) <= fabs(b.x)) {{
        {r} ratio = b.y / b.x;
        {r} den = b.x + b.y * ratio;
        return ({c}_t)((a.x + a.y * ratio) / den, (a.y - a.x * ratio) / den);
    }}
    {r} ratio = b.x / b.y;
    {r} den = b.x * ratio + b.y;
    return ({c}_t)((a.x * ratio + a.y) / den, (a.y * ratio - a.x) / den);
}}
inline {r} {c}_abs({c}_t z) {{ return hypot(z.x, z.y); }}
inline {c}_t {c}_exp({c}_t z)
{{
    {r} e = exp(z.x);
    return ({c}_t)(e * cos(z.y), e * sin(z.y));
}}
inline {c}_t {c}_log({c}_t z) {{ return ({c}_t)(log(hypot(z.x, z.y)), atan2(z.y, z.x)); }}
inline {c}_t {c}_sqrt({c}_t z)
{{
    {r} m = hypot(z.x, z.y);
    if (m == {zero})
        return ({c}_t)({zero}, {zero});
    if (z.x >= {zero}) {{
        {r} t = sqrt((m + z.x) * ({one} / 2));
        return ({c}_t)(t, z.y / (2 * t));
    }}
    {r} t = sqrt((m - z.x) * ({one} / 2));
    return ({c}_t)(fabs(z.y) / (2 * t), copysign(t, z.y));
}}
inline {c}_t {c}_sin({c}_t z) {{ return ({c}_t)(sin(z.x) * cosh(z.y), cos(z.x) * sinh(z.y)); }}
inline {c}_t {c}_cos({c}_t z) {{ return ({c}_t)(cos(z.x) * cosh(z.y), -sin(z.x) * sinh(z.y)); }}
inline {c}_t {c}_powi({c}_t x, int m)
{{
    unsigned int n = m < 0 ? -(unsigned int)m : (unsigned int)m;
    {c}_t y = (n & 1) ? x : {c}_fromreal({one});
    while (n >>= 1) {{
        x = {c}_mul(x, x);
        if (n & 1)
            y = {c}_mul(y, x);
    }}
    return m < 0 ? {c}_divide({c}_fromreal({one}), y) : y;
}}
inline {c}_t {c}_pow({c}_t a, {c}_t b)
{{
    if (a.x == {zero} && a.y == {zero})
        return {c}_fromreal({zero});
    return {c}_exp({c}_mul(b, {c}_log(a)));
}}
"""


class HelperSet:
    def __init__(self):
        self._needed: set[tuple[str, str]] = set()
        self._complex: set[str] = set()

    def need(self, kind: str, dtype) -> str:
        t = _ctype(dtype)
        if kind == "iabs" and not is_integer(np.dtype(dtype)):
            raise ValueError("iabs is for integers")
        if kind == "ccast":
            self.need_complex(dtype)
        self._needed.add((kind, t))
        return f"f2l_{kind}_{t}"

    def need_complex(self, dtype) -> None:
        self._complex.add("cdouble" if np.dtype(dtype) == np.complex128 else "cfloat")

    @property
    def uses_double(self) -> bool:
        return any(t in ("double", "double2") or k == "ccast" for k, t in self._needed) \
            or "cdouble" in self._complex

    def source(self) -> str:
        parts = []
        for c in sorted(self._complex):
            parts.append(_complex_lib(c, "float" if c == "cfloat" else "double"))
        for kind, t in sorted(self._needed):
            parts.append(_GENERATORS[kind](t))
        return "\n".join(parts)
