"""loopy users' habits: calling kernels, auto_test_vs_ref, top-level entry
points, equality of translation units, refused keywords."""

from __future__ import annotations

import numpy as np
import pytest

import f2loopy
from f2loopy.diagnostics import UnsupportedArgumentError

pytestmark = pytest.mark.opencl

SCALE = """
subroutine scale(n, alpha, x, y)
  integer n, i
  real*8 alpha, x(n), y(n)
  do i = 1, n
    y(i) = alpha * x(i)
  end do
end subroutine
"""


# {{{ equality

def test_units_of_the_same_source_are_equal_and_hash_alike():
    a = f2loopy.parse_fortran(SCALE)
    b = f2loopy.parse_fortran(SCALE + "\n")
    assert a == b and hash(a) == hash(b)
    assert a != f2loopy.parse_fortran(SCALE.replace("alpha * x(i)", "alpha + x(i)"))
    assert (a == "scale") is False


@pytest.mark.parametrize("literal", ["1.5", "1.1"])
def test_units_differ_in_the_kind_of_a_literal(literal):
    # 1.5 is exact in both precisions: the kinds still differ
    src = "subroutine s(a)\n  real*8 a(1)\n  a(1) = {}\nend\n"
    single = f2loopy.parse_fortran(src.format(literal))
    double = f2loopy.parse_fortran(src.format(literal + "d0"))
    assert single != double
    assert single == f2loopy.parse_fortran(src.format(literal))


def test_equal_units_after_equal_transformations():
    tu = f2loopy.parse_fortran(SCALE)
    one = f2loopy.split_iname(tu["scale"], "i", 4)
    two = f2loopy.split_iname(tu["scale"], "i", 4)
    three = f2loopy.split_iname(tu["scale"], "i", 8)
    wrap = f2loopy.TranslationUnit
    assert wrap([one]) == wrap([two])
    assert wrap([one]) != wrap([three])
    assert len({wrap([one]), wrap([two]), wrap([three])}) == 2

# }}}


# {{{ parse_fortran keywords

def test_parse_fortran_refuses_unknown_keywords():
    with pytest.raises(TypeError, match="unexpected keyword argument 'fre_form'"):
        f2loopy.parse_fortran(SCALE, fre_form=True)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"strict": False}, "parse_fortran: strict=False is not supported: f2loopy always reports "
                        "what it cannot translate as an error"),
    ({"seq_dependencies": False, "auto_dependencies": False},
     "parse_fortran: seq_dependencies=False is not supported: with auto_dependencies=False "
     "there would be no dependencies; f2loopy's always come from the program order of the "
     "Fortran"),
    ({"target": "cuda"}, "parse_fortran: target='cuda' is not supported: f2loopy generates "
                         "OpenCL only"),
    ({"free_form": True, "fixed_form": True},
     "parse_fortran: free_form=True is not supported: it contradicts fixed_form=True"),
])
def test_parse_fortran_refuses_options_it_does_not_implement(kwargs, message):
    with pytest.raises(UnsupportedArgumentError) as info:
        f2loopy.parse_fortran(SCALE, **kwargs)
    assert info.value.message == message
    assert isinstance(info.value, TypeError)


def test_parse_fortran_accepts_loopy_defaults():
    tu = f2loopy.parse_fortran(SCALE, strict=True, auto_dependencies=True,
                               seq_dependencies=True, free_form=True)
    assert tu == f2loopy.parse_fortran(SCALE)
    assert tu == f2loopy.parse_fortran(SCALE, auto_dependencies=False)
    assert tu == f2loopy.parse_fortran(SCALE, seq_dependencies=False)
    fixed = f2loopy.parse_fortran("      subroutine s(a)\n      real a\n      a = 1\n      end\n",
                                  free_form=False)
    assert fixed.keys() == ["s"]

# }}}


# {{{ top-level entry points

