"""The host plan (f2loopy.glue.plan): computed once per generated kernel, its
steps typed, and the three glues (Python, Fortran, C) printing the same
launch signatures from it.  No compiler, no device."""

import re

import pytest

from f2loopy.codegen import generate_code
from f2loopy.frontend import parse_fortran
from f2loopy.glue.fortran import generate_fortran_glue
from f2loopy.glue.plan import (
    ERROR, Array, Assumption, Extent, FixedValue, HostLoop, Launch, Scalar, host_plan)
from f2loopy.glue.python import generate_python_glue

SCALE = """
subroutine scale(n, alpha, x, y, m)
  integer n, m
  real alpha, x(n), y(:)
  integer i
  do i = 1, n
    y(i) = alpha * x(i)
  end do
  m = n
end subroutine
"""


def _generated(source, name):
    return generate_code(parse_fortran(source)[name])


def test_plan_steps_are_typed_and_in_kernel_order():
    gk = _generated(SCALE, "scale")
    plan = host_plan(gk)
    assert plan is host_plan(gk), "computed once per generated kernel"
    assert [type(a).__name__ for a in plan.arguments] == \
        [type(a).__name__ for a in plan.passed[:len(plan.arguments)]]
    kinds = {a.name: (type(a), getattr(a, "role", None)) for a in plan.arguments}
    assert kinds["n"] == (Scalar, "value")
    assert kinds["x"] == (Array, None) and kinds["y"][0] is Array
    assert kinds["m"] == (Scalar, "scalar_ref")
    assert plan.extents == (Extent(plan.extents[0].name, "y", 0, 1),)
    assert not plan.sequence and len(plan.launches) == 1
    (launch,) = plan.launches
    assert isinstance(launch, Launch)
    assert launch.arguments == tuple(a.name for a in plan.passed)
    assert len(launch.signature) == len(launch.arguments)
    assert dict(zip(launch.arguments, launch.signature, strict=True)) == {
        "n": "int32", "alpha": "float32", "x": "buffer", "y": "buffer", "m": "buffer",
        plan.extents[0].name: "int32"}
    with pytest.raises(AttributeError):
        plan.name = "other"            # immutable


def test_fixed_values_and_assumptions_are_steps():
    from f2loopy.transform import assume, fix_parameters
    k = parse_fortran(SCALE)["scale"]
    plan = host_plan(generate_code(fix_parameters(k, n=8)))
    assert plan.fixed == (FixedValue("n", plan.fixed[0].dtype, 8, plan.fixed[0].what),)
    assert "n" not in plan.launches[0].arguments      # fixed: checked, not passed
    assert plan.assumption is None
    plan = host_plan(generate_code(assume(k, "n >= 4")))
    assert isinstance(plan.assumption, Assumption) and plan.assumption.names == ("n",)
    assert "4" in plan.assumption.text


ERRORS = """
subroutine checked(n, a)
  integer n, i
  real a(n)
  do i = 1, n
    if (a(i) < 0) stop 3
    a(i) = sqrt(a(i))
  end do
end subroutine
"""


def test_error_buffer_is_the_last_parameter():
    plan = host_plan(_generated(ERRORS, "checked"))
    assert plan.error is not None and len(plan.error.sites) == 1
    assert plan.launches[0].arguments[-1] == ERROR
    assert plan.launches[0].signature[-1] == "buffer"


STEPS = """
subroutine steps(t, n, a, b)
  integer t, n, s, i
  real a(n), b(n)
  do s = 1, t
    do i = 2, n - 1
      b(i) = (a(i - 1) + a(i + 1)) / 2
    end do
    do i = 2, n - 1
      a(i) = b(i)
    end do
  end do
end subroutine
"""


def test_the_three_glues_print_the_plans_signatures(tmp_path):
    gk = _generated(SCALE, "scale")
    sig = host_plan(gk).launches[0].signature
    py = generate_python_glue([gk], "x", "scale.cl", "scale.f90")
    f90, c = generate_fortran_glue([gk], "x", "scale", "scale.f90")
    assert f"{sig!r})" in py
    assert f'"scale", "{" ".join(sig)}")' in re.sub(r"&\n *&", "", f90)
    assert f'scale: "{" ".join(sig)}"' in c


@pytest.mark.usefixtures("sandbox_process")
def test_host_loops_in_the_plan(tmp_path):
    from f2loopy.pipeline import translate_text
    result = translate_text(STEPS, tmp_path / "steps.f90", transform="auto")
    (gk,) = result.generated
    plan = host_plan(gk)
    assert plan.sequence
    loops = [s for s in plan.launches if isinstance(s, HostLoop)]
    assert loops and all(isinstance(x, Launch) for x in loops[0].body)
    inner = loops[0].body[0]
    assert inner.host == frozenset({loops[0].iname})
    assert loops[0].iname in inner.arguments
    assert len(inner.signature) == len(inner.arguments)
    # every launch of the sequence passes its own signature, and C lists them all
    texts = {str(name): text for name, text in result.outputs.items()}
    f90 = next(t for n, t in texts.items() if n.endswith("_cl.f90"))
    c = next(t for n, t in texts.items() if n.endswith("_cl.c"))
    launches = [line for line in re.sub(r"&\n *&", "", f90).splitlines()
                if "launch_kernel" in line]
    assert len(launches) == len(plan.launch_list())
    for launch, line in zip(plan.launch_list(), launches, strict=True):
        assert line.rstrip().endswith(f'"{" ".join(launch.signature)}")'), line
        assert f'{launch.c_name}: "{" ".join(launch.signature)}"' in c
