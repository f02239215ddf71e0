"""Kernels split at global barriers into several launches
(:mod:`f2loopy.transform.launches`, :mod:`f2loopy.codegen.phases`): the
transform and the refusals (exact messages), the shape of the generated
kernels and of the Python glue's launch sequence, and PoCL against gfortran
through the Python glue."""

from __future__ import annotations

import numpy as np
import pytest

from f2loopy.codegen import generate_code
from f2loopy.codegen.phases import HostLoop, phase_kernels
from f2loopy.diagnostics import CodegenError, TransformError
from f2loopy.frontend import parse_fortran
from f2loopy.glue.python import generate_python_glue
from f2loopy.transform import (
    add_global_barrier, add_global_barriers_between_nests, split_iname, tag_inames)
from f2loopy.transform.instructions import add_barrier

from launch_util import JACOBI, TWO_PHASE, _ids, _jacobi_split, _k, _norm1_split
from util import farray, needs_gfortran, run_transformed, zeros

# {{{ unit: the transform and the refusals

@pytest.mark.unit
def test_add_global_barrier_orders_by_dependencies():
    k = _k(JACOBI)
    out = add_global_barrier(k, after="id:b", before="id:a")
    barrier = out.insn("gbarrier")
    assert barrier.scope == "global" and barrier.within_inames == {"t"}
    assert barrier.depends_on == {"b"} and "gbarrier" in out.insn("a").depends_on
    assert _ids(out) == ["b", "gbarrier", "a"]
    assert k.insn("a").depends_on == {"b"}          # the input is unchanged


@pytest.mark.unit
@pytest.mark.parametrize("kw, message", [
    (dict(after="id:nothing", before="id:a"),
     "add_global_barrier: no instruction matches 'id:nothing' in kernel 'jac'"),
    (dict(after="id:b", before="id:zz"),
     "add_global_barrier: no instruction matches 'id:zz' in kernel 'jac'"),
    (dict(after="id:a", before="id:b"),
     "add_global_barrier: instruction 'b' comes before instruction 'a' in the program, so "
     "it cannot run after a barrier that follows it"),
    (dict(after="id:b", before="id:b"),
     "add_global_barrier: instruction 'b' is selected both before and after the barrier"),
    (dict(after="id:b", before="id:a", within_inames=["q"]),
     "add_global_barrier: no loop named 'q' in kernel 'jac'"),
    (dict(after="id:b", before="id:a", within_inames=["i"]),
     "add_global_barrier: instruction 'a' is not inside loop(s) i"),
])
def test_add_global_barrier_refusals(kw, message):
    with pytest.raises(TransformError) as e:
        add_global_barrier(_k(JACOBI), **kw)
    assert e.value.message == message


@pytest.mark.unit
def test_barriers_between_nests_and_host_loops():
    k = add_global_barriers_between_nests(_k(JACOBI), host_loops=["t"])
    barriers = [i for i in k.instructions if i.id.startswith("gbarrier")]
    assert [(b.within_inames, b.depends_on) for b in barriers] == [({"t"}, {"b"})]
    # one nest in a host loop: a barrier at the end of its body
    one = _k("""subroutine one(tsteps, n, a)
  integer, intent(in) :: tsteps, n
  double precision, intent(inout) :: a(n)
  integer :: t, i
  do t = 1, tsteps
    do i = 1, n
      a(i) = a(i) * 0.5d0
    end do
  end do
end subroutine one
""")
    out = add_global_barriers_between_nests(one, host_loops=["t"])
    (b,) = [i for i in out.instructions if i.id.startswith("gbarrier")]
    assert b.within_inames == {"t"} and not any(b.id in i.depends_on for i in out.instructions)
    gk = generate_code(out)
    (loop,) = gk.launches
    assert isinstance(loop, HostLoop) and loop.iname == "t" and len(loop.body) == 1
    with pytest.raises(TransformError) as e:
        add_global_barriers_between_nests(one, host_loops=["s"])
    assert e.value.message == "add_global_barriers_between_nests: no loop named 's' in kernel 'one'"


def _codegen_error(kernel) -> str:
    with pytest.raises(CodegenError) as e:
        generate_code(kernel)
    return e.value.message


@pytest.mark.unit
def test_barrier_inside_a_parallel_loop_is_refused():
    k = tag_inames(add_global_barrier(_k(JACOBI), after="id:b", before="id:a"), "t:g.0")
    assert _codegen_error(k) == (
        "global barrier 'gbarrier' is inside loop 't', which is tagged 'g.0': only a "
        "sequential loop can run on the host around launches")


