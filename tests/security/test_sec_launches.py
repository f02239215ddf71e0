"""A transformation script that splits a kernel into launches and names the
host loop to take over a variable of the glue (red team of several launches
per subroutine).

The launch sequence runs in the glue: a host loop's index is a glue
variable, and the index is an argument of the launches inside.  A script
chooses the loop's name: renamed 'queue' beside the argument 'queue_' (the
Python glue's name for the loop was the argument's, and the launches got
the step as the size), or 'sin' beside 'sin_' (one OpenCL variable: a loop
that shadowed the size and wrote past the arrays).  Either the glue keeps
them apart and computes what the Fortran computes, or the translation is a
located refusal that writes nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from security_util import ROOT, assert_safe, files_in, invoke, opencl_available

HAVE_OPENCL = opencl_available()

STEPS = """\
subroutine jac(tsteps, {size}, a, b)
  implicit none
  integer, intent(in) :: tsteps, {size}
  double precision, intent(inout) :: a({size}), b({size})
  integer :: t, i
  do t = 1, tsteps
    do i = 2, {size} - 1
      b(i) = (a(i - 1) + a(i) + a(i + 1)) / 3.0d0
    end do
    do i = 2, {size} - 1
      a(i) = (b(i - 1) + b(i) + b(i + 1)) / 3.0d0
    end do
  end do
end subroutine jac
!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! k = add_global_barriers_between_nests(k, host_loops=["t"])
! k = rename_iname(k, "t", "{loop}")
! k = split_iname(k, "i", 8, outer_tag="g.0", inner_tag="l.0")
! k = split_iname(k, "i_1", 8, outer_tag="g.0", inner_tag="l.0")
! RESULT = [k]
!$loopy end
"""

RUN = """
import numpy as np, jac_cl
a = np.cos(np.arange(40.0)); b = np.zeros(40)
ra, rb = a.copy(), b.copy()
for _ in range(3):
    rb[1:-1] = (ra[:-2] + ra[1:-1] + ra[2:]) / 3
    ra[1:-1] = (rb[:-2] + rb[1:-1] + rb[2:]) / 3
jac_cl.jac(3, 40, a, b)
assert np.allclose(a, ra, rtol=1e-13) and np.allclose(b, rb, rtol=1e-13), (a - ra, b - rb)
print("steps: ok")
"""


@pytest.mark.skipif(not HAVE_OPENCL, reason="needs OpenCL")
def test_host_loop_named_like_the_glue_name_of_an_argument(tmp_path, opencl_device):
    (tmp_path / "jac.f90").write_text(STEPS.format(size="queue_", loop="queue"))
    result = invoke(["translate", "jac.f90"], tmp_path)
    assert result.exit_code == 0, result.output
    proc = subprocess.run([sys.executable, "-c", RUN], cwd=tmp_path, capture_output=True,
                          text=True, timeout=240, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert "steps: ok" in proc.stdout, proc.stdout + proc.stderr
    assert_safe(tmp_path, result.stdout, result.stderr)


@pytest.mark.usefixtures("sandbox_process")
def test_host_loop_named_into_an_argument_in_opencl_is_refused(tmp_path):
    (tmp_path / "jac.f90").write_text(STEPS.format(size="sin_", loop="sin"))
    result = invoke(["translate", "jac.f90"], tmp_path)
    assert result.exit_code == 1, result.output
    assert "jac.f90:1:" in result.stderr
    assert "error: 'sin_' and 'sin' would both be 'sin_' in the OpenCL code" in result.stderr
    assert "Traceback" not in result.output
    assert files_in(tmp_path) == ["jac.f90"]
    assert_safe(tmp_path, result.stdout, result.stderr)


def test_launch_sequence_uses_only_reserved_glue_names():
    """The names the glue's launch sequence uses (host loops, the kernels of
    the launches, global temporaries) are renamed away from the Fortran
    names too: builtins and globals in PY_GLUE_NAMES, locals with a '_'."""
    import ast
    import builtins

    from f2loopy.codegen import generate_code
    from f2loopy.codegen.names import PY_GLUE_NAMES
    from f2loopy.frontend import parse_fortran
    from f2loopy.glue.python import generate_python_glue
    from f2loopy.transform import add_global_barriers_between_nests, split_iname
    src = STEPS.format(size="n", loop="t").split("!$loopy begin")[0]
    (k,) = parse_fortran(src, "t.f90")
    k = add_global_barriers_between_nests(k, host_loops=["t"])
    k = split_iname(split_iname(k, "i", 8, outer_tag="g.0", inner_tag="l.0"), "i_1", 8,
                    outer_tag="g.0", inner_tag="l.0")
    text = generate_python_glue([generate_code(k)], "", "t.cl", "t.f90")
    func = next(n for n in ast.parse(text).body
                if isinstance(n, ast.FunctionDef) and n.name == "jac")
    params = {a.arg for a in func.args.args + func.args.kwonlyargs}
    used = {n.id for n in ast.walk(func) if isinstance(n, ast.Name)}
    loops = {n.target.id for n in ast.walk(func) if isinstance(n, ast.For)}
    assert loops == {"t"}
    glue = used - params - loops
    assert not {x for x in glue if not x.startswith("_")} - PY_GLUE_NAMES, \
        {x for x in glue if not x.startswith("_")} - PY_GLUE_NAMES
    assert {x for x in glue if hasattr(builtins, x)} <= PY_GLUE_NAMES
