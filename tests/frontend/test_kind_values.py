"""``kind()`` of literals of every type and kind, of typed variables and of
constant expressions, folded as gfortran folds them (issue 26, item 4:
``kind(.true.)`` folded to 1, the size of a numpy bool, where gfortran
gives 4, so a ``logical(l_knd)`` was refused as kind 1)."""

import shutil
import subprocess

import pytest

from f2loopy.diagnostics import FortranError
from f2loopy.frontend import parse_fortran

#: argument of kind() -> the value gfortran gives
KINDS = {
    ".true.": 4, ".false.": 4, ".true._4": 4, ".not. .false.": 4, "(1 < 2)": 4,
    "1": 4, "1_1": 1, "1_2": 2, "2_4": 4, "1_8": 8, "3 + 2_8": 8, "abs(-3_8)": 8,
    "huge(1)": 4, "nint(2.5)": 4,
    "1.0": 4, "2.0e0": 4, "1.5_4": 4, "1.0_8": 8, "1d0": 8, "0.5d0*2": 8, "real(1, 8)": 8,
    "epsilon(1d0)": 8,
    "(1.0, 2.0)": 4, "(1d0, 0d0)": 8, "(1.0_8, 2)": 8,
    "x": 4, "d": 8, "lv": 4, "i8": 8, "cz": 4, "zd": 8, "i2": 2, "real_implicit": 4,
}

#: kind-selecting intrinsics (gfortran's values: -1 for no such precision,
#: -2 for no such range, 10 and 16 are kinds f2loopy refuses where used)
SELECTED = {
    "selected_real_kind(6)": 4, "selected_real_kind(7)": 8, "selected_real_kind(15)": 8,
    "selected_real_kind(6, 100)": 8, "selected_real_kind(r=37)": 4,
    "selected_real_kind(r=38)": 8, "selected_real_kind(p=6, r=307)": 8,
    "selected_real_kind(16)": 10, "selected_real_kind(19)": 16, "selected_real_kind(40)": -1,
    "selected_real_kind(r=400)": 10, "selected_real_kind(r=5000)": -2,
    "selected_real_kind(40, 5000)": -3,
    "selected_int_kind(2)": 1, "selected_int_kind(4)": 2, "selected_int_kind(9)": 4,
    "selected_int_kind(10)": 8, "selected_int_kind(18)": 8, "selected_int_kind(19)": 16,
    "selected_int_kind(38)": 16, "selected_int_kind(39)": -1,
    "selected_int_kind(r=5)": 4,
}
EXPRS = {**{f"kind({a})": v for a, v in KINDS.items()}, **SELECTED}

DECLS = """  real x
  double precision d
  logical lv
  integer(8) i8
  integer(2) i2
  complex cz
  complex(8) zd
"""


def _source(expr):
    return (f"subroutine t(n, out)\n  integer n, out\n{DECLS}"
            f"  integer, parameter :: k = {expr}\n  out = k\nend subroutine\n")


@pytest.mark.parametrize("expr", sorted(EXPRS))
def test_kind_folds_as_gfortran(expr):
    kernel = parse_fortran(_source(expr), "t.f90")[0]
    assert int(kernel.instructions[-1].expression) == EXPRS[expr]


def test_logical_of_kind_of_a_logical_literal_is_accepted():
    src = """subroutine lk(n, x, f)
  integer, parameter :: l_knd = kind(.true.)
  integer n
  logical(l_knd) f
  real x(n)
  f = x(1) > 0
end subroutine
"""
    kernel = parse_fortran(src, "lk.f90")[0]
    assert kernel.arg_dict["f"].dtype.kind == "b"


def test_kind_of_a_character_is_a_located_error():
    with pytest.raises(FortranError) as info:
        parse_fortran(_source("kind('a')"), "t.f90")
    assert info.value.format().startswith("t.f90:10:34: error:")


@pytest.mark.gfortran
@pytest.mark.usefixtures("gfortran")
def test_table_is_what_gfortran_gives(tmp_path):
    """The expected values above are gfortran's (one program prints them all)."""
    lines = ["program p", DECLS.rstrip()]
    for k, expr in enumerate(sorted(EXPRS)):
        lines.append(f"  integer, parameter :: k{k} = {expr}")
    lines += [f"  print *, k{k}" for k in range(len(EXPRS))] + ["end program"]
    (tmp_path / "p.f90").write_text("\n".join(lines) + "\n")
    subprocess.run(["gfortran", "p.f90", "-o", "p"], cwd=tmp_path, check=True)
    out = subprocess.run(["./p"], cwd=tmp_path, check=True, capture_output=True, text=True)
    assert [int(w) for w in out.stdout.split()] == [EXPRS[a] for a in sorted(EXPRS)]


# {{{ BOZ constants (the fuzzer's constants of every kind, issue 26)

#: an integer constant expression with BOZ constants -> gfortran's value
BOZ = {
    "int(z'1F')": 31, "int(Z\"a\")": 10, "int(b'101')": 5, "int(o'17')": 15,
    "int(z'7FFFFFFF')": 2147483647, "int(z'1F', 8) / 2": 15, "kind(int(b'1', 8))": 8,
    "int(o'7', kind=4) - int(z'B')": -4, "-int(b'11')": -3,
}


@pytest.mark.parametrize("expr", sorted(BOZ))
def test_boz_in_int_is_the_integer_its_digits_spell(expr):
    kernel = parse_fortran(_source(expr), "t.f90")[0]
    assert int(kernel.instructions[-1].expression) == BOZ[expr]


@pytest.mark.parametrize("expr, message", [
    ("int(z'80000000')", "t.f90:10:33: error: BOZ constant Z'80000000' sets the sign bit of "
                         "an integer of kind 4 (a bit pattern, not supported)"),
    ("int(real(z'3F800000'))", "t.f90:10:38: error: unsupported expression 'Z'3F800000''"),
])
def test_boz_as_a_bit_pattern_is_a_located_error(expr, message):
    with pytest.raises(FortranError) as info:
        parse_fortran(_source(expr), "t.f90")
    assert info.value.format().splitlines()[0] == message


@pytest.mark.gfortran
@pytest.mark.skipif(shutil.which("gfortran") is None, reason="gfortran not installed")
def test_boz_table_is_what_gfortran_gives(tmp_path):
    lines = ["program p"]
    for k, expr in enumerate(sorted(BOZ)):
        lines.append(f"  integer, parameter :: k{k} = {expr}")
    lines += [f"  print *, k{k}" for k in range(len(BOZ))] + ["end program"]
    (tmp_path / "p.f90").write_text("\n".join(lines) + "\n")
    subprocess.run(["gfortran", "p.f90", "-o", "p"], cwd=tmp_path, check=True)
    out = subprocess.run(["./p"], cwd=tmp_path, check=True, capture_output=True, text=True)
    assert [int(w) for w in out.stdout.split()] == [BOZ[a] for a in sorted(BOZ)]

# }}}