@pytest.mark.unit
def test_barrier_in_a_loop_bounded_by_a_device_loop_is_refused():
    k = _k("""subroutine tri(n, a, b)
  integer, intent(in) :: n
  double precision, intent(inout) :: a(n, n), b(n, n)
  integer :: e, t, i
  do e = 1, n
    do t = 1, e
      do i = 1, n
        b(i, e) = a(i, t)
      end do
      do i = 1, n
        a(i, t) = b(i, e)
      end do
    end do
  end do
end subroutine tri
""")
    ids = _ids(k)
    k = add_global_barrier(k, after=f"id:{ids[0]}", before=f"id:{ids[1]}", within_inames=["t"])
    assert _codegen_error(k) == (
        "global barrier 'gbarrier' is inside loop 't', whose bounds depend on loop 'e', which "
        "does not go to the host (put the barrier outside it, or in both)")


NEST = """subroutine nest(n, m, a, b)
  integer, intent(in) :: n, m
  double precision, intent(inout) :: a(n, m), b(n, m)
  integer :: e, t, i
  do e = 1, m
    do t = 1, e
      do i = 1, n
        b(i, e) = a(i, e) * t
      end do
      do i = 1, n
        a(i, e) = b(n + 1 - i, e) + 1
      end do
    end do
  end do
end subroutine nest
"""


@pytest.mark.unit
def test_barrier_in_a_loop_inside_a_device_loop_is_refused():
    k = _k("""subroutine nest(n, m, a, b)
  integer, intent(in) :: n, m
  double precision, intent(inout) :: a(n, m), b(n, m)
  integer :: e, t, i
  do e = 1, m
    do t = 1, 3
      do i = 1, n
        b(i, e) = a(i, e) * t
      end do
      do i = 1, n
        a(i, e) = b(i, e) + 1
      end do
    end do
  end do
end subroutine nest
""")
    ids = _ids(k)
    out = add_global_barrier(k, after=f"id:{ids[0]}", before=f"id:{ids[1]}",
                             within_inames=["t"])
    assert _codegen_error(out) == (
        "global barrier 'gbarrier' is inside loop 't', which is inside loop 'e' that does not "
        "go to the host (the host cannot run a loop inside a launch; put the barrier in both "
        "loops)")
    # in both: two host loops, nested
    gk = generate_code(add_global_barrier(k, after=f"id:{ids[0]}", before=f"id:{ids[1]}"))
    (outer,) = gk.launches
    (inner,) = outer.body
    assert (outer.iname, inner.iname) == ("e", "t") and len(inner.body) == 2


@pytest.mark.unit
def test_strided_host_loop_is_refused():
    src = JACOBI.replace("do t = 1, tsteps", "do t = 1, tsteps, 2")
    k = add_global_barrier(_k(src), after="id:b", before="id:a")
    assert _codegen_error(k) == (
        "global barrier 'gbarrier' is inside loop 't', whose iterations are not every "
        "integer between its bounds (a stride or a guard): a host loop runs with step 1")


@pytest.mark.unit
def test_local_memory_across_a_barrier_is_refused():
    from f2loopy.transform import set_temporary_address_space
    k = set_temporary_address_space(_norm1_split(), "inv", "local")
    assert _codegen_error(k) == (
        "temporary 'inv' is in local memory but carries a value across a global barrier "
        "(local memory lasts one launch)")


@pytest.mark.unit
def test_barrier_ordering_nothing_is_refused():
    k = _k(JACOBI)
    from f2loopy.ir.kernel import BarrierInstruction
    b = BarrierInstruction(id="g", scope="global", within_inames=frozenset({"t"}))
    k = k.copy(instructions=k.instructions + (b,))
    assert _codegen_error(k) == "global barrier 'g' depends on no instruction, so it ends no launch"


@pytest.mark.unit
def test_loopy_add_barrier_global_splits_too():
    k = add_barrier(_k(JACOBI), "id:b", "id:a", synchronization_kind="global")
    gk = generate_code(k)
    (loop,) = gk.launches
    assert [g.name for g in loop.body] == ["jac_phase1", "jac_phase2"]

# }}}


# {{{ generated code: kernels and the glue's launch sequence

