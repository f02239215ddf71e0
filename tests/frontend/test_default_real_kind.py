"""gfortran's ``-fdefault-real-8 -fdefault-double-8`` (issue 27, found on a
physics suite built with them): default REAL and COMPLEX, real literals
without a kind, implicitly typed reals and the intrinsics whose result is a
default real are kind 8; explicit kinds stay; without the option nothing
changes.  The other kind options are refused with why (never ignored)."""

from __future__ import annotations

import pytest

from f2loopy.diagnostics import UnsupportedArgumentError
from f2loopy.frontend import parse_fortran
from f2loopy.kind_flags import REAL8_NEEDS_DOUBLE8, check_kind_flags, kind_flags
from f2loopy.pipeline import TranslateOptions, translate_text

DECLS = """subroutine decls(a, b, c, d, e, f, g, h, p, q, n)
  integer, intent(in) :: n
  real, intent(inout) :: a(n)
  real(4), intent(inout) :: b
  real*4, intent(inout) :: c
  real(8), intent(inout) :: d
  double precision, intent(inout) :: e
  complex, intent(inout) :: f
  complex(4), intent(inout) :: g
  double complex, intent(inout) :: h
  dimension p(n)
  intent(inout) :: p, q
  a(1) = 1
end subroutine decls
"""

#: every expression kind: literals, intrinsics with a default-real result,
#: inquiries of default reals in parameters
EXPRS = """subroutine exprs(n, x, r)
  implicit none
  integer, intent(in) :: n
  real(8), intent(inout) :: x(n)
  real(4), intent(in) :: r
  integer, parameter :: kd = kind(1.0), kz = kind((1, 2))
  real, parameter :: eps = epsilon(1.0), big = huge(1.0), small = tiny(1.0)
  complex :: z
  x(1) = 0.95
  x(2) = real(n)
  x(3) = float(n)
  x(4) = amax1(x(1), 0.5)
  x(5) = 1d0 / 3
  x(6) = 1.0_4 / 3
  x(7) = real(n, 4)
  z = cmplx(x(1), 2.0)
  x(8) = real(z)
  x(9) = eps
  x(10) = big
  x(13) = small
  x(14) = kd
  x(15) = kz
  x(11) = sngl(x(1))
  x(12) = r
end subroutine exprs
"""


def _dtypes(kernel) -> dict:
    return {a.name: str(a.dtype) for a in kernel.args}


def _assignments(kernel) -> list[str]:
    """The kernel's assignments as the IR prints them (without their ids)."""
    text = str(kernel).split("INSTRUCTIONS:")[1]
    return [line.split("  {")[0] for line in text.splitlines() if "  {id=" in line]


def test_literals_intrinsics_and_inquiries():
    (k4,) = parse_fortran(EXPRS, "e.f90")
    (k8,) = parse_fortran(EXPRS, "e.f90", default_real_kind=8)
    assert _assignments(k4) == [
        "x[1] = 0.949999988079071",                 # 0.95 as single precision
        "x[2] = float64(float32(n))",               # real(n)
        "x[3] = float64(float32(n))",               # float(n)
        "x[4] = float64(float32(max(x[1], 0.5f)))",  # amax1
        "x[5] = 0.3333333333333333",                # 1d0 / 3
        "x[6] = 0.3333333432674408",                # 1.0_4 / 3
        "x[7] = float64(float32(n))",               # real(n, 4)
        "z = cmplx(x[1], 2.0f, 4)",
        "x[8] = float64(float32(realpart(z)))",
        "x[9] = 1.1920928955078125e-07",            # epsilon(1.0)
        "x[10] = 3.4028234663852886e+38",           # huge(1.0)
        "x[13] = 1.1754943508222875e-38",           # tiny(1.0)
        "x[14] = 4.0",                              # kind(1.0)
        "x[15] = 4.0",                              # kind((1, 2))
        "x[11] = float64(float32(x[1]))",           # sngl
        "x[12] = float64(r)"]
    # as gfortran -fdefault-real-8 -fdefault-double-8 has them (explicit kinds stay)
    assert _assignments(k8) == [
        "x[1] = 0.95",
        "x[2] = float64(n)",
        "x[3] = float64(n)",
        "x[4] = float64(max(x[1], 0.5))",
        "x[5] = 0.3333333333333333",
        "x[6] = 0.3333333432674408",
        "x[7] = float64(float32(n))",
        "z = cmplx(x[1], 2.0, 8)",
        "x[8] = float64(realpart(z))",
        "x[9] = 2.220446049250313e-16",
        "x[10] = 1.7976931348623157e+308",
        "x[13] = 2.2250738585072014e-308",
        "x[14] = 8.0",
        "x[15] = 8.0",
        "x[11] = float64(x[1])",
        "x[12] = float64(r)"]
    assert "z: complex64" in str(k4) and "z: complex128" in str(k8)
    assert _dtypes(k8)["r"] == "float32"