def test_top_level_loopy_entry_points():
    tu = f2loopy.parse_fortran(SCALE)
    code = f2loopy.generate_code_v2(tu).device_code()
    assert "__kernel void" in code and "scale" in code
    src = SCALE + """
!$loopy begin
! knl = lp.parse_fortran(SOURCE, FILENAME)
! RESULT = lp.split_iname(knl, "i", 16, outer_tag="g.0", inner_tag="l.0")
!$loopy end
"""
    out = f2loopy.parse_transformed_fortran(src, filename="scale.f90")
    assert isinstance(out, f2loopy.TranslationUnit)
    assert "i_inner" in out["scale"].all_inames()


def test_match_module_as_loopy_names_it():
    tu = f2loopy.parse_fortran(SCALE)
    found = f2loopy.find_instructions(tu, f2loopy.match.Writes("y"))
    assert [i.assignee_name for i in found] == ["y"]


def test_with_entrypoints_and_temporary_variables():
    src = SCALE + "subroutine other(b)\n  real b, t\n  t = 2\n  b = t\nend\n"
    tu = f2loopy.parse_fortran(src)
    assert tu.with_entrypoints("other").keys() == ["other"]
    assert tu.with_entrypoints(["scale", "other"]).keys() == ["scale", "other"]
    assert list(tu["other"].temporary_variables) == ["t"]

# }}}


# {{{ calling kernels

def test_call_allocates_outputs_and_returns_them(cl_queue):
    tu = f2loopy.parse_fortran(SCALE)
    x = np.arange(5, dtype=np.float64)
    evt, (y,) = tu(cl_queue, n=5, alpha=2.0, x=x)
    evt.wait()
    assert isinstance(y, np.ndarray) and y.dtype == np.float64
    assert np.array_equal(y, 2 * x)
    # the kernel itself is callable too, positionally in the Fortran order
    y2 = np.zeros(5)
    _, (out,) = tu["scale"](cl_queue, 5, 3.0, x, y2)
    assert out is y2 and np.array_equal(y2, 3 * x)


def test_call_infers_sizes_from_the_arrays_passed(cl_queue):
    tu = f2loopy.parse_fortran(SCALE)
    x = np.arange(6, dtype=np.float64)
    _, (y,) = tu(cl_queue, alpha=0.5, x=x)          # n = x.shape[0]
    assert y.shape == (6,) and np.array_equal(y, 0.5 * x)
    with pytest.raises(TypeError, match=r"argument 'y' must have shape \(6\) as declared in "
                                        r"Fortran, got \(5,\)"):
        tu(cl_queue, alpha=0.5, x=x, y=np.zeros(5))


def test_call_on_device_arrays_allocates_device_outputs(cl_queue):
    import pyopencl.array as cla
    tu = f2loopy.parse_fortran(SCALE)
    x = cla.to_device(cl_queue, np.linspace(0, 1, 7))
    _, (y,) = tu(cl_queue, n=7, alpha=-1.0, x=x)
    assert isinstance(y, cla.Array)
    assert np.array_equal(y.get(), -x.get())


def test_call_returns_written_scalars(cl_queue):
    src = """
subroutine total(n, x, s)
  integer n, i
  real*8 x(n), s
  s = 0
  do i = 1, n
    s = s + x(i)
  end do
end subroutine
"""
    _, (s,) = f2loopy.parse_fortran(src)(cl_queue, n=4, x=np.ones(4), s=0.0)
    assert s == 4.0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"alpha": 1.0}, "scale: argument 'n' is missing"),
    ({"n": 3, "alpha": 1.0}, "scale: argument 'x' is missing (the kernel reads it; only "
                             "arrays it only writes are allocated)"),
    ({"n": 3, "alpha": 1.0, "x": np.ones(3), "z": 1}, "scale: no argument named 'z' (the "
                                                      "arguments are: n, alpha, x, y)"),
])
def test_call_errors(cl_queue, kwargs, message):
    from f2loopy.glue.call import KernelCallError
    with pytest.raises(KernelCallError) as info:
        f2loopy.parse_fortran(SCALE)(cl_queue, **kwargs)
    assert str(info.value) == message