@pytest.mark.codegen
def test_two_phase_kernels_and_shared_buffers():
    gk = generate_code(_norm1_split())
    first, second = gk.launches
    assert gk.source.count("__kernel void") == 2
    assert "__kernel void __attribute__ ((reqd_work_group_size(1, 1, 1))) norm1_phase1(" \
        "int const n, __global double const *__restrict__ x, __global double *s, " \
        "__global double *inv)" in gk.source
    # the second launch reads s (which it does not write) by reference, and inv
    # from global memory
    assert "__kernel void __attribute__ ((reqd_work_group_size(16, 1, 1))) norm1_phase2(" \
        "int const n, __global double const *__restrict__ x, __global double *y, " \
        "__global double *s, __global double *inv)" in gk.source
    assert "x[i_1_inner + 16 * i_1_outer] * inv[0] - s[0] / n" in second.device_code
    assert "get_group_id" not in first.device_code
    assert [(a.name, a.kind) for a in gk.arguments] == [
        ("n", "value"), ("x", "array"), ("y", "array"), ("s", "scalar_ref")]
    assert [sb.name for sb in gk.scratch] == ["inv"]
    glue = generate_python_glue([gk], gk.source, "t.cl", "t.f90")
    body = glue[glue.index("def norm1("):]
    assert body.count("_scratch_1 = _scratch(queue, (1) * 8)") == 1
    launches = [line.strip() for line in body.splitlines() if "_launch(queue" in line]
    assert launches == [
        "_launch(queue, _knl_1, [n, _x_buf, _s_buf, _scratch_1], (1, 1, 1), "
        "(1, 1, 1), ('int32', 'buffer', 'buffer', 'buffer'))",
        "_launch(queue, _knl_2, [n, _x_buf, _y_buf, _s_buf, _scratch_1], "
        "(_tdiv((n + 15), 16), 1, 1), (16, 1, 1), "
        "('int32', 'buffer', 'buffer', 'buffer', 'buffer'))"]
    # one upload per array, one read-back per written array and scalar
    assert body.count("_array('norm1', 'x'") == 1 and body.count("_y_back()") == 1
    assert body.count("cl.enqueue_copy(queue, _s_host, _s_buf)") == 1


@pytest.mark.codegen
def test_host_loop_in_the_glue():
    gk = generate_code(_jacobi_split())
    (loop,) = gk.launches
    assert (loop.iname, loop.lower, str(loop.upper)) == ("t", 1, "tsteps")
    assert [g.c_name for g in phase_kernels(gk.launches)] == ["jac_phase1", "jac_phase2"]
    assert "int const t)" in loop.body[0].device_code
    glue = generate_python_glue([gk], gk.source, "t.cl", "t.f90")
    body = glue[glue.index("def jac("):]
    lines = [line.rstrip() for line in body.splitlines()]
    k = lines.index("        for t in range(1, tsteps + 1):")
    # the arguments are set once, the sizes computed once, before the loop
    lock = lines.index("    with _lock:")
    assert lines[lock + 1] == ("        _set_args(_knl_1, [tsteps, n, _a_buf, _b_buf, "
                               "np.int32(0)], ('int32', 'int32', 'buffer', 'buffer', 'int32'))")
    assert ("        _set_args(_knl_2, [tsteps, n, _a_buf, _b_buf, np.int32(0)], "
            "('int32', 'int32', 'buffer', 'buffer', 'int32'))") in lines[lock:k]
    assert any(line.startswith("        _gs_2 = _global_size(") for line in lines[lock:k])
    assert "        _set_1 = _arg_setter(_knl_1)" in lines[lock:k]
    # a launch in the loop sets the loop index alone and enqueues, nothing waits
    assert lines[k + 1:k + 8] == [
        "            t = np.int32(t)",
        "            _set_1(4, t)",
        "            if _gs_1:",
        "                _enq(queue, _knl_1, _gs_1, _ls_1)",
        "            _set_2(4, t)",
        "            if _gs_2:",
        "                _enq(queue, _knl_2, _gs_2, _ls_2)"]
    assert lines[k + 8].startswith("    if ")
    assert "finish" not in "\n".join(lines[lock:k + 8]) and "wait" not in "\n".join(lines[lock:k + 8])

# }}}


# {{{ differential: PoCL against gfortran through the Python glue