def test_modules_on_the_path_are_read_with_the_same_kind(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "consts.f90").write_text("module consts\n  real, parameter :: cap = 0.95\n"
                                    "  real :: scale(4)\nend module consts\n")
    text = ("subroutine clip(n, x)\n  use consts, only: cap, scale\n  integer, intent(in) :: n\n"
            "  real, intent(inout) :: x(n)\n  x(1) = min(x(1), cap) * scale(1)\nend subroutine\n")
    r4 = translate_text(text, tmp_path / "clip.f90", include_dirs=(str(lib),))
    r8 = translate_text(text, tmp_path / "clip.f90", include_dirs=(str(lib),),
                        default_real_kind=8)
    assert "fmin(x[0], 0.95f)" in r4.generated[0].source
    assert "fmin(x[0], 0.95)" in r8.generated[0].source
    assert {str(a.dtype) for a in r8.kernels[0].args if a.name in ("x", "scale")} == \
        {"float64"}


def test_the_recent_units_are_keyed_on_the_kind():
    # the same text twice in a row: the second must not reuse the first's kernels
    (k8,) = parse_fortran(DECLS, "again.f90", default_real_kind=8)
    (k4,) = parse_fortran(DECLS, "again.f90")
    (k8b,) = parse_fortran(DECLS, "again.f90", default_real_kind=8)
    assert _dtypes(k4)["a"] == "float32" and _dtypes(k8)["a"] == _dtypes(k8b)["a"] == "float64"


def test_the_translation_cache_is_keyed_on_the_kind(tmp_path, monkeypatch):
    monkeypatch.setenv("F2LOOPY_CACHE_DIR", str(tmp_path / "cache"))
    from f2loopy.pipeline import translate_file
    src = tmp_path / "d.f90"
    src.write_text(DECLS)
    outs = [translate_file(src, cache=True, default_real_kind=kind).outputs
            for kind in (4, 8, 4, 8)]
    cl = [next(t for p, t in o.items() if str(p).endswith(".cl")) for o in outs]
    assert cl[0] == cl[2] and cl[1] == cl[3] and cl[0] != cl[1]
    assert "decls(__global double *a, float const b, float const c, double const d, " \
        "double const e, double2 const f, float2 const g, double2 const h" in cl[1]
    assert "decls(__global float *a, float const b, float const c, double const d, " \
        "double const e, float2 const f, float2 const g, double2 const h" in cl[0]


def test_bad_kind_values_are_refused():
    with pytest.raises(UnsupportedArgumentError) as info:
        parse_fortran(DECLS, "d.f90", default_real_kind=16)
    assert info.value.message == ("translate_source: default_real_kind=16 is not supported: "
                                  "the default real kind must be 4 or 8, not 16")
    with pytest.raises(TypeError, match="the default real kind must be 4 or 8, not True"):
        TranslateOptions(default_real_kind=True)


def test_the_kind_options():
    assert check_kind_flags([]) == 4
    assert check_kind_flags(["-fdefault-double-8"]) == 4        # alone: gfortran's default
    assert check_kind_flags(["-fdefault-double-8", "-fdefault-real-8"]) == 8
    assert kind_flags(8) == ["-fdefault-real-8", "-fdefault-double-8"] and kind_flags(4) == []
    with pytest.raises(ValueError) as info:
        check_kind_flags(["-fdefault-real-8"])
    assert str(info.value) == REAL8_NEEDS_DOUBLE8
    assert "makes DOUBLE PRECISION and 1d0 constants REAL(16) in gfortran" in REAL8_NEEDS_DOUBLE8
    with pytest.raises(ValueError) as info:
        check_kind_flags(["-fdefault-real-8", "-fdefault-double-8", "-fdefault-integer-8"])
    assert str(info.value) == (
        "-fdefault-integer-8: default INTEGER of kind 8 is not supported (kernels, loop "
        "bounds and sizes use 32-bit integers); declare integer(8) where 64 bits are needed")
    for flag in ("-freal-4-real-8", "-freal-8-real-4", "-freal-4-real-16", "-fdefault-real-16",
                 "-finteger-4-integer-8"):
        with pytest.raises(ValueError, match=f"^{flag}: "):
            check_kind_flags([flag])


@pytest.mark.usefixtures("sandbox_process")
def test_parse_transformed_fortran_and_the_scripts_parse_take_the_kind():
    from f2loopy.directives import parse_transformed_fortran
    src = ("subroutine t(y)\n  real y\n  y = 0.95\nend subroutine\n!$loopy begin\n"
           "! k, = parse_fortran(SOURCE, FILENAME)\n"
           "! o, = parse_fortran('subroutine u(z)\\n real z\\n z = 0.5\\nend subroutine\\n', "
           "'u.f90')\n! RESULT = [k, o]\n!$loopy end\n")
    for kind, want in ((4, "float32"), (8, "float64")):
        tu = parse_transformed_fortran(src, filename="t.f90", default_real_kind=kind)
        assert [(k.name, [str(a.dtype) for a in k.args]) for k in tu] == \
            [("t", [want]), ("u", [want])]