def test_call_of_a_unit_of_two_kernels_names_them(cl_queue):
    from f2loopy.glue.call import KernelCallError
    tu = f2loopy.parse_fortran(SCALE + SCALE.replace("scale", "scale2"))
    with pytest.raises(KernelCallError, match=r"holds 2 kernels \(scale, scale2\); call one"):
        tu(cl_queue, n=1)

# }}}


# {{{ auto_test_vs_ref

def test_auto_test_vs_ref_passes_a_correct_transformation(cl_queue, capsys):
    ref = f2loopy.parse_fortran(SCALE)
    test = f2loopy.split_iname(ref, "i", 4, outer_tag="g.0", inner_tag="l.0")
    result = f2loopy.auto_test_vs_ref(ref, cl_queue.context, test, parameters={"n": 10})
    assert result.passed and set(result.max_errors) == {"y"}
    assert "auto_test_vs_ref: 'scale' matches 'scale'" in capsys.readouterr().out


def test_auto_test_vs_ref_finds_a_wrong_kernel(cl_queue):
    ref = f2loopy.parse_fortran(SCALE)
    wrong = f2loopy.parse_fortran(SCALE.replace("alpha * x(i)", "alpha * x(i) + 1"))
    with pytest.raises(f2loopy.AutomaticTestFailure) as info:
        f2loopy.auto_test_vs_ref(ref, cl_queue.context, wrong, parameters={"n": 6})
    assert "'scale' differs from 'scale' (inputs n=6" in info.value.message
    assert "y(" in info.value.message and "6 of 6 elements differ" in info.value.message


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"do_check": False}, "auto_test_vs_ref: do_check=False is not supported: checking is "
                          "what this function does ('f2loopy bench' times kernels)"),
    ({"op_count": [1e6]}, "auto_test_vs_ref: op_count=[1000000.0] is not supported: there is "
                          "no timing here ('f2loopy bench' times kernels)"),
])
def test_auto_test_vs_ref_refuses_what_it_does_not_do(cl_queue, kwargs, message):
    ref = f2loopy.parse_fortran(SCALE)
    with pytest.raises(UnsupportedArgumentError) as info:
        f2loopy.auto_test_vs_ref(ref, cl_queue.context, **kwargs)
    assert info.value.message == message
    with pytest.raises(TypeError, match="unexpected keyword argument 'paramters'"):
        f2loopy.auto_test_vs_ref(ref, cl_queue.context, paramters={"n": 3})

# }}}


# {{{ literals

LITERALS = """
subroutine lits(a, x, y)
  real*8 a(6), x
  real y
  a(1) = 1.1
  a(2) = x * 1.1 + 0.1
  a(3) = -0.3
  a(4) = 0.5
  a(5) = 1.1d0
  a(6) = 1e30
  y = 1.1d0 * y
  x = 3
end
"""


def test_literals_print_as_the_shortest_decimal_of_their_precision():
    code = f2loopy.generate_code(f2loopy.parse_fortran(LITERALS)["lits"]).device_code
    body = [line.strip() for line in code.splitlines() if " = " in line]
    assert body == [
        "a[0] = 1.1f;",                 # single precision literal into a double
        "a[1] = x[0] * 1.1f + 0.1f;",
        "a[2] = -0.3f;",
        "a[3] = 0.5;",                  # exact in both: the double literal is no longer
        "a[4] = 1.1;",
        "a[5] = 1e+30f;",
        "y[0] = (float)(1.1 * y[0]);",
        "x[0] = 3.0;",
    ]


def test_widened_single_literals_keep_fortran_values(cl_queue):
    tu = f2loopy.parse_fortran(LITERALS)
    _, (a, x, y) = tu(cl_queue, a=np.zeros(6), x=2.0, y=np.float32(2))
    f = float(np.float32(1.1))
    assert a[0] == f and a[1] == 2.0 * f + float(np.float32(0.1))
    assert a[2] == float(np.float32(-0.3)) and a[3] == 0.5 and a[4] == 1.1
    assert a[5] == float(np.float32(1e30))
    assert x == 3.0 and y == np.float32(2.2)

# }}}