@needs_gfortran
@pytest.mark.differential
def test_two_phase_kernel_runs_like_fortran(tmp_path, cl_queue):
    for n in (1, 37):
        run_transformed(TWO_PHASE, "norm1", lambda k: _norm1_split(),
                        [n, farray(n, np.float64, seed=n), zeros(n, np.float64), 5.0],
                        tmp_path, cl_queue)


@needs_gfortran
@pytest.mark.differential
def test_time_stepped_stencil_runs_like_fortran(tmp_path, cl_queue):
    for tsteps, n in ((0, 9), (1, 9), (7, 50)):
        run_transformed(JACOBI, "jac", lambda k: _jacobi_split(8),
                        [tsteps, n, farray(n, np.float64, seed=1),
                         farray(n, np.float64, seed=2)], tmp_path, cl_queue)

@needs_gfortran
@pytest.mark.differential
def test_nested_host_loops_run_like_fortran(tmp_path, cl_queue):
    def transform(k):
        ids = _ids(k)
        k = add_global_barrier(k, after=f"id:{ids[0]}", before=f"id:{ids[1]}")
        k = split_iname(k, "i", 8, outer_tag="g.0", inner_tag="l.0")
        return split_iname(k, "i_1", 8, outer_tag="g.0", inner_tag="l.0")
    gk = generate_code(transform(_k(NEST)))
    (outer,) = gk.launches
    (inner,) = outer.body
    assert (outer.iname, inner.iname, str(inner.upper)) == ("e", "t", "e")
    run_transformed(NEST, "nest", transform,
                    [19, 4, farray((19, 4), np.float64, seed=5),
                     farray((19, 4), np.float64, seed=6)], tmp_path, cl_queue)

# }}}


# {{{ from a script in the file (the sandbox sends the launches back)

SCRIPTED = JACOBI + """!$loopy begin
! k, = parse_fortran(SOURCE, FILENAME)
! k = lp.add_global_barriers_between_nests(k, host_loops=["t"])
! k = split_iname(k, "i", 8, outer_tag="g.0", inner_tag="l.0")
! k = split_iname(k, "i_1", 8, outer_tag="g.0", inner_tag="l.0")
! RESULT = [k]
!$loopy end
"""


@needs_gfortran
@pytest.mark.differential
def test_script_splits_a_kernel(tmp_path, cl_queue):
    from util import run_both, translate_and_load
    module, result = translate_and_load(SCRIPTED, tmp_path, filename="jac.f90")
    (gk,) = result.generated
    (loop,) = gk.launches
    assert [g.c_name for g in loop.body] == ["jac_phase1", "jac_phase2"]
    cl = next(t for p, t in result.outputs.items() if str(p).endswith(".cl"))
    assert cl.count("__kernel void") == 2
    run_both(SCRIPTED, "jac", [5, 40, farray(40, np.float64, seed=3), zeros(40, np.float64)],
             tmp_path, cl_queue, module=module, filename="jac.f90")

# }}}


@needs_gfortran
@pytest.mark.differential
def test_bench_and_tune_time_the_launch_sequence(tmp_path, cl_queue):
    from f2loopy.bench.run import run_bench
    from f2loopy.pipeline import translate_file
    from f2loopy.tune.measure import time_variant
    path = tmp_path / "jac.f90"
    path.write_text(SCRIPTED.replace("! RESULT = [k]", "! checkpoint('launches')\n! RESULT = [k]")
                    .replace("! k, = parse_fortran(SOURCE, FILENAME)",
                             "! k, = parse_fortran(SOURCE, FILENAME)\n! checkpoint('one')"))
    report = run_bench(path, sizes={"n": 300, "tsteps": 4}, min_time=0.01, warmup=1,
                       queue=cl_queue)
    assert [(r.label, r.ok) for r in report.rows] == [("one", True), ("launches", True)]
    assert report.reference == "the original Fortran built with gfortran"
    ms = time_variant(translate_file(path), cl_queue, {"n": 300, "tsteps": 4}, min_time=0.01,
                      warmup=1)
    assert ms > 0


# {{{ the automatic recipe's use of launches

@pytest.mark.unit
def test_time_loops_and_split_for_auto():
    from pathlib import Path

    from f2loopy.query import launch_summary, time_loops
    from f2loopy.transform import split_for_auto
    root = Path(__file__).resolve().parents[2] / "samples" / "polybench"

    def sample(name):
        return parse_fortran((root / name).read_text(), name).kernels[0]
    assert time_loops(sample("jacobi_2d.f90")) == ("t",)
    assert time_loops(sample("fdtd_2d.f90")) == ("t",)
    assert time_loops(sample("atax.f90")) == ()
    assert time_loops(sample("gemm.f90")) == ()
    assert launch_summary(split_for_auto(sample("fdtd_2d.f90"))) == \
        "; 2 global barriers, host loop t"
    assert launch_summary(split_for_auto(sample("covariance.f90"))) == "; 2 global barriers"
    gemm = sample("gemm.f90")
    assert split_for_auto(gemm) is gemm and launch_summary(gemm) == ""
    # a recurrence with nothing parallel inside stays a loop of the kernel
    rec = _k("""subroutine rec(n, a)
  integer, intent(in) :: n
  double precision, intent(inout) :: a(n)
  integer :: i
  do i = 2, n
    a(i) = a(i - 1) + a(i)
  end do
end subroutine rec
""")
    assert time_loops(rec) == () and split_for_auto(rec) is rec


@pytest.mark.usefixtures("sandbox_process")
def test_recipe_launches_option(tmp_path):
    from click.testing import CliRunner

    from f2loopy.cli import main
    f = tmp_path / "jac.f90"
    f.write_text(JACOBI)
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-D", "launches=many",
                                    "-o", str(tmp_path / "out"), str(f)])
    assert res.exit_code == 1
    assert "error: recipe 'auto': option 'launches' is 'split' or 'one', not 'many' (given with -D)" in res.output
    res = CliRunner().invoke(main, ["translate", "--transform", "auto", "-o",
                                    str(tmp_path / "out"), str(f)])
    assert res.exit_code == 0, res.output
    assert "auto: kernel 'jac': plan grid, i -> g.0/l.0, i_1 -> g.0/l.0; 1 global barrier, " \
        "host loop t" in res.output
    cl = (tmp_path / "out" / "jac.cl").read_text()
    assert cl.count("__kernel void") == 2

# }}}


@pytest.mark.usefixtures("sandbox_process")
def test_a_subroutine_named_like_a_launch_is_refused(tmp_path):
    from f2loopy.pipeline import translate_text
    src = SCRIPTED.replace("!$loopy begin", """subroutine jac_phase2(n)
  integer, intent(in) :: n
end subroutine jac_phase2
!$loopy begin""").replace("! RESULT = [k]", "! RESULT = [k, _k2]").replace(
        "! k, = parse_fortran(SOURCE, FILENAME)", "! k, _k2 = parse_fortran(SOURCE, FILENAME)")
    with pytest.raises(CodegenError) as e:
        translate_text(src, tmp_path / "jac.f90")
    assert e.value.message == (
        "two kernels of the program would be named 'jac_phase2' (kernels 'jac' and "
        "'jac_phase2'; launches of a split kernel are named NAME_phaseK): rename one")


@pytest.mark.unit
@pytest.mark.parametrize("field, value", [
    ("c_name", "jac_phase1(\n__import__('os')"), ("name", "other"), ("c_name", "jac")])
def test_hostile_launch_from_the_lowering_child_is_refused(field, value):
    """The code of a script's kernels comes back from a child process as
    data: a launch must be the kernel its (checked) IR names."""
    import copy

    from f2loopy.directives.child_codegen import decode_generated, encode_generated
    from f2loopy.ir.serialize import SerializationError
    k = _jacobi_split()
    data = encode_generated(generate_code(k))
    decoded = decode_generated(copy.deepcopy(data), k)      # the honest answer
    assert [g.c_name for g in decoded.launches[0].body] == ["jac_phase1", "jac_phase2"]
    data["launches"][0]["loop"]["body"][0]["launch"]["code"][field] = value
    with pytest.raises(SerializationError):
        decode_generated(data, k)
    bad = encode_generated(generate_code(k))
    for iname in ("i_inner", "t); import os; ("):   # a loop no global barrier is in; code
        bad["launches"][0]["loop"]["iname"] = iname
        with pytest.raises(SerializationError):
            decode_generated(bad, k)


@needs_gfortran
@pytest.mark.differential
def test_tune_checks_split_and_one_launch_variants(tmp_path, cl_queue):
    from pathlib import Path

    from f2loopy.tune.command import run_tune
    path = tmp_path / "jacobi_2d.f90"
    root = Path(__file__).resolve().parents[2]
    path.write_text((root / "samples" / "polybench" / "jacobi_2d.f90").read_text())
    report = run_tune(path, transform="auto", sizes={"n": 40, "tsteps": 3},
                      defines={"tile": 16, "tile1": 4, "style": "grid"}, budget=64,
                      min_time=0.005, warmup=1, store=False, queue=cl_queue)
    assert len(report.variants) == 2
    assert all(v.status == "ok" for v in report.variants), \
        [(v.values, v.status, v.message) for v in report.variants]
    tried = {v.values["auto_launches"] for v in report.variants}
    assert tried == {"split", "one"}


DAMP = """subroutine damp(tsteps, n, a, b, total)
  implicit none
  integer, intent(in) :: tsteps, n
  double precision, intent(inout) :: a(n)
  double precision, intent(in) :: b(n)
  double precision, intent(inout) :: total
  double precision :: c
  integer :: t, i
  c = 1.0d0
  do t = 1, tsteps
    c = c * 0.5d0
    do i = 1, n
      a(i) = a(i) + c * b(i)
    end do
    total = total + a(1)
  end do
end subroutine damp
"""


@needs_gfortran
@pytest.mark.differential
def test_scalars_carried_by_the_host_loop(tmp_path):
    """A local scalar and a scalar argument updated every step, between
    launches: one device buffer each, through the auto recipe and check."""
    from click.testing import CliRunner

    from f2loopy.cli import main
    from f2loopy.pipeline import translate_text
    path = tmp_path / "damp.f90"
    path.write_text(DAMP)
    r = translate_text(DAMP, path, transform="auto")
    assert r.script_output == ("auto: kernel 'damp': plan grid, i -> g.0/l.0; 3 global "
                               "barriers, host loop t\n")
    (gk,) = r.generated
    assert [sb.name for sb in gk.scratch] == ["c"]
    first, loop = gk.launches
    assert first.device_code.endswith("{\n    c[0] = 1.0;\n}")
    assert [g.c_name for g in loop.body] == ["damp_phase2", "damp_phase3", "damp_phase4"]
    assert "__global double *total" in loop.body[2].device_code
    res = CliRunner().invoke(main, ["check", "--transform", "auto", "--size", "n=70",
                                    "--size", "tsteps=4", str(path)])
    assert res.exit_code == 0, res.output
    assert "ok: 2 output(s)" in res.output


@pytest.mark.differential
def test_loopy_style_call_of_a_split_kernel(cl_queue):
    """``knl(queue, ...)`` (glue.call) runs the launches too; numpy reference."""
    a = farray(30, np.float64, seed=7)
    evt, (a2, b2) = _jacobi_split()(cl_queue, tsteps=3, n=30, a=a.copy(),
                                    b=zeros(30, np.float64))
    ra, rb = a.copy(), np.zeros(30)
    for _ in range(3):
        rb[1:-1] = (ra[:-2] + ra[1:-1] + ra[2:]) / 3
        ra[1:-1] = (rb[:-2] + rb[1:-1] + rb[2:]) / 3
    np.testing.assert_allclose(a2, ra, rtol=1e-13)
    np.testing.assert_allclose(b2, rb, rtol=1e-13)


@pytest.mark.differential
def test_calls_on_device_arrays_do_not_wait(tmp_path, cl_queue):
    """A call of a split kernel on pyopencl arrays enqueues its launches and
    returns (nothing to copy back, so no wait); calls in a row on the same
    arrays, then .get(), give the steps of all of them (numpy reference)."""
    import importlib.util

    import pyopencl.array as cla
    gk = generate_code(_jacobi_split())
    (tmp_path / "jac.cl").write_text(gk.source)
    (tmp_path / "jac_cl.py").write_text(generate_python_glue([gk], gk.source, "jac.cl", "t.f90"))
    spec = importlib.util.spec_from_file_location("jac_cl_nowait", tmp_path / "jac_cl.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    a = farray(45, np.float64, seed=11)
    da, db = cla.to_device(cl_queue, a), cla.to_device(cl_queue, np.zeros(45))
    for steps in (3, 1, 4):
        module.jac(steps, 45, da, db, queue=cl_queue)
    ra, rb = a.copy(), np.zeros(45)
    for _ in range(8):
        rb[1:-1] = (ra[:-2] + ra[1:-1] + ra[2:]) / 3
        ra[1:-1] = (rb[:-2] + rb[1:-1] + rb[2:]) / 3
    np.testing.assert_allclose(da.get(), ra, rtol=1e-13)
    np.testing.assert_allclose(db.get(), rb, rtol=1e-13)
